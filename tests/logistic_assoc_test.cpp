// colflow assoc on case/control traits: against plink2 --glm firth-fallback on the shared
// datasets, and against a plain per-sample Newton fit (likelihood and Firth's penalised one)
// on genotype and dense stores; the detection of case/control phenotypes; separation.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <random>

#include "colflow/colflow.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

// The reference: the explicit design [1, x, covariates] over the usable rows, one row per
// sample, Newton's method with step halving on the log-likelihood (plus ½ log det I for
// Firth) until the step is below 1e-11; the Wald test from the inverse information.
struct reference {
  std::uint64_t n_obs = 0;
  double beta = NAN, se = NAN;
  bool converged = false;
};

reference reference_fit(const std::vector<double>& x, const Eigen::VectorXd& y,
                        const Eigen::MatrixXd& cov, const std::vector<std::uint8_t>& kept,
                        bool firth) {
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
    const Eigen::Index i = rows[static_cast<std::size_t>(r)];
    d(r, 0) = 1;
    d(r, 1) = x[static_cast<std::size_t>(i)];
    for (Eigen::Index c = 0; c < cov.cols(); ++c) d(r, 2 + c) = cov(i, c);
    yy[r] = y[i];
  }
  const auto objective = [&](const Eigen::VectorXd& b) {
    double l = 0;
    Eigen::VectorXd w(n);
    for (Eigen::Index r = 0; r < n; ++r) {
      const double e = d.row(r).dot(b), p = 1 / (1 + std::exp(-e));
      l += yy[r] * std::log(p) + (1 - yy[r]) * std::log(1 - p);
      w[r] = p * (1 - p);
    }
    if (firth) l += 0.5 * std::log((d.transpose() * w.asDiagonal() * d).determinant());
    return l;
  };
  reference ref;
  ref.n_obs = static_cast<std::uint64_t>(n);
  Eigen::VectorXd b = Eigen::VectorXd::Zero(k);
  Eigen::MatrixXd inv;
  for (int it = 0; it < 500; ++it) {
    Eigen::VectorXd p(n), w(n);
    for (Eigen::Index r = 0; r < n; ++r) {
      p[r] = 1 / (1 + std::exp(-d.row(r).dot(b)));
      w[r] = p[r] * (1 - p[r]);
    }
    inv = (d.transpose() * w.asDiagonal() * d).inverse();
    Eigen::VectorXd u = yy - p;
    if (firth)
      for (Eigen::Index r = 0; r < n; ++r)
        u[r] += w[r] * d.row(r).dot(inv * d.row(r).transpose()) * (0.5 - p[r]);
    Eigen::VectorXd step = inv * (d.transpose() * u);
    const double before = objective(b);
    int halvings = 0;
    while (objective(b + step) < before - 1e-12 && halvings++ < 40) step *= 0.5;
    b += step;
    if (step.cwiseAbs().maxCoeff() < 1e-11) {
      ref.converged = true;
      break;
    }
  }
  ref.beta = b[1];
  ref.se = std::sqrt(inv(1, 1));
  return ref;
}

// Case/control traits (1 case, 0 control, NaN missing) and covariates for n samples.
struct trait_data {
  phenotype_table cases, covar;
};

trait_data random_traits(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unif;
  trait_data t;
  t.cases.names = {"A", "B"};
  t.cases.values.resize(static_cast<Eigen::Index>(n), 2);
  t.covar.names = {"U", "V"};
  t.covar.values.resize(static_cast<Eigen::Index>(n), 2);
  for (Eigen::Index i = 0; i < static_cast<Eigen::Index>(n); ++i) {
    t.cases.values(i, 0) = unif(rng) < 0.4 ? 1 : 0;
    t.cases.values(i, 1) = unif(rng) < 0.08 ? NAN : unif(rng) < 0.15 ? 1 : 0;
    t.covar.values(i, 0) = normal(rng);
    t.covar.values(i, 1) = rng() % 40 == 0 ? NAN : static_cast<double>(rng() % 2);
  }
  return t;
}

