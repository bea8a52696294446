/// @file bayesr.hpp
/// BayesR (Erbe et al. 2012): a Gibbs sampler for y = μ + Zβ + e over streamed columns,
/// `colflow bayesr`.
///
/// Z holds the selected columns standardised over the samples used (docs/DESIGN.md §2, statistics
/// of those samples) and y the phenotype standardised over them. Each β_j comes from a mixture of
/// a point mass at zero and normals N(0, γ_k σ²_G) with γ = (1e-4, 1e-3, 1e-2) by default, so
/// an effect of class k explains about γ_k of the genetic variance σ²_G. Mixture weights π have
/// a Dirichlet prior, σ²_G and σ²_E scaled inverse-χ² priors, e ~ N(0, σ²_E).
///
/// One iteration: μ is drawn; the columns are visited in a fresh random order, each drawing its
/// class from its conditional posterior given the residual, then its effect, and updating the
/// residual when the effect changed (a column whose effect is zero before and after leaves it
/// untouched: most columns, most of the time); then σ²_G ~ scaled-inv-χ²(ν_G + m₁, (m₁ Σβ² +
/// ν_G s²_G)/(ν_G + m₁)) with m₁ non-zero effects (the parametrisation of Erbe et al.'s bayesR
/// and BayesRRcmd, which keeps σ²_G the genetic variance), σ²_E ~ scaled-inv-χ²(ν_E + n, (eᵀe +
/// ν_E s²_E)/(ν_E + n)) and π ~ Dirichlet(class counts + α). h² is reported as GCTB does,
/// from the genetic values: var(Zβ) / (var(Zβ) + σ²_E) (σ²_G, a scale of the prior, runs a
/// little above var(Zβ) when effects of correlated columns share the signal).
///
/// Every random number is named by (seed, iteration, column), so a chain is bit-identical
/// whatever the threads, the in-flight depth, the execution mode of the passes, or where it
/// was stopped and resumed from a checkpoint. Genotype columns are never decoded: the
/// products with the residual and the residual updates work on the packed codes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <vector>

#include "colflow/analysis/analysis.hpp"
#include "colflow/analysis/chain_diagnostics.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/codec/genotype_codec.hpp"
#include "colflow/store/store.hpp"

