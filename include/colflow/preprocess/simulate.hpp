/// @file simulate.hpp
/// Simulated genotypes and a quantitative phenotype with a known genetic architecture, written
/// as PLINK 1 binary files, for tests, benchmarks and checking analyses against a known truth.
///
/// The simulator is its own small library, libcolflow_simulate (CMake target colflow::simulate),
/// apart from the importers of libcolflow_preprocess: it only writes files, which any of them
/// (bed_source.hpp) or PLINK reads.
///
/// Model (every random number comes from a counter-based generator, Philox4x32-10, keyed by
/// the seed, so the output depends only on the options, never on the thread count):
///
/// - Variant j (0-based) is `snp{j+1}` on chromosome 1 at position 1000 j + 1 (the spacing
///   shrinks when M > 2,147,483 so that positions fit PLINK's 32-bit field), with alleles A1 != A2
///   drawn from A/C/G/T.
/// - Its minor allele frequency is log-uniform on [maf_min, maf_max] (default [0.005, 0.5]):
///   density proportional to 1/MAF, the shape of the neutral site-frequency spectrum, so about
///   half the variants have MAF < 0.05 with the defaults. A1 is the minor allele with
///   probability 1/2, so the A1 frequency p_j covers (0, 1) symmetrically.
/// - Genotypes are in Hardy-Weinberg equilibrium given p_j; each call is independently missing
///   with probability `missing_rate`. One 32-bit draw per genotype decides both.
/// - K causal variants are chosen uniformly without replacement. Each gets a standardised
///   effect b_j ~ N(0, 1), turned into the per-A1-allele effect beta_j = b_j / sqrt(2 p_j (1-p_j))
///   with the drawn (population) frequency p_j.
/// - Genetic value g_i = sum_j beta_j (x_ij - 2 p_j), x_ij the count of A1; a missing call
///   counts as the mean dosage 2 p_j (contributes 0). Centring at 2 p_j keeps the mean of y
///   near 0 and does not change any per-allele effect.
/// - Phenotype y_i = g_i + e_i, e_i ~ N(0, var_e) with var_e = var_g (1 - h2) / h2, var_g the
///   realised sample variance of g (denominator N - 1), so var_g / (var_g + var_e) = h2
///   exactly. With h2 = 0 there is no genetic effect: every beta is 0 and var_e = 1.
///
/// A study's shape, each off by default (the defaults give the model above exactly):
///
/// - Chromosomes: with C > 1 the variants are split into C runs of consecutive indices, run c
///   (0-based: variants floor(c M / C) to floor((c+1) M / C) - 1) on chromosome c + 1, positions
///   restarting at 1 on each.
/// - Populations: with P > 1 the samples form P populations of consecutive groups of four
///   (sample i is in population floor((i div 4) P / ceil(N/4)), so a group of four is never split).
///   Population k draws variant j's genotypes from its own frequency
///   p_jk = clamp(p_j + sqrt(F p_j (1 - p_j)) z_jk, 0.001, 0.999), z_jk ~ N(0, 1): the mean and
///   variance of Balding-Nichols' model with divergence F (Fst), as a truncated normal. The
///   effects stay per-allele effects scaled with p_j; g centres at 2 p_j. Samples are named
///   FID pop{k+1}, IID s{i+1}. A shift D adds D k to the phenotype of population k (after the
///   noise is scaled to the heritability): a confounder only population structure explains.
/// - Relatives: the first R groups of four hold a parent-offspring pair, samples 4b (parent) and
///   4b + 1 (offspring), not recorded in the .fam (cryptic relatedness). The offspring gets one
///   allele of the parent's genotype (either with probability 1/2) and one drawn with the
///   population frequency; its call is missing exactly when its own draw says so, and drawn
///   afresh when the parent's call is missing.
///
/// Random streams, for anyone who wants to reproduce a draw: key = (seed low 32 bits, seed high
/// 32 bits); counter = (c0, c1, stream, 0) with stream 0 genotypes (c0 = sample / 4, c1 =
/// variant), 1 variant parameters (c1 = variant), 2 causal selection (c0 = step), 3 effects
/// (c1 = variant), 4 noise (c0 = sample / 2), 5 population frequencies (c0 = population / 2,
/// c1 = variant), 6 offspring alleles (c0 = group of four, c1 = variant).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace colflow::preprocess {

