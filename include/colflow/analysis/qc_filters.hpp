/// @file qc_filters.hpp
/// PLINK 2's quality-control filters: `--mind`, `--geno`, `--hwe`, `--maf`/`--max-maf` and
/// `--mac`/`--max-mac`, which narrow a selection (selection.hpp) to the samples and columns
/// that pass them: `colflow qc`, and the same flags of every analysis command.
///
/// **Order** (PLINK 2's; docs/ANALYSES.md, "colflow qc"): the selection's lists first, then
/// `--mind` over the selected columns, then `--geno`, `--hwe` and the allele-frequency filters
/// over the samples `--mind` left, each filter counting only the columns the ones before left.
///
/// **What each counts**, as plink2 2.00a3.5 does (read off it on data with males, females,
/// unknown-sex samples, non-founders and calls on X, Y, XY and MT; tests/qc_filters_test.cpp):
/// - `--mind`: a sample's missing calls over the selected columns, more than the fraction of
///   them; the columns on Y count for males only (a female's Y calls, missing or not, are left
///   out of her count and of her number of columns). A male's heterozygous call on X is not
///   missing here.
/// - `--geno`: a column's missing calls among the samples, more than the fraction of them; on Y
///   among the males only. Heterozygous haploid calls are not missing here either.
/// - `--hwe`: the exact test of hardy_weinberg.hpp over the founders (every sample with
///   `nonfounders`), P (or mid-p) below the threshold removes the column; on X the test of
///   Graffelman & Weir over the females' genotypes and the males' alleles (as `colflow hardy`:
///   unknown sex left out, but counted as females when no counted sample is male; X kept
///   untested when no counted sample has a known sex); Y and MT are not tested; a column
///   without a call is kept. `keep_fewhet` keeps a column whose heterozygotes are not in
///   excess (het² ≤ 4·hom_a1·hom_a2; on X, of the females, and only while the females' own
///   test explains the failure).
/// - `--maf`/`--max-maf`: the minor allele's frequency among the founders' alleles (every
///   sample's with `nonfounders`), PLINK 2's ploidy: males haploid on X and Y, only males on Y,
///   everyone haploid on MT; a haploid heterozygous call counts half an allele of each. A
///   column without an observed allele has frequency 0.5, as in plink2.
/// - `--mac`/`--max-mac`: the minor allele's count among the same alleles.
/// Founders are the samples whose father and mother are both `0` in the `.fam`.
///
/// Thresholds carry plink2's tolerance: a fraction or frequency within 2^-44 relative of its
/// limit is on the kept side. Genotype stores are counted on their packed codes; dosage stores
/// on their hard calls (hardy.hpp's rule; plink2 filters frequencies of dosage data on the
/// dosages themselves). Dense stores hold no calls and are refused.
///
/// Results do not depend on threads or in-flight depth: every figure is a whole count.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "colflow/analysis/analysis.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/analysis/sex_chromosomes.hpp"
#include "colflow/store/store.hpp"

namespace colflow {

/// `--hwe P [midp] [keep-fewhet]`.
struct hwe_filter {
  double threshold = 0;      ///< remove a column whose P is below it; 0 < threshold < 1
  bool midp = false;         ///< compare the mid-p
  bool keep_fewhet = false;  ///< keep columns without an excess of heterozygotes
};

/// The filters to apply; an empty optional is not applied.
struct qc_filter_options {
  std::optional<double> mind;     ///< --mind: largest missing fraction of a sample, 0..1
  std::optional<double> geno;     ///< --geno: largest missing fraction of a column, 0..1
  std::optional<hwe_filter> hwe;  ///< --hwe
  std::optional<double> min_maf;  ///< --maf: smallest minor allele frequency, 0..1
  std::optional<double> max_maf;  ///< --max-maf: largest, --maf..1
  std::optional<double> min_mac;  ///< --mac: smallest minor allele count, ≥ 0
  std::optional<double> max_mac;  ///< --max-mac: largest, ≥ --mac
  /// --nonfounders: count every sample for --hwe and the allele filters, not founders only.
  bool nonfounders = false;
  /// Dosage stores: the hard-call threshold (hardy_options'), 0 to 0.5.
  double hard_call_threshold = 0.1;

  /// True when at least one filter is set.
  bool any() const noexcept;
  /// True when one of the allele-frequency filters is set.
  bool any_allele_filter() const noexcept;
};

/// How many samples or columns each filter removed, among those the earlier ones left.
struct qc_filter_counts {
  std::size_t mind = 0;              ///< samples
  std::size_t geno = 0;              ///< columns
  std::size_t hwe = 0;               ///< columns
  std::size_t allele_frequency = 0;  ///< columns (--maf/--max-maf/--mac/--max-mac together)
};

struct qc_filter_result {
  selection selected;        ///< the input selection narrowed by the filters
  qc_filter_counts removed;  ///< what each filter removed
};

/// Throws colflow::error invalid_argument naming the option (e.g. "--maf") when a threshold is
/// out of its range (see qc_filter_options) or not a number, --max-maf is below --maf, or
/// --max-mac below --mac.
void check_qc_filter_options(const qc_filter_options& options);

/// Applies the filters to `sel` (see the file's comment), with the samples' sexes given, one
/// per store row. At most two streaming passes over the selected columns: one for --mind, one
/// for the column filters, each only when such a filter is set. Throws colflow::error
/// invalid_argument for bad options (check_qc_filter_options), a dense store, `sexes` of
/// another size, or when no sample or no column is left (naming the filter); the stream's
/// errors otherwise. With no filter set it returns `sel` unchanged without reading the store.
qc_filter_result apply_qc_filters(const store& s, const selection& sel,
                                  std::span<const sample_sex> sexes,
                                  const qc_filter_options& options,
                                  const analysis_options& analysis = {});

/// The same with the store's sexes (sexes_of(s.samples())).
qc_filter_result apply_qc_filters(const store& s, const selection& sel,
                                  const qc_filter_options& options,
                                  const analysis_options& analysis = {});

/// PLINK 2's log lines of the filters set, in its words and order, e.g. "3 samples removed due
/// to missing genotype data (--mind)." and "--geno: 1 variant removed due to missing genotype
/// data.", then the samples and variants remaining.
std::vector<std::string> qc_filter_log(const qc_filter_options& options,
                                       const qc_filter_result& result);

/// Writes the selected columns' IDs, one per line: plink2's `--write-snplist` (PREFIX.snplist).
/// A staged output (io/staged_output.hpp); the file system's errors name the file.
void write_snplist(const store& s, const selection& sel, const std::filesystem::path& file);

/// Writes the selected samples' FID and IID, tab-separated, one per line, after a header line
/// `#FID	IID` unless `header` is false: plink2's `--write-samples` (PREFIX.id) of a `.fam`'s
/// samples, and with `--no-id-header`. A staged output; errors as write_snplist's.
void write_sample_ids(const store& s, const selection& sel, const std::filesystem::path& file,
                      bool header = true);

}  // namespace colflow
