// Ridge, lasso and elastic net by coordinate descent: the KKT conditions checked directly on
// the explicit standardised matrix, scikit-learn's ElasticNet on the same matrix, subsets,
// dense stores, determinism and errors.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

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

const std::string python = COLFLOW_TEST_PYTHON;

// The selection of the samples a fit uses: selected and with a phenotype value.
selection used_rows(const selection& sel, const std::vector<double>& y) {
  selection u = sel;
  u.rows.clear();
  for (std::size_t i = 0; i < y.size(); ++i) {
    u.row_kept[i] = sel.row_kept[i] && !std::isnan(y[i]);
    if (u.row_kept[i]) u.rows.push_back(i);
  }
  return u;
}

std::vector<double> dense_beta(const penalized_result& r, std::size_t k, std::size_t m) {
  std::vector<double> b(m, 0.0);
  for (const auto& [p, v] : r.coefficients[k]) b[p] = v;
  return b;
}

// Optimality without any peer: with r = y − ȳ − Zb, every non-zero coefficient satisfies
// z_jᵀr/n − λ(1−α)b_j = λα·sign(b_j), and every zero one |z_jᵀr/n| ≤ λα.
void expect_kkt(const store& s, const selection& sel, const std::vector<double>& y,
                const penalized_result& r, double alpha, double tolerance) {
  const selection u = used_rows(sel, y);
  std::size_t nonconstant = 0;
  const Eigen::MatrixXd z = test::standardized_matrix(s, u, false, nonconstant);
  const auto n = static_cast<double>(u.rows.size());
  ASSERT_EQ(r.samples, u.rows.size());
  Eigen::VectorXd yc(z.rows());
  for (Eigen::Index i = 0; i < z.rows(); ++i)
    yc[i] = y[u.rows[static_cast<std::size_t>(i)]] - r.intercept;
  EXPECT_NEAR(yc.sum(), 0.0, 1e-9 * yc.cwiseAbs().sum());
  for (std::size_t k = 0; k < r.path.size(); ++k) {
    const double lambda = r.path[k].lambda;
    const std::vector<double> b = dense_beta(r, k, u.columns.size());
    const Eigen::VectorXd res = yc - z * Eigen::Map<const Eigen::VectorXd>(b.data(), z.cols());
    const Eigen::VectorXd g = z.transpose() * res / n;
    for (Eigen::Index j = 0; j < z.cols(); ++j) {
      const double bj = b[static_cast<std::size_t>(j)];
      if (bj != 0.0) {
        EXPECT_NEAR(g[j] - lambda * (1 - alpha) * bj, lambda * alpha * (bj > 0 ? 1 : -1), tolerance)
            << "lambda " << lambda << " column " << j;
      } else {
        EXPECT_LE(std::fabs(g[j]), lambda * alpha + tolerance)
            << "lambda " << lambda << " column " << j;
      }
    }
    EXPECT_NEAR(r.path[k].r_squared, 1 - res.squaredNorm() / yc.squaredNorm(), 1e-9);
    EXPECT_TRUE(r.path[k].converged);
  }
}

void write_raw(const std::filesystem::path& p, const double* data, std::size_t count) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(data),
            static_cast<std::streamsize>(count * sizeof(double)));
}

