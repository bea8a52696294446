// The BayesR mixture's draws (bayesr_mixture_internal.hpp): a column's class and effect, and the
// iteration's σ²_G and π.
#include <algorithm>
#include <cmath>
#include <limits>

#include "analysis/models/bayesr_mixture_internal.hpp"

namespace colflow::detail {

bayesr_mixture::bayesr_mixture(std::span<const double> gammas, std::uint64_t seed)
    : gammas_(gammas.begin(), gammas.end()),
      seed_(seed),
      log_pi_(classes()),
      variance_(classes()),
      inverse_variance_(classes()),
      constants_(constants_size()),
      weight_(classes()) {}

void bayesr_mixture::prepare(std::uint64_t t, double a, double sigma2_g, double sigma2_e,
                             std::span<const double> pi) {
  start(t, sigma2_g, pi);
  column_constants(a, sigma2_e, constants_);
}

void bayesr_mixture::start(std::uint64_t t, double sigma2_g, std::span<const double> pi) {
  t_ = t;
  // log π_k, again only when π changed: a sampler prepares every column with the same π.
  if (!std::equal(pi.begin(), pi.end(), pi_.begin(), pi_.end())) {
    pi_.assign(pi.begin(), pi.end());
    for (std::size_t k = 0; k < classes(); ++k) log_pi_[k] = std::log(pi[k]);
  }
  for (std::size_t k = 1; k < classes(); ++k) {
    variance_[k] = gammas_[k - 1] * sigma2_g;
    inverse_variance_[k] = 1.0 / variance_[k];
  }
}

void bayesr_mixture::column_constants(double a, double sigma2_e, std::span<double> out) const {
  // Class k > 0: β ~ N(0, v_k), v_k = γ_k σ²_G. With a = zᵀz and r = zᵀ(e + zβ_old), the log
  // marginal likelihood against the zero class is −½ log(v_k C_k / σ²_E) + r² / (2 σ²_E C_k),
  // C_k = a + σ²_E / v_k; and β | k ~ N(r / C_k, σ²_E / C_k). One division per class: 1 / v_k
  // is the iteration's, 1 / σ²_E the column's.
  const std::size_t n = classes();
  double* log_const = out.data();
  double* quad = log_const + n;
  double* shrink = quad + n;
  double* spread = shrink + n;
  const double inverse_e = 1.0 / sigma2_e;
  log_const[0] = log_pi_[0];
  quad[0] = shrink[0] = spread[0] = 0;
  for (std::size_t k = 1; k < n; ++k) {
    const double c = a + sigma2_e * inverse_variance_[k];
    const double inverse_c = 1.0 / c;
    log_const[k] = log_pi_[k] - 0.5 * std::log(variance_[k] * c * inverse_e);
    quad[k] = 0.5 * inverse_e * inverse_c;
    shrink[k] = inverse_c;
    spread[k] = std::sqrt(sigma2_e * inverse_c);
  }
}

bayesr_mixture::effect bayesr_mixture::draw(std::size_t p, double r,
                                            std::span<const double> constants) {
  const std::size_t classes = this->classes();
  const double* log_const = constants.data();
  const double* quad = log_const + classes;
  const double* shrink = quad + classes;
  const double* spread = shrink + classes;
  const double r2 = r * r;
  double top = -std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < classes; ++k) {
    weight_[k] = log_const[k] + quad[k] * r2;
    top = std::max(top, weight_[k]);
  }
  // exp(0) is 1 exactly: the largest weight's call is left out.
  double total = 0;
  for (std::size_t k = 0; k < classes; ++k)
    total += (weight_[k] = weight_[k] == top ? 1.0 : std::exp(weight_[k] - top));
  random_draws d(seed_, column_effect, t_, static_cast<std::uint32_t>(p));
  double u = d.uniform() * total;
  std::size_t k = 0;
  while (k + 1 < classes && u >= weight_[k]) u -= weight_[k++];
  const double beta = k == 0 ? 0.0 : r * shrink[k] + spread[k] * d.normal();
  return {static_cast<std::uint8_t>(k), beta};
}

bayesr_mixture::tally bayesr_mixture::count(std::span<const std::size_t> visited,
                                            std::span<const std::uint8_t> component,
                                            std::span<const double> beta) const {
  tally out;
  out.counts.assign(classes(), 0.0);
  for (const std::size_t p : visited) {
    out.counts[component[p]] += 1;
    out.beta_squares += beta[p] * beta[p];
    if (component[p] > 0) out.scaled_squares += beta[p] * beta[p] / gammas_[component[p] - 1];
  }
  out.nonzero = static_cast<double>(visited.size()) - out.counts[0];
  return out;
}

double bayesr_mixture::draw_sigma2_g(random_draws& d, const tally& t, double df, double scale) {
  const double g_df = df + t.nonzero;
  return d.scaled_inverse_chi_square(g_df, (t.nonzero * t.beta_squares + df * scale) / g_df);
}

double bayesr_mixture::draw_sigma2_beta(random_draws& d, const tally& t, double df, double scale) {
  const double beta_df = df + t.nonzero;
  return d.scaled_inverse_chi_square(beta_df, (t.scaled_squares + df * scale) / beta_df);
}

void bayesr_mixture::draw_pi(std::uint64_t t, const tally& counted, double alpha,
                             std::vector<double>& pi) const {
  random_draws w(seed_, weights, t, 0);
  double total = 0;
  for (std::size_t k = 0; k < classes(); ++k) total += (pi[k] = w.gamma(counted.counts[k] + alpha));
  for (double& p : pi) p /= total;
}

}  // namespace colflow::detail
