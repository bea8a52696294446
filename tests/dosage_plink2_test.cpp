// Dosage and hard-call stores made from BGEN and VCF files against plink2 reading the same files:
// `stats` against --freq, `assoc` against --glm, and hard calls against the .bed
// the BGEN files were exported from; the dosages themselves against cbgen, an independent BGEN
// reader from PyPI. plink2 2.00a3.5 prints 6 significant digits, so values are
// compared at the precision it prints (test::same_as_printed).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "colflow/colflow.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

// Runs the colflow command; a failure is a test failure carrying its output.
void run_colflow(const std::string& args) {
  std::string out;
  ASSERT_EQ(test::run_cli(args, out), 0) << args << "\n" << out;
}

// Imputation-like dosages made by plink2: 1,200 samples x 500 variants, 60% of the dosages
// fractional, 2% missing, a quantitative phenotype. Returns the .pgen prefix.
std::string dummy_dosages(const std::filesystem::path& dir) {
  const std::string prefix = (dir / "dummy").string();
  test::run_plink2(
      "--dummy 1200 500 0.02 dosage-freq=0.6 scalar-pheno acgt --seed 7 "
      "--make-pgen --out " +
      prefix);
  return prefix;
}

void compare_freq(const std::string& ours, const std::string& plink2_prefix,
                  const std::string& what) {
  const test::text_table t = test::read_table(ours);
  const test::text_table f = test::read_table(plink2_prefix + ".afreq");
  ASSERT_EQ(t.rows.size(), f.rows.size()) << what;
  const std::size_t c_id = t.column("ID"), c_a1 = t.column("A1"), c_obs = t.column("OBS_CT"),
                    c_miss = t.column("MISSING_CT"), c_freq = t.column("A1_FREQ");
  for (std::size_t j = 0; j < t.rows.size(); ++j) {
    const auto& r = t.rows[j];
    const std::string where = what + " " + r[c_id];
    ASSERT_EQ(r[c_id], f.rows[j][f.column("ID")]) << where;
    ASSERT_EQ(r[c_a1], f.rows[j][f.column("ALT")]) << where << ": the counted allele";
    EXPECT_EQ(2 * std::stoull(r[c_obs]), std::stoull(f.rows[j][f.column("OBS_CT")])) << where;
    // plink2's .vmiss counts missing hard calls (a fractional dosage is one); .afreq's
    // OBS_CT counts the alleles of the observed dosages, as colflow does.
    EXPECT_EQ(std::stoull(r[c_obs]) + std::stoull(r[c_miss]), 1200u) << where;
    EXPECT_TRUE(test::same_as_printed(std::stod(r[c_freq]), f.rows[j][f.column("ALT_FREQS")]))
        << where << " A1_FREQ " << r[c_freq] << " vs " << f.rows[j][f.column("ALT_FREQS")];
  }
}

void compare_glm(const std::string& ours, const std::string& theirs, const std::string& what) {
  const test::text_table a = test::read_table(ours), p = test::read_table(theirs);
  ASSERT_EQ(a.rows.size(), p.rows.size()) << what;
  std::size_t compared = 0;
  for (std::size_t j = 0; j < a.rows.size(); ++j) {
    const auto& r = a.rows[j];
    const auto& q = p.rows[j];
    const std::string where = what + " " + r[a.column("ID")];
    ASSERT_EQ(r[a.column("ID")], q[p.column("ID")]) << where;
    // plink2 --glm tests the minor allele unless told otherwise (omit-ref): when its A1 is
    // our A2, BETA and T flip sign.
    const bool same_allele = r[a.column("A1")] == q[p.column("A1")];
    ASSERT_TRUE(same_allele || r[a.column("A2")] == q[p.column("A1")]) << where;
    EXPECT_EQ(r[a.column("N_OBS")], q[p.column("OBS_CT")]) << where;
    if (q[p.column("P")] == "NA") {
      EXPECT_NE(r[a.column("NOTE")], ".") << where;
      continue;
    }
    for (const std::string c : {"BETA", "SE", "T_STAT", "P"}) {
      const double sign = same_allele || c == "SE" || c == "P" ? 1 : -1;
      EXPECT_TRUE(test::same_as_printed(sign * std::stod(r[a.column(c)]), q[p.column(c)]))
          << where << " " << c << ": " << r[a.column(c)] << " vs " << q[p.column(c)];
    }
    ++compared;
  }
  EXPECT_GT(compared, a.rows.size() / 2) << what;
}

// One way of handing the same dosages to both programs: how plink2 exports them, and how
// colflow and plink2 then read the file.
struct dosage_input {
  std::string label, export_args, colflow_args, plink2_args;
};

std::vector<dosage_input> dosage_inputs(const std::string& x) {
  const std::string bgen = "--bgen " + x + ".bgen ", sample = "--sample " + x + ".sample";
  return {
      {"bgen-1.1", "bgen-1.1", bgen + sample, bgen + "ref-last " + sample},
      {"bgen-1.2 bits=8", "bgen-1.2 bits=8", bgen + sample, bgen + "ref-last " + sample},
      {"bgen-1.2", "bgen-1.2", bgen + sample, bgen + "ref-last " + sample},
      {"bgen-1.3", "bgen-1.3", bgen + sample, bgen + "ref-last " + sample},
      {"vcf DS", "vcf bgz vcf-dosage=DS-force", "--vcf " + x + ".vcf.gz --dosage DS",
       "--vcf " + x + ".vcf.gz dosage=DS"},
  };
}