// scikit-learn's coefficients for each λ of `r`, on the explicit matrix of the used samples.
void expect_equals_sklearn(const store& s, const selection& sel, const std::vector<double>& y,
                           const penalized_result& r, double alpha, const test::temp_dir& dir) {
  ASSERT_TRUE(std::filesystem::exists(python))
      << python << " is missing: scripts/test.sh makes it (numpy and scikit-learn from PyPI)";
  const selection u = used_rows(sel, y);
  std::size_t nonconstant = 0;
  const Eigen::MatrixXd z = test::standardized_matrix(s, u, false, nonconstant);
  std::vector<double> yu;
  for (std::size_t i : u.rows) yu.push_back(y[i]);
  write_raw(dir / "z.bin", z.data(), static_cast<std::size_t>(z.size()));
  write_raw(dir / "y.bin", yu.data(), yu.size());
  std::ostringstream lambdas;
  lambdas.precision(17);
  for (std::size_t k = 0; k < r.path.size(); ++k) lambdas << (k ? "," : "") << r.path[k].lambda;
  std::string out;
  ASSERT_EQ(test::run_command(python + " " + COLFLOW_TEST_SOURCE_DIR + "/support/sklearn_enet.py " +
                                  (dir / "z.bin").string() + " " + std::to_string(z.rows()) + " " +
                                  std::to_string(z.cols()) + " " + (dir / "y.bin").string() + " " +
                                  std::to_string(alpha) + " " + lambdas.str() + " " +
                                  (dir / "sk.tsv").string(),
                              out),
            0)
      << out;
  std::map<double, std::vector<double>> sk;
  std::ifstream in(dir / "sk.tsv");
  double lambda, b;
  std::size_t j;
  while (in >> lambda >> j >> b) {
    auto& v = sk[lambda];
    v.resize(static_cast<std::size_t>(z.cols()), 0.0);
    v[j] = b;
  }
  ASSERT_EQ(sk.size(), r.path.size());
  // Columns in perfect linkage (equal or opposite after standardisation, common in real
  // genotypes) make the lasso's coefficients non-unique: any split of their weight is optimal.
  // Their coefficients are compared through the fit Zb, which is unique; all others directly.
  std::vector<std::uint8_t> tied(static_cast<std::size_t>(z.cols()), 0);
  const Eigen::MatrixXd gram = z.transpose() * z;
  for (Eigen::Index a = 0; a < z.cols(); ++a)
    for (Eigen::Index c = a + 1; c < z.cols(); ++c)
      if (gram(a, a) > 0 &&
          std::fabs(gram(a, c)) >= (1 - 1e-9) * std::sqrt(gram(a, a) * gram(c, c)))
        tied[static_cast<std::size_t>(a)] = tied[static_cast<std::size_t>(c)] = 1;
  for (std::size_t k = 0; k < r.path.size(); ++k) {
    const auto it = sk.find(r.path[k].lambda);
    ASSERT_NE(it, sk.end()) << r.path[k].lambda;
    const std::vector<double> ours = dense_beta(r, k, u.columns.size());
    for (std::size_t c = 0; c < ours.size(); ++c)
      if (!tied[c] || alpha < 1) {
        EXPECT_NEAR(ours[c], it->second[c], 1e-5)
            << "lambda " << r.path[k].lambda << " column " << c;
      }
    const Eigen::VectorXd diff =
        z * (Eigen::Map<const Eigen::VectorXd>(ours.data(), z.cols()) -
             Eigen::Map<const Eigen::VectorXd>(it->second.data(), z.cols()));
    EXPECT_LT(diff.norm() / std::sqrt(static_cast<double>(z.rows())), 1e-5)
        << "lambda " << r.path[k].lambda;
  }
}

// A phenotype from a few columns of the store plus noise, with some values missing.
std::vector<double> make_phenotype(const store& s, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> y(s.num_rows(), 0.0), x(s.num_rows());
  for (std::size_t j : {3u, 10u, 17u, 40u}) {
    s.read_column(j, x, decode_as::standardized);
    const double effect = normal(rng);
    for (std::size_t i = 0; i < y.size(); ++i) y[i] += effect * x[i];
  }
  for (double& v : y) v = rng() % 20 == 0 ? NAN : 5 + v + normal(rng);
  return y;
}

TEST(PenalizedTest, PathsSatisfyKktAndEqualScikitLearnForLassoEnetAndRidge) {
  test::temp_dir dir;
  const std::uint64_t n = 240, m = 90;
  test::write_genotype_store(dir / "g.cf", n, m, column_encoding{codec_id::zstd, 1});
  const store s = store::open(dir / "g.cf");
  const std::vector<double> y = make_phenotype(s, 5);
  selection sel = selection::all(s);
  sel.rows.clear();
  for (std::size_t i = 0; i < n; ++i) {
    sel.row_kept[i] = i % 7 != 3;
    if (sel.row_kept[i]) sel.rows.push_back(i);
  }
  for (const double alpha : {1.0, 0.5, 0.0}) {
    penalized_options o;
    o.alpha = alpha;
    o.n_lambda = 8;
    o.lambda_min_ratio = 1e-3;
    o.tolerance = 1e-12;
    const penalized_result r = penalized_regression(s, sel, y, o);
    ASSERT_EQ(r.path.size(), 8u);
    EXPECT_EQ(r.columns.size(), m);
    if (alpha > 0) {
      EXPECT_EQ(r.path[0].nonzero, 0u) << "nothing enters at lambda_max";
    }
    EXPECT_GT(r.path.back().nonzero, 4u);
    expect_kkt(s, sel, y, r, alpha, 1e-9);
    expect_equals_sklearn(s, sel, y, r, alpha, dir);
  }
}

