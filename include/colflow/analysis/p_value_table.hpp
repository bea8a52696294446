/// @file p_value_table.hpp
/// Tables of P-values by variant, as association scans write them: the input of `colflow
/// clump` (PLINK 1.9's --clump files).
///
/// A table is whitespace-separated text whose first non-empty line is a header. The variant ID
/// and the P-value are found by column name: the first of `id_fields` and of `p_fields` the
/// header has (PLINK 1.9's --clump-snp-field and --clump-field search order). The defaults
/// recognise colflow assoc's and plink2 --glm's tables (ID, P), PLINK 1.9's .assoc, .qassoc and
/// .assoc.linear/.logistic (SNP, P) and regenie's .regenie (ID, LOG10P). A column named LOG10P
/// (regenie) or LOG10_P (plink2's `log10`) holds −log10(P): P = 10^−value.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace colflow {

struct p_value_table_options {
  /// Names of the ID column, in order of precedence.
  std::vector<std::string> id_fields = {"SNP", "ID"};
  /// Names of the P column, in order of precedence.
  std::vector<std::string> p_fields = {"P", "LOG10P", "LOG10_P"};
};

/// One line of a table: a variant, its P-value in [0, 1] and the line it came from (1-based).
struct p_value_entry {
  std::string id;
  double p = 0;
  std::size_t line = 0;
};

struct p_value_table {
  std::filesystem::path path;
  std::string id_field, p_field;       ///< the header names used
  std::vector<p_value_entry> entries;  ///< in file order
  /// Lines whose P is NA, nan or '.' (scans write NA where no test was done): skipped, as
  /// PLINK 1.9 skips them.
  std::size_t not_available = 0;
};

/// Reads a table. Throws colflow::error: not_found / io_error for the file; bad_input naming
/// the file and line for an empty file, a header without an ID or P column (or naming one
/// twice), a line too short for those columns, a P that is not a number (NA aside), negative
/// or above 1.
p_value_table read_p_value_table(const std::filesystem::path& path,
                                 const p_value_table_options& options = {});

}  // namespace colflow
