// The two ridge levels of whole-genome regression (analysis/wgr.hpp) on matrices in memory:
// a level-0 block of standardised columns, the level-1 predictors of one trait. Both fit on all
// folds but one and predict that one, so that no sample's prediction comes from a model that
// saw it; with leave-one-out, every sample is a fold of its own. Every product is summed over
// fixed ranges of rows in a fixed order, so the results do not depend on the thread count.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace colflow::detail {

// K consecutive folds of n samples: ⌊n/K⌋ each, the last one taking the rest (regenie's).
class sample_folds {
 public:
  sample_folds(std::size_t n, std::size_t k);
  std::size_t count() const noexcept { return starts_.size() - 1; }
  std::size_t begin(std::size_t k) const noexcept { return starts_[k]; }
  std::size_t size(std::size_t k) const noexcept { return starts_[k + 1] - starts_[k]; }
  // The first sample of each fold, then n.
  const std::vector<std::size_t>& starts() const noexcept { return starts_; }
  // The folds of a subset of the samples (`rows`, increasing positions): each fold keeps its
  // members, in order; a fold may be empty.
  static sample_folds of_subset(const sample_folds& folds, std::span<const Eigen::Index> rows);

 private:
  sample_folds() = default;
  std::vector<std::size_t> starts_;
};

// Level 0 of one block: g (n × b standardised columns), y (n × P scaled traits). For each fold k
// and shrinkage λ_j, β = (Σ_{other folds} GᵀG + λ_j I)⁻¹ Σ_{other folds} Gᵀy predicts fold k's
// rows; prediction (j, p) goes to column j·P + p of `predictions` (n × |λ|·P).
void level0_block(const Eigen::MatrixXd& g, const Eigen::MatrixXd& y, const sample_folds& folds,
                  std::span<const double> lambdas, Eigen::MatrixXd& predictions);

// Centres a predictor and scales it to SD 1 (n − 1 in the denominator) over the samples
// `observed` marks (every sample when empty; the others' values then serve nothing); a
// constant one becomes zeros.
void standardize_predictor(Eigen::Ref<Eigen::VectorXd> column,
                           std::span<const std::uint8_t> observed = {});

// Level 1 of one trait: a ridge regression of y on the columns of w, without intercept.
struct level1_fit {
  // Per τ: Σ over folds of the held-out loss, divided by n (squared error, or −log-likelihood).
  std::vector<double> loss;
  std::size_t chosen = 0;  // the τ of the smallest loss
  Eigen::MatrixXd loco;    // chromosomes × n: every fold's held-out prediction without c
};

// Per fold k, the lower triangle of X_kᵀX_k and X_kᵀY_k over its rows: one task per fold.
void fold_products(const Eigen::MatrixXd& x, const Eigen::MatrixXd& y, const sample_folds& folds,
                   std::vector<Eigen::MatrixXd>& gram, std::vector<Eigen::MatrixXd>& cross);

// The τ of the smallest loss summed over the folds (the first of equals), the sums divided
// by n: losses[k][t] is fold k's held-out loss at τ_t. `loco` is left empty.
level1_fit choose(const std::vector<std::vector<double>>& losses, double n);

// Chromosomes × n: for each sample, its fold's fit (beta[k]'s column `chosen`) over the
// predictors of every chromosome but one (the total less that chromosome's part).
Eigen::MatrixXd loco_predictions(
    const Eigen::MatrixXd& w, const sample_folds& folds, const std::vector<Eigen::MatrixXd>& beta,
    std::size_t chosen, std::span<const std::pair<Eigen::Index, Eigen::Index>> chromosome_columns);

// `chromosome_columns[c]` is the range [first, end) of w's columns on chromosome c + 1 (w's
// columns are in chromosome order). Each sample's prediction uses the fit of the folds
// without it, at the chosen τ.
level1_fit level1_ridge(const Eigen::MatrixXd& w, const Eigen::VectorXd& y,
                        const sample_folds& folds, std::span<const double> taus,
                        std::span<const std::pair<Eigen::Index, Eigen::Index>> chromosome_columns);

// Rows per step of level1_logistic's weighted products: each running fold holds a scaled copy
// of that many rows of w (rows · C · 8 bytes), besides its C × C system and factor.
inline constexpr Eigen::Index logistic_chunk_rows = 4096;