TEST(PenalizedTest, Uk10kLassoEqualsScikitLearn) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  const std::string d = dir.path().string() + "/";
  std::string out;
  const store s = store::open(test::uk10k_store(dir.path()));
  {
    std::ofstream list(d + "first.txt");
    for (std::size_t j = 0; j < 800; ++j) list << s.columns()[j].id << "\n";
  }
  ASSERT_EQ(test::run_cli(
                "lasso " + d + "u.cf --quiet --pheno " + test::dataset("uk10k/test.phen") +
                    " --extract " + d +
                    "first.txt --nlambda 4 --lambda-min-ratio 0.1 --tol 1e-12 --digits 17 --out " +
                    d + "l",
                out),
            0)
      << out;
  const test::text_table path = test::read_table(d + "l.path.tsv"),
                         coef = test::read_table(d + "l.coef.tsv");
  ASSERT_EQ(path.rows.size(), 4u);
  selection_files f;
  f.extract = d + "first.txt";
  const selection sel = select(s, f);
  const phenotype_table ph = read_phenotypes(test::dataset("uk10k/test.phen"), s.samples());
  const std::vector<double> y(ph.values.col(0).data(), ph.values.col(0).data() + ph.values.rows());
  // Rebuild the result from the files, then check it like the library's.
  penalized_result r;
  r.samples = used_rows(sel, y).rows.size();
  double sum = 0;
  for (std::size_t i : used_rows(sel, y).rows) sum += y[i];
  r.intercept = sum / static_cast<double>(r.samples);
  std::map<std::string, std::size_t> position;
  for (std::size_t p = 0; p < sel.columns.size(); ++p) position[s.columns()[sel.columns[p]].id] = p;
  for (const auto& row : path.rows) {
    penalized_step st;
    st.lambda = std::stod(row[0]);
    st.r_squared = std::stod(row[2]);
    st.converged = row[6] == "1";
    r.path.push_back(st);
    r.coefficients.emplace_back();
  }
  for (const auto& row : coef.rows) {
    std::size_t k = 0;
    while (k < r.path.size() && std::stod(row[0]) != r.path[k].lambda) ++k;
    ASSERT_LT(k, r.path.size());
    r.coefficients[k].emplace_back(position.at(row[1]), std::stod(row[3]));
  }
  EXPECT_GT(r.coefficients.back().size(), 5u);
  expect_kkt(s, sel, y, r, 1.0, 1e-9);
  expect_equals_sklearn(s, sel, y, r, 1.0, dir);
}

TEST(PenalizedTest, DenseStoresThreadsAndInFlightGiveTheSameCoefficients) {
  test::temp_dir dir;
  test::write_float_store(dir / "f.cf", value_type::float64, 150, 60,
                          column_encoding{codec_id::lz4, 1, true});
  const store f = store::open(dir / "f.cf");
  const std::vector<double> y = make_phenotype(f, 9);
  penalized_options o;
  o.alpha = 0.7;
  o.n_lambda = 6;
  o.tolerance = 1e-12;
  const penalized_result r = penalized_regression(f, selection::all(f), y, o);
  expect_kkt(f, selection::all(f), y, r, 0.7, 1e-9);

  test::write_genotype_store(dir / "g.cf", 333, 150, column_encoding{codec_id::none, 0});
  const store g = store::open(dir / "g.cf");
  const std::vector<double> yg = make_phenotype(g, 2);
  const penalized_result a = penalized_regression(g, selection::all(g), yg, o);
  tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
  analysis_options serial;
  serial.stream.in_flight = 1;
  serial.stream.block_bytes = 100;
  const penalized_result b = penalized_regression(g, selection::all(g), yg, o, serial);
  ASSERT_EQ(a.coefficients.size(), b.coefficients.size());
  for (std::size_t k = 0; k < a.coefficients.size(); ++k)
    EXPECT_EQ(a.coefficients[k], b.coefficients[k]);
}

