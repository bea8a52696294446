// colflow assoc: against plink2 --glm on the shared datasets, and against a plain
// least-squares fit (Eigen QR on the explicit design) on genotype and dense stores.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <Eigen/LU>
#include <Eigen/QR>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <fstream>
#include <map>
#include <random>

#include "colflow/colflow.hpp"
#include "io/tsv_writer_internal.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

// Phenotype (2 traits, ~5% and ~10% missing) and covariate (2, ~2% missing) files for the same
// samples under colflow's IDs and under the f<i> s<i> IDs of plink2's copy.
void write_traits(const std::vector<sample_info>& samples, const std::filesystem::path& dir) {
  std::mt19937_64 rng(samples.size());
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unif;
  std::ofstream po(dir / "ph.txt"), pt(dir / "ph_p2.txt"), co(dir / "cv.txt"),
      ct(dir / "cv_p2.txt");
  po << "#FID IID Y1 Y2\n";
  pt << "#FID IID Y1 Y2\n";
  co << "FID IID C1 C2\n";
  ct << "FID IID C1 C2\n";
  for (std::size_t i = 0; i < samples.size(); ++i) {
    std::ostringstream y, c;
    y.precision(8);
    c.precision(6);
    if (unif(rng) < 0.05)
      y << "NA";
    else
      y << normal(rng);
    y << " ";
    if (unif(rng) < 0.10)
      y << "-9";
    else
      y << 3 + 2 * normal(rng);
    c << normal(rng) << " ";
    if (unif(rng) < 0.02)
      c << "NA";
    else
      c << (unif(rng) < 0.5 ? 0 : 1);
    po << samples[i].fid << " " << samples[i].iid << " " << y.str() << "\n";
    pt << "f" << i << " s" << i << " " << y.str() << "\n";
    co << samples[i].fid << " " << samples[i].iid << " " << c.str() << "\n";
    ct << "f" << i << " s" << i << " " << c.str() << "\n";
  }
}

// Compares colflow's table with plink2's, variant by variant.
// Values equal plink2's as it prints them (6 significant digits); with `tolerance`, within that
// relative difference instead, BETA and T_STAT relative to max(|value|, SE or 1): plink2's
// own inverse normal, for one, is an approximation that moves estimates near zero.
void compare_with_plink2(const std::filesystem::path& ours, const std::filesystem::path& theirs,
                         const std::string& what, double tolerance = 0) {
  const test::text_table a = test::read_table(ours), p = test::read_table(theirs);
  const std::size_t a_chr = a.column("CHR"), a_id = a.column("ID"), a_a1 = a.column("A1"),
                    a_n = a.column("N_OBS"), a_note = a.column("NOTE");
  const std::size_t p_id = p.column("ID"), p_a1 = p.column("A1"), p_n = p.column("OBS_CT"),
                    p_p = p.column("P"), p_err = p.column("ERRCODE");
  std::map<std::string, std::size_t> line_of;  // plink2 adds no line per covariate (hide-covar)
  for (std::size_t j = 0; j < p.rows.size(); ++j) line_of[p.rows[j][p_id]] = j;
  std::size_t compared = 0, na = 0;
  for (const auto& r : a.rows) {
    if (test::is_sex_or_mt_chromosome(r[a_chr])) continue;
    const std::string where = what + " " + r[a_id];
    const auto it = line_of.find(r[a_id]);
    if (it == line_of.end()) {
      // plink2 leaves out columns without a usable call (all missing among the samples).
      EXPECT_NE(r[a_note], ".") << where << ": plink2 skipped it";
      continue;
    }
    const auto& q = p.rows[it->second];
    EXPECT_EQ(r[a_n], q[p_n]) << where;
    if (q[p_p] == "NA") {
      EXPECT_NE(r[a_note], ".") << where << ": plink2 has no estimate (" << q[p_err] << ")";
      ++na;
      continue;
    }
    ASSERT_EQ(r[a_note], ".") << where << ": plink2 has an estimate";
    // plink2 may count the other allele (its A1 is then the .bim's A2): BETA and T flip.
    const double sign = r[a_a1] == q[p_a1] ? 1.0 : -1.0;
    for (const char* c : {"BETA", "SE", "T_STAT", "P"}) {
      const bool flips = std::string(c) == "BETA" || std::string(c) == "T_STAT";
      const double x = std::stod(r[a.column(c)]) * (flips ? sign : 1.0);
      if (tolerance > 0) {
        const double want = std::stod(q[p.column(c)]);
        const double scale = std::string(c) == "BETA"     ? std::stod(q[p.column("SE")])
                             : std::string(c) == "T_STAT" ? 1.0
                                                          : 0.0;
        EXPECT_LE(std::fabs(x - want), tolerance * std::max(std::fabs(want), scale))
            << where << " " << c << ": " << x << " vs " << q[p.column(c)];
        continue;
      }
      EXPECT_TRUE(test::same_as_printed(x, q[p.column(c)]))
          << where << " " << c << ": " << x << " vs " << q[p.column(c)];
    }
    ++compared;
  }
  EXPECT_GT(compared, 0u) << what << " (" << na << " NA)";
}

