// The preprocessor on the real PLINK files of ../shared/data: values, statistics against
// plink2, malformed inputs, atomicity and determinism.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "colflow/cancellation.hpp"
#include "colflow/preprocess/bed_source.hpp"
#include "colflow/preprocess/chromosome.hpp"
#include "colflow/preprocess/converter.hpp"
#include "colflow/preprocess/csv_source.hpp"
#include "colflow/preprocess/exporter.hpp"
#include "colflow/preprocess/inputs.hpp"
#include "colflow/preprocess/npy_source.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

const std::filesystem::path data_dir = COLFLOW_SHARED_DATA_DIR;
const std::string cli = COLFLOW_CLI_PATH;

std::string prefix(const std::string& name) { return test::dataset(name); }
using test::all_datasets;

store convert_to(const std::string& bed_prefix, const std::filesystem::path& out,
                 preprocess::codec_choice codec, value_type dtype = value_type::float64,
                 bool shuffle = false, bool standardize = true) {
  preprocess::bed_source source(preprocess::plink_paths::from_prefix(bed_prefix));
  preprocess::convert_options o;
  o.out = out;
  o.codec = codec;
  o.dtype = dtype;
  o.shuffle = shuffle;
  o.standardize = standardize;
  preprocess::convert(source, o);
  return store::open(out, {access_mode::mmap, true});
}

// A staged output's temporary (.NAME.tmp-HOST-PID-RANDOM, colflow/io/staged_output.hpp) in
// `dir`, or a NAME.tmp of older versions.
bool has_temporaries(const std::filesystem::path& dir) {
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() == ".tmp" || name.find(".tmp-") != std::string::npos) return true;
  }
  return false;
}

// Clears the process-wide stop request on the way out of a test, whatever happens.
struct stop_request_guard {
  stop_request_guard() { clear_stop_request(); }
  ~stop_request_guard() { clear_stop_request(); }
};

// Reads bed-reader's reference values: a float64 .npy, Fortran order, (samples, variants).
std::vector<double> read_reference_npy(const std::filesystem::path& file, std::size_t& rows,
                                       std::size_t& cols) {
  const auto bytes = test::read_file(file);
  const std::size_t header_len =
      static_cast<unsigned char>(bytes[8]) |
      (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8);
  const std::string header(bytes.data() + 10, header_len);
  EXPECT_NE(header.find("'<f8'"), std::string::npos);
  EXPECT_NE(header.find("'fortran_order': True"), std::string::npos);
  const auto shape = header.substr(header.find("'shape': (") + 10);
  rows = std::stoul(shape);
  cols = std::stoul(shape.substr(shape.find(',') + 1));
  std::vector<double> v(rows * cols);
  std::memcpy(v.data(), bytes.data() + 10 + header_len, v.size() * 8);
  return v;
}

TEST(PreprocessTest, DosagesEqualBedReaderReferenceValues) {
  REQUIRE_SHARED_DATA();
  std::size_t rows = 0, cols = 0;
  const auto ref = read_reference_npy(data_dir / "bed-reader/some_missing.val.npy", rows, cols);
  test::temp_dir dir;
  for (auto codec : {preprocess::codec_choice::genotype, preprocess::codec_choice::auto_select}) {
    const store s = convert_to(prefix("bed-reader/some_missing"), dir / "g.cf", codec);
    ASSERT_EQ(s.num_rows(), rows);
    ASSERT_EQ(s.num_columns(), cols);
    std::vector<double> v(rows);
    std::size_t missing = 0;
    for (std::size_t j = 0; j < cols; ++j) {
      s.read_column(j, v, decode_as::stored);
      for (std::size_t i = 0; i < rows; ++i) {
        const double r = ref[j * rows + i];
        if (std::isnan(r)) {
          ++missing;
          ASSERT_TRUE(std::isnan(v[i])) << "column " << j << " row " << i;
        } else {
          ASSERT_EQ(v[i], r) << "column " << j << " row " << i;
        }
      }
    }
    EXPECT_GT(missing, 100u);  // the file does have missing calls
    std::filesystem::remove_all(dir / "g.cf");
  }
  // A float store of dosages (no standardisation) holds the same values.
  const store f = convert_to(prefix("bed-reader/some_missing"), dir / "f.cf",
                             preprocess::codec_choice::zstd, value_type::float64, false, false);
  std::vector<double> v(rows);
  for (std::size_t j = 0; j < cols; ++j) {
    f.read_column(j, v, decode_as::stored);
    for (std::size_t i = 0; i < rows; ++i) {
      const double r = ref[j * rows + i];
      ASSERT_TRUE(std::isnan(r) ? std::isnan(v[i]) : v[i] == r) << j << "," << i;
    }
  }
}

