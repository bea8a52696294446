/// @file stats.hpp
/// Per-column statistics of the selected samples: `colflow stats`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <span>
#include <vector>

#include "colflow/analysis/analysis.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/store/store.hpp"

namespace colflow {

/// Statistics of one column over the selected samples.
struct column_summary {
  std::uint64_t observed = 0;  ///< non-missing calls (values)
  std::uint64_t missing = 0;   ///< selected samples minus observed
  /// Genotype stores: frequency of A1 among observed alleles (what PLINK 2 --freq reports
  /// as ALT_FREQS for a .bed); NaN for dense stores or with no observed call.
  double a1_freq = std::numeric_limits<double>::quiet_NaN();
  double mean = std::numeric_limits<double>::quiet_NaN();  ///< of the observed values
  /// docs/DESIGN.md §2: sqrt(Σ over observed (x − mean)² / (n − 1)), n the selected samples, the SD
  /// that standardisation divides by.
  double sd = 0;
  /// Dense stores: extremes of the observed values (NaN for genotype stores).
  double min = std::numeric_limits<double>::quiet_NaN();
  double max = std::numeric_limits<double>::quiet_NaN();
};

/// One summary per selected column, in the selection's order. With every sample selected, a
/// genotype store is answered from its index alone (no pass over the data); otherwise one
/// streaming pass recomputes the statistics for the selected samples (genotypes counted on
/// the packed codes).
std::vector<column_summary> column_summaries(const store& s, const selection& sel,
                                             const analysis_options& options = {});

/// Writes the table of `colflow stats` to `file`, one line per selected column after a header:
/// genotype stores `#CHR ID POS A1 A2 OBS_CT MISSING_CT F_MISS A1_FREQ MEAN SD`, dense stores
/// `ID OBS_CT MISSING_CT MEAN SD MIN MAX` (F_MISS = MISSING_CT / selected samples; NA for
/// NaN). The file is a staged output (io/staged_output.hpp): it appears under its name only
/// complete. `summaries` are column_summaries(s, sel); `digits` are the significant digits of
/// the numbers, 1 to 17 (6, PLINK's, by default). Throws colflow::error invalid_argument for
/// digits out of range or summaries of another selection; the file system's errors, naming
/// the file.
void write_stats(const store& s, const selection& sel, std::span<const column_summary> summaries,
                 const std::filesystem::path& file, int digits = 6);

}  // namespace colflow
