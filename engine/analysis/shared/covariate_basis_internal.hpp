// The covariates of a regression as an orthonormal basis, and vectors adjusted for them: what
// whole-genome regression does to traits and columns, and its step 2 to a trait's scale.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <string>
#include <vector>

#include "colflow/analysis/phenotype.hpp"

namespace colflow::detail {

// An orthonormal basis (n × c) of [1, covariates] over the store rows `rows`; `covariates`
// may be null (the intercept alone). Throws colflow::error invalid_argument, starting with
// `context`, when a covariate is constant or collinear among those rows.
Eigen::MatrixXd covariate_basis(const std::vector<std::size_t>& rows,
                                const phenotype_table* covariates, const std::string& context);

// v − Q Qᵀ v, then scaled to ‖v‖² = n − c (Q n × c); returns the scale, ‖v‖ / √(n − c)
// before scaling (0 leaves v at zero).
double adjust_and_scale(const Eigen::MatrixXd& basis, Eigen::Ref<Eigen::VectorXd> v);

}  // namespace colflow::detail