TEST(PreprocessTest, EveryCodecDecodesToTheSameStandardisedMatrix) {
  REQUIRE_SHARED_DATA();
  for (const std::string& name :
       {prefix("bed-reader/some_missing"), prefix("bed-reader/plink_sim_10s_100v_10pmiss"),
        prefix("bed-reader/small")}) {
    test::temp_dir dir;
    const store ref = convert_to(name, dir / "ref.cf", preprocess::codec_choice::genotype);
    const std::uint64_t rows = ref.num_rows();
    std::vector<std::vector<double>> z(ref.num_columns(), std::vector<double>(rows));
    for (std::size_t j = 0; j < ref.num_columns(); ++j) ref.read_column(j, z[j]);
    struct variant {
      preprocess::codec_choice codec;
      value_type dtype;
      bool shuffle;
    };
    int k = 0;
    for (const variant& c :
         {variant{preprocess::codec_choice::genotype_zstd, value_type::float64, false},
          variant{preprocess::codec_choice::auto_select, value_type::float64, false},
          variant{preprocess::codec_choice::none, value_type::float64, false},
          variant{preprocess::codec_choice::zlib, value_type::float64, false},
          variant{preprocess::codec_choice::lz4, value_type::float64, true},
          variant{preprocess::codec_choice::zstd, value_type::float64, true},
          variant{preprocess::codec_choice::zstd, value_type::float32, false},
          variant{preprocess::codec_choice::auto_select, value_type::float32, true}}) {
      const auto out = dir / ("s" + std::to_string(k++) + ".cf");
      const store s = convert_to(name, out, c.codec, c.dtype, c.shuffle);
      ASSERT_EQ(s.num_columns(), ref.num_columns());
      std::vector<double> v(rows);
      std::vector<float> vf(rows), reff(rows);
      for (std::size_t j = 0; j < s.num_columns(); ++j) {
        EXPECT_EQ(s.entry(j).stats.observed, ref.entry(j).stats.observed);
        const double fa = s.entry(j).stats.a1_freq, fb = ref.entry(j).stats.a1_freq;
        EXPECT_TRUE((std::isnan(fa) && std::isnan(fb)) || fa == fb) << j;
        if (c.dtype == value_type::float64) {
          s.read_column(j, v);
          // To the last bit: the float store holds the genotype codec's table values.
          ASSERT_EQ(std::memcmp(v.data(), z[j].data(), rows * 8), 0)
              << name << " codec " << preprocess::codec_choice_name(c.codec) << " column " << j;
        } else {
          s.read_column(j, vf);
          ref.read_column(j, reff);
          ASSERT_EQ(std::memcmp(vf.data(), reff.data(), rows * 4), 0) << name << " column " << j;
        }
      }
    }
  }
}

TEST(PreprocessTest, IndividualMajorInputIsTransposed) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  // smallmode0.bed holds small.bed's bytes read as individual-major: 4 samples x 3 variants,
  // the transpose of small's 3 x 4 matrix.
  const store snp =
      convert_to(prefix("bed-reader/small"), dir / "snp.cf", preprocess::codec_choice::genotype);
  const store ind = convert_to(prefix("bed-reader/smallmode0"), dir / "ind.cf",
                               preprocess::codec_choice::genotype);
  ASSERT_EQ(ind.num_rows(), 4u);
  ASSERT_EQ(ind.num_columns(), 3u);
  std::vector<std::vector<double>> a(4, std::vector<double>(3)), b(3, std::vector<double>(4));
  for (std::size_t j = 0; j < 4; ++j) snp.read_column(j, a[j], decode_as::stored);
  for (std::size_t j = 0; j < 3; ++j) ind.read_column(j, b[j], decode_as::stored);
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) {
      const double x = a[i][j], y = b[j][i];
      EXPECT_TRUE((std::isnan(x) && std::isnan(y)) || x == y) << i << "," << j;
    }
}

TEST(PreprocessTest, LargeIndividualMajorFileTransposesInBlocks) {
  // A made-up individual-major file of 9 samples x 23 variants against its SNP-major twin.
  test::temp_dir dir;
  const std::uint64_t n = 9, m = 23;
  std::mt19937_64 rng(5);
  std::vector<std::vector<std::uint8_t>> cols;
  for (std::uint64_t j = 0; j < m; ++j)
    cols.push_back(test::random_genotype_codes(n, 0.3, 0.1, rng));
  std::string fam, bim;
  for (std::uint64_t i = 0; i < n; ++i) fam += "f i" + std::to_string(i) + " 0 0 0 -9\n";
  for (std::uint64_t j = 0; j < m; ++j)
    bim += "1 v" + std::to_string(j) + " 0 " + std::to_string(j + 1) + " A C\n";
  std::vector<char> snp = {0x6c, 0x1b, 0x01}, ind = {0x6c, 0x1b, 0x00};
  for (const auto& c : cols) snp.insert(snp.end(), c.begin(), c.end());
  for (std::uint64_t i = 0; i < n; ++i) {
    std::vector<std::uint8_t> row(genotype_column_bytes(m), 0);
    for (std::uint64_t j = 0; j < m; ++j) {
      const unsigned code = (cols[j][i / 4] >> (2 * (i % 4))) & 3u;
      row[j / 4] = static_cast<std::uint8_t>(row[j / 4] | (code << (2 * (j % 4))));
    }
    ind.insert(ind.end(), row.begin(), row.end());
  }
  for (const std::string p : {"snp", "ind"}) {
    std::ofstream(dir / (p + ".fam")) << fam;
    std::ofstream(dir / (p + ".bim")) << bim;
  }
  test::write_file(dir / "snp.bed", snp);
  test::write_file(dir / "ind.bed", ind);
  const store a =
      convert_to((dir / "snp").string(), dir / "a.cf", preprocess::codec_choice::genotype);
  const store b =
      convert_to((dir / "ind").string(), dir / "b.cf", preprocess::codec_choice::genotype);
  std::vector<std::byte> pa(genotype_column_bytes(n)), pb(pa.size());
  for (std::size_t j = 0; j < m; ++j) {
    a.read_payload(j, pa);
    b.read_payload(j, pb);
    EXPECT_EQ(pa, pb) << "column " << j;
  }
}