TEST(DosageInputTest, DosageStoresFromBgenAndVcfEqualPlink2FreqAndGlm) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  const std::string pgen = dummy_dosages(dir.path());
  const std::string d = dir.path().string() + "/";
  // A covariate with missing values, for plink2 and colflow alike.
  {
    std::ofstream cov(d + "cov.txt");
    cov << "#IID C1\n";
    for (int i = 0; i < 1200; ++i)
      cov << "per" << i << " " << (i % 17 == 3 ? "NA" : std::to_string((i * 37 % 101) / 10.0))
          << "\n";
  }
  for (const dosage_input& in : dosage_inputs(d + "x")) {
    SCOPED_TRACE(in.label);
    test::run_plink2("--pfile " + pgen + " --export " + in.export_args + " --out " + d + "x");
    run_colflow("preprocess --quiet --force " + in.colflow_args + " --out " + d + "s.cf");
    ASSERT_EQ(store::open(d + "s.cf").type(), value_type::dosage);
    run_colflow("stats " + d + "s.cf --quiet --digits 12 --out " + d + "s.tsv");
    test::run_plink2(in.plink2_args + " --freq --out " + d + "pf");
    compare_freq(d + "s.tsv", d + "pf", in.label);

    run_colflow("assoc " + d + "s.cf --quiet --digits 12 --pheno " + pgen + ".psam --covar " + d +
                "cov.txt --out " + d + "a");
    test::run_plink2(in.plink2_args + " --pheno " + pgen + ".psam --pheno-name PHENO1 --covar " +
                     d + "cov.txt --glm hide-covar --out " + d + "pa");
    compare_glm(d + "a.PHENO1.assoc.tsv", d + "pa.PHENO1.glm.linear", in.label);
  }
}

// Every dosage of a dosage store made from BGEN 1.2 (8 and 16 bits) and 1.3 equals cbgen's
// expected count of the first allele to within the rounding to PLINK 2's resolution (1/16384 of
// an allele): PLINK 2 adds 2^(B-1)/(2^B-1) units before truncating, so at most 0.5 + 1/510 units
// away at 8 bits; missing values agree. (cbgen does not read layout 1, v1.1:
// bgen_source_test checks those files against plink2's decoding.)
TEST(DosageInputTest, BgenDosagesEqualAnIndependentReader) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  const std::string pgen = dummy_dosages(dir.path());
  const std::string d = dir.path().string() + "/";
  for (const std::string format : {"bgen-1.2 bits=8", "bgen-1.2", "bgen-1.3"}) {
    SCOPED_TRACE(format);
    test::run_plink2("--pfile " + pgen + " --export " + format + " --out " + d + "x");
    run_colflow("preprocess --quiet --force --bgen " + d + "x.bgen --sample " + d +
                "x.sample --out " + d + "s.cf");
    std::string out;
    ASSERT_EQ(test::run_command(std::string(COLFLOW_TEST_PYTHON) + " " + COLFLOW_TEST_SOURCE_DIR +
                                    "/support/cbgen_dosages.py " + d + "x.bgen " + d + "cbgen.bin",
                                out),
              0)
        << out;
    const store s = store::open(d + "s.cf");
    const auto bytes = test::read_file(d + "cbgen.bin");
    const std::size_t n = s.num_rows(), m = s.num_columns();
    ASSERT_EQ(bytes.size(), n * m * sizeof(double));
    std::vector<double> ours(n);
    std::size_t fractional = 0, missing = 0;
    for (std::size_t j = 0; j < m; ++j) {
      s.read_column(j, ours, decode_as::stored);
      for (std::size_t i = 0; i < n; ++i) {
        double theirs;
        std::memcpy(&theirs, bytes.data() + (j * n + i) * sizeof(double), sizeof theirs);
        if (std::isnan(theirs)) {
          ASSERT_TRUE(std::isnan(ours[i])) << "variant " << j << " sample " << i;
          ++missing;
          continue;
        }
        ASSERT_LE(std::fabs(ours[i] - theirs), (0.5 + 1.0 / 510) / dosage_one + 1e-12)
            << "variant " << j << " sample " << i << ": " << ours[i] << " vs " << theirs;
        fractional += ours[i] != std::round(ours[i]);
      }
    }
    EXPECT_GT(fractional, n * m / 4) << "the data should be mostly fractional dosages";
    EXPECT_GT(missing, 0u);
  }
}

