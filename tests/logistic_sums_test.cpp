// logistic_sums (kernels/logistic_sums_internal.hpp): the information, the gradient and the
// per-row values of a logistic fit's pass against the same sums in long double with the C
// library's exponential, for designs of every width the kernel has code for and beyond, row
// counts with and without a last partial group of eight, with and without counts and offsets;
// and its exponential at the edges (η of ±0, beyond ±708, NaN-free far out). That every vector
// path gives the same bits is checked on whole commands (vector_path_test).
#include "kernels/logistic_sums_internal.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

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
  std::vector<long double> information, gradient, eta, p, w;
};

reference direct(const problem& q) {
  const std::size_t n = q.y.size(), k = q.columns.size();
  reference r;
  r.information.assign(k * k, 0);
  r.gradient.assign(k, 0);
  for (std::size_t i = 0; i < n; ++i) {
    long double eta = q.offset.empty() ? 0 : q.offset[i];
    for (std::size_t j = 0; j < k; ++j) eta += static_cast<long double>(q.columns[j][i]) * q.beta[j];
    const long double p = 1 / (1 + std::exp(-eta)), c = q.count.empty() ? 1 : q.count[i];
    const long double w = c * p * (1 - p), residual = c * (q.y[i] - p);
    for (std::size_t j = 0; j < k; ++j) {
      r.gradient[j] += residual * q.columns[j][i];
      for (std::size_t l = 0; l < k; ++l)
        r.information[l + j * k] += w * q.columns[j][i] * q.columns[l][i];
    }
    r.eta.push_back(eta);
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
        problem q = make_problem(n, k, variant == 1, variant == 2, static_cast<unsigned>(17 * k + n));
        const reference want = direct(q);
        std::vector<double> information(k * k, -1), gradient(k, -1), eta(n), one_plus_t(n), p(n),
            w(n);
        const logistic_rows rows{eta.data(), one_plus_t.data(), p.data(), w.data()};
        logistic_sums(q.design(), q.beta.data(), information.data(), gradient.data(), &rows);
        const long double scale = n * 40.0L * 16;  // counts up to 40, |x x'| up to ~16
        for (std::size_t e = 0; e < k * k; ++e)
          expect_close(information[e], want.information[e], scale, "information");
        for (std::size_t j = 0; j < k; ++j)
          expect_close(gradient[j], want.gradient[j], scale, "gradient");
        for (std::size_t i = 0; i < n; ++i) {
          expect_close(eta[i], want.eta[i], 1 + std::fabs(want.eta[i]), "eta");
          EXPECT_LE(std::fabs(p[i] - want.p[i]), 1e-15L * want.p[i]) << "p, row " << i;
          // 1 − p carries p's rounding: w to a few units of p's last place, times the count.
          const double c = q.count.empty() ? 1 : q.count[i];
          EXPECT_LE(std::fabs(w[i] - want.w[i]), 1e-15L * c) << "w, row " << i;
          EXPECT_LE(std::fabs(one_plus_t[i] - (1 + std::exp(-std::fabs(eta[i])))), 2.3e-16)
              << "1 + t, row " << i;
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
  const std::vector<double> etas = {0.0,    -0.0,   1e-300, -1e-300, 0.3465, -0.3466, 20,
                                    -36.7,  300,    -707.9, 708.2,   -745,   800,     -1e6};
  problem q;
  q.columns.assign(1, std::vector<double>(etas.size(), 1.0));
  q.y.assign(etas.size(), 1.0);
  q.offset = etas;
  q.beta = {0.0};
  const std::size_t n = etas.size();
  std::vector<double> information(1), gradient(1), eta(n), one_plus_t(n), p(n), w(n);
  const logistic_rows rows{eta.data(), one_plus_t.data(), p.data(), w.data()};
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
}

}  // namespace
}  // namespace colflow::detail
