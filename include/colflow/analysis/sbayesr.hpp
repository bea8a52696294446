/// @file sbayesr.hpp
/// SBayesR (Lloyd-Jones et al., Nat Commun 2019): BayesR fitted from GWAS summary statistics and
/// an LD reference, GCTB 2.05's `--sbayes R` model, `colflow sbayesr`.
///
/// Data (GCTB 2.05's, for genotypes scaled to variance 1). For each variant of the summary
/// statistics aligned to the reference (gwas_summary.hpp), with A1 frequency p, h = 2p(1 − p),
/// N_j, b and se, the statistics are put on the scale of a standardised genotype: b̃ = b √h,
/// s̃ = se √h. The normal equations are a regression on standardised genotypes with
/// x_jᵀx_j = D_j = N_j, x_jᵀy = N_j b̃_j and x_iᵀx_j = r_ij √(D_i D_j), r from the LD reference.
/// Each variant estimates the phenotypic variance, v_j = N_j s̃² + b̃²: σ²_y is their median,
/// yᵀy the median of N_j v_j and n the median N. The rhs of variant j has the residual variance
/// σ²_e plus the sampling error of its LD, GCTB's L_j σ²_g with L_j = (N_j + n_ref)/m ·
/// Σ_i (1 − r_ij²)² / n_ref over the m_j variants of its window, plus (m − m_j) / m (m variants
/// in all, n_ref the reference's samples; only variants of the summary statistics count).
///
/// Model. β_j = 0 with probability π_1, else N(0, γ_k σ²_β) with probability π_k, γ = (0,
/// 0.001, 0.01, 0.1, 1) by default; π ~ Dirichlet(1, …, 1); σ²_β ~ scaled-inv-χ²(4, s) with s
/// half its starting value, replaced after 2,000 iterations by the mean over them of
/// ½ σ²_g / (m Σ_k π_k γ_k), as GCTB does; σ²_e ~ scaled-inv-χ²(4, ½ σ²_e at the start).
///
/// One iteration: the variants in index order, each drawing its class and effect from
/// rhs_j = r_j + D_j β_j (r = Xᵀy − XᵀXβ, kept in summary-statistics space) through the mixture
/// shared with bayesr (with ε_j = σ²_e + L_j σ²_g: class weights with C_k = D_j + ε_j /
/// (γ_k σ²_β), β ~ N(rhs / C_k, ε_j / C_k)), then, when β_j changed, r updated from the
/// variant's LD column: r_i −= r_ij √(D_i D_j) Δβ_j. A column is read only then (a zero effect
/// drawn zero again, most draws, needs none), through the source's index, and kept for the
/// next iterations (sbayesr_options::ld_cache_bytes). Then σ²_β from Σ β_j²/γ_{k_j} over the
/// non-zero effects, π from the class counts, σ²_g = (βᵀXᵀy − βᵀr)/n (0 when negative), σ²_e from
/// the residual sum of squares yᵀy − βᵀXᵀy − βᵀr, and h² = σ²_g / σ²_y. A negative residual sum of
/// squares (effects "blowing up", GCTB's best-known failure) stops the chain with an error that
/// says so.
///
/// Every draw is named by (seed, iteration, variant) (random_draws), so a chain is the same bits
/// whatever the threads, the in-flight depth of the LD source or where it was resumed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "colflow/analysis/analysis.hpp"
#include "colflow/analysis/gwas_summary.hpp"
#include "colflow/analysis/ld_columns.hpp"