TEST(DosageInputTest, HardCallStoresFromBgenAndVcfEqualTheStoreOfTheBedTheyWereExportedFrom) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  const std::string d = dir.path().string() + "/";
  const std::string bed = test::dataset("hapmap3/HapMap3");
  run_colflow("preprocess --quiet --bed " + bed + " --out " + d + "bed.cf");
  const store from_bed = store::open(d + "bed.cf");
  const std::string bgen = "--bgen " + d + "x.bgen --sample " + d + "x.sample --codec genotype";
  const std::pair<std::string, std::string> inputs[] = {{"bgen-1.1", bgen},
                                                        {"bgen-1.2 bits=8", bgen},
                                                        {"bgen-1.3", bgen},
                                                        {"vcf", "--vcf " + d + "x.vcf"},
                                                        {"vcf bgz", "--vcf " + d + "x.vcf.gz"}};
  for (const auto& [format, args] : inputs) {
    SCOPED_TRACE(format);
    test::run_plink2("--bfile " + bed + " --export " + format + " --out " + d + "x");
    run_colflow("preprocess --quiet --force " + args + " --out " + d + "calls.cf");
    const store calls = store::open(d + "calls.cf");
    ASSERT_EQ(calls.type(), value_type::genotype);
    ASSERT_EQ(calls.num_columns(), from_bed.num_columns());
    std::vector<std::byte> a(from_bed.entry(0).decoded_size), b(a.size());
    for (std::size_t j = 0; j < calls.num_columns(); ++j) {
      calls.read_payload(j, a);
      from_bed.read_payload(j, b);
      ASSERT_EQ(a, b) << "column " << j;
      ASSERT_EQ(calls.columns()[j].a1, from_bed.columns()[j].a1) << j;
      ASSERT_EQ(calls.columns()[j].chrom, from_bed.columns()[j].chrom) << j;
    }
    // BGEN's .sample keeps FID and IID; plink2's VCF export names a sample FID_IID.
    for (std::size_t i = 0; i < calls.samples().size(); ++i) {
      const sample_info& ours = calls.samples()[i];
      const sample_info& bed_sample = from_bed.samples()[i];
      if (format.starts_with("vcf")) {
        ASSERT_EQ(ours.iid, bed_sample.fid + "_" + bed_sample.iid);
      } else {
        ASSERT_EQ(ours.iid, bed_sample.iid);
        ASSERT_EQ(ours.fid, bed_sample.fid);
      }
    }
  }
}

// Malformed study inputs through the command: each refused with the file and the problem
// named, a non-zero exit, and no store left behind.
TEST(DosageInputTest, MalformedInputsAreRefusedAndLeaveNoStore) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  const std::string d = dir.path().string() + "/";
  const std::string bed = test::dataset("hapmap3/HapMap3");
  test::run_plink2("--bfile " + bed + " --chr 1 --export bgen-1.2 --out " + d + "c1");
  test::run_plink2("--bfile " + bed + " --chr 2 --export bgen-1.2 --out " + d + "c2");
  // Truncated BGEN: cut in the middle of the variant blocks.
  auto bytes = test::read_file(d + "c1.bgen");
  bytes.resize(bytes.size() / 2);
  test::write_file(d + "cut.bgen", bytes);
  // A .sample of another sample count: the first sample line dropped.
  const auto sample = test::read_file(d + "c1.sample");
  std::istringstream lines(std::string(sample.begin(), sample.end()));
  std::string line, text;
  for (int k = 0; std::getline(lines, line); ++k)
    if (k != 2) text += line + "\n";
  test::write_file(d + "short.sample", std::vector<char>(text.begin(), text.end()));
  // Per-chromosome BGEN files of other samples: chromosome 2 without the first sample.
  {
    std::ifstream fam(bed + ".fam");
    std::string fid, iid;
    fam >> fid >> iid;
    std::ofstream(d + "one.txt") << fid << " " << iid << "\n";
  }
  test::run_plink2("--bfile " + bed + " --chr 2 --remove " + d +
                   "one.txt --export bgen-1.2 --out " + d + "c2less");
  // A VCF whose header lacks the #CHROM line.
  {
    std::ofstream v(d + "bad.vcf");
    v << "##fileformat=VCFv4.2\n1\t10\trs1\tA\tG\t.\t.\t.\tGT\t0/1\n";
  }
  const std::pair<std::string, std::vector<std::string>> cases[] = {
      {"--bgen " + d + "cut.bgen --sample " + d + "c1.sample", {"cut.bgen", "variant"}},
      {"--bgen " + d + "c1.bgen --sample " + d + "short.sample", {"short.sample"}},
      {"--bgen " + d + "c1.bgen " + d + "c2less.bgen --sample " + d + "c1.sample", {"c2less.bgen"}},
      {"--vcf " + d + "bad.vcf", {"bad.vcf"}},
      {"--bgen " + d + "c1.bgen --sample " + d + "c1.sample --dosage DS", {"--dosage"}},
  };
  for (const auto& [args, words] : cases) {
    SCOPED_TRACE(args);
    std::string out;
    EXPECT_NE(test::run_cli("preprocess --quiet " + args + " --out " + d + "s.cf", out), 0);
    for (const std::string& w : words) EXPECT_NE(out.find(w), std::string::npos) << out;
    EXPECT_FALSE(std::filesystem::exists(d + "s.cf"));
  }
}

}  // namespace
}  // namespace colflow
