// colflow assoc on case/control traits against plink2 --glm firth-fallback on the shared
// datasets, with and without covariates, and on the sex chromosomes as plink2 --glm takes them
// by default (sex a covariate on X, the males alone on Y), for the logistic and linear models.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "colflow/colflow.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

// Case/control phenotypes (~30% and ~5% cases, some missing) and covariates (one with
// missing values) under colflow's IDs and plink2's.
void write_case_control_traits(const std::vector<sample_info>& samples,
                               const std::filesystem::path& dir) {
  std::mt19937_64 rng(samples.size() + 7);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unif;
  std::ofstream po(dir / "ph.txt"), pt(dir / "ph_p2.txt"), co(dir / "cv.txt"),
      ct(dir / "cv_p2.txt");
  po << "#FID IID B1 B2\n";
  pt << "#FID IID B1 B2\n";
  co << "FID IID C1 C2\n";
  ct << "FID IID C1 C2\n";
  for (std::size_t i = 0; i < samples.size(); ++i) {
    std::ostringstream y, c;
    c.precision(6);
    y << (unif(rng) < 0.05  ? "NA"
          : unif(rng) < 0.3 ? "2"
                            : "1")
      << " "
      << (unif(rng) < 0.03   ? "0"
          : unif(rng) < 0.05 ? "2"
                             : "1");
    c << normal(rng) << " " << (unif(rng) < 0.02 ? "NA" : unif(rng) < 0.5 ? "0" : "1");
    po << samples[i].fid << " " << samples[i].iid << " " << y.str() << "\n";
    pt << "f" << i << " s" << i << " " << y.str() << "\n";
    co << samples[i].fid << " " << samples[i].iid << " " << c.str() << "\n";
    ct << "f" << i << " s" << i << " " << c.str() << "\n";
  }
}