std::vector<std::vector<assoc_result>> scan(const store& s, const selection& sel,
                                            const trait_data& t, bool covariates,
                                            firth_mode mode = firth_mode::fallback) {
  std::vector<std::vector<assoc_result>> all;
  logistic_association(
      s, sel, t.cases, covariates ? &t.covar : nullptr,
      [&](std::size_t position, std::size_t, std::span<const assoc_result> r) {
        EXPECT_EQ(position, all.size());
        all.emplace_back(r.begin(), r.end());
      },
      mode);
  return all;
}

// Whether an allele is absent among the cases or the controls of the usable rows.
bool zero_allele_count(const std::vector<double>& x, const Eigen::VectorXd& y,
                       const Eigen::MatrixXd& cov, const std::vector<std::uint8_t>& kept) {
  double a1[2] = {0, 0}, a2[2] = {0, 0};
  for (Eigen::Index i = 0; i < y.size(); ++i) {
    bool use = kept[static_cast<std::size_t>(i)] && !std::isnan(y[i]) &&
               !std::isnan(x[static_cast<std::size_t>(i)]);
    for (Eigen::Index c = 0; c < cov.cols(); ++c) use = use && !std::isnan(cov(i, c));
    if (!use) continue;
    a1[y[i] == 1] += x[static_cast<std::size_t>(i)];
    a2[y[i] == 1] += 2 - x[static_cast<std::size_t>(i)];
  }
  return a1[0] == 0 || a1[1] == 0 || a2[0] == 0 || a2[1] == 0;
}

void expect_close(const assoc_result& got, const reference& want, const std::string& what) {
  ASSERT_EQ(got.status, assoc_status::ok) << what;
  ASSERT_TRUE(want.converged) << what;
  EXPECT_EQ(got.n_obs, want.n_obs) << what;
  EXPECT_NEAR(got.beta, want.beta, 1e-6 * std::max(1.0, std::fabs(want.beta))) << what;
  EXPECT_NEAR(got.se, want.se, 1e-6 * want.se) << what;
  EXPECT_NEAR(got.t_stat, got.beta / got.se, 1e-12 * std::fabs(got.t_stat) + 1e-300) << what;
  EXPECT_NEAR(got.p, std::erfc(std::fabs(got.t_stat) / std::sqrt(2.0)), 1e-12) << what;
}

// The dosage of 2-bit codes: missing -1.
std::vector<double> dosages(const std::vector<std::uint8_t>& codes, std::size_t n) {
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int g = test::dosage_at(codes, i);
    x[i] = g < 0 ? std::nan("") : static_cast<double>(g);
  }
  return x;
}