TEST(AssocTest, EqualsPlink2GlmWithAndWithoutCovariates) {
  REQUIRE_SHARED_DATA();
  for (const std::string& name : test::all_datasets()) {
    test::temp_dir dir;
    std::string out;
    const std::string st = (dir / "s.cf").string();
    ASSERT_EQ(test::run_cli("preprocess --quiet --bed " + name + " --out " + st, out), 0) << out;
    const store s = store::open(st);
    const std::string p2 = test::plink2_input(name, dir.path());
    write_traits(s.samples(), dir.path());
    const std::string d = dir.path().string() + "/";
    ASSERT_EQ(
        test::run_cli(
            "assoc " + st + " --quiet --digits 12 --pheno " + d + "ph.txt --out " + d + "a", out),
        0)
        << out;
    test::run_plink2("--bfile " + p2 + " --pheno " + d +
                     "ph_p2.txt --pheno-name Y1 Y2 --glm allow-no-covars --allow-extra-chr --out " +
                     d + "pa");
    for (const char* y : {"Y1", "Y2"})
      compare_with_plink2(d + "a." + y + ".assoc.tsv", d + "pa." + y + ".glm.linear",
                          name + " " + y);

    const int with_covar = test::run_cli("assoc " + st + " --quiet --digits 12 --pheno " + d +
                                             "ph.txt --covar " + d + "cv.txt --out " + d + "c",
                                         out);
    if (s.num_rows() < 5) {  // 3 samples cannot fit 4 coefficients: plink2 refuses too
      EXPECT_EQ(with_covar, 1);
      EXPECT_NE(out.find("usable sample"), std::string::npos) << out;
      continue;
    }
    ASSERT_EQ(with_covar, 0) << out;
    test::run_plink2("--bfile " + p2 + " --pheno " + d + "ph_p2.txt --pheno-name Y1 Y2 --covar " +
                     d + "cv_p2.txt --glm hide-covar --allow-extra-chr --out " + d + "pc");
    for (const char* y : {"Y1", "Y2"})
      compare_with_plink2(d + "c." + y + ".assoc.tsv", d + "pc." + y + ".glm.linear",
                          name + " covar " + y);
  }
}

