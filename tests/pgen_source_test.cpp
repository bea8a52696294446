// The PLINK 2 reader (preprocess/pgen_source.hpp) on files plink2 writes at test time from the
// shared data and from its own --dummy: hard calls against the .bed plink2 --make-bed writes of
// the same .pgen (byte for byte, with its .bim and .fam) and against --export A; dosages against
// --export A to 1/16384. Skipped, saying so, when plink2 is absent. Also colflow export --pfile:
// read back here (mode 0x02 and 0x10 files), and given to plink2, whose tables on the export
// equal its tables on the .pgen the store was made from.
#include <cmath>
#include <fstream>

#include "colflow/codec/genotype_codec.hpp"
#include "colflow/preprocess/bed_source.hpp"
#include "pgen_source_fixture.hpp"
#include "shared_data.hpp"

namespace colflow {
namespace {

using preprocess::pgen_paths;
using preprocess::pgen_source;

// plink2 --export A of a fileset: per sample, per variant, the count of the allele its
// header names, or "NA".
struct export_a {
  std::vector<std::string> counted;            // per variant
  std::vector<std::vector<std::string>> rows;  // per sample, per variant
};

export_a read_export_a(const std::string& raw) {
  export_a e;
  std::ifstream in(raw);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = preprocess::split_whitespace(line);
  for (std::size_t c = 6; c < header.size(); ++c)
    e.counted.push_back(header[c].substr(header[c].rfind('_') + 1));
  while (std::getline(in, line)) {
    std::vector<std::string> f = preprocess::split_whitespace(line);
    e.rows.emplace_back(f.begin() + 6, f.end());
  }
  return e;
}

// The ALT count plink2 exported for sample i of variant j (ALT = A1), NaN for NA.
double exported_alt(const export_a& e, std::size_t i, std::size_t j, const column_info& c) {
  const std::string& v = e.rows[i][j];
  if (v == "NA") return NAN;
  EXPECT_TRUE(e.counted[j] == c.a1 || e.counted[j] == c.a2) << c.id;
  return e.counted[j] == c.a1 ? std::stod(v) : 2 - std::stod(v);
}

// Every column of a genotype source against the .bed plink2 wrote of the same fileset and
// against its --export A; also read back in reverse through fetch and decode.
void expect_equal_to_plink2_bed(pgen_source& source, const std::string& bed_prefix,
                                const export_a& exported) {
  preprocess::bed_source bed(preprocess::plink_paths::from_prefix(bed_prefix));
  ASSERT_EQ(source.kind(), value_type::genotype);
  ASSERT_EQ(source.columns(), bed.columns());
  ASSERT_EQ(source.rows(), bed.rows());
  const auto ours = source.samples(), theirs = bed.samples();
  for (std::size_t i = 0; i < ours.size(); ++i) {
    EXPECT_EQ(ours[i].fid, theirs[i].fid);
    EXPECT_EQ(ours[i].iid, theirs[i].iid);
    EXPECT_EQ(ours[i].sex, theirs[i].sex) << ours[i].iid;
    EXPECT_EQ(ours[i].phenotype, theirs[i].phenotype) << ours[i].iid;
  }
  const std::uint64_t n = source.rows(), bytes = genotype_column_bytes(n);
  std::vector<std::vector<std::uint8_t>> expected(source.columns(),
                                                  std::vector<std::uint8_t>(bytes));
  std::vector<std::uint8_t> codes(bytes);
  for (std::uint64_t j = 0; j < source.columns(); ++j) {
    const column_info c = source.column(j), b = bed.column(j);
    ASSERT_EQ(c.id, b.id);
    EXPECT_EQ(c.chrom, b.chrom);
    EXPECT_EQ(c.pos, b.pos);
    EXPECT_EQ(c.a1, b.a1) << c.id << ": A1 is ALT";
    EXPECT_EQ(c.a2, b.a2) << c.id;
    bed.read_genotypes(j, expected[j]);
    source.read_genotypes(j, codes);
    ASSERT_EQ(codes, expected[j]) << "variant " << j << " (" << c.id << ")";
    for (std::uint64_t i = 0; i < n; ++i) {
      const double alt = exported_alt(exported, i, j, c);
      const int d = test::dosage_at(codes, i);
      ASSERT_EQ(d < 0, std::isnan(alt)) << c.id << " sample " << i;
      if (d >= 0) {
        ASSERT_EQ(d, alt) << c.id << " sample " << i;
      }
    }
  }
  for (std::uint64_t j = source.columns(); j-- > 0;) {
    source.decode_genotypes(*source.fetch(j), codes);
    ASSERT_EQ(codes, expected[j]) << "variant " << j << " fetched in reverse order";
  }
}

TEST(PgenSourceTest, HardCallsEqualPlink2sBedAndExportA) {
  REQUIRE_SHARED_DATA();
  REQUIRE_PLINK2();
  for (const std::string vzs : {"", " vzs"}) {
    test::temp_dir dir;
    const std::string p = (dir / "x").string();
    test::run_plink2("--bfile " + test::dataset("bed-reader/some_missing") + " --make-pgen" + vzs +
                     " --out " + p);
    test::run_plink2("--pfile " + p + (vzs.empty() ? "" : " vzs") + " --make-bed --out " + p + "b");
    test::run_plink2("--pfile " + p + (vzs.empty() ? "" : " vzs") + " --export A --out " + p);
    ASSERT_EQ(std::filesystem::exists(p + ".pvar.zst"), !vzs.empty());
    pgen_source source(pgen_paths::from_prefix(p));
    EXPECT_EQ(source.storage_mode(), 0x10);
    expect_equal_to_plink2_bed(source, p + "b", read_export_a(p + ".raw"));
  }
}

TEST(PgenSourceTest, LdCompressedAndDifferenceListRecordsDecodeAsPlink2) {
  REQUIRE_SHARED_DATA();
  REQUIRE_PLINK2();
  test::temp_dir dir;
  const std::string p = (dir / "x").string();
  // uk10k's 1 Mb of chromosome 1 (300 of its samples): plink2 2.00a3.5 LD-compresses about 500
  // of its 6717 records, one of them inverted (rs9662595), where HapMap3's it does not.
  test::run_plink2("--bfile " + test::dataset("uk10k/uk10k_chr1_1mb") +
                   " --thin-indiv-count 300 --seed 1 --make-pgen --out " + p);
  test::run_plink2("--pfile " + p + " --make-bed --out " + p + "b");
  test::run_plink2("--pfile " + p + " --export A --out " + p);
  pgen_source source(pgen_paths::from_prefix(p));
  const std::vector<std::uint64_t> types = source.record_types();
  // plink2 writes each kind of main track here: plain, 1-bit, LD-compressed (plain and
  // inverted) and the difference lists from all hom-REF.
  for (const unsigned t : {0u, 1u, 2u, 3u, 4u})
    EXPECT_GT(types[t], 0u) << "no record of main-track type " << t;
  expect_equal_to_plink2_bed(source, p + "b", read_export_a(p + ".raw"));
}

// Dosages of sample i, variant j against --export A: the same 1/16384 step.
void expect_dosages_equal_export_a(const std::string& p) {
  test::run_plink2("--pfile " + p + " --export A --out " + p);
  const export_a e = read_export_a(p + ".raw");
  pgen_source source(pgen_paths::from_prefix(p));
  ASSERT_EQ(source.kind(), value_type::dosage);
  std::vector<std::uint16_t> d(source.rows());
  std::uint64_t fractional = 0, missing = 0;
  for (std::uint64_t j = 0; j < source.columns(); ++j) {
    const column_info c = source.column(j);
    source.read_dosages(j, d);
    for (std::uint64_t i = 0; i < source.rows(); ++i) {
      const double alt = exported_alt(e, i, j, c);
      if (std::isnan(alt)) {
        ++missing;
        ASSERT_EQ(d[i], dosage_missing) << c.id << " sample " << i;
        continue;
      }
      ASSERT_EQ(d[i], std::lround(alt * dosage_one)) << c.id << " sample " << i << ": " << alt;
      fractional += d[i] % dosage_one != 0;
    }
  }
  EXPECT_GT(fractional, 0u);
  EXPECT_GT(missing, 0u);
}

TEST(PgenSourceTest, DosagesEqualPlink2ExportAWithPhaseDropped) {
  REQUIRE_PLINK2();
  test::temp_dir dir;
  // Dense dosages (bit-array dosage tracks) and sparse ones (difference lists), with phase.
  for (const std::string freq : {"0.3", "0.02"}) {
    const std::string p = (dir / ("d" + freq)).string();
    test::run_plink2("--dummy 29 300 0.05 dosage-freq=" + freq +
                     " phase-freq=0.5 --seed 5 --make-pgen --out " + p);
    pgen_source source(pgen_paths::from_prefix(p));
    const std::vector<std::uint64_t> types = source.record_types();
    std::uint64_t difflist = 0, bitarray = 0;
    for (unsigned t = 0; t < 256; ++t) {
      difflist += (t & 0x60) == 0x20 ? types[t] : 0;
      bitarray += (t & 0x60) == 0x60 ? types[t] : 0;
    }
    EXPECT_GT(freq == "0.3" ? bitarray : difflist, 0u) << freq;
    EXPECT_GT(source.phased_variants(), 0u);
    ASSERT_EQ(source.notes().size(), 1u);
    EXPECT_NE(source.notes()[0].find("dropped the phase of"), std::string::npos);
    expect_dosages_equal_export_a(p);
  }
}

// ---- colflow export --pfile ---------------------------------------------------------------

// Runs the colflow program; a failure is a test failure carrying its output.
void run_colflow(const std::string& args) {
  std::string out;
  ASSERT_EQ(test::run_cli(args, out), 0) << "colflow " << args << "\n" << out;
}

// The storage mode byte of a .pgen.
int storage_mode_of(const std::string& pgen) {
  const std::vector<char> b = test::read_file(pgen);
  return b.size() < 3 ? -1 : static_cast<unsigned char>(b[2]);
}

// Two sources hold the same samples, variants and values (codes, or dosages for a dosage
// source).
void expect_same_source(pgen_source& a, pgen_source& b) {
  ASSERT_EQ(a.kind(), b.kind());
  ASSERT_EQ(a.rows(), b.rows());
  ASSERT_EQ(a.columns(), b.columns());
  const auto sa = a.samples(), sb = b.samples();
  for (std::size_t i = 0; i < sa.size(); ++i) {
    EXPECT_EQ(sa[i].fid, sb[i].fid);
    EXPECT_EQ(sa[i].iid, sb[i].iid);
    EXPECT_EQ(sa[i].father, sb[i].father);
    EXPECT_EQ(sa[i].mother, sb[i].mother);
    EXPECT_EQ(sa[i].sex, sb[i].sex) << sa[i].iid;
    EXPECT_EQ(sa[i].phenotype, sb[i].phenotype) << sa[i].iid;
  }
  std::vector<std::uint8_t> ca(genotype_column_bytes(a.rows())), cb(ca.size());
  std::vector<std::uint16_t> da(a.rows()), db(a.rows());
  for (std::uint64_t j = 0; j < a.columns(); ++j) {
    const column_info x = a.column(j), y = b.column(j);
    EXPECT_EQ(x.chrom, y.chrom);
    EXPECT_EQ(x.id, y.id);
    EXPECT_EQ(x.cm, y.cm);
    EXPECT_EQ(x.pos, y.pos);
    EXPECT_EQ(x.a1, y.a1) << x.id;
    EXPECT_EQ(x.a2, y.a2) << x.id;
    if (a.kind() == value_type::dosage) {
      a.read_dosages(j, da);
      b.read_dosages(j, db);
      ASSERT_EQ(da, db) << "variant " << j;
    } else {
      a.read_genotypes(j, ca);
      b.read_genotypes(j, cb);
      ASSERT_EQ(ca, cb) << "variant " << j;
    }
  }
}

TEST(PgenExportTest, HandMadeCallsAndDosagesReadBackAsTheyWere) {
  test::temp_dir dir;
  const std::string p = (dir / "h").string();
  // 7 samples: plain calls with missing ones; all hom-REF but for a difference list (sample 1
  // hom-ALT, sample 4 missing).
  const std::vector<pgen_record> calls = {{0x00, {0x24, 0x3b}}, {0x04, {0x02, 0x01, 0x0e, 0x03}}};
  // Plus a record with every sample's dosage (0, 0.5, 1, missing, 2, 1.2207, 0.0061) and the
  // hard calls plink2 would give them (0, missing, 1, missing, 2, missing, 0).
  const std::vector<std::uint16_t> d = {0, 8192, 16384, 0xffff, 32768, 20000, 100};
  pgen_record dosages{0x40, {0xdc, 0x0e}};
  for (const std::uint16_t v : d) {
    dosages.bytes.push_back(static_cast<std::uint8_t>(v & 0xff));
    dosages.bytes.push_back(static_cast<std::uint8_t>(v >> 8));
  }
  for (const bool with_dosages : {false, true}) {
    std::vector<pgen_record> records = calls;
    if (with_dosages) records.push_back(dosages);
    write_pgen_fileset(p, 7, records);
    const std::string st = p + (with_dosages ? "d.cf" : "g.cf"), e = p + (with_dosages ? "d" : "g");
    run_colflow("preprocess --quiet --pfile " + p + " --out " + st);
    run_colflow("export " + st + " --quiet --pfile " + e);
    // Mode 0x02: 12 header bytes, 2 per record. Mode 0x10: 12, a block offset (8), a type and a
    // 1-byte length per record, records of 2 + 14 bytes.
    const std::uint64_t m = records.size();
    EXPECT_EQ(storage_mode_of(e + ".pgen"), with_dosages ? 0x10 : 0x02);
    EXPECT_EQ(std::filesystem::file_size(e + ".pgen"), with_dosages ? 20 + m * 18 : 12 + m * 2);
    pgen_source original(pgen_paths::from_prefix(p)), exported(pgen_paths::from_prefix(e));
    if (with_dosages) {
      EXPECT_EQ(exported.record_types()[0x40], m);
    }
    expect_same_source(original, exported);
    if (with_dosages) {
      std::vector<std::uint16_t> back(7);
      exported.read_dosages(2, back);
      EXPECT_EQ(back, d);
      // The third record's hard calls (at byte 20 + 3 x 2 + 2 x 16): plink2's, written by hand
      // above; with --hard-call-threshold 0.25, 1.2207 becomes a heterozygous call (sample 5).
      std::vector<char> b = test::read_file(e + ".pgen");
      EXPECT_EQ(static_cast<unsigned char>(b[58]), 0xdcu);
      EXPECT_EQ(static_cast<unsigned char>(b[59]), 0x0eu);
      run_colflow("export " + st + " --quiet --force --hard-call-threshold 0.25 --pfile " + e);
      b = test::read_file(e + ".pgen");
      EXPECT_EQ(static_cast<unsigned char>(b[58]), 0xdcu);
      EXPECT_EQ(static_cast<unsigned char>(b[59]), 0x06u);
    }
    // Existing files are refused without --force and replaced with it.
    std::string out;
    EXPECT_NE(test::run_cli("export " + st + " --quiet --pfile " + e, out), 0);
    EXPECT_NE(out.find("already exists"), std::string::npos) << out;
    run_colflow("export " + st + " --quiet --force --pfile " + e);
    EXPECT_NE(test::run_cli(
                  "export " + st + " --quiet --npy " + e + ".npy --hard-call-threshold 0.2", out),
              0);
    EXPECT_NE(out.find("--hard-call-threshold needs --bed or --pfile"), std::string::npos) << out;
  }
}

// plink2's reports on fileset `p` (--freq, --missing, --export A and `more`) as OUT.*.
void plink2_reports(const std::string& p, const std::string& out, const std::string& more) {
  test::run_plink2("--pfile " + p + " --freq --missing --export A " + more + " --out " + out);
}

// Every report plink2 wrote as `a`.* (its .log aside) is byte for byte its `b`.*; returns how
// many were compared.
std::size_t expect_same_reports(const std::filesystem::path& dir, const std::string& a,
                                const std::string& b) {
  std::size_t compared = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(a + ".", 0) != 0 || name.ends_with(".log")) continue;
    const std::string other = b + name.substr(a.size());
    EXPECT_TRUE(std::filesystem::exists(dir / other)) << other;
    EXPECT_TRUE(test::read_file(entry.path()) == test::read_file(dir / other))
        << name << " and " << other << " differ";
    ++compared;
  }
  return compared;
}