TEST(LogisticAssocTest, GenotypeScanEqualsExplicitFitsWithMissingCallsCovariatesAndSubsets) {
  test::temp_dir dir;
  const std::uint64_t n = 401, m = 42;
  const auto codes =
      test::write_genotype_store(dir / "g.cf", n, m, column_encoding{codec_id::zstd, 1});
  const store s = store::open(dir / "g.cf");
  const trait_data t = random_traits(n, 3);
  selection sel = selection::all(s);
  std::size_t firth_seen = 0, plain_seen = 0;
  for (const bool subset : {false, true}) {
    if (subset) {
      sel.rows.clear();
      for (std::size_t i = 0; i < n; ++i) {
        sel.row_kept[i] = i % 5 != 2;
        if (sel.row_kept[i]) sel.rows.push_back(i);
      }
      sel.columns = {41, 3, 0, 7, 10, 35};
    }
    for (const bool covariates : {false, true}) {
      const auto got = scan(s, sel, t, covariates);
      ASSERT_EQ(got.size(), sel.columns.size());
      const Eigen::MatrixXd cov =
          covariates ? t.covar.values : Eigen::MatrixXd(static_cast<Eigen::Index>(n), 0);
      for (std::size_t k = 0; k < sel.columns.size(); ++k) {
        const std::size_t j = sel.columns[k];
        const std::vector<double> x = dosages(codes[j], n);
        for (Eigen::Index p = 0; p < 2; ++p) {
          const assoc_result& r = got[k][static_cast<std::size_t>(p)];
          const std::string what = "column " + std::to_string(j) + " phenotype " +
                                   std::to_string(p) + (covariates ? " covariates" : "") +
                                   (subset ? " subset" : "");
          if (j == 0) {  // the monomorphic column
            EXPECT_EQ(r.status, assoc_status::constant) << what;
            EXPECT_TRUE(std::isnan(r.beta)) << what;
            continue;
          }
          const bool firth = zero_allele_count(x, t.cases.values.col(p), cov, sel.row_kept);
          EXPECT_EQ(r.firth, firth) << what;
          (firth ? firth_seen : plain_seen) += 1;
          expect_close(r, reference_fit(x, t.cases.values.col(p), cov, sel.row_kept, firth), what);
        }
      }
    }
  }
  // Frequencies down to 1% among 15% cases: both kinds of fit were tested.
  EXPECT_GT(firth_seen, 0u);
  EXPECT_GT(plain_seen, 10u);
}

// A float64 store of the given columns (NaN missing), zstd frames.
void write_dense_columns(const std::filesystem::path& path,
                         const std::vector<std::vector<double>>& columns) {
  const std::uint64_t n = columns.front().size();
  store_writer w(path, writer_options{value_type::float64, n, false, "test"},
                 test::numbered_samples(n));
  for (std::size_t j = 0; j < columns.size(); ++j)
    w.append(encode_float_column(columns[j], value_type::float64, dense_stats(columns[j]), 0,
                                 column_encoding{codec_id::zstd, 3, true}),
             test::numbered_column(j));
  w.finish();
}

TEST(LogisticAssocTest, DenseScanEqualsExplicitFitsAndFlagsConstantAndCollinearColumns) {
  test::temp_dir dir;
  const std::uint64_t n = 150;
  const trait_data t = random_traits(n, 9);
  std::vector<std::vector<double>> values;
  {
    std::mt19937_64 rng(4);
    std::normal_distribution<double> normal;
    for (int j = 0; j < 4; ++j) {
      std::vector<double> v(n);
      for (std::size_t i = 0; i < n; ++i)
        v[i] = j == 2   ? 5.0
               : j == 3 ? 2.0 * t.covar.values(static_cast<Eigen::Index>(i), 0) + 1.0
                        : (rng() % 15 == 0 ? NAN : normal(rng));
      values.push_back(v);
    }
    write_dense_columns(dir / "f.cf", values);
  }
  const store s = store::open(dir / "f.cf");
  const std::vector<std::uint8_t> all(n, 1);
  for (const firth_mode mode : {firth_mode::fallback, firth_mode::always}) {
    const auto got = scan(s, selection::all(s), t, true, mode);
    for (std::size_t j = 0; j < 2; ++j)
      for (Eigen::Index p = 0; p < 2; ++p) {
        // Dense columns are not allele counts: the plain fit, unless always Firth.
        const bool firth = mode == firth_mode::always;
        EXPECT_EQ(got[j][static_cast<std::size_t>(p)].firth, firth);
        expect_close(got[j][static_cast<std::size_t>(p)],
                     reference_fit(values[j], t.cases.values.col(p), t.covar.values, all, firth),
                     "dense column " + std::to_string(j));
      }
    EXPECT_EQ(got[2][0].status, assoc_status::constant);
    EXPECT_EQ(got[3][0].status, assoc_status::collinear);
    EXPECT_TRUE(std::isnan(got[3][0].beta));
  }
}