using test::run_cli;

TEST(PreprocessTest, MalformedInputsGetClearErrors) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  const std::string br = prefix("bed-reader/");
  const std::string out = " --out " + (dir / "x.cf").string();
  struct bad_case {
    std::string args, message;
  };
  const std::vector<bad_case> cases = {
      {"--bed-file " + br + "badfile.bed --bim " + br + "small.bim --fam " + br + "small.fam",
       "badfile.bed: not a PLINK .bed file: starts with 0x54 0x68, expected 0x6c 0x1b"},
      {"--bed-file " + br + "empty.bed --bim " + br + "small.bim --fam " + br + "small.fam",
       "empty.bed: file is 0 bytes, too short for the 3-byte PLINK .bed header"},
      {"--bed-file " + br + "smallmodebad.bed --bim " + br + "small.bim --fam " + br + "small.fam",
       "smallmodebad.bed: unknown mode byte 0x30"},
      {"--bed " + br + "small_too_short",
       "small_too_short.bed: expected 7 bytes for 3 samples x 4 variants, found 6"},
      {"--bed-file " + br + "small.bed --bim " + br + "small.bim --fam " + br + "small.fam_bad",
       "small.fam_bad: line 4: expected 6 fields"},
      {"--bed-file " + br + "small.bed --bim " + br + "small.bad_bim --fam " + br + "small.fam",
       "small.bad_bim: line 3: expected 6 fields"},
      {"--bed-file " + br + "small.bed --bim " + br + "small.bim_bad_positions.bim --fam " + br +
           "small.fam",
       "small.bim_bad_positions.bim: line 2: position '100.0' is not an integer"},
      {"--bed " + br + "small_no_fam", "missing .fam file"},
      {"--bed " + br + "small_no_bim", "missing .bim file"},
      {"--bed " + br + "does_not_exist", "missing .bed file"},
      {"--bed " + br + "small --codec zstd --level 42", "zstd level 42 is outside 1..19"},
  };
  for (const bad_case& c : cases) {
    std::string output;
    EXPECT_EQ(run_cli("preprocess " + c.args + out, output), 1) << c.args;
    EXPECT_NE(output.find(c.message), std::string::npos)
        << "expected '" << c.message << "' in: " << output;
    EXPECT_FALSE(std::filesystem::exists(dir / "x.cf"));
  }
  // An empty .fam.
  std::ofstream(dir / "e.fam").close();
  std::string output;
  EXPECT_EQ(run_cli("preprocess --bed-file " + br + "small.bed --bim " + br + "small.bim --fam " +
                        (dir / "e.fam").string() + out,
                    output),
            1);
  EXPECT_NE(output.find("e.fam: no samples (the file is empty)"), std::string::npos) << output;
  // Explicit paths with other names work.
  EXPECT_EQ(run_cli("preprocess --quiet --bed-file " + br + "small.deb --bim " + br +
                        "small.mib --fam " + br + "small.maf" + out,
                    output),
            0)
      << output;
}

TEST(PreprocessTest, RefusesAnExistingOutputWithoutForce) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  const std::string args = "preprocess --quiet --bed " + prefix("bed-reader/small") + " --out " +
                           (dir / "s.cf").string();
  std::string out;
  ASSERT_EQ(run_cli(args, out), 0) << out;
  const auto id = store::open(dir / "s.cf").store_id();
  EXPECT_EQ(run_cli(args, out), 1);
  EXPECT_NE(out.find("already exists (use --force to replace it)"), std::string::npos) << out;
  EXPECT_EQ(store::open(dir / "s.cf").store_id(), id);
  ASSERT_EQ(run_cli(args + " --force", out), 0) << out;
  EXPECT_NE(store::open(dir / "s.cf").store_id(), id);
}

