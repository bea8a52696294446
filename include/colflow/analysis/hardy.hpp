/// @file hardy.hpp
/// Hardy-Weinberg equilibrium per column: `colflow hardy`, PLINK 2's `--hardy`.
///
/// For each selected column, the genotype counts of the selected samples and the exact test of
/// hardy_weinberg.hpp, with PLINK 2's rules for the chromosomes (docs/ANALYSES.md, "colflow
/// hardy"): on X the test of Graffelman & Weir over the selected females' genotypes and the
/// selected males' alleles (a male's heterozygous call is missing; samples of unknown sex are
/// left out, but count as females when no male is selected, and X is not tested when no
/// selected sample has a known sex, as plink2 2.00a3.5 does); on Y and MT, haploid, no test;
/// on every other chromosome (XY, the autosomes, other species' codes) the diploid test over
/// every selected sample. Every selected sample is counted, founder or not (`plink2 --hardy
/// --nonfounders`).
///
/// Genotype stores are counted on their packed codes; dosage stores on the hard calls of their
/// dosages (a dosage within hardy_options::hard_call_threshold of 0, 1 or 2, else missing:
/// PLINK 2's rule, by which it makes the calls its `--hardy` counts). Dense stores hold no
/// calls and are refused.
///
/// The result does not depend on threads, in-flight depth or processes: each column's counts
/// are whole numbers and its test a function of them alone.
#pragma once

#include <filesystem>
#include <span>
#include <vector>

#include "colflow/analysis/analysis.hpp"
#include "colflow/analysis/hardy_weinberg.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/analysis/sex_chromosomes.hpp"
#include "colflow/store/store.hpp"

namespace colflow {

struct hardy_options {
  /// Dosage stores: the largest distance of a dosage from 0, 1 or 2 that still makes that call
  /// (PLINK 2's --hard-call-threshold and its default), 0 to 0.5.
  double hard_call_threshold = 0.1;
  /// write_hardy: report the mid-p (column MIDP) instead of P, as `plink2 --hardy midp`.
  bool midp = false;
};

/// The counts and the test of one column. Alleles are the store's: A1 is the `.bim`'s fifth
/// column (docs/DESIGN.md §2); write_hardy names them as PLINK 2 does.
struct hardy_result {
  /// The chromosome's kind, which says which test was made: x, the X test; y and mt, none;
  /// the others, the diploid test.
  chromosome_kind kind = chromosome_kind::autosome;
  /// Calls of every selected sample, or on X of the selected females (see above): two copies
  /// of A1 (hom_a1), one (het), none (hom_a2). Zero where no test is made.
  diploid_counts genotypes;
  /// X: the selected males' A1 and A2 calls (a heterozygous call is missing). Zero elsewhere.
  haploid_counts males;
  /// hardy_weinberg_exact(genotypes), or on X hardy_weinberg_exact_x(genotypes, males); NaN
  /// (both values) where no test is made: on Y and MT, and on X without a selected sample of
  /// known sex.
  hwe_p_values test;
};

/// One result per selected column, in the selection's order, with the samples' sexes of the
/// store (sexes_of(s.samples()), read only when a selected column is on X). One streaming pass
/// over the columns not on Y or MT, a column's counts and test at a time on each thread.
/// Throws colflow::error invalid_argument for a dense store or a threshold outside 0..0.5; the
/// stream's errors otherwise.
std::vector<hardy_result> hardy(const store& s, const selection& sel,
                                const hardy_options& options = {},
                                const analysis_options& analysis = {});

/// The same with the samples' sexes given, one per store row (e.g. read_sex_file's). Also
/// invalid_argument when `sexes` has not one entry per store row.
std::vector<hardy_result> hardy(const store& s, const selection& sel,
                                std::span<const sample_sex> sexes, const hardy_options& options,
                                const analysis_options& analysis = {});

/// Writes PLINK 2's tables, each only when it has a line, and returns the files written; the
/// columns without a test (NaN) are left out. PREFIX.hardy, the columns but those on X: `#CHROM ID
/// A1 AX HOM_A1_CT HET_A1_CT TWO_AX_CT O(HET_A1) E(HET_A1) P`; PREFIX.hardy.x, the columns on X:
/// `#CHROM ID A1 AX FEMALE_HOM_A1_CT FEMALE_HET_A1_CT FEMALE_TWO_AX_CT MALE_A1_CT MALE_AX_CT
/// O(FEMALE_HET_A1) E(FEMALE_HET_A1) FEMALE_A1_FREQ MALE_A1_FREQ P`; the last column MIDP with
/// options.midp. As in PLINK 2's tables of a `.bed`, A1 is the `.bim`'s sixth column (PLINK 2's
/// REF, the store's A2) and AX the fifth (the store's A1): HOM_A1_CT is hardy_result's hom_a2.
/// O(HET_A1) is the heterozygotes' share of the calls and E(HET_A1) 2f(1 − f), f the frequency
/// of A1 among them; NA where there is no call. Each file is a staged output
/// (io/staged_output.hpp), appearing only complete; `results` are hardy(s, sel, ...)'s,
/// `digits` the significant digits of the numbers (1 to 17). Throws colflow::error
/// invalid_argument for digits out of range or results of another selection; the file
/// system's errors, naming the file.
std::vector<std::filesystem::path> write_hardy(const store& s, const selection& sel,
                                               std::span<const hardy_result> results,
                                               const std::filesystem::path& prefix,
                                               const hardy_options& options = {}, int digits = 6);

}  // namespace colflow