// A genotype store of the given dosages (-1 missing), one column per vector.
void write_dosage_columns(const std::filesystem::path& path,
                          const std::vector<std::vector<int>>& columns,
                          const std::vector<std::string>& chromosomes = {}) {
  const std::uint64_t n = columns.front().size();
  writer_options options;
  options.type = value_type::genotype;
  options.rows = n;
  options.source = "test";
  store_writer w(path, options, test::numbered_samples(n));
  for (std::size_t j = 0; j < columns.size(); ++j) {
    std::vector<std::uint8_t> codes(genotype_column_bytes(n), 0);
    for (std::size_t i = 0; i < n; ++i) {
      const int g = columns[j][i];
      const unsigned code = g < 0 ? 1u : g == 2 ? 0u : g == 1 ? 2u : 3u;
      codes[i / 4] = static_cast<std::uint8_t>(codes[i / 4] | code << (2 * (i % 4)));
    }
    column_info info = test::numbered_column(j);
    if (!chromosomes.empty()) info.chrom = chromosomes[j];
    w.append(encode_genotype_column(codes, n, column_encoding{codec_id::zstd, 1}), info);
  }
  w.finish();
}

TEST(LogisticAssocTest, SeparationGoesToFirthUnlessNeverAndEveryModeIsHonoured) {
  test::temp_dir dir;
  const std::size_t n = 300;
  trait_data t;
  t.cases.names = {"D"};
  t.cases.values.resize(static_cast<Eigen::Index>(n), 1);
  std::mt19937_64 rng(11);
  std::vector<int> only_cases(n), common(n), separated(n);
  for (std::size_t i = 0; i < n; ++i) {
    const bool is_case = i % 3 == 0;
    t.cases.values(static_cast<Eigen::Index>(i), 0) = is_case;
    only_cases[i] = is_case && i % 7 == 0 ? 1 : 0;  // the allele is carried by cases alone
    common[i] = static_cast<int>(rng() % 3);
    separated[i] = is_case ? 2 : static_cast<int>(rng() % 2);  // every case homozygous
  }
  write_dosage_columns(dir / "g.cf", {only_cases, common, separated});
  const store s = store::open(dir / "g.cf");
  const auto fallback = scan(s, selection::all(s), t, false);
  EXPECT_TRUE(fallback[0][0].firth);
  EXPECT_EQ(fallback[0][0].status, assoc_status::ok);
  EXPECT_GT(fallback[0][0].beta, 1.0);  // finite, large
  EXPECT_FALSE(fallback[1][0].firth);
  // No allele count is zero, but no finite estimate exists: the plain fit runs away and
  // Firth's takes over.
  EXPECT_TRUE(fallback[2][0].firth);
  EXPECT_EQ(fallback[2][0].status, assoc_status::ok);
  const std::vector<std::uint8_t> all(n, 1);
  const Eigen::MatrixXd none(static_cast<Eigen::Index>(n), 0);
  std::vector<double> x(only_cases.begin(), only_cases.end());
  expect_close(fallback[0][0], reference_fit(x, t.cases.values.col(0), none, all, true), "rare");

  const auto never = scan(s, selection::all(s), t, false, firth_mode::never);
  EXPECT_EQ(never[0][0].status, assoc_status::not_converged);
  EXPECT_FALSE(never[0][0].firth);
  EXPECT_EQ(assoc_status_name(never[0][0].status), "NOT_CONVERGED");
  EXPECT_EQ(never[2][0].status, assoc_status::not_converged);
  EXPECT_EQ(never[1][0].status, assoc_status::ok);
  EXPECT_EQ(never[1][0].beta, fallback[1][0].beta);

  const auto always = scan(s, selection::all(s), t, false, firth_mode::always);
  for (const auto& r : always) {
    EXPECT_TRUE(r[0].firth);
    EXPECT_EQ(r[0].status, assoc_status::ok);
  }
  x.assign(common.begin(), common.end());
  expect_close(always[1][0], reference_fit(x, t.cases.values.col(0), none, all, true), "common");
}