// A store made from a .pgen (colflow preprocess --pfile) gives plink2's --glm on that .pgen.
TEST(AssocTest, StoreFromAPgenEqualsPlink2GlmOnThatPgen) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  const std::string d = dir.path().string() + "/", st = d + "s.cf";
  // plink2_input's sample IDs (f<i> s<i>) are the ones the store takes from the .psam.
  const std::string p2 = test::plink2_input(test::dataset("bed-reader/some_missing"), dir.path());
  test::run_plink2("--bfile " + p2 + " --make-pgen --out " + d + "x");
  std::string out;
  ASSERT_EQ(test::run_cli("preprocess --quiet --pfile " + d + "x --out " + st, out), 0) << out;
  const store s = store::open(st);
  write_traits(s.samples(), dir.path());
  ASSERT_EQ(
      test::run_cli("assoc " + st + " --quiet --digits 12 --pheno " + d + "ph.txt --out " + d + "a",
                    out),
      0)
      << out;
  ASSERT_EQ(test::run_cli("assoc " + st + " --quiet --digits 12 --pheno " + d + "ph.txt --covar " +
                              d + "cv.txt --out " + d + "c",
                          out),
            0)
      << out;
  test::run_plink2("--pfile " + d + "x --pheno " + d +
                   "ph_p2.txt --pheno-name Y1 Y2 --glm allow-no-covars --out " + d + "pa");
  test::run_plink2("--pfile " + d + "x --pheno " + d + "ph_p2.txt --pheno-name Y1 Y2 --covar " + d +
                   "cv_p2.txt --glm hide-covar --out " + d + "pc");
  for (const char* y : {"Y1", "Y2"}) {
    compare_with_plink2(d + "a." + y + ".assoc.tsv", d + "pa." + y + ".glm.linear",
                        std::string(".pgen ") + y);
    compare_with_plink2(d + "c." + y + ".assoc.tsv", d + "pc." + y + ".glm.linear",
                        std::string(".pgen covar ") + y);
  }
}

// PLINK 2's transforms: the rank-based inverse normal phenotypes (with the ties of values
// written to few digits) and standardised covariates give plink2's results.
TEST(AssocTest, QuantileNormalizedPhenotypesAndStandardizedCovariatesEqualPlink2) {
  REQUIRE_SHARED_DATA();
  const std::string name = test::dataset("hapmap3/HapMap3");
  test::temp_dir dir;
  std::string out;
  const std::string st = (dir / "s.cf").string(), d = dir.path().string() + "/";
  ASSERT_EQ(test::run_cli("preprocess --quiet --bed " + name + " --out " + st, out), 0) << out;
  const store s = store::open(st);
  write_traits(s.samples(), dir.path());
  ASSERT_EQ(test::run_cli("assoc " + st + " --quiet --digits 12 --pheno " + d +
                              "ph.txt --pheno-quantile-normalize --covar " + d +
                              "cv.txt --covar-variance-standardize --out " + d + "q",
                          out),
            0)
      << out;
  test::run_plink2("--bfile " + test::plink2_input(name, dir.path()) + " --pheno " + d +
                   "ph_p2.txt --pheno-name Y1 Y2 --pheno-quantile-normalize --covar " + d +
                   "cv_p2.txt --covar-variance-standardize --glm hide-covar --out " + d + "pq");
  for (const char* y : {"Y1", "Y2"})
    compare_with_plink2(d + "q." + y + ".assoc.tsv", d + "pq." + y + ".glm.linear",
                        std::string("quantile-normalized ") + y, 1e-4);
  // The transforms change the phenotype: the untransformed scan differs.
  ASSERT_EQ(test::run_cli("assoc " + st + " --quiet --digits 12 --pheno " + d + "ph.txt --covar " +
                              d + "cv.txt --out " + d + "u",
                          out),
            0)
      << out;
  EXPECT_NE(test::read_file(d + "u.Y2.assoc.tsv"), test::read_file(d + "q.Y2.assoc.tsv"));
  // Standardising needs a covariate that varies, and a covariate file.
  EXPECT_EQ(test::run_cli("assoc " + st + " --quiet --pheno " + d +
                              "ph.txt --covar-variance-standardize --out " + d + "x",
                          out),
            1);
  EXPECT_NE(out.find("--covar-variance-standardize needs --covar"), std::string::npos) << out;
}

