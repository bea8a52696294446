// The ridge levels of whole-genome regression: cross-validated fits of a block of columns
// (level 0) and of one trait's block predictions (level 1).
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <limits>

#include "analysis/models/wgr/wgr_ridge_internal.hpp"
#include "colflow/cancellation.hpp"
#include "colflow/error.hpp"

namespace colflow::detail {
namespace {

using matrix = Eigen::MatrixXd;

// The sums over every fold but `k`, added in fold order.
void other_folds(const std::vector<matrix>& parts, std::size_t k, matrix& sum) {
  sum = matrix::Zero(parts[0].rows(), parts[0].cols());
  for (std::size_t m = 0; m < parts.size(); ++m)
    if (m != k) sum += parts[m];
}

// (A + shrinkage·I)⁻¹ r, A = Σ gram[m] over every fold m but k: the lower triangles added in
// fold order into `work` (gram's size, reused across calls; no copy of A is kept, which would
// cost one more b × b matrix per running fold), then factorised there. Positive definite for
// a positive shrinkage, A being a Gram matrix.
matrix ridge_solve(const std::vector<matrix>& gram, std::size_t k, double shrinkage,
                   const matrix& r, matrix& work) {
  auto lower = work.triangularView<Eigen::Lower>();
  lower.setZero();
  for (std::size_t m = 0; m < gram.size(); ++m)
    if (m != k) lower += gram[m];
  work.diagonal().array() += shrinkage;
  const Eigen::LLT<Eigen::Ref<matrix>, Eigen::Lower> llt(work);
  if (llt.info() != Eigen::Success)
    throw error(errc::invalid_argument, "ridge regression: the system is not positive definite");
  return llt.solve(r);
}

}  // namespace

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

sample_folds sample_folds::of_subset(const sample_folds& folds,
                                     std::span<const Eigen::Index> rows) {
  sample_folds subset;
  for (const std::size_t start : folds.starts_)
    subset.starts_.push_back(static_cast<std::size_t>(
        std::lower_bound(rows.begin(), rows.end(), static_cast<Eigen::Index>(start)) -
        rows.begin()));
  return subset;
}

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
  // One task per fold and shrinkage, so that K·R factorisations share the threads evenly; each
  // thread factorises in a matrix of its own.
  tbb::enumerable_thread_specific<matrix> works(g.cols(), g.cols());
  const std::size_t shrinkages = lambdas.size();
  tbb::parallel_for(std::size_t{0}, folds.count() * shrinkages, [&](std::size_t task) {
    const std::size_t k = task / shrinkages, j = task % shrinkages;
    matrix r;
    other_folds(cross, k, r);
    const auto first = static_cast<Eigen::Index>(folds.begin(k)),
               rows = static_cast<Eigen::Index>(folds.size(k));
    predictions.block(first, static_cast<Eigen::Index>(j) * traits, rows, traits).noalias() =
        g.middleRows(first, rows) * ridge_solve(gram, k, lambdas[j], r, works.local());
  });
}

void standardize_predictor(Eigen::Ref<Eigen::VectorXd> col,
                           std::span<const std::uint8_t> observed) {
  double count = static_cast<double>(col.size()), sum = col.sum();
  if (!observed.empty()) {
    count = sum = 0;
    for (Eigen::Index i = 0; i < col.size(); ++i)
      if (observed[static_cast<std::size_t>(i)]) {
        sum += col[i];
        ++count;
      }
  }
  col.array() -= sum / count;
  double squares = col.squaredNorm();
  if (!observed.empty()) {
    squares = 0;
    for (Eigen::Index i = 0; i < col.size(); ++i)
      if (observed[static_cast<std::size_t>(i)]) squares += col[i] * col[i];
  }
  const double sd = std::sqrt(squares / (count - 1));
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
    matrix r, work(w.cols(), w.cols());
    other_folds(cross, k, r);
    beta[k].resize(w.cols(), static_cast<Eigen::Index>(t_count));
    const auto first = static_cast<Eigen::Index>(folds.begin(k)),
               rows = static_cast<Eigen::Index>(folds.size(k));
    for (std::size_t t = 0; t < t_count; ++t) {
      throw_if_stop_requested();
      beta[k].col(static_cast<Eigen::Index>(t)) = ridge_solve(gram, k, taus[t], r, work);
      sse[k][t] = (y.segment(first, rows) -
                   w.middleRows(first, rows) * beta[k].col(static_cast<Eigen::Index>(t)))
                      .squaredNorm();
    }
  });
  level1_fit fit = choose(sse, static_cast<double>(w.rows()));
  fit.loco = loco_predictions(w, folds, beta, fit.chosen, chromosome_columns);
  return fit;
}

}  // namespace colflow::detail