// The library's sex-chromosome rules against explicit fits: X with sex as a covariate on the
// samples of known sex, Y on the males with half the dosage; a phenotype without a case
// among the males is untestable on Y alone.
TEST(LogisticAssocTest, SexChromosomeRunsEqualExplicitFitsAndUntestablePhenotypesAreMarked) {
  test::temp_dir dir;
  const std::size_t n = 240;
  std::mt19937_64 rng(8);
  std::vector<sample_sex> sex(n);
  trait_data t;
  t.cases.names = {"A", "B"};
  t.cases.values.resize(static_cast<Eigen::Index>(n), 2);
  std::vector<int> g(n);
  for (std::size_t i = 0; i < n; ++i) {
    sex[i] = i < 6 ? sample_sex::unknown : i % 2 ? sample_sex::male : sample_sex::female;
    t.cases.values(static_cast<Eigen::Index>(i), 0) = rng() % 3 == 0;
    // B: cases among the females only.
    t.cases.values(static_cast<Eigen::Index>(i), 1) = sex[i] == sample_sex::female && i % 5 == 0;
    g[i] = static_cast<int>(rng() % 3);
  }
  write_dosage_columns(dir / "g.cf", {g, g, g}, {"1", "X", "Y"});
  const store s = store::open(dir / "g.cf");
  std::vector<std::vector<assoc_result>> got;
  logistic_association(
      s, selection::all(s), t.cases, nullptr,
      [&](std::size_t, std::size_t, std::span<const assoc_result> r) {
        got.emplace_back(r.begin(), r.end());
      },
      firth_mode::fallback, {}, sex);
  ASSERT_EQ(got.size(), 3u);
  const std::vector<std::uint8_t> all(n, 1);
  std::vector<std::uint8_t> known(n), males(n);
  Eigen::MatrixXd sex_covariate(static_cast<Eigen::Index>(n), 1);
  for (std::size_t i = 0; i < n; ++i) {
    known[i] = sex[i] != sample_sex::unknown;
    males[i] = sex[i] == sample_sex::male;
    sex_covariate(static_cast<Eigen::Index>(i), 0) = sex[i] == sample_sex::male     ? 1.0
                                                     : sex[i] == sample_sex::female ? 2.0
                                                                                    : NAN;
  }
  const std::vector<double> x(g.begin(), g.end());
  std::vector<double> half(n);
  for (std::size_t i = 0; i < n; ++i) half[i] = x[i] / 2;
  const Eigen::MatrixXd none(static_cast<Eigen::Index>(n), 0);
  for (Eigen::Index p = 0; p < 2; ++p) {
    const auto q = static_cast<std::size_t>(p);
    expect_close(got[0][q], reference_fit(x, t.cases.values.col(p), none, all, false), "chr1");
    // B: SEX separates its cases (none among the males), so its plain fit runs away and
    // Firth's takes over.
    EXPECT_EQ(got[1][q].firth, p == 1);
    expect_close(got[1][q], reference_fit(x, t.cases.values.col(p), sex_covariate, known, p == 1),
                 "X");
  }
  expect_close(got[2][0], reference_fit(half, t.cases.values.col(0), none, males, false), "Y");
  EXPECT_EQ(got[2][0].n_obs, static_cast<std::uint64_t>(std::count(males.begin(), males.end(), 1)));
  EXPECT_EQ(got[2][1].status, assoc_status::too_few_samples);
  EXPECT_TRUE(std::isnan(got[2][1].beta));
}

