// colflow sbayesr: SBayesR from GWAS summary statistics and an LD reference.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>

#include "colflow/analysis/gwas_summary.hpp"
#include "colflow/analysis/ld_columns_in_memory.hpp"
#include "colflow/analysis/ld_matrix_columns.hpp"
#include "colflow/analysis/sbayesr.hpp"
#include "colflow/error.hpp"
#include "commands.hpp"
#include "memory_usage.hpp"
#include "processes.hpp"
#include "validators.hpp"

namespace colflow::cli {
namespace {

struct sbayesr_flags {
  std::string gwas, ldm, out;
  unsigned threads = 0;
  std::uint64_t memory_mib = 0;  // 0: the default
  bool quiet = false;
  sbayesr_options chain;
  ld_options window;
  CLI::Option* window_option = nullptr;  // --ld-window and --ld-window-kb, to tell if given
  CLI::Option* window_kb_option = nullptr;
};

void declare_options(CLI::App& app, sbayesr_flags* o) {
  o->chain.checkpoint_every = 100;
  o->window.window = 1000;
  o->window.window_kb = 1000;
  app.add_option("--gwas", o->gwas,
                 "GWAS summary statistics in GCTB's .ma form: a header naming SNP A1 A2 freq b\n"
                 "se p N (any order, any case), one line per variant")
      ->required();
  app.add_option("--ldm", o->ldm,
                 "The LD reference: an LD store (colflow ld --make-ldm), GCTB's .ldm.full,\n"
                 ".ldm.band or .ldm.sparse (prefix, .info or .bin), or colflow's .ldband, each\n"
                 "streamed column by column; or a genotype or dosage store, whose LD is computed\n"
                 "in memory over all its samples in windows of --ld-window variants and\n"
                 "--ld-window-kb kb")
      ->required();
  app.add_option("--out", o->out,
                 "Output prefix: PREFIX.parRes, PREFIX.snpRes (GCTB's tables),\n"
                 "PREFIX.checkpoint")
      ->check(output_path())
      ->required();
  app.add_option("--iterations", o->chain.iterations, "Length of the chain (default 1000)")
      ->check(positive_integer());
  app.add_option("--burnin", o->chain.burnin,
                 "Iterations left out of the posterior summaries (default 200)")
      ->check(non_negative_integer());
  app.add_option("--seed", o->chain.seed, "Seed of every random draw (default 1)")
      ->check(non_negative_integer());
  app.add_option("--gamma", o->chain.gamma,
                 "Class variances as multiples of sigma2_beta, the zero class first\n"
                 "(default 0,0.001,0.01,0.1,1, GCTB's)")
      ->delimiter(',');
  app.add_option("--pi", o->chain.pi,
                 "Starting mixture weights, one per class, summing to 1\n"
                 "(default GCTB's, 0.95,0.02,0.01,0.01,0.01)")
      ->delimiter(',');
  app.add_option("--hsq", o->chain.h2_start,
                 "Starting h2 (default GCTB's, 0.1): sigma2_beta and sigma2_e start from it,\n"
                 "and their priors' scales are half those starts, as in GCTB");
  app.add_option("--checkpoint-every", o->chain.checkpoint_every,
                 "Save the chain to PREFIX.checkpoint every N iterations and at the end\n"
                 "(default 100; 0: at the end only)")
      ->check(non_negative_integer());
  app.add_flag("--resume", o->chain.resume,
               "Continue the chain saved in PREFIX.checkpoint (same inputs and settings;\n"
               "--iterations may grow); the result is the same as one uninterrupted run");
  o->window_option =
      app.add_option(
             "--ld-window", o->window.window,
             "LD computed in memory (a genotype store as --ldm): pairs at most N - 1 variants\n"
             "apart (default 1000)")
          ->check(positive_integer());
  o->window_kb_option =
      app.add_option("--ld-window-kb", o->window.window_kb,
                     "LD computed in memory: pairs at most KB kb apart (default 1000)")
          ->check(positive_number());
  app.add_option("--memory", o->memory_mib,
                 "MiB of LD columns read from an LD matrix on disk that the chain may keep\n"
                 "between iterations (default: half the available memory, at most 1024); past\n"
                 "it, columns are read again when needed. Never changes a result")
      ->check(integer_range(1, std::uint64_t{1} << 40));
  app.add_option("--threads", o->threads, "Worker threads (default: all cores)")
      ->check(non_negative_integer(std::numeric_limits<unsigned>::max()));
  app.add_flag("--quiet", o->quiet, "No progress and no summary on stderr");
  app.footer(
      "SBayesR (GCTB 2.05's --sbayes R): BayesR from summary statistics, the effects of\n"
      "standardised genotypes 0 or N(0, gamma_k sigma2_beta), the residual kept in\n"
      "summary-statistics space and updated from each variant's LD column. The statistics are\n"
      "aligned to the reference's alleles (swapped A1/A2 flipped; other alleles and absent\n"
      "variants dropped and counted). The same seed gives the same chain whatever --threads\n"
      "or --resume, and on any number of MPI ranks (mpirun -np R colflow sbayesr ...: blocks of\n"
      "128 variants dealt out to the ranks in turn, rank 0 writes; --memory is per rank).\n"
      "PREFIX.parRes: posterior mean and SD of NumSnp1..K SigmaSq ResVar GenVar hsq.\n"
      "PREFIX.snpRes: Id Name Chrom Position A1 A2 A1Frq A1Effect SE PIP LastSampleEff, which\n"
      "`colflow score --score PREFIX.snpRes` reads directly.");
}

// A line on stderr unless --quiet.
struct logger {
  bool quiet;
  void log(const std::string& line) const {
    if (!quiet) std::fprintf(stderr, "sbayesr: %s\n", line.c_str());
  }
};

void log_alignment(const logger& run, const std::string& file, const aligned_gwas& a) {
  char line[400];
  std::snprintf(line, sizeof line,
                "%s: %zu variants; %zu matched to the LD reference (%zu flipped), %zu dropped "
                "with other alleles, %zu absent from it; %zu reference variants without "
                "statistics; N %.0f to %.0f (median %.0f)",
                file.c_str(), a.gwas_variants, a.matched, a.flipped, a.allele_mismatch, a.absent,
                a.reference_only, a.n_min, a.n_max, a.n_median);
  run.log(line);
}

// The reference --ldm names: a store of genotypes or dosages (its LD computed in memory, in one
// pass), or an LD matrix on disk (an LD store, GCTB's files, an .ldband), streamed. Either way
// every frame's checksum is checked as it is read: each is read once or a few times, and a
// damaged value would reach every effect of the chain.
std::unique_ptr<ld_columns> open_reference(const sbayesr_flags& o) {
  if (std::filesystem::is_directory(o.ldm)) {
    const store s = store::open(o.ldm, {access_mode::mmap, true});
    analysis_options verified;
    verified.stream.verify_checksums = true;
    if (holds_variants(s.type()))
      return std::make_unique<ld_columns_in_memory>(s, selection::all(s), o.window,
                                                    o.ldm + " (LD in memory)", verified);
  }
  // A matrix on disk has its windows: a window given for one would be ignored.
  for (const CLI::Option* given : {o.window_option, o.window_kb_option})
    if (given && given->count() > 0)
      throw error(errc::invalid_argument,
                  given->get_name() + ": applies to a genotype or dosage store as --ldm (its LD " +
                      "computed in memory), not to the LD matrix " + o.ldm);
  return std::make_unique<ld_matrix_columns>(ld_matrix::open(o.ldm), o.ldm);
}

int run_sbayesr(const sbayesr_flags& o) {
  sbayesr_options chain = o.chain;
  chain.checkpoint = o.out + ".checkpoint";
  check_sbayesr_options(chain);
  const gwas_summary gwas = read_gwas_summary(o.gwas);
  const auto threads = limit_threads(o.threads);
  const logger run{o.quiet || !is_writer()};
  const std::unique_ptr<ld_columns> reference = open_reference(o);
  ld_columns& ld = *reference;
  const aligned_gwas aligned = align_gwas(gwas, ld.variants(), ld.description());
  log_alignment(run, o.gwas, aligned);
  chain.ld_cache_bytes = o.memory_mib << 20;
  if (o.memory_mib == 0) {
    const std::uint64_t half = available_memory() / 2, most = std::uint64_t{1} << 30;
    chain.ld_cache_bytes = half != 0 ? std::min(half, most) : most;
  }
  if (!ld.resident())
    run.log("LD columns read when an effect changes, up to " +
            std::to_string(chain.ld_cache_bytes >> 20) + " MiB of them kept in memory (--memory)");
  analysis_options analysis;
  analysis.processes = run_processes();
  const sbayesr_result r = sbayesr(ld, aligned, chain, analysis);
  if (!is_writer()) return 0;  // rank 0 writes the results of every rank (the same bits)
  if (r.resumed_from > 0) run.log("resumed from iteration " + std::to_string(r.resumed_from));
  const sbayesr_files files = write_sbayesr(ld, aligned, r, o.out);
  double h2 = 0, kept = 0;
  for (const sbayesr_sample& s : r.trace)
    if (s.iteration > r.burnin) h2 += s.h2, kept += 1;
  char line[200];
  std::snprintf(line, sizeof line, "posterior mean h2 %.4f over %.0f iterations after the burn-in",
                h2 / kept, kept);
  run.log(line);
  // "wrote A, B and C", appended: a chain of + on literals trips GCC 12's false -Wrestrict.
  std::string wrote = "wrote ";
  wrote.append(files.parameters.string())
      .append(", ")
      .append(files.effects.string())
      .append(" and ")
      .append(chain.checkpoint.string());
  run.log(wrote);
  return 0;
}

}  // namespace

command add_sbayesr(CLI::App& app) {
  auto o = std::make_shared<sbayesr_flags>();
  declare_options(app, o.get());
  return [o] { return run_sbayesr(*o); };
}

}  // namespace colflow::cli
