/// @file clump.hpp
/// Clumping: association results turned into independent loci, `colflow clump`, PLINK 1.9's
/// --clump.
///
/// Definition (PLINK 1.9's, rule for rule). The P-value tables (p_value_table.hpp) are
/// matched to the selected variants by ID. A variant with P ≤ p1 in some table is a top
/// variant; top variants are visited by increasing P (the smallest of a variant's P-values;
/// ties by position in the store). A top variant not yet in a clump becomes an index variant:
/// its clump takes every variant of the tables (any P) on the same chromosome less than
/// ⌊kb × 1000⌋ bp away, not yet in a clump, whose r² with it is above r2 (strictly). r² is
/// that of the A1 alleles' haplotype frequencies, estimated from the two variants' 3 × 3
/// genotype table over the selected founders called in both (the maximum-likelihood phase of
/// the double heterozygotes, PLINK 1.9's two-locus EM), not the genotypic correlation of
/// `colflow ld`; a pair with a variant monomorphic over those calls never clumps. The clump
/// counts the table entries it took by P: NSIG (P ≥ 0.05), S05 (< 0.05), S01 (< 0.01), S001
/// (< 0.001), S0001 (< 0.0001), TOTAL their sum; it lists (SP2) those with P < p2 (strictly),
/// each with its table. A variant in several tables is an entry in each; the index's other
/// entries are counted and listed too. Entries with P > max(p2, 0.05) are counted (NSIG) but
/// not listed. With allow_overlap a variant may join several clumps.
///
/// Samples: the selected founders (both parents '0' in the store's .fam; every sample of a
/// store without parents). Chromosomes are all treated as autosomes (PLINK 1.9 also treats the
/// males' X, Y and MT calls as haploid).
///
/// Reproducibility: index variants are visited in a fixed order and the r² of each index's
/// candidates are computed each by one task from integer counts, so the result depends on
/// neither threads nor in-flight depth.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "colflow/analysis/analysis.hpp"
#include "colflow/analysis/p_value_table.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/store/store.hpp"

namespace colflow {

struct clump_options {
  double p1 = 1e-4;            ///< --clump-p1: top variants have P ≤ p1, in (0, 1]
  double p2 = 0.01;            ///< --clump-p2: clumped variants listed have P < p2, in (0, 1]
  double r2 = 0.5;             ///< --clump-r2: clumped variants have r² > r2, in [0, 1]
  double kb = 250;             ///< --clump-kb: clumped variants are < ⌊kb × 1000⌋ bp away, > 0
  bool allow_overlap = false;  ///< --clump-allow-overlap: a variant may join several clumps
  /// r² values held at once: index variants are taken in groups whose windows hold at most
  /// this many columns, each group one pass over the store (0: 4,194,304, 32 MB of values).
  std::size_t group_entries = 0;
};

/// A table entry listed in a clump: a position in selection::columns and its table (1-based).
struct clump_member {
  std::size_t column = 0;
  std::uint32_t file = 0;
};

/// A clump: its index variant (position in selection::columns), the table of the entry that
/// made it the index, that entry's P, the entries counted by P class (NSIG, S05, S01, S001,
/// S0001) and those listed (P < p2), in the order PLINK 1.9 lists them: the variants before
/// the index by position, the index's own other entries, the variants after it.
struct clump_group {
  std::size_t index = 0;
  std::uint32_t file = 0;
  double p = 0;
  std::uint64_t counts[5] = {};
  std::vector<clump_member> members;
};

/// A top variant (P ≤ p1) of the tables that the store (or its selection) does not have.
struct clump_absent {
  std::string id;
  double p = 0;  ///< its smallest P
};

struct clump_result {
  clump_options options;
  std::size_t tables = 0;            ///< tables read
  std::size_t top_variants = 0;      ///< selected variants with P ≤ p1
  std::size_t founders = 0;          ///< samples used
  std::vector<clump_group> clumps;   ///< in the order the index variants were visited
  std::vector<clump_absent> absent;  ///< by increasing P, then ID
};

/// Throws colflow::error invalid_argument naming the option (--clump-p1, --clump-p2,
/// --clump-r2, --clump-kb) when it is out of range.
void check_clump_options(const clump_options& options);

/// Clumps the tables on the genotypes of the selected samples and columns. The r² of each index
/// variant with the table's variants in its window come from one pass over those columns per
/// group of index variants (clump_options::group_entries), each column's bit planes counted
/// against the group's as it streams by.
/// Throws colflow::error: invalid_argument for options out of range, a store that is not a
/// genotype store, no table, two selected variants with one ID, or a chromosome whose
/// positions are not numbers or not in increasing order; errors of the store's reads.
clump_result clump(const store& s, const selection& sel, const std::vector<p_value_table>& tables,
                   const clump_options& options, const analysis_options& analysis = {});

/// The layout of the report.
enum class clump_format {
  /// PLINK 1.9's PREFIX.clumped: fixed-width columns CHR F SNP BP P TOTAL NSIG S05 S01 S001
  /// S0001 SP2, byte for byte as PLINK 1.9 writes them (chromosomes as its numeric codes, X 23,
  /// Y 24, XY 25, MT 26; P with 3 significant digits; NONE for an empty SP2).
  clumped,
  /// plink2's PREFIX.clumps: tab-separated #CHROM POS ID P TOTAL NONSIG S0.05 S0.01 S0.001
  /// S0.0001 SP2 ('.' for an empty SP2, the table number in parentheses only when there are
  /// several tables).
  clumps,
};

/// Writes the report through a staged output (a file appears under its name only complete)
/// and returns its path; nothing is written when there is no clump (PLINK 1.9 writes nothing
/// then either) and the path is empty. `digits`: significant digits of P in .clumps.
std::filesystem::path write_clump(const store& s, const selection& sel, const clump_result& result,
                                  const std::filesystem::path& prefix,
                                  clump_format format = clump_format::clumped, int digits = 6);

}  // namespace colflow
