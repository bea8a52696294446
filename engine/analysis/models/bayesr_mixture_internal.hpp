// The BayesR mixture prior on effects and its Gibbs draws, apart from any residual: class 0
// holds β = 0, class k ≥ 1 draws β ~ N(0, γ_k σ²_G), and a column is in class k with
// probability π_k (docs/ANALYSES.md, BayesR). A sampler brings the data's side of each column's
// update, r = zᵀ(e + zβ_old) and a = zᵀz: over the samples for the individual-level sampler
// (bayesr.cpp), from summary statistics and an LD matrix for a summary-statistics one; it takes
// back the class and effect drawn, and at the end of an iteration the mixture's σ²_G and π.
//
// Every draw comes from the chain's seed, the iteration and the column through
// detail::random_draws, so a column's draw is the same on any thread, process or visit order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "analysis/models/random_draws_internal.hpp"

namespace colflow::detail {

// What each random sequence of a BayesR chain is for (the purpose tag of random_draws).
enum bayesr_draw : std::uint8_t {
  visit_order = 1,
  intercept = 2,
  column_effect = 3,
  variances = 4,
  weights = 5
};

class bayesr_mixture {
 public:
  // `gammas`: γ_1 < … < γ_K of the non-zero classes; `seed`: the chain's.
  bayesr_mixture(std::span<const double> gammas, std::uint64_t seed);

  // Classes with the zero class: K + 1.
  std::size_t classes() const noexcept { return gammas_.size() + 1; }

  // Sets up iteration t (1-based) for columns of zᵀz = a, under σ²_G, σ²_E and π (one weight
  // per class, the zero class first). A sampler whose columns differ in a prepares again before
  // a column of another a.
  void prepare(std::uint64_t t, double a, double sigma2_g, double sigma2_e,
               std::span<const double> pi);

  // Column p's class and effect given r = zᵀ(e + zβ_old): the class from its posterior weights,
  // then β ~ N(r / C_k, σ²_E / C_k), C_k = a + σ²_E / v_k (β = 0 in class 0).
  struct effect {
    std::uint8_t component;
    double beta;
  };
  effect draw(std::size_t p, double r) { return draw(p, r, constants_); }

  // prepare() in two halves, for a sampler whose columns each have their own a and σ²_E
  // (SBayesR): start() sets up iteration t under σ²_G and π; column_constants() then computes a
  // column's constants (constants_size() doubles) into `out`, on any thread, many at once, and
  // draw() takes them. The same numbers as prepare() and draw(p, r).
  void start(std::uint64_t t, double sigma2_g, std::span<const double> pi);
  std::size_t constants_size() const noexcept { return 4 * classes(); }
  void column_constants(double a, double sigma2_e, std::span<double> out) const;
  effect draw(std::size_t p, double r, std::span<const double> constants);

  // An iteration's effects summed up: per class its columns, the non-zero ones, Σβ² and
  // Σβ²/γ_k (each effect over its class's γ: GCTB's sum of squares for σ²_β).
  struct tally {
    std::vector<double> counts;
    double nonzero = 0, beta_squares = 0, scaled_squares = 0;
  };
  tally count(std::span<const std::size_t> visited, std::span<const std::uint8_t> component,
              std::span<const double> beta) const;

  // σ²_G | β: scaled inverse χ² with df + (non-zero columns) degrees of freedom and scale
  // (non-zero · Σβ² + df · scale) / that, drawn from `d`, the iteration's sequence of variance
  // draws (the sampler draws σ²_E from it next).
  static double draw_sigma2_g(random_draws& d, const tally& t, double df, double scale);

  // σ²_β | β as GCTB's SBayesR draws it, where class k's variance is γ_k σ²_β: scaled inverse
  // χ² with df + (non-zero columns) degrees of freedom and scale (Σβ²/γ_k + df · scale) / that,
  // from `d`.
  static double draw_sigma2_beta(random_draws& d, const tally& t, double df, double scale);

  // π | classes: Dirichlet(counts + α), from the iteration's own sequence, into `pi`.
  void draw_pi(std::uint64_t t, const tally& counted, double alpha, std::vector<double>& pi) const;

 private:
  std::vector<double> gammas_;
  std::uint64_t seed_;
  std::uint64_t t_ = 0;
  // The π of the last start() and its logs; per class its variance v_k = γ_k σ²_G and 1 / v_k.
  std::vector<double> pi_, log_pi_, variance_, inverse_variance_;
  // prepare()'s constants: per class log π_k − ½ log(v_k C_k / σ²_E), then per class
  // 1 / (2 σ²_E C_k), 1 / C_k, and √(σ²_E / C_k); and a column's weights, draw()'s scratch.
  std::vector<double> constants_, weight_;
};

}  // namespace colflow::detail