TEST(PreprocessTest, SexFileSetsTheStoredSexesAndABadOneLeavesNoStore) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  // small.fam: iid1 male, iid2 female, iid3 unknown (0); its fourth variant is on Y.
  {
    std::ofstream sex(dir / "sex.txt");
    sex << "#IID SEX\niid1 F\niid3 1\n";
  }
  const std::string args = "preprocess --quiet --bed " + prefix("bed-reader/small") + " --out " +
                           (dir / "s.cf").string();
  std::string out;
  ASSERT_EQ(run_cli(args + " --sex " + (dir / "sex.txt").string(), out), 0) << out;
  const store s = store::open(dir / "s.cf");
  ASSERT_EQ(s.samples().size(), 3u);
  EXPECT_EQ(s.samples()[0].sex, "2");
  EXPECT_EQ(s.samples()[1].sex, "2");  // not in the file: the .fam's
  EXPECT_EQ(s.samples()[2].sex, "1");
  // stats counts the new male alone on Y (he has a call there).
  ASSERT_EQ(
      run_cli("stats --quiet " + (dir / "s.cf").string() + " --out " + (dir / "s.tsv").string(),
              out),
      0)
      << out;
  const test::text_table t = test::read_table(dir / "s.tsv");
  ASSERT_EQ(t.rows.size(), 4u);
  EXPECT_EQ(t.rows[3][t.column("CHR")], "Y");
  EXPECT_EQ(t.rows[3][t.column("OBS_CT")], "1");
  EXPECT_EQ(t.rows[3][t.column("MISSING_CT")], "0");
  // An unknown sex keeps its spelling unless the file changes it.
  {
    std::ofstream sex(dir / "sex.txt");
    sex << "fid2 iid3 U\nfid1 iid2 2\n";
  }
  ASSERT_EQ(run_cli(args + " --force --sex " + (dir / "sex.txt").string(), out), 0) << out;
  const store again = store::open(dir / "s.cf");
  EXPECT_EQ(again.samples()[0].sex, "1");
  EXPECT_EQ(again.samples()[1].sex, "2");
  EXPECT_EQ(again.samples()[2].sex, "0");
  // A bad file is refused, naming its line, before anything is written.
  {
    std::ofstream sex(dir / "bad.txt");
    sex << "fid1 iid1 1\nfid1 iid1 2\n";
  }
  EXPECT_EQ(run_cli("preprocess --quiet --bed " + prefix("bed-reader/small") + " --out " +
                        (dir / "b.cf").string() + " --sex " + (dir / "bad.txt").string(),
                    out),
            1);
  EXPECT_NE(out.find("bad.txt:2: sample fid1 iid1 is listed again"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(dir / "b.cf"));
}

TEST(PreprocessTest, WriteErrorLeavesNoStore) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  // A file-size limit of 100 kB: the data file cannot be written. SIGXFSZ ignored so that
  // write() fails with EFBIG, as on a full disk.
  std::string out;
  const int status = test::run_command(
      "bash -c \"trap '' XFSZ; ulimit -f 100; " + cli + " preprocess --quiet --bed " +
          prefix("uk10k/uk10k_chr1_1mb") + " --out " + (dir / "big.cf").string() + "\"",
      out);
  EXPECT_EQ(status, 1) << out;
  EXPECT_NE(out.find("cannot write"), std::string::npos) << out;
  EXPECT_NE(out.find("File too large"), std::string::npos) << out;
  // Nothing at all is left: no store and no temporary directory.
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(PreprocessTest, OutputDoesNotDependOnThreads) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  std::string out;
  for (const char* t : {"1", "2"})
    ASSERT_EQ(run_cli(std::string("preprocess --quiet --codec auto --threads ") + t + " --bed " +
                          prefix("hapmap-yri/plinkhapmap") + " --out " +
                          (dir / (std::string("t") + t + ".cf")).string(),
                      out),
              0)
        << out;
  const auto a = test::read_file(dir / "t1.cf" / "columns.dat");
  const auto b = test::read_file(dir / "t2.cf" / "columns.dat");
  ASSERT_EQ(a.size(), b.size());
  // Everything after the header (which holds the random Store_Id) is identical.
  EXPECT_TRUE(std::equal(a.begin() + 64, a.end(), b.begin() + 64));
}

TEST(ExportTest, BedRoundTripsEverySharedDatasetByteForByte) {
  REQUIRE_SHARED_DATA();
  for (const std::string& name : all_datasets()) {
    if (name.find("smallmode0") != std::string::npos) continue;
    test::temp_dir dir;
    // zstd on the codes goes through the decoding path too (on the smaller sets, for time).
    std::vector<preprocess::codec_choice> codecs = {preprocess::codec_choice::genotype};
    if (name.find("bed-reader") != std::string::npos)
      codecs.push_back(preprocess::codec_choice::genotype_zstd);
    for (auto codec : codecs) {
      const store s = convert_to(name, dir / "s.cf", codec);
      preprocess::export_bed(s, (dir / "out").string(), true);
      auto expected = test::read_file(name + ".bed");
      // The input's padding bits are zeroed in a store (some shared files have them set).
      const std::size_t n = s.num_rows(), bytes = genotype_column_bytes(n);
      if (n % 4 != 0)
        for (std::size_t end = 3 + bytes; end <= expected.size(); end += bytes)
          expected[end - 1] = static_cast<char>(expected[end - 1] & ((1 << (2 * (n % 4))) - 1));
      EXPECT_EQ(test::read_file(dir / "out.bed"), expected) << name;
      // The .bim and .fam hold the same fields.
      EXPECT_EQ(preprocess::count_bim(dir / "out.bim"), s.num_columns());
      const auto fam = preprocess::read_fam(dir / "out.fam");
      ASSERT_EQ(fam.size(), s.num_rows());
      EXPECT_EQ(fam.back().iid, s.samples().back().iid);
      std::filesystem::remove_all(dir / "s.cf");
    }
  }
}

