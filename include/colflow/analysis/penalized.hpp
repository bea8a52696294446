/// @file penalized.hpp
/// Penalised linear regression by cyclic coordinate descent over streamed columns:
/// `colflow ridge`, `lasso` and `enet`.
///
/// On the standardised columns z_j of the samples used (docs/DESIGN.md §2, statistics of those
/// samples) and the centred phenotype, it minimises
///
///     1/(2n) ‖y − b0 − Zb‖² + λ (α ‖b‖₁ + (1 − α)/2 ‖b‖²)
///
/// (α = 1 lasso, 0 ridge), the objective of scikit-learn's ElasticNet with alpha = λ and
/// l1_ratio = α. The intercept is not penalised: with centred columns b0 is the phenotype's
/// mean. Each column update reads the residual once and, when its coefficient changes, updates
/// the residual in place, so the serial compute stage does exactly what the algorithm needs.
/// A λ path is solved from λ_max down with warm starts; at each λ the sequential strong rule
/// picks the columns worth sweeping, sweeps repeat over the working set until the largest
/// coefficient change is below the tolerance, and a full pass then checks the KKT conditions of
/// every other column (violators join the working set and the sweeps resume).
/// Genotype columns are never decoded: products with the residual and residual updates work on
/// the packed codes (dosage_dot, missing_sum, genotype_axpy).
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <utility>
#include <vector>

#include "colflow/analysis/analysis.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/codec/genotype_codec.hpp"
#include "colflow/store/store.hpp"

