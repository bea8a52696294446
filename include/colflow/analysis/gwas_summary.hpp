/// @file gwas_summary.hpp
/// GWAS summary statistics in GCTB's `.ma` form (the COJO format), the input of `colflow
/// sbayesr`, and their alignment to an LD reference's variants and alleles.
///
/// A `.ma` file is whitespace-separated text whose first non-empty line is a header naming the
/// columns SNP A1 A2 freq b se p N (names matched without regard to case, in any order; other
/// columns are ignored): per variant its ID, the effect allele A1 and the other allele A2, the
/// frequency of A1, the marginal effect b of an A1 copy with its standard error se, its P-value
/// and the GWAS sample size N. Unlike GCTB, which crashes on a frequency outside [0, 1], the
/// reader refuses anything that is not a usable number.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "colflow/analysis/ld_columns.hpp"

namespace colflow {

/// One variant's line of a `.ma` file.
struct gwas_summary_entry {
  std::string id, a1, a2;
  double freq = 0, b = 0, se = 0, p = 0, n = 0;
  std::size_t line = 0;  ///< 1-based line of the file
};

struct gwas_summary {
  std::filesystem::path path;
  std::vector<gwas_summary_entry> entries;  ///< in file order
};

/// Reads a `.ma` file. Throws colflow::error: not_found / io_error for the file; bad_input
/// naming the file and line for an empty file, a header without one of the eight columns (or
/// naming one twice), a line with more or fewer fields than the header, a value that is not a
/// number (freq, b, se, p, N; NA included), a frequency outside [0, 1], b not finite, se ≤ 0 or not
/// finite, p outside [0, 1], N ≤ 0 or not finite, and a SNP listed twice (naming both lines).
gwas_summary read_gwas_summary(const std::filesystem::path& path);

/// Summary statistics aligned to an LD reference: the variants both have, in the reference's
/// order, with b and freq of the reference's A1.
struct aligned_gwas {
  std::vector<std::size_t> variant;  ///< per matched variant: its index in the reference
  std::vector<double> freq, b, se, n;
  std::vector<std::size_t> line;    ///< its line in the `.ma` file
  std::filesystem::path path;       ///< the `.ma` file (gwas_summary::path)
  std::size_t gwas_variants = 0;    ///< entries of the file
  std::size_t matched = 0;          ///< variant.size()
  std::size_t flipped = 0;          ///< of them, A1 and A2 swapped: b negated, freq 1 − freq
  std::size_t allele_mismatch = 0;  ///< in both, but other alleles: dropped
  std::size_t absent = 0;           ///< in the file, not in the reference: dropped
  std::size_t reference_only = 0;   ///< in the reference, not in the file: left out of the model
  double n_min = 0, n_median = 0, n_max = 0;  ///< N over the matched variants
};

/// Matches the file's SNPs to the reference's IDs and aligns their alleles as GCTB does: same
/// A1 and A2 kept, swapped ones flipped, others (strand flips included) dropped and counted.
/// Allele codes are compared without regard to case. Throws colflow::error bad_input when no
/// variant is in both (naming the file and the reference), or when the reference lists an ID
/// twice.
aligned_gwas align_gwas(const gwas_summary& gwas, std::span<const ld_variant> reference,
                        const std::string& reference_name);

}  // namespace colflow
