// logistic_sums (kernels/logistic_sums_internal.hpp): the information, the gradient, the
// per-row values and the log-likelihood of a logistic fit's pass against the same sums in long
// double with the C library's exponential, for designs of every width the kernel has code for and
// beyond, row counts with and without a last partial group of eight, with and without counts and
// offsets; and its exponential at the edges (η of ±0, beyond ±708, NaN-free far out). That every
// vector path gives the same bits is checked on whole commands (vector_path_test).
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/logistic_sums_internal.hpp"

namespace colflow::detail {
namespace {

struct problem {
  std::vector<std::vector<double>> columns;  // intercept first
  std::vector<double> y, count, offset, beta;
  std::vector<const double*> pointers;

  logistic_design design() {
    pointers.clear();
    for (const auto& c : columns) pointers.push_back(c.data());
    return {pointers, y.size(), y.data(), count.empty() ? nullptr : count.data(),
            offset.empty() ? nullptr : offset.data()};
  }
};

problem make_problem(std::size_t n, std::size_t k, bool counts, bool offsets, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> dosage(0, 2), cells(1, 40);
  problem p;
  p.columns.assign(k, std::vector<double>(n, 1.0));
  for (std::size_t j = 1; j < k; ++j)
    for (double& v : p.columns[j]) v = j == 1 ? dosage(rng) : normal(rng);
  for (std::size_t i = 0; i < n; ++i) p.y.push_back(normal(rng) > 0.4 ? 1 : 0);
  if (counts)
    for (std::size_t i = 0; i < n; ++i) p.count.push_back(cells(rng));
  if (offsets)
    for (std::size_t i = 0; i < n; ++i) p.offset.push_back(0.5 * normal(rng));
  for (std::size_t j = 0; j < k; ++j) p.beta.push_back(0.3 * normal(rng));
  return p;
}

struct reference {
  std::vector<long double> information, gradient, p, w;
  long double log_likelihood = 0;
};

reference direct(const problem& q) {
  const std::size_t n = q.y.size(), k = q.columns.size();
  reference r;
  r.information.assign(k * k, 0);
  r.gradient.assign(k, 0);
  for (std::size_t i = 0; i < n; ++i) {
    long double eta = q.offset.empty() ? 0 : q.offset[i];
    for (std::size_t j = 0; j < k; ++j)
      eta += static_cast<long double>(q.columns[j][i]) * q.beta[j];
    const long double p = 1 / (1 + std::exp(-eta)), c = q.count.empty() ? 1 : q.count[i];
    const long double w = c * p * (1 - p), residual = c * (q.y[i] - p);
    for (std::size_t j = 0; j < k; ++j) {
      r.gradient[j] += residual * q.columns[j][i];
      for (std::size_t l = 0; l < k; ++l)
        r.information[l + j * k] += w * q.columns[j][i] * q.columns[l][i];
    }
    r.log_likelihood += c * (q.y[i] * eta - std::log1p(std::exp(eta)));
    r.p.push_back(p);
    r.w.push_back(w);
  }
  return r;
}

// |a − b| within `relative` of the larger sum of magnitudes `scale`.
void expect_close(double got, long double want, long double scale, const char* what) {
  EXPECT_LE(std::fabs(static_cast<long double>(got) - want), 1e-13L * scale) << what;
}

TEST(LogisticSums, MatchTheDirectSumsAtEveryWidthAndLength) {
  for (std::size_t k : {1, 2, 4, 8, 9, 12})
    for (std::size_t n : {1, 7, 8, 13, 64, 203})
      for (int variant = 0; variant < 3; ++variant) {
        SCOPED_TRACE(testing::Message() << "k " << k << " n " << n << " variant " << variant);
        problem q =
            make_problem(n, k, variant == 1, variant == 2, static_cast<unsigned>(17 * k + n));
        const reference want = direct(q);
        std::vector<double> information(k * k, -1), gradient(k, -1), p(n), w(n);
        double log_likelihood = 1;
        const logistic_rows rows{p.data(), w.data(), &log_likelihood};
        logistic_sums(q.design(), q.beta.data(), information.data(), gradient.data(), &rows);
        const long double scale = n * 40.0L * 16;  // counts up to 40, |x x'| up to ~16
        for (std::size_t e = 0; e < k * k; ++e)
          expect_close(information[e], want.information[e], scale, "information");
        for (std::size_t j = 0; j < k; ++j)
          expect_close(gradient[j], want.gradient[j], scale, "gradient");
        expect_close(log_likelihood, want.log_likelihood, scale, "log-likelihood");
        for (std::size_t i = 0; i < n; ++i) {
          EXPECT_LE(std::fabs(p[i] - want.p[i]), 1e-15L * want.p[i]) << "p, row " << i;
          // 1 − p carries p's rounding: w to a few units of p's last place, times the count.
          const double c = q.count.empty() ? 1 : q.count[i];
          EXPECT_LE(std::fabs(w[i] - want.w[i]), 1e-15L * c) << "w, row " << i;
        }
        // Symmetric to the bit, and the same without the per-row values.
        for (std::size_t j = 0; j < k; ++j)
          for (std::size_t l = 0; l < k; ++l)
            EXPECT_EQ(information[l + j * k], information[j + l * k]);
        std::vector<double> information2(k * k), gradient2(k);
        logistic_sums(q.design(), q.beta.data(), information2.data(), gradient2.data(), nullptr);
        EXPECT_EQ(information2, information);
        EXPECT_EQ(gradient2, gradient);
      }
}

TEST(LogisticSums, ExponentialHoldsAtTheEdges) {
  // One column (the intercept) whose coefficient sets η; offsets give each row its own.
  const std::vector<double> etas = {0.0,   -0.0, 1e-300, -1e-300, 0.3465, -0.3466, 20,
                                    -36.7, 300,  -707.9, 708.2,   -745,   800,     -1e6};
  problem q;
  q.columns.assign(1, std::vector<double>(etas.size(), 1.0));
  q.y.assign(etas.size(), 1.0);
  q.offset = etas;
  q.beta = {0.0};
  const std::size_t n = etas.size();
  std::vector<double> information(1), gradient(1), p(n), w(n);
  double log_likelihood = 1;
  const logistic_rows rows{p.data(), w.data(), &log_likelihood};
  logistic_sums(q.design(), q.beta.data(), information.data(), gradient.data(), &rows);
  for (std::size_t i = 0; i < n; ++i) {
    SCOPED_TRACE(testing::Message() << "eta " << etas[i]);
    const long double want = 1 / (1 + std::exp(-static_cast<long double>(etas[i])));
    EXPECT_TRUE(std::isfinite(p[i]) && p[i] >= 0 && p[i] <= 1);
    if (std::fabs(etas[i]) <= 708) {
      EXPECT_LE(std::fabs(p[i] - want), 1e-15L * want);
      // Below 0, p = t / (1 + t): the exponential itself, within a few units in its last place.
      const long double t = std::exp(-std::fabs(static_cast<long double>(etas[i])));
      if (etas[i] < 0) {
        EXPECT_LE(std::fabs(p[i] / (1 - static_cast<long double>(p[i])) - t), 1e-15L * t);
      }
    } else {
      // Far out, |η| is taken as 708: p within e^−708 of 0 or 1.
      EXPECT_LE(std::fabs(p[i] - want), 1e-300L);
    }
  }
  EXPECT_TRUE(std::isfinite(information[0]) && std::isfinite(gradient[0]));
  // The logarithm's terms y η − max(η, 0) − log(1 + e^−|η|), |η| at most 708.
  long double want = 0, magnitude = 0;
  for (const double e : etas) {
    const long double a = std::min(std::fabs(static_cast<long double>(e)), 708.0L);
    want += e - std::max(0.0, e) - std::log1p(std::exp(-a));
    magnitude += std::fabs(e) + 1;
  }
  EXPECT_LE(std::fabs(log_likelihood - want), 1e-16L * magnitude);
}

TEST(LogisticSums, FirthSumsMatchTheDirectSums) {
  for (std::size_t k : {3, 11})
    for (std::size_t n : {13, 40, 101})  // more rows than columns: I is positive definite
      for (bool counts : {false, true}) {
        SCOPED_TRACE(testing::Message() << "k " << k << " n " << n << " counts " << counts);
        problem q = make_problem(n, k, counts, false, static_cast<unsigned>(k + 3 * n));
        std::vector<double> information(k * k), gradient(k), p(n), w(n);
        double log_likelihood = 0;
        const logistic_rows rows{p.data(), w.data(), &log_likelihood};
        logistic_sums(q.design(), q.beta.data(), information.data(), gradient.data(), &rows);
        const auto ki = static_cast<Eigen::Index>(k);
        const Eigen::Map<const Eigen::MatrixXd> info(information.data(), ki, ki);
        const Eigen::LLT<Eigen::MatrixXd> factor(info);
        ASSERT_EQ(factor.info(), Eigen::Success);
        const Eigen::MatrixXd l_inverse = factor.matrixL().solve(Eigen::MatrixXd::Identity(ki, ki));
        const Eigen::MatrixXd inverse = factor.solve(Eigen::MatrixXd::Identity(ki, ki));
        std::vector<long double> curvature(k * k, 0), want_gradient(k, 0);
        for (std::size_t i = 0; i < n; ++i) {
          Eigen::VectorXd x(ki);
          for (std::size_t j = 0; j < k; ++j) x[static_cast<Eigen::Index>(j)] = q.columns[j][i];
          const long double h = static_cast<long double>(p[i]) * (1 - p[i]) * x.dot(inverse * x);
          const long double c = counts ? q.count[i] : 1;
          const long double r = c * ((q.y[i] - p[i]) + h * (0.5L - p[i]));
          for (std::size_t j = 0; j < k; ++j) {
            want_gradient[j] += r * q.columns[j][i];
            for (std::size_t l = 0; l < k; ++l)
              curvature[l + j * k] += w[i] * (1 + h) * q.columns[j][i] * q.columns[l][i];
          }
        }
        std::vector<double> got_curvature(k * k), got_gradient(k);
        firth_sums(q.design(), l_inverse.data(), p.data(), w.data(), got_curvature.data(),
                   got_gradient.data());
        const long double scale = n * 40.0L * 16;
        for (std::size_t e = 0; e < k * k; ++e)
          expect_close(got_curvature[e], curvature[e], scale, "curvature");
        for (std::size_t j = 0; j < k; ++j)
          expect_close(got_gradient[j], want_gradient[j], scale, "gradient");
      }
}

}  // namespace
}  // namespace colflow::detail