// The reference: for each column, the explicit design [1, x, covariates] over the usable rows,
// solved by column-pivoting QR; p from Boost's t distribution.
assoc_result reference_fit(const std::vector<double>& x, const Eigen::VectorXd& y,
                           const Eigen::MatrixXd& cov, const std::vector<std::uint8_t>& kept) {
  std::vector<Eigen::Index> rows;
  for (Eigen::Index i = 0; i < y.size(); ++i) {
    bool use = kept[static_cast<std::size_t>(i)] && !std::isnan(y[i]) &&
               !std::isnan(x[static_cast<std::size_t>(i)]);
    for (Eigen::Index c = 0; c < cov.cols(); ++c) use = use && !std::isnan(cov(i, c));
    if (use) rows.push_back(i);
  }
  const auto n = static_cast<Eigen::Index>(rows.size()), k = 2 + cov.cols();
  Eigen::MatrixXd d(n, k);
  Eigen::VectorXd yy(n);
  for (Eigen::Index r = 0; r < n; ++r) {
    d(r, 0) = 1;
    d(r, 1) = x[static_cast<std::size_t>(rows[static_cast<std::size_t>(r)])];
    for (Eigen::Index c = 0; c < cov.cols(); ++c)
      d(r, 2 + c) = cov(rows[static_cast<std::size_t>(r)], c);
    yy[r] = y[rows[static_cast<std::size_t>(r)]];
  }
  assoc_result res;
  res.n_obs = static_cast<std::uint64_t>(n);
  const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(d);
  const Eigen::VectorXd b = qr.solve(yy);
  const double df = static_cast<double>(n - k);
  const double s2 = (yy - d * b).squaredNorm() / df;
  const Eigen::MatrixXd inv = (d.transpose() * d).inverse();
  res.beta = b[1];
  res.se = std::sqrt(s2 * inv(1, 1));
  res.t_stat = res.beta / res.se;
  const boost::math::students_t_distribution<double> t(df);
  res.p = 2 * boost::math::cdf(boost::math::complement(t, std::fabs(res.t_stat)));
  return res;
}

void expect_close(const assoc_result& got, const assoc_result& want, const std::string& what) {
  ASSERT_EQ(got.status, assoc_status::ok) << what;
  EXPECT_EQ(got.n_obs, want.n_obs) << what;
  EXPECT_NEAR(got.beta, want.beta, 1e-9 * std::fabs(want.beta) + 1e-13) << what;
  EXPECT_NEAR(got.se, want.se, 1e-9 * want.se) << what;
  EXPECT_NEAR(got.t_stat, want.t_stat, 1e-9 * std::fabs(want.t_stat) + 1e-13) << what;
  EXPECT_NEAR(got.p, want.p, 1e-8 * want.p + 1e-300) << what;
}

struct trait_data {
  phenotype_table pheno, covar;
};

trait_data random_traits(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  trait_data t;
  t.pheno.names = {"A", "B", "C"};
  t.pheno.values.resize(static_cast<Eigen::Index>(n), 3);
  t.covar.names = {"U", "V"};
  t.covar.values.resize(static_cast<Eigen::Index>(n), 2);
  for (Eigen::Index i = 0; i < static_cast<Eigen::Index>(n); ++i) {
    for (Eigen::Index p = 0; p < 3; ++p)
      t.pheno.values(i, p) = (rng() % 12 == 0 && p > 0) ? NAN : 10 + 3 * normal(rng);
    t.covar.values(i, 0) = normal(rng);
    t.covar.values(i, 1) = rng() % 40 == 0 ? NAN : static_cast<double>(rng() % 2);
  }
  return t;
}

// Equal bits, NaN included (no estimate is the same answer as no estimate).
bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

std::vector<std::vector<assoc_result>> scan(const store& s, const selection& sel,
                                            const trait_data& t, bool covariates) {
  std::vector<std::vector<assoc_result>> all;
  linear_association(s, sel, t.pheno, covariates ? &t.covar : nullptr,
                     [&](std::size_t position, std::size_t, std::span<const assoc_result> r) {
                       EXPECT_EQ(position, all.size());
                       all.emplace_back(r.begin(), r.end());
                     });
  return all;
}

