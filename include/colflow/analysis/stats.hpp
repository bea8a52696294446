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
#include "colflow/analysis/sex_chromosomes.hpp"
#include "colflow/store/store.hpp"

namespace colflow {

/// Statistics of one column over the selected samples.
///
/// On X, Y and MT the counts and the A1 frequency follow PLINK 2's ploidy rules
/// (sex_chromosomes.hpp; docs/ANALYSES.md, "Sex chromosomes"): a male's call on X and every
/// call on MT are one allele (a heterozygous one counts half an A1), only males are counted on
/// Y. `observed` and `missing` are then the counted samples' (so that `missing` and
/// missing / (observed + missing) are PLINK 2's .vmiss MISSING_CT and F_MISS; for a dosage store,
/// its MISSING_DOSAGE_CT and F_MISS_DOSAGE), while `mean` and `sd` stay those of the stored
/// dosages of every selected sample, what standardisation uses.
struct column_summary {
  /// Non-missing calls (values) of the counted samples: every selected sample, except on Y
  /// (selected males only).
  std::uint64_t observed = 0;
  std::uint64_t missing = 0;  ///< counted samples without a call
  /// Genotype and dosage stores: frequency of A1 among the observed alleles, each counted
  /// sample contributing two alleles or, where haploid, one (what PLINK 2 --freq reports as
  /// ALT_FREQS for a .bed); NaN for dense stores or with no observed allele.
  double a1_freq = std::numeric_limits<double>::quiet_NaN();
  /// Mean of the observed values of every selected sample (stored dosages: 0-2 on every
  /// chromosome, a haploid call stored as 0 or 2).
  double mean = std::numeric_limits<double>::quiet_NaN();
  /// docs/DESIGN.md §2: sqrt(Σ over observed (x − mean)² / (n − 1)), n the selected samples, the SD
  /// that standardisation divides by.
  double sd = 0;
  /// Dense stores: extremes of the observed values (NaN for genotype stores).
  double min = std::numeric_limits<double>::quiet_NaN();
  double max = std::numeric_limits<double>::quiet_NaN();
};

/// One summary per selected column, in the selection's order, with the samples' sexes of the
/// store (sexes_of(s.samples()), read only when a selected column is on X, Y or MT). With every
/// sample selected, the columns of a genotype or dosage store on other chromosomes are answered
/// from its index alone (no pass over the data); otherwise one streaming pass recomputes the
/// statistics for the selected samples (genotypes counted on the packed codes).
std::vector<column_summary> column_summaries(const store& s, const selection& sel,
                                             const analysis_options& options = {});

/// The same with the samples' sexes given, one per store row (e.g. read_sex_file's). Throws
/// colflow::error invalid_argument when `sexes` has not one entry per store row.
std::vector<column_summary> column_summaries(const store& s, const selection& sel,
                                             std::span<const sample_sex> sexes,
                                             const analysis_options& options = {});

/// Writes the table of `colflow stats` to `file`, one line per selected column after a header:
/// genotype stores `#CHR ID POS A1 A2 OBS_CT MISSING_CT F_MISS A1_FREQ MEAN SD`, dense stores
/// `ID OBS_CT MISSING_CT MEAN SD MIN MAX` (F_MISS = MISSING_CT / (OBS_CT + MISSING_CT), the
/// selected samples but on Y; NA for NaN). The file is a staged output (io/staged_output.hpp): it
/// appears under its name only complete. `summaries` are column_summaries(s, sel); `digits` are the
/// significant digits of the numbers, 1 to 17 (6, PLINK's, by default). Throws colflow::error
/// invalid_argument for digits out of range or summaries of another selection; the file system's
/// errors, naming the file.
void write_stats(const store& s, const selection& sel, std::span<const column_summary> summaries,
                 const std::filesystem::path& file, int digits = 6);

}  // namespace colflow