/// What to simulate and where to write it.
struct simulate_options {
  std::uint64_t samples = 0;   ///< N >= 1
  std::uint64_t variants = 0;  ///< M >= 1
  /// K <= M causal variants; default min(100, M), or 0 when h2 = 0. K = 0 requires h2 = 0.
  std::optional<std::uint64_t> causal;
  double h2 = 0.5;            ///< target heritability, 0 <= h2 < 1
  double missing_rate = 0.0;  ///< probability that a call is missing, 0 <= R < 1
  double maf_min = 0.005;     ///< log-uniform MAF range, 0 < maf_min <= maf_max <= 0.5
  double maf_max = 0.5;
  std::uint64_t seed = 1;
  std::uint32_t chromosomes = 1;  ///< C >= 1, at most M and 22
  std::uint32_t populations = 1;  ///< P >= 1, at most ceil(N/4)
  double fst = 0.1;               ///< F in (0, 1), used when P > 1
  double population_shift = 0;    ///< D, the phenotype of population k gains D k
  std::uint64_t relatives = 0;    ///< R parent-offspring pairs, R <= floor(N/4)
  unsigned threads = 0;           ///< worker threads; 0 = as many as the current task arena allows
  /// Target .bed bytes per block of work (at least one variant per block). A tuning knob:
  /// the output does not depend on it.
  std::size_t block_bytes = std::size_t{1} << 20;
  /// Output prefix: writes PREFIX.bed, .bim, .fam, .phen and .truth.tsv, replacing existing
  /// files of those names. Each is written through staged_output (io/staged_output.hpp): under
  /// a hidden temporary name beside it, fsynced, then renamed; the .bed is renamed last and any
  /// old .bed removed first, so an interrupted run never leaves a partial .bed, nor a .bed
  /// beside companion files of another run.
  std::filesystem::path out;
};

/// The drawn parameters of one variant (a pure function of the seed, the MAF range and j).
struct simulated_variant {
  std::uint64_t index = 0;  ///< j, 0-based
  std::string id;           ///< "snp{j+1}"
  std::uint32_t chromosome = 1;
  std::uint32_t position = 0;
  char a1 = 'A';
  char a2 = 'C';
  double a1_freq = 0;  ///< population frequency p_j of A1 the genotypes were drawn from
};

/// One causal variant of the truth.
struct causal_variant {
  simulated_variant variant;
  double std_effect = 0;  ///< b_j, effect on the standardised genotype
  double beta = 0;        ///< per-A1-allele effect, b_j / sqrt(2 p_j (1 - p_j)); 0 when h2 = 0
  double a1_freq_observed = 0;  ///< A1 frequency among the sample's observed calls (NaN if none)
};

/// What simulate() did.
struct simulate_result {
  std::uint64_t samples = 0;
  std::uint64_t variants = 0;
  std::vector<causal_variant> causal;  ///< in variant order
  double h2_target = 0;
  double var_g = 0;                 ///< realised sample variance of g
  double var_e = 0;                 ///< variance of the noise drawn
  double var_y = 0;                 ///< realised sample variance of y
  double h2_realised = 0;           ///< var_g / var_y
  std::uint64_t missing_calls = 0;  ///< missing genotype calls written
  std::uint64_t bed_bytes = 0;
  double seconds = 0;
  std::vector<std::string> warnings;  ///< e.g. the genetic values came out constant
};

/// Progress of a run, reported after each block of variants has been written.
struct simulate_progress {
  std::uint64_t variants_done = 0;
  std::uint64_t variants_total = 0;
  std::uint64_t bytes_written = 0;  ///< .bed bytes so far
  double seconds = 0;               ///< since the start
};

/// Called from one thread at a time, in order. May throw to abort the run (nothing is left
/// under the final names; the exception propagates out of simulate()).
using simulate_progress_callback = std::function<void(const simulate_progress&)>;

/// Throws colflow::error(errc::invalid_argument) when the options are out of range.
void validate(const simulate_options& options);

/// The parameters of variant j as simulate() draws them. Throws like validate() for j >= M.
simulated_variant describe_variant(const simulate_options& options, std::uint64_t j);

/// Simulates and writes the files (see the file comment for the model). Memory is bounded by
/// a few blocks of about 1 MiB of .bed in flight per thread, plus O(N + K); the matrix is never
/// held whole. Thread-safe for distinct output prefixes.
///
/// Cancellation: a stop request (cancellation.hpp) is honoured between variants (columns).
///
/// Throws colflow::error: errc::invalid_argument for bad options, errc::io_error when a file
/// cannot be written, errc::cancelled on a stop request; whatever `progress` throws. On any
/// failure the temporary files are removed; a failure before the files are published (every
/// error but one of the final renames) leaves none of them under its final name.
simulate_result simulate(const simulate_options& options,
                         const simulate_progress_callback& progress = nullptr);

}  // namespace colflow::preprocess