TEST(PgenExportTest, Plink2GivesTheSameTablesOnTheExportOfHardCalls) {
  REQUIRE_SHARED_DATA();
  REQUIRE_PLINK2();
  struct input {
    std::string bfile, more;
  };
  // uk10k's slice as in the LD-compression test, with its phenotype for --glm; some_missing has
  // missing calls.
  const std::string uk10k = test::dataset("uk10k/uk10k_chr1_1mb");
  const std::vector<input> inputs = {
      {test::dataset("bed-reader/some_missing"), ""},
      {uk10k + " --thin-indiv-count 300 --seed 1",
       "--pheno " + test::dataset("uk10k/test.phen") + " --glm allow-no-covars"}};
  for (const input& in : inputs) {
    test::temp_dir dir;
    const std::string d = dir.path().string() + "/";
    test::run_plink2("--bfile " + in.bfile + " --make-pgen --out " + d + "x");
    run_colflow("preprocess --quiet --pfile " + d + "x --out " + d + "s.cf");
    run_colflow("export " + d + "s.cf --quiet --pfile " + d + "y");
    EXPECT_EQ(storage_mode_of(d + "y.pgen"), 2);
    plink2_reports(d + "x", d + "px", in.more);
    plink2_reports(d + "y", d + "py", in.more);
    EXPECT_EQ(expect_same_reports(dir.path(), "px", "py"), in.more.empty() ? 4u : 5u) << in.bfile;
    pgen_source original(pgen_paths::from_prefix(d + "x")),
        exported(pgen_paths::from_prefix(d + "y"));
    expect_same_source(original, exported);
  }
}