namespace colflow {

/// How each iteration's pass over the columns runs. Results are identical for the streamed
/// modes; `in_memory` decodes the standardised matrix once into RAM as doubles (the baseline
/// the benchmarks compare streaming with; its arithmetic differs in the last bits).
/// `automatic` runs sequentially when there is nothing to decode (a genotype store whose
/// selected columns are all stored uncompressed: the kernel reads the mapped codes, and a
/// pipeline would only add an idle thread beside it), pipelined otherwise.
enum class bayesr_execution { automatic, pipelined, sequential, in_memory };

struct bayesr_options {
  std::size_t iterations = 1000;  ///< total iterations of the chain (a resumed chain included)
  std::size_t burnin = 200;       ///< iterations before the posterior summaries start
  std::size_t thin = 1;           ///< keep every thin-th iteration (trace and summaries)
  std::uint64_t seed = 1;
  /// Variances of the non-zero classes as fractions of σ²_G (increasing, positive).
  std::vector<double> mixture = {1e-4, 1e-3, 1e-2};
  double dirichlet_alpha = 1.0;  ///< Dirichlet prior of the mixture weights, every class
  double sigma2_g_df = 1e-4, sigma2_g_scale = 1e-4;  ///< scaled inverse-χ² prior of σ²_G
  double sigma2_e_df = 1e-4, sigma2_e_scale = 1e-4;  ///< and of σ²_E
  /// Write the chain's state to `checkpoint` every so many iterations (0: never) and after
  /// the last one. Written to a temporary name, synced and renamed: a kill never leaves a
  /// partial checkpoint under the real name.
  std::size_t checkpoint_every = 0;
  std::filesystem::path checkpoint;
  /// Continue the chain saved in `checkpoint` (same store, selection, phenotype and
  /// settings; only `iterations` may grow).
  bool resume = false;
  bayesr_execution execution = bayesr_execution::automatic;
  /// On several processes (analysis_options::processes): 0, the exact mode (the samples split,
  /// the single process's chain); K > 0, hydra's scheme (docs/DESIGN.md §4.9): the columns
  /// split, each process sampling its own against its own copy of the residual, and every K
  /// of its columns the processes exchange the effects that changed and apply them. The chain
  /// then depends on the number of processes and K, and checkpoints are not written. In one
  /// process K changes nothing.
  std::size_t sync_every = 0;
  /// Streamed on a genotype store, the most memory the columns' lists of live bytes take (the
  /// bytes each column's products add, listed once by the first pass: a rare column then costs
  /// its carriers, docs/ANALYSES.md). Columns past it find their bytes at every visit; the
  /// results are the same bits either way.
  std::size_t live_list_bytes = std::size_t{512} << 20;
  /// Called after every iteration with the iteration (1-based), the chain's length and the
  /// iteration's h². (For a progress display, analysis_options::on_step also gives the
  /// iterations of this run and their time.)
  std::function<void(std::size_t iteration, std::size_t iterations, double h2)> on_iteration;
};

/// One kept iteration of the chain.
struct bayesr_sample {
  std::size_t iteration = 0;  ///< 1-based
  double mu = 0, sigma2_g = 0, sigma2_e = 0;
  double genetic_variance = 0;  ///< sample variance of the genetic values Zβ (used samples)
  double h2 = 0;                ///< genetic_variance / (genetic_variance + sigma2_e)
  std::size_t nonzero = 0;
  std::vector<double> pi;  ///< mixture weights, the zero class first
};

struct bayesr_result {
  std::size_t samples = 0;                      ///< n: selected samples with a phenotype value
  double phenotype_mean = 0, phenotype_sd = 0;  ///< of y over them, before standardising
  /// Per selected column: the statistics over the n samples that define its standardisation.
  std::vector<column_stats> columns;
  std::vector<bayesr_sample> trace;   ///< every thin-th iteration, burn-in included
  std::size_t posterior_samples = 0;  ///< kept iterations after burn-in
  /// Per selected column, over the posterior samples, on the standardised scale: the
  /// fraction with a non-zero effect, the mean and the SD of the effect.
  std::vector<double> inclusion, beta_mean, beta_sd;
  std::size_t burnin = 0;        ///< the options' burn-in: the trace up to it is not posterior
  std::size_t classes = 0;       ///< mixture classes, the zero class included (entries of each pi)
  std::size_t resumed_from = 0;  ///< the checkpoint's iteration, when resumed
  bayesr_execution execution = bayesr_execution::pipelined;  ///< the mode used (never automatic)
  /// The passes of this run (not of the iterations before a resume).
  double seconds = 0, compute_busy_seconds = 0;
  std::size_t iterations_run = 0;
  std::size_t live_list_bytes = 0;  ///< the memory the lists of live bytes took
};

/// Throws colflow::error invalid_argument naming the first bad option (what bayesr() checks
/// first; callers can check before reading their inputs).
void check_bayesr_options(const bayesr_options& options);

/// Runs the chain. `phenotype` has one value per store row (NaN: missing). After each
/// iteration, `analysis.on_step` (when set) hears "chain" with the iteration, the chain's
/// length, the checkpoint's iteration when resumed and the seconds of this run's iterations;
/// `analysis.progress` hears the statistics pass ("statistics") and each iteration's pass
/// ("iteration 5/1000"). Throws
/// colflow::error: invalid_argument for bad options, fewer than 3 samples with a value, a
/// constant phenotype, or a checkpoint of another run; not_found, bad_magic,
/// unsupported_version, corrupt_header or checksum_mismatch (naming the file) for a checkpoint
/// that is absent, damaged or truncated; the stream's and the file system's errors otherwise.
bayesr_result bayesr(const store& s, const selection& sel, std::span<const double> phenotype,
                     const bayesr_options& options, const analysis_options& analysis = {});

/// The posterior summary of the chain that `colflow bayesr` logs and writes to
/// PREFIX.summary.tsv: each trace quantity over the trace's iterations after the burn-in (the
/// posterior samples), as analysis/chain_diagnostics.hpp summarises a chain (NaN for what is
/// undefined: everything without kept iterations, the ESS below 4, Geweke's z below 20).
struct bayesr_summary {
  std::size_t kept = 0;  ///< trace iterations after the burn-in
  chain_summary h2;
  chain_summary sigma2_g;
  chain_summary sigma2_e;
  chain_summary nonzero;  ///< of the number of non-zero effects
};

/// Summarises the kept iterations of a chain's trace.
bayesr_summary summarize(const bayesr_result& result);

/// The posterior of each effect on the phenotype's original scale: per A1 allele (per unit of a
/// dense column), the standardised effect × phenotype SD / column SD (0 for a constant column).
struct bayesr_per_unit_effects {
  std::vector<double> beta_mean;  ///< per selected column: BETA_PER_UNIT
  std::vector<double> beta_sd;    ///< per selected column: BETA_PER_UNIT_SD
};

/// The effects of `result` per A1 allele (per unit).
bayesr_per_unit_effects per_unit_effects(const bayesr_result& result);

/// The result files of `colflow bayesr` for an output prefix (the prefix followed by the
/// text, not a path operation). The chain's checkpoint, PREFIX.checkpoint for the command, is
/// bayesr_options::checkpoint, written by the chain itself.
struct bayesr_files {
  /// PREFIX.trace.tsv: ITER MU SIGMA2_G SIGMA2_E H2 VAR_G NONZERO PI_0..PI_K per trace entry.
  std::filesystem::path trace;
  /// PREFIX.effects.tsv: ID A1 PIP BETA BETA_SD BETA_PER_UNIT BETA_PER_UNIT_SD per selected
  /// column (BETA and BETA_SD standardised, the others from per_unit_effects()).
  std::filesystem::path effects;
  /// PREFIX.summary.tsv: PARAMETER MEAN SD ESS GEWEKE_Z KEPT, a row each for H2, SIGMA2_G,
  /// SIGMA2_E and NONZERO: summarize() (NA for NaN).
  std::filesystem::path summary;
};

/// The names write_bayesr() uses.
bayesr_files bayesr_output_files(const std::filesystem::path& prefix);

/// Writes the trace, effect and summary tables of the chain bayesr(s, sel, ...) returned. Each is a
/// staged output (io/staged_output.hpp), complete under its name or absent. `digits` are the
/// significant digits of the numbers (1 to 17). Returns the files written. Throws
/// colflow::error invalid_argument for digits out of range or a result of another selection;
/// the file system's errors, naming the file.
bayesr_files write_bayesr(const store& s, const selection& sel, const bayesr_result& result,
                          const std::filesystem::path& prefix, int digits = 6);

}  // namespace colflow