// Level 1 of a case/control trait (y 0 or 1): ridge-penalised logistic regression on w's
// columns, without intercept, with `offset` (the covariates' fit) fixed in the linear predictor,
// as regenie's step 1 for binary traits: per fold, fits at each τ in the order given, each from
// the last one's estimate (from zero at the first); the loss is the held-out −log-likelihood,
// probabilities held within [1e-5, 1 − 1e-5]. The LOCO predictions are log odds without the
// offset. Throws colflow::error invalid_argument when a fit does not converge.
level1_fit level1_logistic(
    const Eigen::MatrixXd& w, const Eigen::VectorXd& y, const Eigen::VectorXd& offset,
    const sample_folds& folds, std::span<const double> taus,
    std::span<const std::pair<Eigen::Index, Eigen::Index>> chromosome_columns);

// The rows a fit learns from: every row outside [begin, end); begin = end = n, all of them.
struct fold_rows {
  Eigen::Index begin, end;
};

// The ridge logistic regression of y (0/1) on w's columns with a fixed offset, over the
// training rows, at shrinkage τ: Newton steps from `b` (regenie's step 1), a step halved while
// it does not lower the penalised deviance −2·logL + τ‖b‖² (up to 25 times, as regenie), until
// the penalised score's largest entry is below 1e-4. Leaves the estimate in `b`; false when it
// did not converge in 100 steps.
bool penalised_logistic(const Eigen::MatrixXd& w, const Eigen::VectorXd& y,
                        const Eigen::VectorXd& offset, const fold_rows& train, double tau,
                        Eigen::VectorXd& b);

// h = Xᵀ diag(root²) X over the training rows (lower triangle), in chunks of
// logistic_chunk_rows in row order: the same sums at any thread count.
void weighted_gram(const Eigen::MatrixXd& w, const fold_rows& train, const Eigen::ArrayXd& root,
                   Eigen::MatrixXd& h);

// The fitted probabilities of linear predictors η, held off 0 and 1 beyond |η| = 30 (where the
// weights p(1 − p) would vanish to rounding); `held_out`, also within [1e-5, 1 − 1e-5] (the
// clamp of regenie's held-out loss).
Eigen::ArrayXd logistic_probability(const Eigen::ArrayXd& eta);
Eigen::ArrayXd held_out_probability(const Eigen::ArrayXd& eta);

// Leave-one-out cross-validation (regenie's --loocv): each sample's prediction comes from the
// fit on all the others, computed exactly for ridge regression (from the fit on every sample
// and the sample's leverage) and by one Newton step from the full fit for ridge logistic
// regression (regenie's approximation). Rows are worked in chunks of loo_chunk_rows, each
// chunk's values its own, so the results do not depend on the thread count.
inline constexpr Eigen::Index loo_chunk_rows = 1024;

// Level 0 of one block as level0_block, every sample its own fold.
void level0_block_loo(const Eigen::MatrixXd& g, const Eigen::MatrixXd& y,
                      std::span<const double> lambdas, Eigen::MatrixXd& predictions);

// Level 1 as level1_ridge, every sample its own fold: a sample's LOCO prediction comes from
// its own leave-one-out coefficients.
level1_fit level1_ridge_loo(
    const Eigen::MatrixXd& w, const Eigen::VectorXd& y, std::span<const double> taus,
    std::span<const std::pair<Eigen::Index, Eigen::Index>> chromosome_columns);

// Level 1 as level1_logistic, every sample its own fold: one full fit per τ (from the last
// one's estimate), each sample's coefficients one Newton step from it without the sample.
// The LOCO predictions come from a fit at the chosen τ started from zero (as regenie's), with
// each sample's leave-one-out coefficients, or with the full fit's when `full_fit_loco`
// (regenie's --l1-full).
level1_fit level1_logistic_loo(
    const Eigen::MatrixXd& w, const Eigen::VectorXd& y, const Eigen::VectorXd& offset,
    std::span<const double> taus,
    std::span<const std::pair<Eigen::Index, Eigen::Index>> chromosome_columns, bool full_fit_loco);

}  // namespace colflow::detail