// The 2-bit codes of every column of a .bed, padding cleared.
std::vector<std::vector<std::uint8_t>> bed_codes(const std::string& prefix) {
  preprocess::bed_source bed(preprocess::plink_paths::from_prefix(prefix));
  std::vector<std::vector<std::uint8_t>> out(
      bed.columns(), std::vector<std::uint8_t>(genotype_column_bytes(bed.rows())));
  for (std::uint64_t j = 0; j < bed.columns(); ++j) bed.read_genotypes(j, out[j]);
  return out;
}

// A .pgen with dosages also holds hard calls, which plink2 made at the threshold it was given
// when it wrote the file (0.3 here): a genotype store keeps those calls, as plink2 --make-bed
// writes them, and --hard-call-threshold calls them from the dosages instead, as plink2 does
// when given one.
TEST(PgenSourceTest, GenotypeStoreOfDosagesKeepsThePgensHardCalls) {
  REQUIRE_PLINK2();
  test::temp_dir dir;
  const std::string d = dir.path().string() + "/";
  test::run_plink2("--dummy 29 300 0.05 dosage-freq=0.3 --seed 7 --make-pgen --out " + d + "x");
  test::run_plink2("--pfile " + d + "x --hard-call-threshold 0.3 --make-pgen --out " + d + "t");
  test::run_plink2("--pfile " + d + "t --make-bed --out " + d + "pb");
  test::run_plink2("--pfile " + d + "t --hard-call-threshold 0.1 --make-bed --out " + d + "pb1");
  run_colflow("preprocess --quiet --pfile " + d + "t --codec genotype --out " + d + "g.cf");
  run_colflow("export " + d + "g.cf --quiet --bed " + d + "gb");
  run_colflow("preprocess --quiet --pfile " + d + "t --hard-call-threshold 0.1 --out " + d +
              "g1.cf");
  run_colflow("export " + d + "g1.cf --quiet --bed " + d + "gb1");
  const auto stored = bed_codes(d + "pb"), called = bed_codes(d + "pb1");
  ASSERT_NE(stored, called) << "the test needs calls that the two thresholds make differently";
  EXPECT_EQ(bed_codes(d + "gb"), stored);
  EXPECT_EQ(bed_codes(d + "gb1"), called);
}

