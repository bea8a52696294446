// colflow assoc on case/control traits against a plain per-sample Newton fit (likelihood and
// Firth's penalised one) on genotype and dense stores: missing calls, covariates, subsets,
// separation, sex chromosomes, thread independence, the score test and refused phenotypes.
// Against plink2 --glm firth-fallback: logistic_assoc_plink2_test.cpp; the detection of
// case/control phenotypes and the command's trait options: logistic_assoc_traits_test.cpp.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <random>

#include "colflow/colflow.hpp"
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
  store_writer w(path, writer_options{value_type::float64, n, false, "test", {}},
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

// threads. Its values against numpy: python/tests/test_wgr_step2.py.

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

}  // namespace
}  // namespace colflow