TEST(ExportTest, FloatStoresOfDosagesExportAndStandardisedOnesAreRefused) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  const std::string name = prefix("bed-reader/some_missing");
  const store dosages = convert_to(name, dir / "d.cf", preprocess::codec_choice::lz4,
                                   value_type::float32, false, false);
  preprocess::export_bed(dosages, (dir / "d").string(), false);
  EXPECT_EQ(test::read_file(dir / "d.bed"), test::read_file(name + ".bed"));
  const store z = convert_to(name, dir / "z.cf", preprocess::codec_choice::zstd);
  try {
    preprocess::export_bed(z, (dir / "z").string(), false);
    FAIL() << "a standardised store was exported as calls";
  } catch (const error& e) {
    EXPECT_EQ(e.kind(), errc::invalid_argument);
    EXPECT_NE(e.message().find("standardised"), std::string::npos) << e.message();
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "z.bed"));
  EXPECT_FALSE(has_temporaries(dir.path()));
}

TEST(ExportTest, NpyHoldsTheDecodedMatrix) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  const store s = convert_to(prefix("bed-reader/some_missing"), dir / "s.cf",
                             preprocess::codec_choice::genotype);
  preprocess::export_npy(s, dir / "m.npy", false, false);
  preprocess::npy_source npy(dir / "m.npy");
  ASSERT_EQ(npy.rows(), s.num_rows());
  ASSERT_EQ(npy.columns(), s.num_columns());
  std::vector<double> a(s.num_rows()), b(s.num_rows());
  for (std::size_t j = 0; j < s.num_columns(); ++j) {
    s.read_column(j, a);
    npy.read_values(j, b);
    ASSERT_EQ(a, b) << "column " << j;
  }
  EXPECT_THROW(preprocess::export_npy(s, dir / "m.npy", false, false), error);  // exists
}

TEST(PreprocessTest, DenseCsvAndNpyBecomeStores) {
  test::temp_dir dir;
  {
    std::ofstream csv(dir / "m.csv");
    csv << "id,height,weight\nA,1.5,60\nB,NA,72.5\nC,1.75,\nD,1.6,66\n";
  }
  std::string out;
  ASSERT_EQ(run_cli("preprocess --quiet --csv " + (dir / "m.csv").string() + " --out " +
                        (dir / "c.cf").string(),
                    out),
            0)
      << out;
  const store s = store::open(dir / "c.cf");
  EXPECT_EQ(s.type(), value_type::float64);
  ASSERT_EQ(s.num_rows(), 4u);
  ASSERT_EQ(s.num_columns(), 2u);
  EXPECT_EQ(s.columns()[1].id, "weight");
  EXPECT_EQ(s.samples()[2].iid, "C");
  EXPECT_EQ(s.entry(0).codec, codec_id::zstd);
  std::vector<double> v(4);
  s.read_column(1, v, decode_as::stored);
  EXPECT_EQ(v[0], 60);
  EXPECT_EQ(v[1], 72.5);
  EXPECT_TRUE(std::isnan(v[2]));
  EXPECT_EQ(s.entry(1).stats.observed, 3u);
  EXPECT_DOUBLE_EQ(s.entry(1).stats.mean, (60 + 72.5 + 66) / 3);
  // --standardize stores z values; the round trip through .npy keeps them.
  ASSERT_EQ(run_cli("preprocess --quiet --standardize --codec lz4 --shuffle --csv " +
                        (dir / "m.csv").string() + " --out " + (dir / "z.cf").string(),
                    out),
            0)
      << out;
  ASSERT_EQ(
      run_cli("export " + (dir / "z.cf").string() + " --quiet --npy " + (dir / "z.npy").string(),
              out),
      0)
      << out;
  ASSERT_EQ(run_cli("preprocess --quiet --npy " + (dir / "z.npy").string() +
                        " --codec none --out " + (dir / "n.cf").string(),
                    out),
            0)
      << out;
  const store z = store::open(dir / "z.cf"), n = store::open(dir / "n.cf");
  std::vector<double> a(4), b(4);
  double ss = 0;
  for (std::size_t j = 0; j < 2; ++j) {
    z.read_column(j, a);
    n.read_column(j, b, decode_as::stored);
    EXPECT_EQ(a, b);
    for (double x : a) ss += x * x;
  }
  EXPECT_NEAR(ss, 2 * 3.0, 1e-12);  // two columns with z'z = N - 1
  EXPECT_EQ(run_cli("preprocess --quiet --codec genotype --csv " + (dir / "m.csv").string() +
                        " --out " + (dir / "g.cf").string(),
                    out),
            1);
  EXPECT_NE(out.find("needs .bed or BGEN input"), std::string::npos) << out;
}

TEST(CancellationTest, ConversionStopsBetweenColumnsAndLeavesNothing) {
  const stop_request_guard guard;
  test::temp_dir dir;
  {
    std::ofstream csv(dir / "m.csv");
    for (int i = 0; i < 20; ++i) {
      for (int j = 0; j < 40; ++j) csv << (j ? "," : "") << (i * 7 + j * 3) % 3;
      csv << '\n';
    }
  }
  preprocess::csv_source source(dir / "m.csv");
  ASSERT_EQ(source.columns(), 40u);
  preprocess::convert_options o;
  o.out = dir / "c.cf";
  o.codec = preprocess::codec_choice::zstd;
  o.tokens = 2;
  std::uint64_t last_done = 0;
  try {
    preprocess::convert(source, o, [&](const preprocess::convert_progress& p) {
      last_done = p.columns_done;
      if (p.columns_done == 3) request_stop();
    });
    FAIL() << "the conversion ran to the end";
  } catch (const error& e) {
    EXPECT_EQ(e.kind(), errc::cancelled) << e.message();
  }
  EXPECT_GE(last_done, 3u);
  EXPECT_LT(last_done, 40u);  // stopped between columns, not at the end
  EXPECT_FALSE(std::filesystem::exists(dir / "c.cf"));
  EXPECT_FALSE(has_temporaries(dir.path()));

  // Once the request is cleared, the same conversion runs.
  clear_stop_request();
  preprocess::csv_source again(dir / "m.csv");
  EXPECT_EQ(preprocess::convert(again, o).columns, 40u);
}

