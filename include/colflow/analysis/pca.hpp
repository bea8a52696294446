/// @file pca.hpp
/// Principal components of the standardised matrix by randomised SVD with power iterations
/// (Halko, Martinsson & Tropp 2011), every product with the matrix one streaming pass:
/// `colflow pca`.
///
/// With Z the n x M matrix of the selected samples and standardised columns, the result is
/// the top k eigenpairs of the relationship matrix ZZᵀ/M (M = columns that are not
/// constant): eigenvalues, unit-length sample eigenvectors (PLINK's .eigenvec) and, when
/// asked, column loadings. A sketch of k + oversampling random directions is refined by
/// power iterations (one pass each, computing ZZᵀQ) and finished by a Rayleigh-Ritz pass.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>

#include "colflow/analysis/analysis.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/store/store.hpp"

namespace colflow {

/// How columns are standardised before the decomposition.
enum class pca_scaling {
  /// DESIGN §2 (mean and SD of the selected samples, z'z = n − 1): the default.
  standardized,
  /// As PLINK 2 --pca: (x − 2p) / sqrt(2p(1 − p)), p the A1 frequency of the selected
  /// samples, missing calls 0. Genotype stores only.
  hwe,
};

struct pca_options {
  std::size_t components = 10;       ///< k
  std::size_t oversampling = 10;     ///< extra random directions in the sketch
  std::size_t power_iterations = 4;  ///< passes computing ZZᵀQ after the first sketch
  pca_scaling scaling = pca_scaling::standardized;
  std::uint64_t seed = 1;    ///< of the random sketch (counter-based: (seed, column))
  bool loadings = false;     ///< also return the column loadings
  std::size_t block_columns = 64;  ///< columns multiplied at once (matrix-matrix products)
};

struct pca_result {
  Eigen::VectorXd eigenvalues;  ///< k, decreasing: eigenvalues of ZZᵀ/M
  /// Selected samples x k: unit-length eigenvectors of ZZᵀ/M (sign: largest entry positive).
  Eigen::MatrixXd eigenvectors;
  /// Selected columns x k when asked: Zᵀu / sqrt(eigenvalue · M), the unit right singular
  /// vectors, so that Z ≈ U diag(sqrt(M · eigenvalues)) Vᵀ; zero rows for constant columns.
  Eigen::MatrixXd loadings;
  std::size_t columns_used = 0;  ///< M: selected columns that are not constant
  std::size_t passes = 0;        ///< streaming passes over the data
};

/// Throws colflow::error invalid_argument for k = 0, k larger than the samples or columns,
/// or hwe scaling of a dense store; the stream's errors otherwise.
pca_result principal_components(const store& s, const selection& sel, const pca_options& pca,
                                const analysis_options& options = {});

}  // namespace colflow
