// The two ridge levels of whole-genome regression (analysis/wgr.hpp) on matrices in memory:
// a level-0 block of standardised columns, the level-1 predictors of one trait. Both fit on all
// folds but one and predict that one, so that no sample's prediction comes from a model that
// saw it. Each fold's products and solves are computed by one task, in a fixed order, so the
// results do not depend on the thread count.
#pragma once

#include <Eigen/Core>
#include <cstddef>
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

 private:
  std::vector<std::size_t> starts_;
};

// Level 0 of one block: g (n × b standardised columns), y (n × P scaled traits). For each fold k
// and shrinkage λ_j, β = (Σ_{other folds} GᵀG + λ_j I)⁻¹ Σ_{other folds} Gᵀy predicts fold k's
// rows; prediction (j, p) goes to column j·P + p of `predictions` (n × |λ|·P).
void level0_block(const Eigen::MatrixXd& g, const Eigen::MatrixXd& y, const sample_folds& folds,
                  std::span<const double> lambdas, Eigen::MatrixXd& predictions);

// Centres a predictor and scales it to SD 1 (n − 1 in the denominator); a constant one
// becomes zeros.
void standardize_predictor(Eigen::Ref<Eigen::VectorXd> column);

// Level 1 of one trait: a ridge regression of y on the columns of w, without intercept.
struct level1_fit {
  // Per τ: Σ over folds of the held-out loss, divided by n (squared error, or −log-likelihood).
  std::vector<double> loss;
  std::size_t chosen = 0;  // the τ of the smallest loss
  Eigen::MatrixXd loco;    // chromosomes × n: every fold's held-out prediction without c
};

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

}  // namespace colflow::detail