TEST(LogisticAssocTest, ResultsAreBitIdenticalAtAnyThreadCount) {
  test::temp_dir dir;
  const std::uint64_t n = 333;
  test::write_genotype_store(dir / "g.cf", n, 300, column_encoding{codec_id::lz4, 1});
  const store s = store::open(dir / "g.cf");
  const trait_data t = random_traits(n, 5);
  for (const bool covariates : {false, true}) {
    std::vector<std::vector<assoc_result>> one, two;
    {
      tbb::global_control c(tbb::global_control::max_allowed_parallelism, 1);
      one = scan(s, selection::all(s), t, covariates);
    }
    {
      tbb::global_control c(tbb::global_control::max_allowed_parallelism, 2);
      two = scan(s, selection::all(s), t, covariates);
    }
    ASSERT_EQ(one.size(), two.size());
    for (std::size_t k = 0; k < one.size(); ++k)
      for (std::size_t p = 0; p < 2; ++p) {
        const auto same = [](double a, double b) {
          return (std::isnan(a) && std::isnan(b)) || a == b;
        };
        EXPECT_TRUE(same(one[k][p].beta, two[k][p].beta)) << k;
        EXPECT_TRUE(same(one[k][p].se, two[k][p].se)) << k;
        EXPECT_EQ(one[k][p].firth, two[k][p].firth) << k;
      }
  }
}

// The score test (logistic_test::score) of dense columns: a column with missing values, a
// constant one, one the covariates explain, one without a value; the same bits at 1 and 2
// threads. Its values against numpy: python/tests/test_wgr.py.
TEST(LogisticAssocTest, ScoreTestMarksUntestableColumnsAndIsThreadIndependent) {
  test::temp_dir dir;
  const std::uint64_t n = 150;
  const trait_data t = random_traits(n, 9);
  {
    std::mt19937_64 rng(4);
    std::normal_distribution<double> normal;
    std::vector<std::vector<double>> values;
    for (int j = 0; j < 4; ++j) {
      std::vector<double> v(n);
      for (std::size_t i = 0; i < n; ++i)
        v[i] = j == 1   ? 5.0
               : j == 2 ? 2.0 * t.covar.values(static_cast<Eigen::Index>(i), 0) + 1.0
               : j == 3 ? NAN
                        : (i % 15 == 0 ? NAN : normal(rng));
      values.push_back(v);
    }
    write_dense_columns(dir / "f.cf", values);
  }
  const store s = store::open(dir / "f.cf");
  const auto run = [&](int threads) {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism,
                          static_cast<std::size_t>(threads));
    std::vector<std::vector<assoc_result>> all;
    logistic_association(
        s, selection::all(s), t.cases, &t.covar,
        [&](std::size_t, std::size_t, std::span<const assoc_result> r) {
          all.emplace_back(r.begin(), r.end());
        },
        firth_mode::fallback, {}, {}, logistic_test::score);
    return all;
  };
  const auto one = run(1), two = run(2);
  ASSERT_EQ(one.size(), 4u);
  for (std::size_t p = 0; p < 2; ++p) {
    const assoc_result& r = one[0][p];
    ASSERT_EQ(r.status, assoc_status::ok);
    EXPECT_FALSE(r.firth);
    EXPECT_LT(r.n_obs, n);  // the calls; the missing ones took the column's mean
    EXPECT_NEAR(r.t_stat, r.beta / r.se, 1e-12 * std::fabs(r.t_stat) + 1e-300);
    EXPECT_EQ(one[1][p].status, assoc_status::constant);
    EXPECT_EQ(one[2][p].status, assoc_status::collinear);
    EXPECT_EQ(one[3][p].status, assoc_status::constant);
    for (std::size_t j = 0; j < 4; ++j) {
      EXPECT_EQ(one[j][p].status, two[j][p].status);
      EXPECT_TRUE(one[j][p].beta == two[j][p].beta ||
                  (std::isnan(one[j][p].beta) && std::isnan(two[j][p].beta)));
      EXPECT_TRUE(one[j][p].se == two[j][p].se ||
                  (std::isnan(one[j][p].se) && std::isnan(two[j][p].se)));
    }
  }
}

