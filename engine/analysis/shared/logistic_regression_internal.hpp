// One logistic regression fit: Newton-Raphson (iteratively reweighted least squares) on the
// likelihood, or on Firth's penalised likelihood, for the small designs of an association
// test (intercept, one column, a few covariates).
#pragma once

#include <Eigen/Core>
#include <span>

namespace colflow::detail {

// The data of one fit: the design's rows (intercept first), responses 0 or 1, and, when not
// empty, how many identical samples each row stands for (counts when samples with the same
// design row and response are grouped, as for a genotype column without covariates; empty:
// one sample per row).
// `offset`, when not empty, is a fixed term of each row's linear predictor (a LOCO
// prediction), one per row of x.
struct logistic_data {
  Eigen::Ref<const Eigen::MatrixXd> x;
  Eigen::Ref<const Eigen::VectorXd> y;
  std::span<const double> count{};
  std::span<const double> offset{};
};

enum class fit_outcome {
  converged,
  not_converged,  // no convergence within the iteration limit (separation, for one)
  singular,       // the information matrix is not positive definite: collinear design
};

struct logistic_fit {
  Eigen::VectorXd beta;
  // Inverse of the Fisher information at beta (for Firth too, as PLINK 2 and logistf report
  // it): the covariance of the Wald tests.
  Eigen::MatrixXd covariance;
  fit_outcome outcome = fit_outcome::not_converged;
  int iterations = 0;
};

// Maximises the log-likelihood (firth false) or the log-likelihood plus ½·log det of the
// Fisher information (Firth's bias-reduced estimate, finite even under separation), starting
// from `start` (the null model's coefficients with 0 for the column converge in a few steps).
// Steps of the plain fit up to 0.5 are taken whole; larger ones, and Firth's, are halved
// until the objective rises enough (Armijo's rule).
logistic_fit fit_logistic(const logistic_data& d, const Eigen::VectorXd& start, bool firth);

}  // namespace colflow::detail