namespace colflow {

struct sbayesr_options {
  std::size_t iterations = 1000;  ///< total iterations of the chain (a resumed chain included)
  std::size_t burnin = 200;       ///< iterations before the posterior summaries start
  std::uint64_t seed = 1;
  /// Variances of the classes as multiples of σ²_β, increasing; the first is 0 (the zero class).
  std::vector<double> gamma = {0, 0.001, 0.01, 0.1, 1};
  /// Starting mixture weights, one per class, summing to 1 (GCTB's --pi and its default).
  std::vector<double> pi = {0.95, 0.02, 0.01, 0.01, 0.01};
  /// Starting σ²_g / σ²_y (GCTB's --hsq and its default): σ²_β and σ²_e start from it, and the
  /// scales of their priors are half those starts, as GCTB's.
  double h2_start = 0.1;
  /// Write the chain's state to `checkpoint` every so many iterations (0: never) and after the
  /// last, as a staged output (a temporary beside it, synced and renamed): a kill never leaves
  /// a partial checkpoint under the real name. With an empty path, no checkpoint.
  std::size_t checkpoint_every = 0;
  std::filesystem::path checkpoint;
  /// Continue the chain saved in `checkpoint` (same summary statistics, LD reference and
  /// settings; `iterations` may be larger than before): the result is the uninterrupted
  /// chain's, bit for bit.
  bool resume = false;
  /// Bytes of LD columns kept in memory between iterations (a source held in memory keeps
  /// none): every column read while there is room; a column whose effect turned zero is the
  /// first to leave for a later one (the longest let go first), those of non-zero effects,
  /// which the next iteration reads again, stay. Beyond it, columns are read from the source
  /// each time they are needed. Results never depend on it.
  std::size_t ld_cache_bytes = std::size_t{1} << 30;
  /// Called after every iteration with the iteration (1-based), the chain's length and its h².
  std::function<void(std::size_t iteration, std::size_t iterations, double h2)> on_iteration;
};

/// One iteration of the chain: GCTB's `.mcmcsamples` row.
struct sbayesr_sample {
  std::size_t iteration = 0;   ///< 1-based
  std::vector<double> counts;  ///< variants per class (GCTB's NumSnp1..K)
  std::vector<double> pi;      ///< mixture weights drawn
  std::size_t nonzero = 0;
  double sigma2_beta = 0;  ///< σ²_β (GCTB's SigmaSq)
  double sigma2_e = 0;     ///< GCTB's ResVar
  double sigma2_g = 0;     ///< GCTB's GenVar
  double h2 = 0;           ///< GCTB's hsq
};

struct sbayesr_result {
  double phenotype_variance = 0;  ///< σ²_y
  double sample_size = 0;         ///< n, the median N
  /// Per aligned variant (aligned_gwas order): D_j and x_jᵀy.
  std::vector<double> diagonal, rhs;
  std::vector<sbayesr_sample> trace;  ///< every iteration, burn-in included
  std::size_t burnin = 0;
  std::size_t posterior_samples = 0;  ///< iterations after the burn-in
  /// Per aligned variant over the posterior samples: the fraction with a non-zero effect (PIP),
  /// and the mean and SD of the effect per SD of genotype (β) and per A1 allele (β / √h).
  std::vector<double> pip, beta_mean, beta_sd, a1_effect, a1_effect_sd;
  std::vector<double> beta;        ///< the last iteration's effects (per SD of genotype)
  std::size_t resumed_from = 0;    ///< the checkpoint's iteration, when resumed
  std::size_t iterations_run = 0;  ///< iterations of this run (not of those before a resume)
};

/// The posterior mean and SD (n − 1 divisor; NaN without iterations after the burn-in, SD 0
/// with one) of one parameter of the chain, a row of PREFIX.parRes.
struct sbayesr_parameter {
  std::string name;  ///< NumSnp1..K, SigmaSq, ResVar, GenVar, hsq
  double mean = 0, sd = 0;
};

/// The rows of PREFIX.parRes in its order, over the iterations after the burn-in.
std::vector<sbayesr_parameter> sbayesr_parameters(const sbayesr_result& result);

/// The result files of `colflow sbayesr` for an output prefix (the prefix followed by the text).
struct sbayesr_files {
  /// PREFIX.parRes, GCTB's table of the posterior mean and SD of NumSnp1..K, SigmaSq, ResVar,
  /// GenVar and hsq over the iterations after the burn-in.
  std::filesystem::path parameters;
  /// PREFIX.snpRes, GCTB's table per variant: Id Name Chrom Position A1 A2 A1Frq A1Effect SE
  /// PIP LastSampleEff (effects per A1 allele, A1 the reference's, A1Frq the GWAS's aligned).
  std::filesystem::path effects;
};

/// The names write_sbayesr() uses.
sbayesr_files sbayesr_output_files(const std::filesystem::path& prefix);

/// Writes the tables of a chain sbayesr(ld, gwas, ...) returned, in GCTB's fixed-width layout.
/// Each is a staged output (io/staged_output.hpp). Throws colflow::error invalid_argument for a
/// result of other summary statistics; the file system's errors, naming the file.
sbayesr_files write_sbayesr(const ld_columns& ld, const aligned_gwas& gwas,
                            const sbayesr_result& result, const std::filesystem::path& prefix);

/// Throws colflow::error invalid_argument naming the first bad option (checkpoints or a resume
/// without a checkpoint path included).
void check_sbayesr_options(const sbayesr_options& options);

/// Runs the chain on the aligned summary statistics and the LD columns of their variants
/// (`gwas.variant` indexes `ld.variants()`), after one pass over them for their LD sampling
/// variance. Pairs with a variant outside the summary statistics are ignored. `analysis.on_step`
/// hears "chain" after each iteration. Throws colflow::error: invalid_argument for bad options;
/// bad_input for an A1 frequency of 0 or 1, a variant whose own LD is not finite (constant in the
/// reference) or whose reference sample size is unknown, and, naming the iteration, for a chain
/// whose residual variance turns negative; the LD source's errors. With `options.resume`, the
/// checkpoint's: not_found, bad_magic, unsupported_version, corrupt_header or checksum_mismatch
/// for a missing, foreign, damaged or truncated file, invalid_argument for the checkpoint of
/// other data or settings or one past `iterations`, each naming the file.
///
/// On several processes (`analysis.processes`) every process calls it with the same statistics,
/// LD and options (else all throw invalid_argument together, before the chain): the blocks of
/// 128 variants are dealt out in turn, each process draws its own and updates its own positions
/// of the residual with every process's changes, and each returns the single process's result,
/// bit for bit; process 0 alone writes the checkpoints. Collectives come from the calling
/// thread only. An error on one process mid-chain leaves the others waiting in the next
/// collective: the caller must end them (the command aborts the MPI launch).
sbayesr_result sbayesr(ld_columns& ld, const aligned_gwas& gwas, const sbayesr_options& options,
                       const analysis_options& analysis = {});

}  // namespace colflow