// Compares colflow's case/control table with plink2's: FIRTH?, N_OBS and missing estimates
// equal; OR, SE, Z and P (−log10 for P) within 1e-4 relative for plain fits (Z relative to
// max(|Z|, 1), −log10 P to max(its value, 1)). Two plink2 2.00a3.5 inexactitudes widen that:
// - its Firth fits stop about 1e-3 from the maximum (the scans above hold colflow's Firth
//   estimates to 1e-6 of an independent fit): 2e-3 on rows with FIRTH? Y;
// - in a scan of many variants, the SE of a variant with missing calls is off by up to 1%
//   (the same variant alone, --snp, gets colflow's SE; the test below checks some): on rows
//   with fewer observations than the phenotype's samples only OR (exact) is compared.
// Returns the number of Firth fits compared.
std::size_t compare_with_plink2(const std::filesystem::path& ours,
                                const std::filesystem::path& theirs, const std::string& what,
                                bool sex_chromosomes = false) {
  const test::text_table a = test::read_table(ours), p = test::read_table(theirs);
  const std::size_t a_chr = a.column("CHR"), a_id = a.column("ID"), a_a1 = a.column("A1"),
                    a_firth = a.column("FIRTH?"), a_n = a.column("N_OBS"),
                    a_note = a.column("NOTE");
  const std::size_t p_id = p.column("ID"), p_a1 = p.column("A1"), p_firth = p.column("FIRTH?"),
                    p_n = p.column("OBS_CT"), p_p = p.column("P"), p_err = p.column("ERRCODE");
  std::map<std::string, std::size_t> line_of;
  for (std::size_t j = 0; j < p.rows.size(); ++j)  // the column's test, not SEX's on X
    if (p.rows[j][p.column("TEST")] == "ADD") line_of[p.rows[j][p_id]] = j;
  // The phenotype's samples: the largest N_OBS (on each chromosome: X and Y use fewer).
  std::map<std::string, std::uint64_t> samples;
  for (const auto& r : a.rows)
    samples[r[a_chr]] = std::max<std::uint64_t>(samples[r[a_chr]], std::stoull(r[a_n]));
  std::size_t compared = 0, firth = 0;
  for (const auto& r : a.rows) {
    if (test::is_sex_or_mt_chromosome(r[a_chr]) != sex_chromosomes) continue;
    const std::string where = what + " " + r[a_id];
    const auto it = line_of.find(r[a_id]);
    if (it == line_of.end()) {
      EXPECT_NE(r[a_note], ".") << where << ": plink2 skipped it";
      continue;
    }
    const auto& q = p.rows[it->second];
    EXPECT_EQ(r[a_n], q[p_n]) << where;
    if (q[p_p] == "NA") {
      EXPECT_NE(r[a_note], ".") << where << ": plink2 has no estimate (" << q[p_err] << ")";
      continue;
    }
    if (r[a_note] != ".") {
      ADD_FAILURE() << where << ": plink2 has an estimate, colflow " << r[a_note];
      continue;
    }
    EXPECT_EQ(r[a_firth], q[p_firth]) << where;
    if (q[p_err] != ".") continue;  // plink2 stopped short of convergence (UNFINISHED)
    const bool is_firth = q[p_firth] == "Y";
    const double tolerance = is_firth ? 2e-3 : 1e-4;
    // plink2 may count the other allele: OR inverts, Z flips.
    const bool flip = r[a_a1] != q[p_a1];
    const auto num = [](const std::string& s) { return std::stod(s); };
    const double odds = num(r[a.column("OR")]), z = num(r[a.column("Z_STAT")]);
    const double want_or = num(q[p.column("OR")]), want_z = num(q[p.column("Z_STAT")]);
    EXPECT_NEAR(flip ? 1 / odds : odds, want_or, tolerance * want_or) << where << " OR";
    ++compared;
    if (std::stoull(r[a_n]) < samples[r[a_chr]]) continue;
    firth += is_firth;
    EXPECT_NEAR(num(r[a.column("LOG(OR)_SE")]), num(q[p.column("LOG(OR)_SE")]),
                tolerance * num(q[p.column("LOG(OR)_SE")]))
        << where << " SE";
    EXPECT_NEAR(flip ? -z : z, want_z, tolerance * std::max(std::fabs(want_z), 1.0))
        << where << " Z";
    const double lp = -std::log10(num(r[a.column("P")])), want_lp = -std::log10(num(q[p_p]));
    EXPECT_NEAR(lp, want_lp, tolerance * std::max(want_lp, 1.0)) << where << " P";
  }
  EXPECT_GT(compared, 0u) << what;
  return firth;
}

