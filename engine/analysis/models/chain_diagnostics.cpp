// Convergence diagnostics of one chain: autocorrelation time, effective sample size, Geweke's z,
// and its summary.
#include "colflow/analysis/chain_diagnostics.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace colflow {
namespace {

constexpr double not_a_number = std::numeric_limits<double>::quiet_NaN();

double mean_of(std::span<const double> x) {
  double sum = 0;
  for (double v : x) sum += v;
  return sum / static_cast<double>(x.size());
}

// γ_k with the 1/n divisor, over the centred draws d.
double autocovariance(const std::vector<double>& d, std::size_t k) {
  double sum = 0;
  for (std::size_t t = 0; t + k < d.size(); ++t) sum += d[t] * d[t + k];
  return sum / static_cast<double>(d.size());
}

}  // namespace

double autocorrelation_time(std::span<const double> x) {
  const std::size_t n = x.size();
  if (n < 4) return not_a_number;
  const double mean = mean_of(x);
  std::vector<double> d(n);
  for (std::size_t t = 0; t < n; ++t) d[t] = x[t] - mean;
  const double gamma0 = autocovariance(d, 0);
  if (!(gamma0 > 0)) return not_a_number;
  // The lags are summed only until the sequence stops: a few times τ, not n.
  double total = 0, previous = std::numeric_limits<double>::infinity();
  for (std::size_t m = 0; 2 * m + 1 < n; ++m) {
    const double pair = (autocovariance(d, 2 * m) + autocovariance(d, 2 * m + 1)) / gamma0;
    if (!(pair > 0)) break;
    previous = std::min(pair, previous);
    total += previous;
  }
  return std::max(-1.0 + 2.0 * total, 1.0 / std::log10(static_cast<double>(n)));
}

double effective_sample_size(std::span<const double> x) {
  return static_cast<double>(x.size()) / autocorrelation_time(x);
}

double geweke_z(std::span<const double> x) {
  const std::size_t n = x.size();
  if (n < 20) return not_a_number;
  const std::span<const double> first = x.first(n / 10), last = x.last(n / 2);
  double variance = 0;
  for (const std::span<const double> part : {first, last}) {
    const double mean = mean_of(part);
    double squares = 0;
    for (double v : part) squares += (v - mean) * (v - mean);
    const double gamma0 = squares / static_cast<double>(part.size());
    if (!(gamma0 > 0)) return not_a_number;
    const double tau = part.size() >= 4 ? autocorrelation_time(part) : 1.0;
    variance += gamma0 * tau / static_cast<double>(part.size());
  }
  return (mean_of(first) - mean_of(last)) / std::sqrt(variance);
}

chain_summary summarize_chain(std::span<const double> x) {
  chain_summary s;
  if (x.empty()) return s;
  s.mean = mean_of(x);
  // Two passes (as numpy's std): a sum of squared deviations cannot come out below zero.
  double squares = 0;
  for (double v : x) squares += (v - s.mean) * (v - s.mean);
  s.sd = x.size() > 1 ? std::sqrt(squares / static_cast<double>(x.size() - 1)) : 0.0;
  s.ess = effective_sample_size(x);
  s.geweke_z = geweke_z(x);
  return s;
}

}  // namespace colflow