TEST(CancellationTest, ExportsStopAndLeaveNoFile) {
  const stop_request_guard guard;
  test::temp_dir dir;
  {
    std::ofstream csv(dir / "m.csv");
    for (int i = 0; i < 9; ++i) {
      for (int j = 0; j < 30; ++j) csv << (j ? "," : "") << (i + j) % 3;
      csv << '\n';
    }
  }
  preprocess::csv_source source(dir / "m.csv");
  preprocess::convert_options o;
  o.out = dir / "d.cf";
  o.codec = preprocess::codec_choice::lz4;
  o.standardize = false;  // dosages: exportable as .bed
  preprocess::convert(source, o);
  const store s = store::open(dir / "d.cf");

  request_stop();
  for (const bool float32 : {false, true}) {
    try {
      preprocess::export_npy(s, dir / "m.npy", float32, false);
      ADD_FAILURE() << "the .npy export ran to the end";
    } catch (const error& e) {
      EXPECT_EQ(e.kind(), errc::cancelled) << e.message();
    }
  }
  try {
    preprocess::export_bed(s, (dir / "b").string(), false);
    ADD_FAILURE() << "the .bed export ran to the end";
  } catch (const error& e) {
    EXPECT_EQ(e.kind(), errc::cancelled) << e.message();
  }
  for (const char* name : {"m.npy", "b.bed", "b.bim", "b.fam"})
    EXPECT_FALSE(std::filesystem::exists(dir / name)) << name;
  EXPECT_FALSE(has_temporaries(dir.path()));

  clear_stop_request();
  preprocess::export_bed(s, (dir / "b").string(), false);
  preprocess::export_npy(s, dir / "m.npy", false, false);
  EXPECT_EQ(preprocess::npy_source(dir / "m.npy").columns(), 30u);
  EXPECT_EQ(std::filesystem::file_size(dir / "b.bed"), 3u + 30u * 3u);  // 9 samples: 3 bytes
  EXPECT_FALSE(has_temporaries(dir.path()));
}

}  // namespace
}  // namespace colflow

namespace colflow {
namespace {

// What plink2 2.00a3.5 --allow-extra-chr writes for each code of a .bim (measured one code per
// file, since plink2 refuses a split chromosome).
TEST(ChromosomeTest, CodesAreNormalisedAsPlink2WritesThem) {
  const std::pair<const char*, const char*> cases[] = {{"chr1", "1"},
                                                       {"23", "X"},
                                                       {"24", "Y"},
                                                       {"25", "XY"},
                                                       {"26", "MT"},
                                                       {"M", "MT"},
                                                       {"chrM", "MT"},
                                                       {"X", "X"},
                                                       {"x", "X"},
                                                       {"XY", "XY"},
                                                       {"MT", "MT"},
                                                       {"01", "1"},
                                                       {"chr22", "22"},
                                                       {"Chr01K", "Chr01K"},
                                                       {"chrX", "X"},
                                                       {"CHR2", "2"},
                                                       {"chrMT", "MT"},
                                                       {"0", "0"},
                                                       {"chr23", "X"},
                                                       {"PAR1", "PAR1"},
                                                       {"y", "Y"},
                                                       {"chrY", "Y"},
                                                       {"mt", "MT"},
                                                       {"chr26", "MT"},
                                                       {"22", "22"},
                                                       {"chr0", "0"},
                                                       {"Un", "Un"},
                                                       {"27", "PAR1"},
                                                       {"28", "PAR2"},
                                                       {"100", "100"},
                                                       {"chrUn_gl000220", "chrUn_gl000220"},
                                                       {"m", "MT"},
                                                       {"chrXY", "XY"},
                                                       {"xy", "XY"},
                                                       {"chr27", "PAR1"},
                                                       {"023", "023"},
                                                       {"chrx", "X"},
                                                       {"cHr5", "5"},
                                                       {"chr100", "chr100"},
                                                       {"chrm", "MT"},
                                                       {"", ""}};
  for (const auto& [in, out] : cases) EXPECT_EQ(preprocess::normalize_chromosome(in), out) << in;
}

}  // namespace
}  // namespace colflow

