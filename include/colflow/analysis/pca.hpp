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
#include <filesystem>

#include "colflow/analysis/analysis.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/store/store.hpp"

namespace colflow {

/// How columns are standardised before the decomposition.
enum class pca_scaling {
  /// docs/DESIGN.md §2 (mean and SD of the selected samples, z'z = n − 1): the default.
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
  std::uint64_t seed = 1;          ///< of the random sketch (counter-based: (seed, column))
  bool loadings = false;           ///< also return the column loadings
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
  /// Per component, ‖ZZᵀu − λu‖ / λ (u the eigenvector, λ its eigenvalue of ZZᵀ): how far the
  /// sketch is from an eigenpair. An eigenvalue of ZZᵀ lies within this fraction of λ, so a
  /// small residual certifies the eigenvalue; components in the bulk of the spectrum, whose
  /// eigenvalues crowd together, converge slowly and show large ones (more --iterations or
  /// --oversampling lower them).
  Eigen::VectorXd residuals;
};

/// Throws colflow::error invalid_argument for k = 0, k larger than the samples or columns,
/// or hwe scaling of a dense store; the stream's errors otherwise.
pca_result principal_components(const store& s, const selection& sel, const pca_options& pca,
                                const analysis_options& options = {});

/// The files of `colflow pca` for an output prefix (the prefix followed by the text, not a
/// path operation).
struct pca_files {
  std::filesystem::path eigenval;  ///< PREFIX.eigenval: one eigenvalue per line, decreasing
  std::filesystem::path eigenvec;  ///< PREFIX.eigenvec: #FID IID PC1..PCk per selected sample
  /// PREFIX.loadings.tsv: #CHR ID A1 A2 PC1..PCk per selected column; empty when a result
  /// without loadings was written.
  std::filesystem::path loadings;
};

/// The names write_pca() uses (loadings included).
pca_files pca_output_files(const std::filesystem::path& prefix);

/// Writes the files of `colflow pca` for the result of principal_components(s, sel, ...):
/// eigenvalues, eigenvectors, and the loadings when the result has them. Each is a staged
/// output (io/staged_output.hpp), complete under its name or absent. `digits` are the
/// significant digits of the numbers (1 to 17). Returns the files written. Throws
/// colflow::error invalid_argument for digits out of range or a result of another selection;
/// the file system's errors, naming the file.
pca_files write_pca(const store& s, const selection& sel, const pca_result& result,
                    const std::filesystem::path& prefix, int digits = 6);

}  // namespace colflow
