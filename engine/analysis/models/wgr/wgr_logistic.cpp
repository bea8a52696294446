// Level 1 of whole-genome regression for a case/control trait: ridge-penalised logistic
// regression on the level-0 predictors with the covariates' fit as offset, over K folds.
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

// regenie's constants for the level-1 logistic fit: Newton steps, halvings of one step, the
// score's tolerance, the deviance's allowance, the clamps of η and of a held-out probability.
constexpr int max_logistic_iterations = 100;
constexpr int max_halvings = 25;
constexpr double score_tolerance = 1e-4;
constexpr double deviance_allowance = 1e-6;
constexpr double eta_limit = 30;
constexpr double held_out_limit = 1e-5;

// Xᵀv over the training rows (v over all n rows): the rows before the fold, then after it.
Eigen::VectorXd training_product(const matrix& w, const fold_rows& k, const Eigen::VectorXd& v) {
  const Eigen::Index after = w.rows() - k.end;
  return w.topRows(k.begin).transpose() * v.head(k.begin) +
         w.bottomRows(after).transpose() * v.tail(after);
}

// −2·logL + τ‖b‖² over the training rows, at the fitted probabilities p.
double penalised_deviance(const Eigen::VectorXd& y, const Eigen::ArrayXd& p, const fold_rows& train,
                          double tau, const Eigen::VectorXd& b) {
  const Eigen::ArrayXd log_likelihood = y.array() * p.log() + (1 - y.array()) * (1 - p).log();
  const Eigen::Index after = y.size() - train.end;
  return -2 * (log_likelihood.head(train.begin).sum() + log_likelihood.tail(after).sum()) +
         tau * b.squaredNorm();
}

// The state of a fit at its estimate b: Xb (all rows), the probabilities, the penalised
// deviance and score (training rows).
struct logistic_state {
  Eigen::VectorXd b, xb;
  Eigen::ArrayXd p;
  double deviance = 0;
  Eigen::VectorXd score;
};

logistic_state state_at(const matrix& w, const Eigen::VectorXd& y, const Eigen::VectorXd& offset,
                        const fold_rows& train, double tau, Eigen::VectorXd b) {
  logistic_state s;
  s.xb = w * b;
  s.p = logistic_probability((offset + s.xb).array());
  s.deviance = penalised_deviance(y, s.p, train, tau, b);
  s.score = training_product(w, train, (y.array() - s.p).matrix()) - tau * b;
  s.b = std::move(b);
  return s;
}

}  // namespace

Eigen::ArrayXd logistic_probability(const Eigen::ArrayXd& eta) {
  constexpr double tiny = 10 * std::numeric_limits<double>::epsilon();
  return eta.unaryExpr([](double e) {
    if (e > eta_limit) return 1 / (1 + tiny);
    if (e < -eta_limit) return tiny / (1 + tiny);
    return 1 - 1 / (std::exp(e) + 1);
  });
}

Eigen::ArrayXd held_out_probability(const Eigen::ArrayXd& eta) {
  return logistic_probability(eta).max(held_out_limit).min(1 - held_out_limit);
}

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

bool penalised_logistic(const matrix& w, const Eigen::VectorXd& y, const Eigen::VectorXd& offset,
                        const fold_rows& train, double tau, Eigen::VectorXd& b) {
  const Eigen::Index c = w.cols();
  matrix h(c, c);
  logistic_state now = state_at(w, y, offset, train, tau, b);
  for (int iteration = 0; iteration < max_logistic_iterations; ++iteration) {
    throw_if_stop_requested();  // each step is n·C² work: a stop waits for one at most
    weighted_gram(w, train, (now.p * (1 - now.p)).sqrt(), h);
    h.diagonal().array() += tau;
    const Eigen::LLT<matrix, Eigen::Lower> llt(h);
    if (llt.info() != Eigen::Success) return false;
    Eigen::VectorXd step = llt.solve(now.score);
    logistic_state next = state_at(w, y, offset, train, tau, now.b + step);
    for (int halving = 0;
         halving < max_halvings && !(next.deviance < now.deviance + deviance_allowance);
         ++halving) {
      step /= 2;
      next = state_at(w, y, offset, train, tau, now.b + step);
    }
    now = std::move(next);
    if (now.score.cwiseAbs().maxCoeff() < score_tolerance) {
      b = now.b;
      return true;
    }
  }
  b = now.b;
  return false;
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
      const Eigen::ArrayXd p = held_out_probability(
          (offset.segment(first, rows) + w.middleRows(first, rows) * b).array());
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