TEST(PgenExportTest, Plink2GivesTheSameTablesOnTheExportOfDosages) {
  REQUIRE_PLINK2();
  test::temp_dir dir;
  const std::string d = dir.path().string() + "/";
  // Dosages with missing ones and a quantitative phenotype for --glm; the hard calls plink2
  // derives at its default threshold, as the export does.
  test::run_plink2("--dummy 29 300 0.05 dosage-freq=0.3 scalar-pheno --seed 7 --make-pgen --out " +
                   d + "x");
  run_colflow("preprocess --quiet --pfile " + d + "x --out " + d + "s.cf");
  run_colflow("export " + d + "s.cf --quiet --pfile " + d + "y");
  EXPECT_EQ(storage_mode_of(d + "y.pgen"), 0x10);
  const std::string glm = "--glm allow-no-covars";
  plink2_reports(d + "x", d + "px", glm);
  plink2_reports(d + "y", d + "py", glm);
  EXPECT_EQ(expect_same_reports(dir.path(), "px", "py"), 5u);
  pgen_source original(pgen_paths::from_prefix(d + "x")),
      exported(pgen_paths::from_prefix(d + "y"));
  expect_same_source(original, exported);
  expect_dosages_equal_export_a(d + "y");
}

TEST(PgenExportTest, Plink2MakesTheOriginalBedOfTheExportOfABedStore) {
  REQUIRE_SHARED_DATA();
  REQUIRE_PLINK2();
  // small has cM positions (the .pvar's CM column), parents and a phenotype; some_missing
  // missing calls.
  for (const std::string name : {"bed-reader/small", "bed-reader/some_missing"}) {
    test::temp_dir dir;
    const std::string d = dir.path().string() + "/", bfile = test::dataset(name);
    run_colflow("preprocess --quiet --bed " + bfile + " --out " + d + "s.cf");
    run_colflow("export " + d + "s.cf --quiet --pfile " + d + "y");
    test::run_plink2("--pfile " + d + "y --make-bed --out " + d + "z");
    EXPECT_TRUE(test::read_file(d + "z.bed") == test::read_file(bfile + ".bed")) << name;
    preprocess::bed_source original(preprocess::plink_paths::from_prefix(bfile)),
        back(preprocess::plink_paths::from_prefix(d + "z"));
    ASSERT_EQ(original.columns(), back.columns());
    for (std::uint64_t j = 0; j < original.columns(); ++j) {
      const column_info a = original.column(j), b = back.column(j);
      EXPECT_EQ(a.chrom + " " + a.id + " " + a.cm + " " + a.pos + " " + a.a1 + " " + a.a2,
                b.chrom + " " + b.id + " " + b.cm + " " + b.pos + " " + b.a1 + " " + b.a2);
    }
    const auto sa = original.samples(), sb = back.samples();
    ASSERT_EQ(sa.size(), sb.size());
    for (std::size_t i = 0; i < sa.size(); ++i)
      EXPECT_EQ(
          sa[i].fid + " " + sa[i].iid + " " + sa[i].father + " " + sa[i].mother + " " + sa[i].sex,
          sb[i].fid + " " + sb[i].iid + " " + sb[i].father + " " + sb[i].mother + " " + sb[i].sex);
  }
}

