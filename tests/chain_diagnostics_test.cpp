// Chain diagnostics: the autocorrelation time, ESS and Geweke's z against a direct computation
// of their definitions (every autocorrelation first, then the rules), against the theory of
// AR(1) chains, on drifting and constant chains, in a chain's summary and in bayesr's.
#include "colflow/analysis/chain_diagnostics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "colflow/analysis/bayesr.hpp"

namespace colflow {
namespace {

std::vector<double> ar1(std::size_t n, double rho, unsigned seed) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal;
  std::vector<double> x(n);
  x[0] = normal(engine) / std::sqrt(1 - rho * rho);
  for (std::size_t t = 1; t < n; ++t) x[t] = rho * x[t - 1] + normal(engine);
  return x;
}

// The definitions spelled out: all n autocorrelations, all pair sums, the first non-positive
// one found, the running minimum summed; a long double accumulation throughout.
double direct_tau(const std::vector<double>& x) {
  const std::size_t n = x.size();
  long double mean = 0;
  for (double v : x) mean += v;
  mean /= n;
  std::vector<long double> rho(n);
  for (std::size_t k = 0; k < n; ++k) {
    long double s = 0;
    for (std::size_t t = 0; t + k < n; ++t) s += (x[t] - mean) * (x[t + k] - mean);
    rho[k] = s / n;
  }
  for (std::size_t k = n; k-- > 0;) rho[k] /= rho[0];
  std::vector<long double> pairs;
  for (std::size_t m = 0; 2 * m + 1 < n; ++m) pairs.push_back(rho[2 * m] + rho[2 * m + 1]);
  const auto stop = std::find_if(pairs.begin(), pairs.end(), [](long double p) { return p <= 0; });
  long double total = 0, running = pairs.front();
  for (auto p = pairs.begin(); p != stop; ++p) total += running = std::min(running, *p);
  return std::max(static_cast<double>(2 * total - 1), 1 / std::log10(static_cast<double>(n)));
}

double direct_geweke(const std::vector<double>& x) {
  const std::size_t n = x.size();
  const std::vector<double> a(x.begin(), x.begin() + n / 10), b(x.end() - n / 2, x.end());
  double difference = 0, variance = 0;
  for (const auto* part : {&a, &b}) {
    const double size = static_cast<double>(part->size());
    double mean = 0, squares = 0;
    for (double v : *part) mean += v / size;
    for (double v : *part) squares += (v - mean) * (v - mean);
    variance += squares / size * direct_tau(*part) / size;
    difference += part == &a ? mean : -mean;
  }
  return difference / std::sqrt(variance);
}

TEST(ChainDiagnosticsTest, AutocorrelationTimeEqualsTheDefinitionComputedDirectly) {
  for (double rho : {0.0, 0.5, 0.9, -0.3}) {
    const std::vector<double> x = ar1(1000, rho, 7);
    EXPECT_NEAR(autocorrelation_time(x), direct_tau(x), 1e-9 * direct_tau(x)) << rho;
    EXPECT_DOUBLE_EQ(effective_sample_size(x), 1000 / autocorrelation_time(x));
  }
}

TEST(ChainDiagnosticsTest, EffectiveSampleSizeOfAnAr1ChainNearsItsTheory) {
  const std::size_t n = 40000;
  for (double rho : {0.5, 0.8, 0.95}) {
    const double theory = n * (1 - rho) / (1 + rho);
    EXPECT_NEAR(effective_sample_size(ar1(n, rho, 11)), theory, 0.15 * theory) << rho;
  }
}

TEST(ChainDiagnosticsTest, GewekeZEqualsItsDefinitionAndFindsADriftingStart) {
  std::vector<double> x = ar1(3000, 0.5, 5);
  EXPECT_NEAR(geweke_z(x), direct_geweke(x), 1e-9 * std::abs(direct_geweke(x)));
  EXPECT_LT(std::abs(geweke_z(x)), 3.0);
  for (std::size_t t = 0; t < 300; ++t) x[t] += 2.0;  // the first 10 % elsewhere
  EXPECT_GT(std::abs(geweke_z(x)), 5.0);
  EXPECT_NEAR(geweke_z(x), direct_geweke(x), 1e-9 * std::abs(direct_geweke(x)));
}

TEST(ChainDiagnosticsTest, ShortOrConstantChainsAreNaN) {
  EXPECT_TRUE(std::isnan(effective_sample_size(std::vector<double>{1, 2, 3})));
  EXPECT_TRUE(std::isnan(effective_sample_size(std::vector<double>(50, 0.25))));
  EXPECT_TRUE(std::isnan(geweke_z(ar1(19, 0.5, 1))));
  std::vector<double> flat_start = ar1(100, 0.5, 1);
  std::fill(flat_start.begin(), flat_start.begin() + 10, 1.0);  // a constant first part
  EXPECT_TRUE(std::isnan(geweke_z(flat_start)));
}

TEST(ChainDiagnosticsTest, ChainSummaryIsTheMeanSdAndDiagnostics) {
  const std::vector<double> x = ar1(60, 0.6, 4);
  long double mean = 0, squares = 0;
  for (double v : x) mean += v;
  mean /= x.size();
  for (double v : x) squares += (v - mean) * (v - mean);
  const chain_summary s = summarize_chain(x);
  EXPECT_NEAR(s.mean, static_cast<double>(mean), 1e-14);
  EXPECT_NEAR(s.sd, std::sqrt(static_cast<double>(squares / 59)), 1e-14);  // n - 1
  EXPECT_NEAR(s.ess, 60 / direct_tau(x), 1e-9 * s.ess);
  EXPECT_NEAR(s.geweke_z, direct_geweke(x), 1e-9 * std::abs(s.geweke_z));

  const chain_summary one = summarize_chain(std::vector<double>{0.3});
  EXPECT_EQ(one.mean, 0.3);
  EXPECT_EQ(one.sd, 0.0);
  EXPECT_TRUE(std::isnan(one.ess) && std::isnan(one.geweke_z));
  const chain_summary none = summarize_chain({});
  EXPECT_TRUE(std::isnan(none.mean) && std::isnan(none.sd));
  EXPECT_TRUE(std::isnan(none.ess) && std::isnan(none.geweke_z));
}

TEST(ChainDiagnosticsTest, BayesrSummaryGivesThoseOfEveryKeptQuantity) {
  bayesr_result r;
  r.burnin = 30;
  const std::vector<double> h2 = ar1(130, 0.6, 3), g = ar1(130, 0.3, 5), e = ar1(130, 0.8, 6);
  for (std::size_t t = 0; t < h2.size(); ++t) {
    bayesr_sample s;
    s.iteration = t + 1;
    s.h2 = 0.4 + 0.01 * h2[t];
    s.sigma2_g = 0.5 + 0.01 * g[t];
    s.sigma2_e = 0.6 + 0.01 * e[t];
    s.nonzero = 20 + t % 7;
    r.trace.push_back(s);
  }
  std::vector<double> kept_h2, kept_g, kept_e, kept_nonzero;
  for (const bayesr_sample& s : r.trace)
    if (s.iteration > 30) {
      kept_h2.push_back(s.h2);
      kept_g.push_back(s.sigma2_g);
      kept_e.push_back(s.sigma2_e);
      kept_nonzero.push_back(static_cast<double>(s.nonzero));
    }
  const bayesr_summary summary = summarize(r);
  EXPECT_EQ(summary.kept, 100u);
  for (const auto& [q, kept] :
       {std::pair{summary.h2, kept_h2}, std::pair{summary.sigma2_g, kept_g},
        std::pair{summary.sigma2_e, kept_e}, std::pair{summary.nonzero, kept_nonzero}}) {
    const chain_summary direct = summarize_chain(kept);
    EXPECT_EQ(q.mean, direct.mean);
    EXPECT_EQ(q.sd, direct.sd);
    EXPECT_DOUBLE_EQ(q.ess, effective_sample_size(kept));
    EXPECT_DOUBLE_EQ(q.geweke_z, geweke_z(kept));
  }
  EXPECT_NEAR(summary.h2.ess, 100 / direct_tau(kept_h2), 1e-9 * summary.h2.ess);
  r.burnin = 120;  // 10 kept: an ESS, no Geweke z
  EXPECT_FALSE(std::isnan(summarize(r).h2.ess));
  EXPECT_TRUE(std::isnan(summarize(r).h2.geweke_z));
}

}  // namespace
}  // namespace colflow
