// Covariates as an orthonormal basis, and vectors adjusted for them and scaled.
#include <Eigen/QR>
#include <cmath>

#include "analysis/shared/covariate_basis_internal.hpp"
#include "colflow/error.hpp"

namespace colflow::detail {

Eigen::MatrixXd covariate_basis(const std::vector<std::size_t>& rows,
                                const phenotype_table* covariates, const std::string& context) {
  const auto n = static_cast<Eigen::Index>(rows.size());
  const Eigen::Index c = 1 + (covariates ? covariates->values.cols() : 0);
  Eigen::MatrixXd x(n, c);
  x.col(0).setOnes();
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 1; j < c; ++j)
      x(i, j) =
          covariates->values(static_cast<Eigen::Index>(rows[static_cast<std::size_t>(i)]), j - 1);
  const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(x);
  if (qr.rank() < c)
    throw error(errc::invalid_argument,
                context + ": the covariates are constant or collinear among the samples used");
  return qr.householderQ() * Eigen::MatrixXd::Identity(n, c);
}

double adjust_and_scale(const Eigen::MatrixXd& basis, Eigen::Ref<Eigen::VectorXd> v) {
  v -= basis * (basis.transpose() * v);
  const double scale = v.norm() / std::sqrt(static_cast<double>(basis.rows() - basis.cols()));
  if (scale > 0) v /= scale;
  return scale;
}

}  // namespace colflow::detail
