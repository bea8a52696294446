// The preprocessor on the real PLINK files of ../shared/data: values, statistics against
// plink2, malformed inputs, atomicity and determinism, and dense CSV and .npy inputs. Exports
// and stopped runs are tested in preprocess_export_test.cpp, the inputs (formats, chromosome
// codes, several filesets) in preprocess_inputs_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "colflow/preprocess/csv_source.hpp"
#include "colflow/preprocess/npy_source.hpp"
#include "preprocess_fixture.hpp"

namespace colflow::preprocess_tests {
namespace {

const std::filesystem::path data_dir = COLFLOW_SHARED_DATA_DIR;
const std::string cli = COLFLOW_CLI_PATH;

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

}  // namespace
}  // namespace colflow::preprocess_tests