TEST(PenalizedTest, BadRequestsAreRefused) {
  test::temp_dir dir;
  test::write_genotype_store(dir / "g.cf", 30, 10, column_encoding{codec_id::none, 0});
  const store g = store::open(dir / "g.cf");
  std::vector<double> y(30, 1.0);
  penalized_options o;
  EXPECT_THROW(penalized_regression(g, selection::all(g), y, o), error);  // constant phenotype
  y[3] = 2.0;
  o.alpha = 1.5;
  EXPECT_THROW(penalized_regression(g, selection::all(g), y, o), error);
  o.alpha = 1;
  o.lambdas = {0.1, -1.0};
  EXPECT_THROW(penalized_regression(g, selection::all(g), y, o), error);
  std::string out;
  EXPECT_NE(test::run_cli("enet " + (dir / "g.cf").string() + " --alpha 2 --pheno x --out y", out),
            0);
  EXPECT_NE(out.find("--alpha"), std::string::npos) << out;
}

TEST(PenalizedTest, PredictionsUseTheFittedStandardisationAndHandleSwappedAlleles) {
  test::temp_dir dir;
  const std::uint64_t n = 180, m = 45;
  const auto codes =
      test::write_genotype_store(dir / "g.cf", n, m, column_encoding{codec_id::zstd, 1});
  const store s = store::open(dir / "g.cf");
  const std::vector<double> y = make_phenotype(s, 12);
  penalized_options o;
  o.alpha = 0.8;
  o.n_lambda = 5;
  o.lambda_min_ratio = 0.05;
  o.tolerance = 1e-12;
  const selection sel = selection::all(s);
  const penalized_result r = penalized_regression(s, sel, y, o);
  const Eigen::MatrixXd pred = predict(s, r, match_columns(s, sel, s));
  ASSERT_EQ(pred.rows(), static_cast<Eigen::Index>(n));
  ASSERT_EQ(pred.cols(), 5);
  // Every sample, with or without a phenotype: b0 + Σ b_j (x_ij − mean_j) / sd_j, the mean and
  // SD those of the fitted samples, a missing call counting as the mean.
  for (std::size_t k = 0; k < r.path.size(); ++k)
    for (std::size_t i = 0; i < n; ++i) {
      double expect = r.intercept;
      for (const auto& [p, b] : r.coefficients[k]) {
        const int d = test::dosage_at(codes[p], i);
        if (d >= 0) expect += b * (d - r.columns[p].mean) / r.columns[p].sd;
      }
      EXPECT_NEAR(pred(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(k)), expect, 1e-10);
    }
  // The same genotypes counted on the other allele (A1 and A2 swapped), in another column
  // order, with one column absent: identical predictions but for that column's share.
  {
    store_writer w(dir / "swapped.cf", writer_options{value_type::genotype, n, false, "test", {}},
                   test::numbered_samples(n));
    for (std::size_t j = m; j-- > 1;) {
      const std::vector<std::uint8_t> c = test::swapped_alleles(codes[j]);
      column_info info = test::numbered_column(j);
      std::swap(info.a1, info.a2);
      w.append(encode_genotype_column(c, n, column_encoding{codec_id::none, 0}), info);
    }
    w.finish();
  }
  const store t = store::open(dir / "swapped.cf");
  const column_match match = match_columns(s, sel, t);
  EXPECT_EQ(match.missing, 1u);
  EXPECT_EQ(match.target[0], column_match::absent);
  EXPECT_EQ(match.target[1], m - 2);
  EXPECT_EQ(match.swapped[1], 1);
  const Eigen::MatrixXd other = predict(t, r, match);
  for (std::size_t k = 0; k < r.path.size(); ++k)
    for (std::size_t i = 0; i < n; ++i) {
      double absent_share = 0;
      for (const auto& [p, b] : r.coefficients[k])
        if (p == 0 && test::dosage_at(codes[0], i) >= 0)
          absent_share = b * (test::dosage_at(codes[0], i) - r.columns[0].mean) / r.columns[0].sd;
      EXPECT_NEAR(other(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(k)),
                  pred(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(k)) - absent_share,
                  1e-10);
    }
  std::string out;
  ASSERT_EQ(test::run_cli("lasso " + (dir / "g.cf").string() + " --quiet --nlambda 3 --pheno " +
                              (dir / "p.txt").string() + " --out " + (dir / "c").string() +
                              " --predict " + (dir / "swapped.cf").string(),
                          out),
            1)
      << out;
  EXPECT_NE(out.find("p.txt"), std::string::npos) << out;
}

}  // namespace
}  // namespace colflow