TEST(LogisticAssocTest, EqualsPlink2GlmFirthFallbackWithAndWithoutCovariates) {
  REQUIRE_SHARED_DATA();
  // uk10k has many rare variants (Firth fits), HapMap3 common ones.
  for (const std::string name : {"uk10k/uk10k_chr1_1mb", "hapmap3/HapMap3"}) {
    test::temp_dir dir;
    std::string out;
    const std::string st = (dir / "s.cf").string(), d = dir.path().string() + "/";
    ASSERT_EQ(
        test::run_cli("preprocess --quiet --bed " + test::dataset(name) + " --out " + st, out), 0)
        << out;
    const store s = store::open(st);
    const std::string p2 = test::plink2_input(test::dataset(name), dir.path());
    write_case_control_traits(s.samples(), dir.path());
    ASSERT_EQ(
        test::run_cli(
            "assoc " + st + " --quiet --digits 12 --pheno " + d + "ph.txt --out " + d + "a", out),
        0)
        << out;
    test::run_plink2("--bfile " + p2 + " --pheno " + d +
                     "ph_p2.txt --glm allow-no-covars firth-fallback --allow-extra-chr --out " + d +
                     "pa");
    ASSERT_EQ(test::run_cli("assoc " + st + " --quiet --digits 12 --pheno " + d +
                                "ph.txt --covar " + d + "cv.txt --out " + d + "c",
                            out),
              0)
        << out;
    test::run_plink2("--bfile " + p2 + " --pheno " + d + "ph_p2.txt --covar " + d +
                     "cv_p2.txt --glm hide-covar firth-fallback --allow-extra-chr --out " + d +
                     "pc");
    std::size_t firth = 0;
    for (const char* y : {"B1", "B2"}) {
      firth += compare_with_plink2(d + "a." + y + ".logistic.tsv",
                                   d + "pa." + y + ".glm.logistic.hybrid", name + " " + y);
      firth += compare_with_plink2(d + "c." + y + ".logistic.tsv",
                                   d + "pc." + y + ".glm.logistic.hybrid", name + " covar " + y);
    }
    if (name == "uk10k/uk10k_chr1_1mb") {
      EXPECT_GT(firth, 100u) << "uk10k's rare variants";
    }
    // Variants with missing calls, one at a time: plink2's SE then equals colflow's at 1e-4.
    const test::text_table a = test::read_table(d + "c.B1.logistic.tsv");
    std::uint64_t samples = 0;
    for (const auto& r : a.rows)
      samples = std::max<std::uint64_t>(samples, std::stoull(r[a.column("N_OBS")]));
    int alone = 0;
    for (const auto& r : a.rows) {
      if (alone == 3) break;
      if (std::stoull(r[a.column("N_OBS")]) == samples || r[a.column("FIRTH?")] == "Y" ||
          test::is_sex_or_mt_chromosome(r[a.column("CHR")]))
        continue;
      const std::string id = r[a.column("ID")], prefix = d + "one" + std::to_string(alone++);
      test::run_plink2("--bfile " + p2 + " --snp " + id + " --pheno " + d +
                       "ph_p2.txt --pheno-name B1 --covar " + d +
                       "cv_p2.txt --glm hide-covar firth-fallback --allow-extra-chr --out " +
                       prefix);
      const test::text_table q = test::read_table(prefix + ".B1.glm.logistic.hybrid");
      ASSERT_EQ(q.rows.size(), 1u) << id;
      EXPECT_NEAR(std::stod(r[a.column("LOG(OR)_SE")]),
                  std::stod(q.rows[0][q.column("LOG(OR)_SE")]),
                  1e-4 * std::stod(q.rows[0][q.column("LOG(OR)_SE")]))
          << name << " " << id << " alone";
    }
    if (name == "hapmap3/HapMap3") {
      EXPECT_EQ(alone, 3) << "HapMap3 has variants with missing calls";
    }
  }
}

