// One logistic regression fit by Newton-Raphson, plain or with Firth's penalised likelihood.
#include <Eigen/Cholesky>
#include <cmath>
#include <limits>
#include <vector>

#include "analysis/shared/logistic_regression_internal.hpp"
#include "kernels/logistic_sums_internal.hpp"

namespace colflow::detail {
namespace {

// Newton steps before a fit counts as not converged. Plain likelihood: a converging fit
// needs 4 to 8 from the null model, so 30 means the estimate runs away (separation), which
// is when Firth's fit takes over. Firth's fit is slower near separation but always finite.
constexpr int max_logistic_iterations = 30;
constexpr int max_firth_iterations = 100;
constexpr int max_halvings = 30;
// A step this small (relative to the coefficient, absolute below 1) has converged: Newton's
// next step would be of its square.
constexpr double step_tolerance = 1e-9;

// Newton steps of the plain likelihood up to this size (in log odds) are taken whole, without
// the objective: from the null model's start the likelihood is close to its quadratic model,
// and a line search would cost a logarithm per sample and step. Larger steps are checked.
constexpr double trusted_step = 0.5;

// The model at one beta: the Fisher information X'WX and its Cholesky factor, the gradient
// of the log-likelihood, and when asked the per-row p and w and the objective (log-likelihood,
// plus ½ log det of the information for Firth).
struct model_at {
  Eigen::ArrayXd p, w;  // w: count · p(1 − p)
  Eigen::MatrixXd information;
  Eigen::VectorXd gradient;
  Eigen::LLT<Eigen::MatrixXd> factor;
  double objective = 0;
  bool has_rows = false;
  bool has_objective = false;
  bool positive_definite = false;
};

// A fit's data as logistic_sums reads it: the design's columns in place.
struct design_view {
  std::vector<const double*> columns;
  logistic_design design;