TEST(AssocTest, GenotypeScanEqualsExplicitLeastSquaresWithMissingCallsAndSubsets) {
  test::temp_dir dir;
  const std::uint64_t n = 301, m = 70;  // more than one block of columns, a partial tile
  const auto codes =
      test::write_genotype_store(dir / "g.cf", n, m, column_encoding{codec_id::zstd, 1});
  const store s = store::open(dir / "g.cf");
  const trait_data t = random_traits(n, 3);
  selection sel = selection::all(s);
  for (const bool subset : {false, true}) {
    if (subset) {
      sel.rows.clear();
      for (std::size_t i = 0; i < n; ++i) {
        sel.row_kept[i] = i % 5 != 2;
        if (sel.row_kept[i]) sel.rows.push_back(i);
      }
      sel.columns = {69, 3, 4, 5, 10, 64};
    }
    for (const bool covariates : {false, true}) {
      const auto got = scan(s, sel, t, covariates);
      ASSERT_EQ(got.size(), sel.columns.size());
      for (std::size_t k = 0; k < sel.columns.size(); ++k) {
        const std::size_t j = sel.columns[k];
        std::vector<double> x(n);
        for (std::size_t i = 0; i < n; ++i) {
          const int dsg = test::dosage_at(codes[j], i);
          x[i] = dsg < 0 ? std::nan("") : static_cast<double>(dsg);
        }
        for (Eigen::Index p = 0; p < 3; ++p) {
          const std::string what = "column " + std::to_string(j) + " phenotype " +
                                   std::to_string(p) + (covariates ? " covariates" : "") +
                                   (subset ? " subset" : "");
          if (j == 0) {  // the monomorphic column
            EXPECT_EQ(got[k][static_cast<std::size_t>(p)].status, assoc_status::constant) << what;
            EXPECT_TRUE(std::isnan(got[k][static_cast<std::size_t>(p)].beta)) << what;
            continue;
          }
          const Eigen::MatrixXd cov =
              covariates ? t.covar.values : Eigen::MatrixXd(static_cast<Eigen::Index>(n), 0);
          expect_close(got[k][static_cast<std::size_t>(p)],
                       reference_fit(x, t.pheno.values.col(p), cov, sel.row_kept), what);
        }
      }
    }
  }
}

TEST(AssocTest, DenseScanEqualsExplicitLeastSquaresAndFlagsCollinearColumns) {
  test::temp_dir dir;
  const std::uint64_t n = 120;
  const trait_data t = random_traits(n, 9);
  std::vector<std::vector<double>> values;
  {
    store_writer w(dir / "f.cf", writer_options{value_type::float64, n, false, "test", {}},
                   test::numbered_samples(n));
    std::mt19937_64 rng(4);
    std::normal_distribution<double> normal;
    for (int j = 0; j < 4; ++j) {
      std::vector<double> v(n);
      for (std::size_t i = 0; i < n; ++i) {
        v[i] = j == 2 ? 5.0  // constant
               : j == 3
                   ? 2.0 * t.covar.values(static_cast<Eigen::Index>(i), 0) + 1.0  // = covariate
                   : (rng() % 15 == 0 ? NAN : normal(rng));
      }
      w.append(encode_float_column(v, value_type::float64, dense_stats(v), 0,
                                   column_encoding{codec_id::zstd, 3, true}),
               test::numbered_column(static_cast<std::uint64_t>(j)));
      values.push_back(v);
    }
    w.finish();
  }
  const store s = store::open(dir / "f.cf");
  const auto got = scan(s, selection::all(s), t, true);
  std::vector<std::uint8_t> all(n, 1);
  for (int j = 0; j < 2; ++j)
    for (Eigen::Index p = 0; p < 3; ++p)
      expect_close(got[static_cast<std::size_t>(j)][static_cast<std::size_t>(p)],
                   reference_fit(values[static_cast<std::size_t>(j)], t.pheno.values.col(p),
                                 t.covar.values, all),
                   "dense column " + std::to_string(j));
  EXPECT_EQ(got[2][0].status, assoc_status::constant);
  EXPECT_EQ(got[3][0].status, assoc_status::collinear);
  EXPECT_EQ(assoc_status_name(got[3][0].status), "COLLINEAR");
  // Without covariates the same column is an ordinary predictor.
  EXPECT_EQ(scan(s, selection::all(s), t, false)[3][0].status, assoc_status::ok);
}