// HapMap3 with its sexes, 20 of them made unknown, and its MT variants relabelled Y (HapMap3
// has none): colflow and plink2 read the same files. On X plink2 --glm adds sex as a
// covariate and leaves out the samples of unknown sex; on Y it tests the males alone.
TEST(LogisticAssocTest, SexChromosomesFollowPlink2GlmDefaultsForBothModels) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  const std::string d = dir.path().string() + "/";
  const std::string p2 = test::plink2_input(test::dataset("hapmap3/HapMap3"), dir.path(), true);
  {
    const std::vector<char> bim = test::read_file(p2 + ".bim"), fam = test::read_file(p2 + ".fam");
    std::ofstream b(p2 + ".bim"), f(p2 + ".fam");
    std::istringstream bl(std::string(bim.begin(), bim.end())),
        fl(std::string(fam.begin(), fam.end()));
    std::size_t y = 0, unknown = 0;
    for (std::string line; std::getline(bl, line);) {
      if (line.rfind("26\t", 0) == 0) {
        line = "24" + line.substr(2);
        ++y;
      }
      b << line << "\n";
    }
    for (std::string line; std::getline(fl, line);) {
      std::istringstream fields(line);
      std::string fid, iid, pat, mat, sex, ph;
      fields >> fid >> iid >> pat >> mat >> sex >> ph;
      if (unknown < 20 && sex != "0") {
        sex = "0";
        ++unknown;
      }
      f << fid << " " << iid << " " << pat << " " << mat << " " << sex << " " << ph << "\n";
    }
    ASSERT_GT(y, 0u);
  }
  std::string out;
  const std::string st = d + "s.cf";
  ASSERT_EQ(test::run_cli("preprocess --quiet --bed " + p2 + " --out " + st, out), 0) << out;
  const store s = store::open(st);
  // Traits and covariates under plink2's IDs, which the store has too; a quantitative trait.
  write_case_control_traits(s.samples(), dir.path());
  {
    std::mt19937_64 rng(5);
    std::normal_distribution<double> normal;
    std::ofstream q(d + "q.txt");
    q << "#FID IID Q\n";
    for (const sample_info& x : s.samples())
      q << x.fid << " " << x.iid << " " << normal(rng) << "\n";
  }
  ASSERT_EQ(
      test::run_cli("assoc " + st + " --quiet --digits 12 --pheno " + d +
                        "ph_p2.txt --pheno-name B1 --covar " + d + "cv_p2.txt --out " + d + "a",
                    out),
      0)
      << out;
  test::run_plink2("--bfile " + p2 + " --pheno " + d + "ph_p2.txt --pheno-name B1 --covar " + d +
                   "cv_p2.txt --glm hide-covar firth-fallback --out " + d + "pa");
  compare_with_plink2(d + "a.B1.logistic.tsv", d + "pa.B1.glm.logistic.hybrid", "X/Y logistic",
                      true);
  // The linear model, without covariates: SEX alone is added on X.
  ASSERT_EQ(
      test::run_cli("assoc " + st + " --quiet --digits 12 --pheno " + d + "q.txt --out " + d + "q",
                    out),
      0)
      << out;
  test::run_plink2("--bfile " + p2 + " --pheno " + d + "q.txt --glm allow-no-covars --out " + d +
                   "pq");
  const test::text_table a = test::read_table(d + "q.Q.assoc.tsv"),
                         p = test::read_table(d + "pq.Q.glm.linear");
  std::map<std::string, std::size_t> line_of;
  for (std::size_t j = 0; j < p.rows.size(); ++j)
    if (p.rows[j][p.column("TEST")] == "ADD") line_of[p.rows[j][p.column("ID")]] = j;
  std::map<std::string, std::size_t> compared;
  std::map<std::string, std::uint64_t> n_obs;
  for (const auto& r : a.rows) {
    const std::string chr = r[a.column("CHR")];
    if (chr != "X" && chr != "Y") continue;
    const auto& q = p.rows.at(line_of.at(r[a.column("ID")]));
    const std::string where = chr + " " + r[a.column("ID")];
    ASSERT_EQ(r[a.column("N_OBS")], q[p.column("OBS_CT")]) << where;
    n_obs[chr] = std::max<std::uint64_t>(n_obs[chr], std::stoull(r[a.column("N_OBS")]));
    if (q[p.column("P")] == "NA") continue;
    const double sign = r[a.column("A1")] == q[p.column("A1")] ? 1.0 : -1.0;
    for (const char* c : {"BETA", "SE", "T_STAT", "P"}) {
      const bool flips = std::string(c) == "BETA" || std::string(c) == "T_STAT";
      EXPECT_TRUE(
          test::same_as_printed(std::stod(r[a.column(c)]) * (flips ? sign : 1.0), q[p.column(c)]))
          << where << " " << c << ": " << r[a.column(c)] << " vs " << q[p.column(c)];
    }
    ++compared[chr];
  }
  EXPECT_GT(compared["X"], 50u);
  EXPECT_GT(compared["Y"], 0u);
  // Y: the males alone (HapMap3: 470, less those made unknown); X: every sample of known sex.
  std::size_t males = 0, known = 0;
  for (const sample_sex x : sexes_of(s.samples())) {
    males += x == sample_sex::male;
    known += x != sample_sex::unknown;
  }
  EXPECT_EQ(n_obs["Y"], males);
  EXPECT_EQ(n_obs["X"], known);
  EXPECT_LT(known, s.num_rows());
}

}  // namespace
}  // namespace colflow