TEST(LogisticAssocTest, PhenotypesWithoutCasesOrControlsOrWithOtherValuesAreRefused) {
  test::temp_dir dir;
  const std::uint64_t n = 50;
  test::write_genotype_store(dir / "g.cf", n, 3, column_encoding{codec_id::zstd, 1});
  const store s = store::open(dir / "g.cf");
  trait_data t = random_traits(n, 1);
  const auto refused = [&](const std::string& expected) {
    try {
      scan(s, selection::all(s), t, false);
      ADD_FAILURE() << "accepted; expected " << expected;
    } catch (const error& e) {
      EXPECT_EQ(e.code(), errc::invalid_argument);
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  t.cases.values.col(1).setZero();
  refused("phenotype B has no case among its 50 selected samples");
  t.cases.values.col(1).setOnes();
  refused("phenotype B has no control");
  t.cases.values(3, 1) = 2;
  refused("phenotype B: case/control values must be 1 (case), 0 (control) or missing");
}

TEST(LogisticAssocTest, CaseControlDetectionFollowsPlinkCodes) {
  phenotype_table t;
  t.names = {"ONE_TWO", "WITH_ZERO", "ZERO_ONE", "OTHER", "ZEROS", "EMPTY"};
  t.values.resize(4, 6);
  t.values << 1, 0, 0, 1, 0, NAN,  //
      2, 2, 1, 2, 0, NAN,          //
      NAN, 1, 0, 3, NAN, NAN,      //
      1, 0, 1, 2, 0, NAN;
  const std::vector<std::uint8_t> rows(4, 1);
  const auto one_two = [&](std::size_t c) { return is_case_control(t, c, rows); };
  const auto zero_one = [&](std::size_t c) {
    return is_case_control(t, c, rows, case_control_codes::zero_one);
  };
  EXPECT_TRUE(one_two(0));
  EXPECT_TRUE(one_two(1));   // 0 is missing
  EXPECT_TRUE(one_two(2));   // 1 (control) and 0 (missing)
  EXPECT_FALSE(one_two(3));  // a 3
  EXPECT_FALSE(one_two(4));  // nothing but missing
  EXPECT_FALSE(one_two(5));
  EXPECT_FALSE(zero_one(0));  // a 2
  EXPECT_TRUE(zero_one(2));
  EXPECT_TRUE(zero_one(4));  // all controls: a trait, refused later for want of a case
  // Rows not selected do not count.
  const std::vector<std::uint8_t> first_two = {1, 1, 0, 0};
  EXPECT_TRUE(is_case_control(t, 3, first_two));

  phenotype_table coded = select_phenotypes(t, std::vector<std::size_t>{1, 0});
  ASSERT_EQ(coded.names, (std::vector<std::string>{"WITH_ZERO", "ONE_TWO"}));
  code_case_control(coded);
  EXPECT_TRUE(std::isnan(coded.values(0, 0)));  // 0: missing
  EXPECT_EQ(coded.values(1, 0), 1.0);
  EXPECT_EQ(coded.values(2, 0), 0.0);
  EXPECT_EQ(coded.values(0, 1), 0.0);
  phenotype_table other = select_phenotypes(t, std::vector<std::size_t>{3});
  try {
    code_case_control(other);
    ADD_FAILURE() << "a 3 was coded";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("OTHER is taken as case/control but has the value 3"),
              std::string::npos)
        << e.what();
  }
}

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

TEST(LogisticAssocTest, CommandDetectsTraitsAndHonoursBinaryQuantitativeAndZeroOneCoding) {
  test::temp_dir dir;
  const std::uint64_t n = 200;
  test::write_genotype_store(dir / "g.cf", n, 12, column_encoding{codec_id::zstd, 1});
  const std::string st = (dir / "g.cf").string(), d = dir.path().string() + "/";
  {
    std::mt19937_64 rng(2);
    std::ofstream a(d + "ph.txt"), b(d + "ph01.txt");
    a << "#IID CC Q\n";
    b << "#IID CC Q\n";
    for (std::uint64_t i = 0; i < n; ++i) {
      const int cc = static_cast<int>(rng() % 3);  // 0 missing, 1 control, 2 case
      const std::string q = std::to_string(static_cast<int>(rng() % 3));  // 0, 1, 2: 0 included
      const std::string id = "S" + std::to_string(i + 1);
      a << id << " " << cc << " " << q << "\n";
      b << id << " " << (cc == 0 ? "NA" : std::to_string(cc - 1)) << " " << q << "\n";
    }
  }
  std::string out;
  const auto run = [&](const std::string& args) {
    return test::run_cli("assoc " + st + " --quiet --digits 12 " + args, out);
  };
  // CC is case/control; Q has 0s, which are missing in a case/control trait: it is taken as
  // case/control too, as PLINK takes it, unless named --quantitative.
  ASSERT_EQ(run("--pheno " + d + "ph.txt --out " + d + "a"), 0) << out;
  EXPECT_TRUE(std::filesystem::exists(d + "a.CC.logistic.tsv"));
  EXPECT_TRUE(std::filesystem::exists(d + "a.Q.logistic.tsv"));
  ASSERT_EQ(run("--pheno " + d + "ph.txt --quantitative Q --out " + d + "b"), 0) << out;
  EXPECT_TRUE(std::filesystem::exists(d + "b.CC.logistic.tsv"));
  EXPECT_TRUE(std::filesystem::exists(d + "b.Q.assoc.tsv"));
  EXPECT_FALSE(std::filesystem::exists(d + "b.Q.logistic.tsv"));
  ASSERT_EQ(run("--pheno " + d + "ph.txt --quantitative --out " + d + "c"), 0) << out;
  EXPECT_TRUE(std::filesystem::exists(d + "c.CC.assoc.tsv"));
  // The 0/1 file with --1 gives the same tests as the 1/2 file.
  ASSERT_EQ(run("--pheno " + d + "ph01.txt --1 --pheno-name CC --out " + d + "z"), 0) << out;
  EXPECT_EQ(test::read_file(d + "z.CC.logistic.tsv"), test::read_file(d + "a.CC.logistic.tsv"));
  // --beta: the log odds ratio.
  ASSERT_EQ(run("--pheno " + d + "ph.txt --pheno-name CC --beta --firth always --out " + d + "e"),
            0)
      << out;
  const test::text_table e = test::read_table(d + "e.CC.logistic.tsv");
  EXPECT_NO_THROW(e.column("BETA"));
  for (const auto& r : e.rows)
    if (r[e.column("NOTE")] == ".") {
      EXPECT_EQ(r[e.column("FIRTH?")], "Y");
    }
  // Bad uses, with the reason.
  EXPECT_EQ(run("--pheno " + d + "ph.txt --binary NOPE --out " + d + "x"), 1);
  EXPECT_NE(out.find("--binary NOPE: no such phenotype"), std::string::npos) << out;
  EXPECT_EQ(run("--pheno " + d + "ph.txt --binary Q --quantitative Q --out " + d + "x"), 1);
  EXPECT_NE(out.find("named by both"), std::string::npos) << out;
  EXPECT_EQ(run("--pheno " + d + "ph01.txt --binary Q --1 --out " + d + "x"), 1);
  EXPECT_NE(out.find("Q is taken as case/control but has the value 2"), std::string::npos) << out;
  EXPECT_NE(run("--pheno " + d + "ph.txt --firth sometimes --out " + d + "x"), 0);
  EXPECT_NE(out.find("--firth: sometimes not in {fallback,always,never}"), std::string::npos)
      << out;
  EXPECT_FALSE(std::filesystem::exists(d + "x.CC.logistic.tsv"));
}

}  // namespace
}  // namespace colflow