namespace colflow {

struct penalized_options {
  double alpha = 1.0;           ///< mixing: 1 lasso, 0 ridge, in between elastic net
  std::vector<double> lambdas;  ///< the path (sorted decreasing); empty: generated
  std::size_t n_lambda = 100;   ///< generated path: values from λ_max down, log-spaced
  /// Smallest generated λ as a fraction of λ_max; 0 picks 1e-4 when there are more samples
  /// than columns, 1e-2 otherwise (glmnet's choice).
  double lambda_min_ratio = 0;
  double tolerance = 1e-7;  ///< converged when no coefficient moves more than this in a sweep
  std::size_t max_sweeps = 100000;  ///< per λ, over the working set
};

/// One λ of the path.
struct penalized_step {
  double lambda = 0;
  std::size_t nonzero = 0;
  double r_squared = 0;  ///< 1 − ‖residual‖² / ‖y − ȳ‖² on the training samples
  double objective = 0;
  std::size_t sweeps = 0;       ///< sweeps over the working set
  std::size_t full_passes = 0;  ///< passes over every column (KKT checks)
  bool converged = false;
};

struct penalized_result {
  std::size_t samples = 0;  ///< n: selected samples with a phenotype value
  double intercept = 0;     ///< b0, the phenotype's mean over them
  double lambda_max = 0;    ///< the smallest λ at which every coefficient is zero
  /// Per selected column: the observed count, mean and SD over the n samples that define its
  /// standardisation (and turn standardised coefficients into per-unit ones: β / SD).
  std::vector<column_stats> columns;
  std::vector<penalized_step> path;
  /// Per λ: the non-zero coefficients on the standardised scale, as (position in the
  /// selection's columns, coefficient), in column order.
  std::vector<std::vector<std::pair<std::size_t, double>>> coefficients;
};

/// Fits the path. `phenotype` has one value per store row (NaN: missing). After each λ,
/// `analysis.on_step` (when set) hears "path" with the λ values done of the path's and the
/// seconds since the first λ started. Throws colflow::error invalid_argument for α outside
/// [0, 1], a non-positive λ, fewer than 2 samples with a value, or a constant phenotype; the
/// stream's errors otherwise.
penalized_result penalized_regression(const store& s, const selection& sel,
                                      std::span<const double> phenotype,
                                      const penalized_options& options,
                                      const analysis_options& analysis = {});

/// The columns of another store that correspond to the selected columns of a fitted one:
/// matched by ID; a column whose A1 and A2 are swapped there counts the other allele.
struct column_match {
  static constexpr std::size_t absent = static_cast<std::size_t>(-1);
  std::vector<std::size_t> target;    ///< per selected column: the other store's column, or absent
  std::vector<std::uint8_t> swapped;  ///< per selected column: A1/A2 swapped in the other store
  std::size_t missing = 0;            ///< selected columns the other store does not have
};
column_match match_columns(const store& fitted, const selection& sel, const store& target);

/// Predictions b0 + Σ b_j z_j for every sample (row) of `target`, one column per λ of the path,
/// with z_j standardised by the *fitted* samples' mean and SD (a missing call counts as that
/// mean). Columns the target lacks contribute nothing. One streaming pass over the target's
/// columns with a non-zero coefficient.
Eigen::MatrixXd predict(const store& target, const penalized_result& fit, const column_match& match,
                        const analysis_options& analysis = {});

/// A coefficient b of the selected column at `position` on the original scale: per A1 allele
/// (per unit of a dense column), b / SD with the column's SD over the samples used (the
/// BETA_PER_UNIT column); 0 for a constant column. Throws colflow::error invalid_argument for
/// a position outside the fit's columns.
double per_unit_coefficient(const penalized_result& fit, std::size_t position, double b);

/// The λ values of the path whose sweeps stopped at max_sweeps before converging.
std::size_t unconverged_lambdas(const penalized_result& fit) noexcept;

/// Which coefficients PREFIX.coef.tsv lists per λ.
enum class coefficient_rows {
  nonzero,  ///< the non-zero ones (`colflow lasso` and `enet`)
  all,      ///< every selected column, zeros included (`colflow ridge`)
};

/// The files of `colflow ridge`, `lasso` and `enet` for an output prefix (the prefix followed
/// by the text, not a path operation).
struct penalized_files {
  /// PREFIX.coef.tsv: LAMBDA ID A1 BETA BETA_PER_UNIT, per λ in path order and per column in
  /// selection order (BETA on the standardised scale, BETA_PER_UNIT = per_unit_coefficient).
  std::filesystem::path coefficients;
  /// PREFIX.path.tsv: LAMBDA NONZERO R2 OBJECTIVE SWEEPS FULL_PASSES CONVERGED (1 or 0) per λ.
  std::filesystem::path path;
};

/// The names write_penalized() uses.
penalized_files penalized_output_files(const std::filesystem::path& prefix);

/// Writes the coefficient and path tables of the fit penalized_regression(s, sel, ...)
/// returned. Each is a staged output (io/staged_output.hpp), complete under its name or
/// absent. `digits` are the significant digits of the numbers (1 to 17). Returns the files
/// written. Throws colflow::error invalid_argument for digits out of range or a fit of another
/// selection; the file system's errors, naming the file.
penalized_files write_penalized(const store& s, const selection& sel, const penalized_result& fit,
                                const std::filesystem::path& prefix,
                                coefficient_rows rows = coefficient_rows::nonzero, int digits = 6);

/// PREFIX.pred.tsv, the predictions write_predictions() writes.
std::filesystem::path predictions_file(const std::filesystem::path& prefix);

/// Writes `predictions` = predict(target, fit, ...) as `colflow ... --predict` does:
/// predictions_file(prefix) with `#FID IID` and one column per λ of the path, named
/// `LAMBDA=<λ with digits significant digits, %g>`, one line per sample of `target`. A staged
/// output. Returns the file. Throws colflow::error invalid_argument for digits out of range
/// or predictions of another shape; the file system's errors, naming the file.
std::filesystem::path write_predictions(const store& target, const penalized_result& fit,
                                        const Eigen::MatrixXd& predictions,
                                        const std::filesystem::path& prefix, int digits = 6);

}  // namespace colflow
