/// @file hardy_weinberg.hpp
/// Exact tests of Hardy-Weinberg equilibrium for one biallelic variant, from its genotype
/// counts: PLINK 2's `--hardy` p-values, which `colflow hardy` (hardy.hpp) reports per column.
///
/// **Diploid test** (Wigginton, Cutler & Abecasis 2005, "A note on exact tests of
/// Hardy-Weinberg equilibrium", Am J Hum Genet 76:887). Given n genotypes and the copies of
/// each allele among them, the tables of n genotypes with those allele copies have, under
/// equilibrium, probabilities in proportion to n!·2^h / (a!·h!·b!) (h heterozygotes, a and b
/// homozygotes). P is the sum of the probabilities of the tables no more probable than the
/// observed one.
///
/// **X chromosome** (Graffelman & Weir 2016, "Testing for Hardy-Weinberg equilibrium at
/// biallelic genetic markers on the X chromosome", Heredity 116:558), PLINK 2's test on X:
/// females are diploid, males haploid, and the tables are every split of the observed allele
/// copies among the males' alleles and the females' genotypes, each with probability in
/// proportion to C(males, male copies of allele 1) · females!·2^h / (a!·h!·b!). With no male
/// it is the diploid test of the females.
///
/// **mid-p** (Graffelman & Moreno 2013): P less half the probability of the tables exactly as
/// probable as the observed one (the observed one included): the sum over the less probable
/// tables plus half the sum over the equally probable ones. PLINK 2's `--hardy midp` and
/// `--hwe midp`. A single possible table (no genotype, or a monomorphic variant) has P = 1 and
/// mid-p 0.5, as in PLINK 2.
///
/// **Computation.** Ratios of neighbouring tables' probabilities (the recurrences of the
/// papers), multiplied outward from the observed table and from each distribution's mode; no
/// factorial is evaluated but to recognise, from log-gamma functions, a table whose P is below
/// the smallest positive double: that P is 0, as PLINK 2 prints it, found without walking
/// across the sample. Products are kept with a separate logarithmic scale and sums with
/// compensation, so counts of millions of samples neither overflow nor underflow nor lose
/// digits: P agrees with a quadruple-precision enumeration to 3e-14 relative at 40,000
/// females and 40,000 males, from P = 0.6 to 1e-140. Near equilibrium P is 1 less the share
/// of the tables more probable than the observed one (when that leaves P ≥ 0.05), else the
/// sum of the tables at most as probable. Two tables count as equally probable when their
/// computed probabilities differ by less than 1e-10 relative (the rounding of the
/// recurrences is far below that; tables of different probability differ by far more). A
/// tail is summed until its terms fall below 2^-64 of the observed table's probability. The
/// work grows with the spread of the distribution: about √n ratios for the diploid test; on
/// X, rows of the males' allele counts, each of whose two tails is summed (at 2 million
/// females and 2 million males, 0.12 s for P ≈ 1e-44, a few milliseconds near equilibrium or
/// for a rare allele). Counts up to 2^50 in all, exact in doubles.
///
/// All functions are pure and safe to call from many threads.
#pragma once

#include <cstdint>
#include <span>

namespace colflow {

/// Genotype counts of diploid samples: two copies of allele A1, one of each, two of A2.
struct diploid_counts {
  std::uint64_t hom_a1 = 0;
  std::uint64_t het = 0;
  std::uint64_t hom_a2 = 0;
};

/// Allele counts of haploid samples (males on X): A1 and A2 calls.
struct haploid_counts {
  std::uint64_t a1 = 0;
  std::uint64_t a2 = 0;
};

/// The two p-values of an exact test (see the file's comment): both in [0, 1], midp ≤ p.
struct hwe_p_values {
  double p = 1;
  double midp = 0.5;
};

/// The exact test of Hardy-Weinberg equilibrium of diploid genotypes. Symmetric in A1 and A2.
hwe_p_values hardy_weinberg_exact(const diploid_counts& genotypes) noexcept;

/// hardy_weinberg_exact of each table into `out` (as many), with the same bits: the test's
/// longest walk made for four tables side by side where the CPU has AVX2.
void hardy_weinberg_exact(std::span<const diploid_counts> tables, std::span<hwe_p_values> out);

/// Whether the diploid test's P and mid-p are both certainly above `threshold`, told without
/// the test from the observed table's weight W_obs against the most probable table's W_mode:
/// P ≥ W_obs / Σ W ≥ W_obs / (T · W_mode) for the T tables of the genotypes' allele counts, and
/// the mid-p is at least half of P. True only when a quarter of that bound exceeds the
/// threshold; false when the bound cannot tell (then the test must be made). What a filter on
/// P needs of most columns: a walk to the mode, a few steps, in place of the whole sum.
bool hardy_weinberg_surely_above(const diploid_counts& genotypes, double threshold) noexcept;

/// The exact test on X of females' genotypes and males' alleles (Graffelman & Weir 2016),
/// PLINK 2's `.hardy.x` P. Symmetric in A1 and A2; with no male it equals
/// hardy_weinberg_exact(females).
hwe_p_values hardy_weinberg_exact_x(const diploid_counts& females,
                                    const haploid_counts& males) noexcept;

}  // namespace colflow
