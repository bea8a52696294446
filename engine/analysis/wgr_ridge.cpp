// The ridge levels of whole-genome regression: cross-validated fits of a block of columns
// (level 0) and of one trait's block predictions (level 1).
#include <tbb/parallel_for.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <limits>

#include "analysis/wgr_ridge_internal.hpp"
#include "colflow/cancellation.hpp"
#include "colflow/error.hpp"

namespace colflow::detail {
namespace {

using matrix = Eigen::MatrixXd;

// Per fold k, the lower triangle of X_kᵀX_k and X_kᵀY_k over its rows: one task per fold.
void fold_products(const matrix& x, const matrix& y, const sample_folds& folds,
                   std::vector<matrix>& gram, std::vector<matrix>& cross) {
  const std::size_t k_count = folds.count();
  gram.assign(k_count, matrix());
  cross.assign(k_count, matrix());
  tbb::parallel_for(std::size_t{0}, k_count, [&](std::size_t k) {
    const auto first = static_cast<Eigen::Index>(folds.begin(k)),
               rows = static_cast<Eigen::Index>(folds.size(k));
    const auto xk = x.middleRows(first, rows);
    gram[k] = matrix::Zero(x.cols(), x.cols());
    gram[k].selfadjointView<Eigen::Lower>().rankUpdate(xk.transpose());
    cross[k] = xk.transpose() * y.middleRows(first, rows);
  });
}

// The sums over every fold but `k`, added in fold order.
void other_folds(const std::vector<matrix>& parts, std::size_t k, matrix& sum) {
  sum = matrix::Zero(parts[0].rows(), parts[0].cols());
  for (std::size_t m = 0; m < parts.size(); ++m)
    if (m != k) sum += parts[m];
}

// (A + shrinkage·I)⁻¹ r with A's lower triangle, factorised in `work` (A's size, reused across
// calls); A + shrinkage·I is positive definite for a positive shrinkage, A being a Gram matrix.
matrix ridge_solve(const matrix& a, double shrinkage, const matrix& r, matrix& work) {
  work.triangularView<Eigen::Lower>() = a;
  work.diagonal().array() += shrinkage;
  const Eigen::LLT<Eigen::Ref<matrix>, Eigen::Lower> llt(work);
  if (llt.info() != Eigen::Success)
    throw error(errc::invalid_argument, "ridge regression: the system is not positive definite");
  return llt.solve(r);
}

// The τ of the smallest loss summed over the folds (the first of equals), the sums divided
// by n: losses[k][t] is fold k's held-out loss at τ_t.
level1_fit choose(const std::vector<std::vector<double>>& losses, double n) {
  level1_fit fit;
  fit.loss.assign(losses[0].size(), 0.0);
  for (std::size_t t = 0; t < fit.loss.size(); ++t) {
    for (const std::vector<double>& fold : losses) fit.loss[t] += fold[t];
    fit.loss[t] /= n;
    if (fit.loss[t] < fit.loss[fit.chosen]) fit.chosen = t;
  }
  return fit;
}

// Chromosomes × n: for each sample, its fold's fit at τ_chosen over the predictors of every
// chromosome but one (the total less that chromosome's part).
matrix loco_predictions(const matrix& w, const sample_folds& folds, const std::vector<matrix>& beta,
                        std::size_t chosen,
                        std::span<const std::pair<Eigen::Index, Eigen::Index>> chromosome_columns) {
  const auto chromosomes = static_cast<Eigen::Index>(chromosome_columns.size());
  matrix loco(chromosomes, w.rows());
  tbb::parallel_for(std::size_t{0}, folds.count(), [&](std::size_t k) {
    const auto first = static_cast<Eigen::Index>(folds.begin(k)),
               rows = static_cast<Eigen::Index>(folds.size(k));
    const auto b = beta[k].col(static_cast<Eigen::Index>(chosen));
    matrix parts(chromosomes, rows);
    for (Eigen::Index c = 0; c < chromosomes; ++c) {
      const auto [begin, end] = chromosome_columns[static_cast<std::size_t>(c)];
      parts.row(c) =
          (w.block(first, begin, rows, end - begin) * b.segment(begin, end - begin)).transpose();
    }
    const Eigen::RowVectorXd total = parts.colwise().sum();
    loco.middleCols(first, rows) = (-parts).rowwise() + total;
  });
  return loco;
}

// regenie's constants for the level-1 logistic fit: Newton iterations, the score's tolerance,
// the clamp of the linear predictor, and the clamp of a held-out probability.
constexpr int max_logistic_iterations = 100;
constexpr double score_tolerance = 1e-4;
constexpr double eta_limit = 30;
constexpr double held_out_limit = 1e-5;

// The fitted probabilities, held off 0 and 1 beyond |η| = 30 (where the weights p(1 − p) would
// vanish to rounding).
Eigen::ArrayXd probability(const Eigen::ArrayXd& eta) {
  constexpr double tiny = 10 * std::numeric_limits<double>::epsilon();
  return eta.unaryExpr([](double e) {
    if (e > eta_limit) return 1 / (1 + tiny);
    if (e < -eta_limit) return tiny / (1 + tiny);
    return 1 - 1 / (std::exp(e) + 1);
  });
}

Eigen::ArrayXd held_out_probability(const Eigen::VectorXd& eta) {
  return probability(eta.array()).max(held_out_limit).min(1 - held_out_limit);
}

// The training rows of a fold: every row outside [begin, end).
struct fold_rows {
  Eigen::Index begin, end;
};

// Xᵀv over the training rows (v over all n rows): the rows before the fold, then after it.
Eigen::VectorXd training_product(const matrix& w, const fold_rows& k, const Eigen::VectorXd& v) {
  const Eigen::Index after = w.rows() - k.end;
  return w.topRows(k.begin).transpose() * v.head(k.begin) +
         w.bottomRows(after).transpose() * v.tail(after);
}

// h = Xᵀ diag(root²) X over the training rows, in chunks of logistic_chunk_rows in row order (a
// fixed order: the same sums at any thread count).
void weighted_gram(const matrix& w, const fold_rows& train, const Eigen::ArrayXd& root, matrix& h) {
  h.setZero();
  matrix scaled;
  for (const auto& [first, end] :
       {std::pair{Eigen::Index{0}, train.begin}, std::pair{train.end, w.rows()}})
    for (Eigen::Index a = first; a < end; a += logistic_chunk_rows) {
      const Eigen::Index rows = std::min(logistic_chunk_rows, end - a);
      scaled = (w.middleRows(a, rows).array().colwise() * root.segment(a, rows)).matrix();
      h.selfadjointView<Eigen::Lower>().rankUpdate(scaled.transpose());
    }
}

// The ridge logistic regression of y (0/1) on w's columns with a fixed offset, over the
// training rows, at shrinkage τ: iteratively reweighted least squares from `b` (regenie's
// step 1: β ← (XᵀWX + τI)⁻¹XᵀWz), until the penalised score's largest entry is below
// score_tolerance. Leaves the estimate in `b`; false when it did not converge.
bool penalised_logistic(const matrix& w, const Eigen::VectorXd& y, const Eigen::VectorXd& offset,
                        const fold_rows& train, double tau, Eigen::VectorXd& b) {
  const Eigen::Index c = w.cols();
  matrix h(c, c);
  // Xb and the probabilities at b: those of one step's score serve the next step.
  Eigen::VectorXd xb = w * b;
  Eigen::ArrayXd p = probability((offset + xb).array());
  for (int iteration = 0; iteration < max_logistic_iterations; ++iteration) {
    throw_if_stop_requested();  // each iteration is n·C² work: a stop waits for one at most
    const Eigen::ArrayXd weight = p * (1 - p);
    // XᵀWz = XᵀW(Xb) + Xᵀ(y − p).
    const Eigen::VectorXd working = (weight * xb.array() + (y.array() - p)).matrix();
    weighted_gram(w, train, weight.sqrt(), h);
    h.diagonal().array() += tau;
    const Eigen::VectorXd rhs = training_product(w, train, working);
    const Eigen::LLT<matrix, Eigen::Lower> llt(h);
    if (llt.info() != Eigen::Success) return false;
    b = llt.solve(rhs);
    xb = w * b;
    p = probability((offset + xb).array());
    const Eigen::VectorXd residual = (y.array() - p).matrix();
    const Eigen::VectorXd score = training_product(w, train, residual) - tau * b;
    if (score.cwiseAbs().maxCoeff() < score_tolerance) return true;
  }
  return false;
}

}  // namespace

sample_folds::sample_folds(std::size_t n, std::size_t k) {
  if (k < 2 || n < k)
    throw error(errc::invalid_argument, std::to_string(n) + " samples cannot form " +
                                            std::to_string(k) +
                                            " folds (at least 2, and one "
                                            "sample each)");
  const std::size_t each = n / k;
  for (std::size_t f = 0; f < k; ++f) starts_.push_back(f * each);
  starts_.push_back(n);
}

void level0_block(const matrix& g, const matrix& y, const sample_folds& folds,
                  std::span<const double> lambdas, matrix& predictions) {
  std::vector<matrix> gram, cross;
  fold_products(g, y, folds, gram, cross);
  const auto traits = y.cols();
  tbb::parallel_for(std::size_t{0}, folds.count(), [&](std::size_t k) {
    matrix a, r, work(g.cols(), g.cols());
    other_folds(gram, k, a);
    other_folds(cross, k, r);
    const auto first = static_cast<Eigen::Index>(folds.begin(k)),
               rows = static_cast<Eigen::Index>(folds.size(k));
    for (std::size_t j = 0; j < lambdas.size(); ++j)
      predictions.block(first, static_cast<Eigen::Index>(j) * traits, rows, traits).noalias() =
          g.middleRows(first, rows) * ridge_solve(a, lambdas[j], r, work);
  });
}

void standardize_predictor(Eigen::Ref<Eigen::VectorXd> col) {
  const auto n = static_cast<double>(col.size());
  const double mean = col.sum() / n;
  col.array() -= mean;
  const double sd = std::sqrt(col.squaredNorm() / (n - 1));
  if (sd > 0)
    col /= sd;
  else
    col.setZero();
}

level1_fit level1_ridge(const matrix& w, const Eigen::VectorXd& y, const sample_folds& folds,
                        std::span<const double> taus,
                        std::span<const std::pair<Eigen::Index, Eigen::Index>> chromosome_columns) {
  std::vector<matrix> gram, cross;
  fold_products(w, y, folds, gram, cross);
  const std::size_t k_count = folds.count(), t_count = taus.size();
  // Per fold: the coefficients at every τ (C × |τ|) and the held-out squared errors.
  std::vector<matrix> beta(k_count);
  std::vector<std::vector<double>> sse(k_count, std::vector<double>(t_count));
  tbb::parallel_for(std::size_t{0}, k_count, [&](std::size_t k) {
    matrix a, r, work(w.cols(), w.cols());
    other_folds(gram, k, a);
    other_folds(cross, k, r);
    beta[k].resize(w.cols(), static_cast<Eigen::Index>(t_count));
    const auto first = static_cast<Eigen::Index>(folds.begin(k)),
               rows = static_cast<Eigen::Index>(folds.size(k));
    for (std::size_t t = 0; t < t_count; ++t) {
      throw_if_stop_requested();
      beta[k].col(static_cast<Eigen::Index>(t)) = ridge_solve(a, taus[t], r, work);
      sse[k][t] = (y.segment(first, rows) -
                   w.middleRows(first, rows) * beta[k].col(static_cast<Eigen::Index>(t)))
                      .squaredNorm();
    }
  });
  level1_fit fit = choose(sse, static_cast<double>(w.rows()));
  fit.loco = loco_predictions(w, folds, beta, fit.chosen, chromosome_columns);
  return fit;
}

level1_fit level1_logistic(
    const matrix& w, const Eigen::VectorXd& y, const Eigen::VectorXd& offset,
    const sample_folds& folds, std::span<const double> taus,
    std::span<const std::pair<Eigen::Index, Eigen::Index>> chromosome_columns) {
  const std::size_t k_count = folds.count(), t_count = taus.size();
  std::vector<matrix> beta(k_count);
  std::vector<std::vector<double>> loss(k_count, std::vector<double>(t_count));
  std::vector<std::uint8_t> converged(k_count, 1);
  tbb::parallel_for(std::size_t{0}, k_count, [&](std::size_t k) {
    const auto first = static_cast<Eigen::Index>(folds.begin(k)),
               rows = static_cast<Eigen::Index>(folds.size(k));
    const fold_rows train{first, first + rows};
    beta[k] = matrix::Zero(w.cols(), static_cast<Eigen::Index>(t_count));
    Eigen::VectorXd b = Eigen::VectorXd::Zero(w.cols());  // warm start along the τ grid
    for (std::size_t t = 0; t < t_count && converged[k]; ++t) {
      converged[k] = penalised_logistic(w, y, offset, train, taus[t], b);
      beta[k].col(static_cast<Eigen::Index>(t)) = b;
      const Eigen::ArrayXd p =
          held_out_probability(offset.segment(first, rows) + w.middleRows(first, rows) * b);
      const Eigen::ArrayXd yk = y.segment(first, rows).array();
      loss[k][t] = -(yk * p.log() + (1 - yk) * (1 - p).log()).sum();
    }
  });
  if (std::find(converged.begin(), converged.end(), 0) != converged.end())
    throw error(errc::invalid_argument,
                "level 1: the ridge logistic regression did not converge in " +
                    std::to_string(max_logistic_iterations) + " iterations");
  level1_fit fit = choose(loss, static_cast<double>(w.rows()));
  fit.loco = loco_predictions(w, folds, beta, fit.chosen, chromosome_columns);
  return fit;
}

}  // namespace colflow::detail
