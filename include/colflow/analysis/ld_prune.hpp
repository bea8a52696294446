/// @file ld_prune.hpp
/// LD pruning: `colflow ld --indep-pairwise`, plink2's `--indep-pairwise`. A list of variants
/// in approximate linkage equilibrium (PREFIX.prune.in) and of those pruned (PREFIX.prune.out),
/// the same lists as plink2 2.00a3.5 writes from the same data.
///
/// Definition (plink2's, read off its source and checked against its output on real data).
/// Each chromosome (a run of selected columns with one chromosome code) is pruned on its own:
/// - Samples: the selected founders (no father and no mother in the .fam: both fields "0");
///   on X the founders' calls count twice for non-males and once for males, whose
///   heterozygous calls are missing; on Y only males count, hets missing; on MT every
///   heterozygous call is missing. Autosomes, XY and other species' chromosomes are diploid.
/// - r² of a pair is cov² / (var_a · var_b) of the calls over the samples called in both,
///   from exact integer sums; a pair is in LD when cov² > r2 · (1 + 2⁻³⁰) · var_a · var_b.
/// - A variant whose calls are all the same (or all missing) is pruned when it is read.
/// - Windows: `window` variants, moved by `step` variants; or, in kb, every variant within
///   window_bp base pairs of the window's first, moved by as few variants as let its end
///   take in at least one more variant. At each window's end, each kept variant in turn, first
///   to last, is paired with the kept variants after it that it has not met yet, nearest
///   first, until one pair is in LD: then the variant of lower minor allele frequency goes,
///   the later one on a tie. Rounds repeat while one prunes (PLINK 1.x's order, which plink2
///   2.00a3.5 follows). Frequencies count alleles as plink2 --freq does: a haploid call is
///   one allele, a haploid heterozygous call half of each.
/// - In kb, a chromosome is cut where two consecutive variants are more than window_bp
///   apart; a chromosome or piece with a single variant keeps it untested, as plink2 does.
///   Columns on chromosome 0 are in neither list.
///
/// Stores: genotype stores. Dosage stores are refused (plink2 prunes hard calls; colflow has
/// no hard calls of a dosage store to prune): prune a genotype store of the same variants.
///
/// Memory and threads: one chromosome's selected columns are held at a time (3 bits a sample
/// and column, twice on X), read in one streaming pass; the pruning is sequential within a
/// chromosome, so the lists do not depend on threads or in-flight depth.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include "colflow/analysis/analysis.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/analysis/sex_chromosomes.hpp"
#include "colflow/store/store.hpp"

namespace colflow {

struct ld_prune_options {
  /// The window in variants (≥ 1), when window_bp is 0.
  std::int64_t window = 50;
  /// The window in base pairs (≥ 2; `--indep-pairwise Nkb` gives N × 1000, rounded down); 0:
  /// the window is counted in variants.
  std::int64_t window_bp = 0;
  /// Variants the window moves by (1 ≤ step ≤ window; must be 1 with window_bp).
  std::int64_t step = 1;
  /// The r² threshold, in [0, 1).
  double r2 = 0.5;
};

/// The two lists, as positions in selection::columns, increasing.
struct ld_prune_result {
  std::vector<std::size_t> kept;     ///< PREFIX.prune.in
  std::vector<std::size_t> removed;  ///< PREFIX.prune.out
};

/// Throws colflow::error invalid_argument naming plink2's flag (`--indep-pairwise`) and the
/// parameter out of range: a window of 0 (or under 2 bp), a step of 0 or above the window, a
/// step other than 1 with a window in kb, r² outside [0, 1).
void check_ld_prune_options(const ld_prune_options& options);

/// Prunes the selected columns of a genotype store, the samples' sexes from the store
/// (sexes_of(s.samples())). Throws colflow::error: invalid_argument for options out of range
/// (check_ld_prune_options), a store that does not hold genotype calls, fewer than two
/// selected founders, duplicate IDs among the columns of the lists (plink2 refuses them too:
/// the lists name variants by ID), a window in kb on a column without a base-pair position
/// or with positions decreasing along a chromosome; the store's read errors.
ld_prune_result ld_prune(const store& s, const selection& sel, const ld_prune_options& options,
                         const analysis_options& analysis = {});

/// The same with the samples' sexes given, one per store row (e.g. read_sex_file's); also
/// invalid_argument when `sexes` has not one entry per store row.
ld_prune_result ld_prune(const store& s, const selection& sel, std::span<const sample_sex> sexes,
                         const ld_prune_options& options, const analysis_options& analysis = {});

/// Writes PREFIX.prune.in and PREFIX.prune.out, one variant ID a line in store order, as plink2
/// does; staged outputs (io/staged_output.hpp), each appearing only complete. Returns the two
/// paths. Throws colflow::error: invalid_argument for a result that names a column outside the
/// selection; the file system's errors, naming the file.
std::vector<std::filesystem::path> write_ld_prune(const store& s, const selection& sel,
                                                  const ld_prune_result& result,
                                                  const std::filesystem::path& prefix);

}  // namespace colflow