TEST(AssocTest, SeveralPhenotypesInOnePassEqualOneAtATimeAndAnyThreadCount) {
  test::temp_dir dir;
  const std::uint64_t n = 257;
  test::write_genotype_store(dir / "g.cf", n, 150, column_encoding{codec_id::lz4, 1});
  const store s = store::open(dir / "g.cf");
  const trait_data t = random_traits(n, 21);
  const auto together = scan(s, selection::all(s), t, true);
  for (Eigen::Index p = 0; p < 3; ++p) {
    trait_data one = t;
    one.pheno.names = {t.pheno.names[static_cast<std::size_t>(p)]};
    one.pheno.values = t.pheno.values.col(p);
    const auto alone = scan(s, selection::all(s), one, true);
    for (std::size_t j = 0; j < together.size(); ++j) {
      const assoc_result &a = alone[j][0], &b = together[j][static_cast<std::size_t>(p)];
      EXPECT_EQ(a.status, b.status) << j;
      EXPECT_TRUE(same(a.beta, b.beta) && same(a.se, b.se) && same(a.p, b.p)) << j;
    }
  }
  {
    tbb::global_control one_thread(tbb::global_control::max_allowed_parallelism, 1);
    const auto serial = scan(s, selection::all(s), t, true);
    for (std::size_t j = 0; j < together.size(); ++j)
      for (std::size_t p = 0; p < 3; ++p) {
        EXPECT_TRUE(same(serial[j][p].beta, together[j][p].beta)) << j;
        EXPECT_TRUE(same(serial[j][p].se, together[j][p].se)) << j;
      }
  }
}

// The writer's tables, filled from one scan of several phenotypes, are byte for byte the lines
// written field by field from each phenotype's results (across the writer's batches of 2048
// columns, with NA estimates and notes), and the tables of one-phenotype scans.
TEST(AssocTest, WriterTablesForSeveralPhenotypesEqualTheLinesOfEachPhenotype) {
  test::temp_dir dir;
  const std::uint64_t n = 24;
  const std::size_t m = 2100;  // more than a batch of the writer
  test::write_genotype_store(dir / "g.cf", n, m, column_encoding{codec_id::none, 0});
  const store s = store::open(dir / "g.cf");
  const trait_data t = random_traits(n, 33);
  const std::string d = dir.path().string() + "/";
  const int digits = 7;

  std::vector<std::vector<assoc_result>> results(m);
  {
    assoc_writer tables(s, t.pheno.names, d + "all", digits);
    const assoc_sink into_tables = tables.sink();
    linear_association(
        s, selection::all(s), t.pheno, &t.covar,
        [&](std::size_t position, std::size_t column, std::span<const assoc_result> r) {
          results[position].assign(r.begin(), r.end());
          into_tables(position, column, r);
        });
    tables.commit();
  }
  std::size_t not_ok = 0;
  for (const auto& r : results)
    for (const assoc_result& x : r) not_ok += x.status != assoc_status::ok;
  ASSERT_GT(not_ok, 0u) << "the data should give some NA lines";

  for (std::size_t p = 0; p < t.pheno.names.size(); ++p) {
    const std::string& name = t.pheno.names[p];
    tsv_writer expect(d + "expect." + name, digits);
    for (const char* h :
         {"#CHR", "POS", "ID", "A1", "A2", "N_OBS", "BETA", "SE", "T_STAT", "P", "NOTE"})
      expect.text(h);
    expect.end_line();
    for (std::size_t j = 0; j < m; ++j) {
      const column_info& c = s.columns()[j];
      const assoc_result& r = results[j][p];
      expect.text(c.chrom).text(c.pos).text(c.id).text(c.a1).text(c.a2).integer(r.n_obs);
      expect.number(r.beta).number(r.se).number(r.t_stat).number(r.p);
      expect.text(assoc_status_name(r.status));
      expect.end_line();
    }
    expect.commit();

    trait_data one = t;
    one.pheno.names = {name};
    one.pheno.values = t.pheno.values.col(static_cast<Eigen::Index>(p));
    assoc_writer alone(s, one.pheno.names, d + "one", digits);
    linear_association(s, selection::all(s), one.pheno, &one.covar, alone.sink());
    alone.commit();

    const std::vector<char> table = test::read_file(assoc_file(d + "all", name));
    EXPECT_EQ(table, test::read_file(d + "expect." + name)) << name;
    EXPECT_EQ(table, test::read_file(assoc_file(d + "one", name))) << name;
    EXPECT_EQ(test::read_table(assoc_file(d + "all", name)).rows.size(), m) << name;
  }
}

