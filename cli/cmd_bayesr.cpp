// colflow bayesr: the BayesR Gibbs sampler over a store.
#include <cstdio>
#include <string>
#include <vector>

#include "analysis_setup.hpp"
#include "colflow/analysis/bayesr.hpp"
#include "colflow/analysis/phenotype.hpp"
#include "colflow/error.hpp"
#include "commands.hpp"
#include "processes.hpp"
#include "validators.hpp"

namespace colflow::cli {
namespace {

struct bayesr_flags {
  analysis_flags common;
  bayesr_options chain;
  std::string pheno, pheno_name, out, mode = "auto";
  std::vector<double> g_prior, e_prior;
  const CLI::Option* checkpoint_every = nullptr;
};

// The command's options and help, into `o`.
void declare_options(CLI::App& app, bayesr_flags* o) {
  o->chain.checkpoint_every = 100;
  add_analysis_flags(app, o->common);
  app.add_option("--pheno", o->pheno,
                 "Phenotype file: FID IID v1 ... (or #FID IID / #IID headers, .psam, .fam: "
                 "docs/ANALYSES.md; NA and -9 missing)")
      ->required();
  app.add_option("--pheno-name", o->pheno_name, "The phenotype column to fit (default: the first)");
  app.add_option("--out", o->out,
                 "Output prefix: PREFIX.trace.tsv, PREFIX.effects.tsv, PREFIX.summary.tsv,\n"
                 "PREFIX.checkpoint")
      ->check(output_path())
      ->required();
  app.add_option("--iterations", o->chain.iterations, "Length of the chain (default 1000)")
      ->check(positive_integer());
  app.add_option("--burnin", o->chain.burnin,
                 "Iterations left out of the posterior summaries (default 200)")
      ->check(non_negative_integer());
  app.add_option("--thin", o->chain.thin, "Keep every T-th iteration (default 1)")
      ->check(positive_integer());
  app.add_option("--seed", o->chain.seed, "Seed of every random draw (default 1)")
      ->check(non_negative_integer());
  app.add_option("--mixture", o->chain.mixture,
                 "Variances of the non-zero classes as fractions of sigma2_G, increasing\n"
                 "(default 0.0001,0.001,0.01)")
      ->delimiter(',')
      ->check(positive_number());
  app.add_option("--dirichlet-prior", o->chain.dirichlet_alpha,
                 "Dirichlet prior count of every class (default 1)")
      ->check(positive_number());
  app.add_option("--sigma2-g-prior", o->g_prior,
                 "Scaled inverse chi-square prior of sigma2_G: DF,SCALE (default 0.0001,0.0001)")
      ->delimiter(',')
      ->expected(2)
      ->check(positive_number());
  app.add_option("--sigma2-e-prior", o->e_prior,
                 "Scaled inverse chi-square prior of sigma2_E: DF,SCALE (default 0.0001,0.0001)")
      ->delimiter(',')
      ->expected(2)
      ->check(positive_number());
  o->checkpoint_every =
      app.add_option("--checkpoint-every", o->chain.checkpoint_every,
                     "Save the chain to PREFIX.checkpoint every N iterations and at the end\n"
                     "(default 100; 0: at the end only)")
          ->check(non_negative_integer());
  app.add_option("--sync-every", o->chain.sync_every,
                 "On MPI ranks: split the columns instead of the samples (hydra's scheme), each\n"
                 "rank sampling its own against its own copy of the residual, exchanging the\n"
                 "changed effects every K of its columns. Fewer collectives, but the chain\n"
                 "depends on the rank count and K (docs/SCALING.md); no checkpoints. Default 0:\n"
                 "the exact mode, the single process's chain")
      ->check(non_negative_integer());
  app.add_flag("--resume", o->chain.resume,
               "Continue the chain saved in PREFIX.checkpoint (same data and settings;\n"
               "--iterations may grow); the result is the same as one uninterrupted run");
  app.add_option(
         "--mode", o->mode,
         "How each iteration reads the columns: auto (default: sequential when nothing\n"
         "needs decoding, i.e. uncompressed genotype frames, else pipelined), pipelined\n"
         "(decode ahead in parallel), sequential (decode a column, then compute it), in-memory\n"
         "(decode everything once). In every mode each column's products and updates use\n"
         "--threads threads on sample blocks; pipelined and sequential give the same chain")
      ->check(one_of({"auto", "pipelined", "sequential", "in-memory"}));
  app.footer(
      "BayesR: y = mu + Zb + e on the standardised columns Z and the standardised phenotype of\n"
      "the samples used; each effect is 0 or N(0, gamma_k sigma2_G) with mixture weights pi\n"
      "(Dirichlet prior); sigma2_G, sigma2_E scaled inverse chi-square; the columns are visited\n"
      "in a new random order every iteration. The same seed gives the same chain whatever\n"
      "--threads, --in-flight or --resume, and on any number of MPI ranks (mpirun -np R\n"
      "colflow bayesr ...: the samples are split among the ranks, rank 0 writes).\n"
      "PREFIX.trace.tsv: ITER MU SIGMA2_G SIGMA2_E H2 VAR_G NONZERO PI_0.. per kept iteration\n"
      "(VAR_G: variance of the genetic values Zb). PREFIX.effects.tsv: ID A1 PIP BETA BETA_SD\n"
      "(standardised scale) BETA_PER_UNIT BETA_PER_UNIT_SD (phenotype units per A1 allele, or\n"
      "per unit of a dense column), posterior over the kept iterations after --burnin.\n"
      "PREFIX.summary.tsv: PARAMETER MEAN SD ESS GEWEKE_Z KEPT for H2, SIGMA2_G, SIGMA2_E and\n"
      "NONZERO over those iterations (ESS: effective sample size; NA where undefined).");
}

// The chain's options completed from the flags (priors, mode, checkpoint), and checked.
bayesr_options chain_options(const bayesr_flags& o) {
  bayesr_options chain = o.chain;
  if (!o.g_prior.empty()) {
    chain.sigma2_g_df = o.g_prior[0];
    chain.sigma2_g_scale = o.g_prior[1];
  }
  if (!o.e_prior.empty()) {
    chain.sigma2_e_df = o.e_prior[0];
    chain.sigma2_e_scale = o.e_prior[1];
  }
  chain.execution = o.mode == "sequential"  ? bayesr_execution::sequential
                    : o.mode == "in-memory" ? bayesr_execution::in_memory
                    : o.mode == "pipelined" ? bayesr_execution::pipelined
                                            : bayesr_execution::automatic;
  chain.checkpoint = o.out + ".checkpoint";
  // A --sync-every chain depends on the ranks and writes no checkpoint (its default period
  // is dropped; an explicit one, or --resume, is refused by check_bayesr_options).
  if (chain.sync_every > 0 && o.checkpoint_every->count() == 0) chain.checkpoint_every = 0;
  check_bayesr_options(chain);
  return chain;
}

// The posterior h² and the chain's speed, in the log.
void report(analysis_run& run, const bayesr_result& r) {
  if (const bayesr_summary s = summarize(r); s.kept > 0) {
    char line[160];
    std::snprintf(
        line, sizeof line,
        "posterior mean h2 %.4f (sd %.4f), %.1f non-zero effects, over %zu kept iterations",
        s.h2.mean, s.h2.sd, s.nonzero.mean, s.kept);
    run.log(line);
    // NaN (too short a chain) prints as nan: the diagnostics say they are undefined.
    std::snprintf(line, sizeof line,
                  "h2 chain diagnostics: effective sample size %.1f, Geweke z %.2f (first 10%% "
                  "against last 50%% of the kept iterations)",
                  s.h2.ess, s.h2.geweke_z);
    run.log(line);
  }
  if (r.live_list_bytes > 0)
    run.log("columns' lists of live bytes: " +
            std::to_string((r.live_list_bytes + (1 << 19)) >> 20) + " MiB in memory");
  if (r.iterations_run > 0) {
    char line[160];
    const char* mode = r.execution == bayesr_execution::sequential  ? "sequential"
                       : r.execution == bayesr_execution::in_memory ? "in memory"
                                                                    : "pipelined";
    std::snprintf(line, sizeof line,
                  "%zu iterations (%s) in %.2f s: %.2f ms per iteration, compute busy %.0f%%",
                  r.iterations_run, mode, r.seconds,
                  1e3 * r.seconds / static_cast<double>(r.iterations_run),
                  r.seconds > 0 ? 100.0 * r.compute_busy_seconds / r.seconds : 0.0);
    run.log(line);
  }
}

int run_bayesr(const bayesr_flags& o) {
  const bayesr_options chain = chain_options(o);
  analysis_run run("bayesr", o.common);
  const store& s = run.source();
  std::vector<std::string> names;
  if (!o.pheno_name.empty()) names.push_back(o.pheno_name);
  const phenotype_table pheno = read_phenotypes(o.pheno, s.samples(), names, "PHENO");
  std::vector<double> y(pheno.values.col(0).data(),
                        pheno.values.col(0).data() + pheno.values.rows());

  // The statistics pass has a progress line of its own; the chain's passes (one per
  // iteration, short and many) show as one line in iterations.
  run.show_passes({"statistics"});
  const bayesr_result r = bayesr(s, run.selected(), y, chain, run.options());
  if (!is_writer()) return 0;  // rank 0 writes the results of every rank (the same bits)
  if (r.resumed_from > 0) run.log("resumed from iteration " + std::to_string(r.resumed_from));
  run.log(pheno.names[0] + ": " + std::to_string(r.samples) + " samples used");
  const bayesr_files files = write_bayesr(s, run.selected(), r, o.out, o.common.digits);
  report(run, r);
  const bool checkpointed = chain.sync_every == 0 || run_processes() == nullptr;
  std::vector<std::string> written = {files.trace.string(), files.effects.string(),
                                      files.summary.string()};
  if (checkpointed) written.push_back(chain.checkpoint.string());
  // "wrote A, B and C", appended: a chain of + on literals trips GCC 12's false -Wrestrict.
  std::string line = "wrote ";
  for (std::size_t k = 0; k < written.size(); ++k)
    line.append(k == 0 ? "" : k + 1 < written.size() ? ", " : " and ").append(written[k]);
  run.log(line);
  return 0;
}

}  // namespace

command add_bayesr(CLI::App& app) {
  auto o = std::make_shared<bayesr_flags>();
  declare_options(app, o.get());
  return [o] { return run_bayesr(*o); };
}

}  // namespace colflow::cli
