/// @file phenotype.hpp
/// Phenotype and covariate files, PLINK style, matched to a store's samples.
///
/// A whitespace table, one sample per line, in any of the forms PLINK 2 reads:
/// - `#FID IID v1 v2 ...` or `FID IID ...`: a header, samples matched by FID and IID;
/// - `#IID v1 ...` or `IID ...`: a header, samples matched by IID alone (an IID that several
///   store samples share in different families is refused as ambiguous);
/// - after the IDs of a header, PLINK 2's sample columns SID, PAT, MAT and SEX (a .psam) are
///   skipped: the value columns are the ones after them;
/// - no header: `FID IID v1 v2 ...`, the columns named PHENO1, PHENO2, ... (COVAR1, ... for
///   covariates);
/// - a `.fam` file (no header, six fields): its sixth field, named PHENO1.
/// `NA`, `nan`, `.` and `-9` are missing. Samples of the file that the store does not have are
/// ignored, store samples absent from the file get missing values.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "colflow/store/store.hpp"

namespace colflow {

/// Values of some named variables for every sample (row) of a store.
struct phenotype_table {
  std::vector<std::string> names;
  Eigen::MatrixXd values;           ///< store rows x names; NaN where missing or not in the file
  std::size_t file_samples = 0;     ///< data lines in the file
  std::size_t matched_samples = 0;  ///< of them, samples the store has
  std::filesystem::path file;       ///< the file read, for messages; empty when made in memory
};

/// Reads `file` for the store's `samples`, keeping the columns named in `names` (all when
/// empty; in the order asked). `default_name` prefixes the generated names (PHENO, COVAR).
/// Throws colflow::error: not_found, bad_input naming the file and line (a wrong number of
/// fields, a value that is not a number, a sample listed twice), invalid_argument for a
/// name the file does not have.
phenotype_table read_phenotypes(const std::filesystem::path& file,
                                const std::vector<sample_info>& samples,
                                std::span<const std::string> names = {},
                                const std::string& default_name = "PHENO");

/// PLINK 2's --pheno-quantile-normalize: in every column of `t`, the values of the rows that
/// `rows_used` keeps (1) and that have a value become Φ⁻¹((rank − ½) / n), n of them, tied
/// values sharing their average rank (a rank-based inverse normal transform); other rows become
/// missing. A column with no value is left as it is.
void quantile_normalize(phenotype_table& t, std::span<const std::uint8_t> rows_used);

/// PLINK 2's --covar-variance-standardize: every column of `t` becomes (x − mean) / SD over
/// the rows `rows_used` keeps with a value (SD with n − 1); other rows become missing. Throws
/// invalid_argument naming a column that is constant there (or has fewer than two values).
void variance_standardize(phenotype_table& t, std::span<const std::uint8_t> rows_used);

}  // namespace colflow