TEST(PgenSourceTest, MultiallelicVariantIsRefusedAsPlink2MakeBedRefusesIt) {
  REQUIRE_PLINK2();
  test::temp_dir dir;
  {
    std::ofstream vcf(dir / "m.vcf");
    vcf << "##fileformat=VCFv4.2\n##contig=<ID=1,length=1000>\n"
           "##FORMAT=<ID=GT,Number=1,Type=String,Description=\"Genotype\">\n"
           "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\ts1\ts2\ts3\ts4\ts5\n"
           "1\t10\tv1\tA\tG\t.\t.\t.\tGT\t0/0\t0/1\t1/1\t./.\t0|1\n"
           "1\t20\tv2\tA\tG,T\t.\t.\t.\tGT\t0/0\t0/2\t1/2\t2/2\t0/1\n";
  }
  const std::string p = (dir / "m").string();
  test::run_plink2("--vcf " + (dir / "m.vcf").string() + " --make-pgen --out " + p);
  std::string out;
  EXPECT_NE(test::run_command("plink2 --pfile " + p + " --make-bed --out " + p + "b", out), 0)
      << "plink2 --make-bed no longer refuses multiallelic variants:\n"
      << out;
  expect_bad_input([&] { pgen_source s(pgen_paths::from_prefix(p)); }, "multiallelic", "v2");
}

}  // namespace
}  // namespace colflow