TEST(AssocTest, BadInputsGiveClearErrors) {
  test::temp_dir dir;
  test::write_genotype_store(dir / "g.cf", 20, 3, column_encoding{codec_id::none, 0});
  const std::string st = (dir / "g.cf").string(), d = dir.path().string() + "/";
  test::write_file(dir / "p.txt", std::vector<char>{'S', '1', ' ', 'S', '1', ' ', 'x', '\n'});
  std::string out;
  EXPECT_EQ(test::run_cli("assoc " + st + " --pheno " + d + "p.txt --out " + d + "o", out), 1);
  EXPECT_NE(out.find("p.txt:1: 'x' in column PHENO1 is not a number"), std::string::npos) << out;
  EXPECT_EQ(test::run_cli("assoc " + st + " --pheno " + d + "none.txt --out " + d + "o", out), 1);
  EXPECT_NE(out.find("none.txt"), std::string::npos) << out;
  const std::string ok = "S1 S1 1\nS2 S2 2\nS3 S3 4\nS4 S4 3\n";
  test::write_file(dir / "q.txt", std::vector<char>(ok.begin(), ok.end()));
  EXPECT_EQ(
      test::run_cli("assoc " + st + " --pheno " + d + "q.txt --pheno-name Z --out " + d + "o", out),
      1);
  EXPECT_NE(out.find("no column named 'Z'"), std::string::npos) << out;
  EXPECT_EQ(
      test::run_cli("assoc " + st + " --pheno " + d + "q.txt --covar-name U --out " + d + "o", out),
      1);
  EXPECT_NE(out.find("--covar-name needs --covar"), std::string::npos) << out;
  // No sample of the file in the store: the file is named, with its count.
  const std::string strangers = "X1 X1 1\nX2 X2 2\n";
  test::write_file(dir / "x.txt", std::vector<char>(strangers.begin(), strangers.end()));
  EXPECT_EQ(test::run_cli("assoc " + st + " --pheno " + d + "x.txt --out " + d + "o", out), 1);
  EXPECT_NE(out.find("phenotype PHENO1 of " + d +
                     "x.txt has no selected sample with a value (0 "
                     "of the file's 2 samples are in the store)"),
            std::string::npos)
      << out;
  ASSERT_EQ(test::run_cli("assoc " + st + " --pheno " + d + "q.txt --out " + d + "o", out), 0)
      << out;
  EXPECT_NE(out.find("PHENO1: 4 samples used"), std::string::npos) << out;
  EXPECT_EQ(test::read_table(d + "o.PHENO1.assoc.tsv").rows.size(), 3u);
}

}  // namespace
}  // namespace colflow