  explicit design_view(const logistic_data& d) : columns(static_cast<std::size_t>(d.x.cols())) {
    for (Eigen::Index j = 0; j < d.x.cols(); ++j)
      columns[static_cast<std::size_t>(j)] = d.x.col(j).data();
    design = {columns, static_cast<std::size_t>(d.x.rows()), d.y.data(),
              d.count.empty() ? nullptr : d.count.data(),
              d.offset.empty() ? nullptr : d.offset.data()};
  }
};

void add_objective(bool firth, double log_likelihood, model_at& m) {
  m.objective = log_likelihood;
  if (firth && m.positive_definite)
    m.objective += m.factor.matrixLLT().diagonal().array().log().sum();  // ½ log det
  m.has_objective = true;
}

// One pass over the rows (logistic_sums): p from e^−|η| without overflow or cancellation, the
// information and the gradient; p, w and the log-likelihood when Firth's step or the objective
// needs them.
void evaluate(const logistic_data& d, const design_view& view, const Eigen::VectorXd& beta,
              bool firth, model_at& m, bool with_objective) {
  const Eigen::Index n = d.x.rows(), k = d.x.cols();
  m.has_rows = firth || with_objective;
  if (m.has_rows) {
    m.p.resize(n);
    m.w.resize(n);
  }
  m.information.resize(k, k);
  m.gradient.resize(k);
  double log_likelihood = 0;
  const logistic_rows rows{m.p.data(), m.w.data(), &log_likelihood};
  logistic_sums(view.design, beta.data(), m.information.data(), m.gradient.data(),
                m.has_rows ? &rows : nullptr);
  m.factor.compute(m.information);
  // A pivot this small relative to the diagonal is a rank the data cannot carry.
  m.positive_definite = m.factor.info() == Eigen::Success;
  if (m.positive_definite) {
    const auto diagonal = m.factor.matrixLLT().diagonal();
    for (Eigen::Index j = 0; j < diagonal.size(); ++j)
      if (!(diagonal[j] * diagonal[j] > 1e-12 * m.information(j, j))) m.positive_definite = false;
  }
  m.has_objective = false;
  if (with_objective) add_objective(firth, log_likelihood, m);
}

// The gradient of the objective and the step that Newton's method takes: X'(y − p) weighted
// by the counts, solved with the information; for Firth plus the penalty's X'(h ∘ (½ − p)),
// h the diagonal of the hat matrix per sample, solved with X'W(1 + h)X. The penalised
// objective's curvature is close to that (its own Hessian is costlier): where a single
// sample determines a coefficient (h near 1) it is twice the information, and steps with
// the information alone overshoot by as much as they fall short, forever.
void gradient_and_step(const logistic_data& d, const design_view& view, const model_at& m,
                       bool firth, Eigen::VectorXd& gradient, Eigen::VectorXd& step) {
  if (!firth) {
    gradient = m.gradient;
    step = m.factor.solve(gradient);
    return;
  }
  const Eigen::Index k = d.x.cols();
  const Eigen::MatrixXd l_inverse = m.factor.matrixL().solve(Eigen::MatrixXd::Identity(k, k));
  Eigen::MatrixXd curvature(k, k);
  gradient.resize(k);
  firth_sums(view.design, l_inverse.data(), m.p.data(), m.w.data(), curvature.data(),
             gradient.data());
  step = curvature.llt().solve(gradient);
}

}  // namespace

logistic_fit fit_logistic(const logistic_data& d, const Eigen::VectorXd& start, bool firth) {
  logistic_fit fit;
  fit.beta = start;
  const design_view view(d);
  // The per-row arrays live on between fits of a thread: a scan's fits have the same rows.
  thread_local model_at m, next;
  evaluate(d, view, fit.beta, firth, m, firth);
  const int limit = firth ? max_firth_iterations : max_logistic_iterations;
  const double samples = std::max(
      1.0, d.count.empty() ? static_cast<double>(d.x.rows())
                           : Eigen::Map<const Eigen::ArrayXd>(d.count.data(), d.x.rows()).sum());
  for (fit.iterations = 0; fit.iterations < limit; ++fit.iterations) {
    if (!m.positive_definite) {
      fit.outcome = fit_outcome::singular;
      return fit;
    }
    Eigen::VectorXd gradient, step;
    gradient_and_step(d, view, m, firth, gradient, step);
    if (!step.allFinite()) break;
    // Converged: the step is negligible, or what it promises to gain is below the
    // objective's rounding (about the sample count times the precision; the score's own
    // rounding then keeps steps from shrinking in directions that few samples determine).
    const double promised = gradient.dot(step);
    bool negligible = true;
    for (Eigen::Index j = 0; j < step.size(); ++j)
      negligible = negligible &&
                   std::fabs(step[j]) <= step_tolerance * std::max(1.0, std::fabs(fit.beta[j]));
    if (negligible || promised <= 1e-15 * samples) {
      // The information at beta serves for the covariance: the step changes it by less
      // than the estimate's own precision.
      fit.beta += step;
      fit.outcome = fit_outcome::converged;
      ++fit.iterations;
      break;
    }
    if (!firth && step.cwiseAbs().maxCoeff() <= trusted_step) {
      fit.beta += step;
      evaluate(d, view, fit.beta, firth, m, false);
      continue;
    }
    // Backtracking: halve the step until the objective rises by a fair share of what the
    // quadratic model promises (Armijo's rule): full Newton steps can overshoot on the
    // likelihood of a rare allele.
    if (!m.has_objective) evaluate(d, view, fit.beta, firth, m, true);
    const double rounding = 4e-16 * std::max(1.0, std::fabs(m.objective));
    bool improved = false;
    for (int halvings = 0; halvings <= max_halvings; ++halvings, step *= 0.5) {
      evaluate(d, view, fit.beta + step, firth, next, true);
      if (next.positive_definite &&
          next.objective >= m.objective + 0.25 * promised * std::ldexp(1.0, -halvings) - rounding) {
        improved = true;
        break;
      }
    }
    if (!improved) {
      // No step improves on beta beyond rounding: beta is the maximum to working precision.
      fit.outcome = m.positive_definite ? fit_outcome::converged : fit_outcome::singular;
      ++fit.iterations;
      break;
    }
    fit.beta += step;
    std::swap(m, next);
  }
  if (!m.positive_definite) {
    fit.outcome = fit_outcome::singular;
    return fit;
  }
  fit.covariance = m.factor.solve(Eigen::MatrixXd::Identity(d.x.cols(), d.x.cols()));
  return fit;
}

}  // namespace colflow::detail
