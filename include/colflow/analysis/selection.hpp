/// @file selection.hpp
/// Choosing samples and columns at run time, without re-preprocessing: PLINK's --keep,
/// --remove, --extract and --exclude.
///
/// Sample lists are whitespace tables whose first two fields are FID and IID (a .fam file
/// works as is); a line of one field names an IID in any family. Column lists hold one
/// variant ID per line (the first field, so a .snplist or PLINK's ID lists work). Empty
/// lines and lines starting with `#` are skipped. IDs that the store does not have are
/// ignored, as PLINK does, and counted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "colflow/store/store.hpp"

namespace colflow {

/// The files that define a selection; an empty path is not applied.
struct selection_files {
  std::filesystem::path keep;     ///< keep only these samples
  std::filesystem::path remove;   ///< then drop these samples
  std::filesystem::path extract;  ///< keep only these columns (variant IDs)
  std::filesystem::path exclude;  ///< then drop these columns
};

/// The samples and columns an analysis uses.
struct selection {
  std::vector<std::uint8_t> row_kept;  ///< per store row: 1 kept, 0 dropped
  std::vector<std::size_t> rows;       ///< the kept rows, increasing
  std::vector<std::size_t> columns;    ///< the kept columns, increasing
  std::size_t ids_not_found = 0;       ///< IDs in the lists that the store does not have

  /// Every row and every column of `s`.
  static selection all(const store& s);
  bool all_rows() const noexcept { return rows.size() == row_kept.size(); }
};

/// Applies the lists to the store's samples and columns. Throws colflow::error: not_found
/// for a missing list, invalid_argument when no sample or no column is left.
selection select(const store& s, const selection_files& files);

}  // namespace colflow