namespace colflow {
namespace {

// Per-chromosome filesets of HapMap3 (made by plink2) given together make one store equal,
// column for column, to the store of the whole fileset; a list file does the same.
TEST(ManyInputsTest, PerChromosomeFilesetsMakeOneStoreEqualToTheWhole) {
  test::temp_dir dir;
  const std::string whole = test::dataset("hapmap3/HapMap3");
  std::string parts, list;
  for (const char* chrom : {"1", "2", "22", "X"}) {
    const std::string out = (dir / ("chr" + std::string(chrom))).string();
    test::run_plink2("--bfile " + whole + " --chr " + chrom + " --make-bed --out " + out);
    parts += " " + out;
    list += "chr" + std::string(chrom) + "\n";
  }
  test::write_file(dir / "inputs.txt", std::vector<char>(list.begin(), list.end()));
  test::run_plink2("--bfile " + whole + " --chr 1,2,22,X --make-bed --out " +
                   (dir / "joined").string());
  std::string out;
  ASSERT_EQ(
      test::run_cli("preprocess --quiet --bed" + parts + " --out " + (dir / "parts").string(), out),
      0)
      << out;
  ASSERT_EQ(test::run_cli("preprocess --quiet --inputs " + (dir / "inputs.txt").string() +
                              " --out " + (dir / "listed").string(),
                          out),
            0)
      << out;
  ASSERT_EQ(test::run_cli("preprocess --quiet --bed " + (dir / "joined").string() + " --out " +
                              (dir / "one").string(),
                          out),
            0)
      << out;
  const store one = store::open(dir / "one");
  for (const char* name : {"parts", "listed"}) {
    const store s = store::open(dir / name);
    ASSERT_EQ(s.num_columns(), one.num_columns());
    ASSERT_EQ(s.samples().size(), one.samples().size());
    std::vector<std::byte> a(one.entry(0).decoded_size), b(a.size());
    for (std::size_t j = 0; j < s.num_columns(); ++j) {
      s.read_payload(j, a);
      one.read_payload(j, b);
      ASSERT_EQ(a, b) << name << " column " << j;
      ASSERT_EQ(s.columns()[j].id, one.columns()[j].id);
      ASSERT_EQ(s.columns()[j].chrom, one.columns()[j].chrom);
    }
  }
  EXPECT_EQ(one.columns().back().chrom, "X") << "23 is stored as X";
}

TEST(ManyInputsTest, FilesetsOfOtherSamplesAreRefusedNamingTheFirstDifference) {
  test::temp_dir dir;
  const std::string whole = test::dataset("hapmap3/HapMap3");
  const std::string a = (dir / "a").string(), b = (dir / "b").string();
  test::run_plink2("--bfile " + whole + " --chr 1 --make-bed --out " + a);
  // The same samples but the first two swapped.
  test::run_plink2("--bfile " + whole + " --chr 2 --make-bed --out " + b);
  auto fam = test::read_file(b + ".fam");
  std::string text(fam.begin(), fam.end());
  const std::size_t first_end = text.find('\n') + 1, second_end = text.find('\n', first_end) + 1;
  text = text.substr(first_end, second_end - first_end) + text.substr(0, first_end) +
         text.substr(second_end);
  test::write_file(b + ".fam", std::vector<char>(text.begin(), text.end()));
  std::string out;
  EXPECT_NE(test::run_cli(
                "preprocess --quiet --bed " + a + " " + b + " --out " + (dir / "s").string(), out),
            0);
  EXPECT_NE(out.find("b.bed: sample 1 is"), std::string::npos) << out;
  EXPECT_NE(out.find("same samples in the same order"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(dir / "s"));
  // A duplicated sample ID is refused as plink2 refuses it: sample 2 made a copy of sample 1.
  const std::size_t line1 = text.find('\n') + 1, line2 = text.find('\n', line1) + 1;
  text = text.substr(0, line1) + text.substr(0, line1) + text.substr(line2);
  test::write_file(b + ".fam", std::vector<char>(text.begin(), text.end()));
  EXPECT_NE(test::run_cli("preprocess --quiet --bed " + b + " --out " + (dir / "t").string(), out),
            0);
  EXPECT_NE(out.find("have the same ID"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(dir / "t"));
}

}  // namespace
}  // namespace colflow

namespace colflow {
namespace {

// Runs `f`, which must throw colflow::error with `code` and a message containing `fragment`.
template <typename F>
::testing::AssertionResult throws_error(F&& f, errc code, const std::string& fragment) {
  try {
    f();
  } catch (const error& e) {
    if (e.kind() == code && e.message().find(fragment) != std::string::npos)
      return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "error " << errc_name(e.kind()) << ": " << e.message();
  }
  return ::testing::AssertionFailure() << "no error; expected one with \"" << fragment << "\"";
}

TEST(InputsTest, FormatOfAPathIsItsEnding) {
  using preprocess::input_format;
  const std::vector<std::pair<std::string, input_format>> cases = {
      {"chr1.bgen", input_format::bgen}, {"x.vcf", input_format::vcf},
      {"d/x.vcf.gz", input_format::vcf}, {"x.vcf.bgz", input_format::vcf},
      {"x.bcf", input_format::vcf},      {"m.npy", input_format::npy},
      {"m.csv", input_format::csv},      {"m.tsv", input_format::csv},
      {"data/x", input_format::plink},   {"data/x.bed", input_format::plink},
      {"x.gz", input_format::plink},     {"x.npy.bak", input_format::plink},
  };
  for (const auto& [path, format] : cases)
    EXPECT_EQ(preprocess::input_format_of(path), format) << path;
  EXPECT_STREQ(preprocess::input_format_name(input_format::plink), "plink");
  EXPECT_EQ(preprocess::dosage_field_from_name("GP"), preprocess::vcf_options::dosage_field::gp);
  EXPECT_FALSE(preprocess::dosage_field_from_name("ds"));
  EXPECT_EQ(preprocess::half_call_from_name("haploid"),
            preprocess::vcf_options::half_call::haploid);
  EXPECT_EQ(preprocess::csv_presence_from_name("no"), preprocess::csv_presence::absent);
  EXPECT_FALSE(preprocess::csv_presence_from_name("true"));
}

TEST(InputsTest, OpensOneFormatAndRefusesOptionsOfAnother) {
  const std::string bed = prefix("bed-reader/small");
  preprocess::input_options o;
  o.bed = {bed, bed};
  const auto two = preprocess::open_inputs(o);
  EXPECT_EQ(two->columns(), 8u);
  EXPECT_EQ(two->description(), "PLINK .bed " + bed + ".bed; PLINK .bed " + bed + ".bed");
  o.bed.clear();
  o.bed_files = preprocess::plink_paths{bed + ".bed", bed + ".bim", bed + ".fam"};
  EXPECT_EQ(preprocess::open_inputs(o)->columns(), 4u);

  EXPECT_TRUE(
      throws_error([] { preprocess::open_inputs({}); }, errc::invalid_argument, "no input"));
  o.npy = "m.npy";
  EXPECT_TRUE(throws_error([&] { preprocess::open_inputs(o); }, errc::invalid_argument,
                           "must be of one format"));
  o = {};
  o.bed = {bed};
  o.dosage = preprocess::vcf_options::dosage_field::ds;
  EXPECT_TRUE(throws_error([&] { preprocess::open_inputs(o); }, errc::invalid_argument,
                           "apply to VCF input"));
  o.dosage = preprocess::vcf_options::dosage_field::none;
  o.ref_first = true;
  EXPECT_TRUE(throws_error([&] { preprocess::open_inputs(o); }, errc::invalid_argument,
                           "apply to BGEN input"));
  o.ref_first = false;
  o.csv_format.ids = preprocess::csv_presence::present;
  EXPECT_TRUE(throws_error([&] { preprocess::open_inputs(o); }, errc::invalid_argument,
                           "apply to CSV input"));

  test::temp_dir dir;
  const std::string list = "# inputs\n" + bed + "\n\n" + "m.npy\n";
  test::write_file(dir / "list.txt", std::vector<char>(list.begin(), list.end()));
  o = {};
  o.inputs_list = dir / "list.txt";
  EXPECT_TRUE(throws_error([&] { preprocess::open_inputs(o); }, errc::invalid_argument,
                           "lists " + (dir / "m.npy").string()));
  o.inputs_list = dir / "absent.txt";
  EXPECT_TRUE(throws_error([&] { preprocess::open_inputs(o); }, errc::not_found, "absent.txt"));
}

TEST(InputsTest, ConversionDefaultsFollowTheKindOfInput) {
  using preprocess::codec_choice;
  const preprocess::conversion_choices none;
  auto g = preprocess::make_convert_options(value_type::genotype, none, "out");
  EXPECT_EQ(g.out, "out");
  EXPECT_EQ(g.codec, codec_choice::genotype);
  EXPECT_TRUE(g.standardize);
  EXPECT_FALSE(g.shuffle);
  EXPECT_EQ(g.dtype, value_type::float64);
  auto d = preprocess::make_convert_options(value_type::dosage, none, "out");
  EXPECT_EQ(d.codec, codec_choice::zstd);
  EXPECT_TRUE(d.keep_dosages);
  EXPECT_TRUE(d.shuffle);
  auto f = preprocess::make_convert_options(value_type::float64, none, "out");
  EXPECT_EQ(f.codec, codec_choice::zstd);
  EXPECT_FALSE(f.standardize);
  EXPECT_FALSE(f.shuffle);

  preprocess::conversion_choices c;
  c.hard_call_threshold = 0.2;
  d = preprocess::make_convert_options(value_type::dosage, c, "out");
  EXPECT_EQ(d.codec, codec_choice::genotype);
  EXPECT_EQ(d.hard_call_threshold, 0.2);
  c = {};
  c.dtype = value_type::float32;
  d = preprocess::make_convert_options(value_type::dosage, c, "out");
  EXPECT_FALSE(d.keep_dosages);
  EXPECT_FALSE(d.shuffle);
  EXPECT_TRUE(d.standardize);
  EXPECT_EQ(d.dtype, value_type::float32);
  c = {};
  c.codec = codec_choice::lz4;
  c.level = 5;
  c.shuffle = false;
  c.standardize = true;
  c.sex_file = "sex.txt";
  c.overwrite = true;
  f = preprocess::make_convert_options(value_type::float64, c, "out");
  EXPECT_EQ(f.codec, codec_choice::lz4);
  EXPECT_EQ(f.level, 5);
  EXPECT_FALSE(f.shuffle);
  EXPECT_TRUE(f.standardize);
  EXPECT_EQ(f.sex_file, "sex.txt");
  EXPECT_TRUE(f.overwrite);
}

}  // namespace
}  // namespace colflow
