// colflow simulate: simulated PLINK genotypes, a phenotype and the true effects.
#include <cstdio>
#include <iostream>
#include <optional>

#include "colflow/colflow.hpp"
#include "colflow/preprocess/simulate.hpp"
#include "commands.hpp"
#include "progress.hpp"
#include "validators.hpp"

namespace colflow::cli {

command add_simulate(CLI::App& app) {
  struct options {
    preprocess::simulate_options sim;
    std::uint64_t causal = 0;
    unsigned threads = 0;
    bool quiet = false;
    std::string out;
  };
  auto o = std::make_shared<options>();
  // CLI11 would otherwise wrap "-5" around into a huge unsigned value.
  const CLI::Validator not_negative(
      [](std::string& value) {
        return value.find('-') == std::string::npos ? std::string()
                                                    : "must not be negative (got " + value + ")";
      },
      "", "not negative");
  app.add_option("--samples", o->sim.samples, "Number of samples N (>= 1)")
      ->required()
      ->check(not_negative);
  app.add_option("--variants", o->sim.variants, "Number of variants M (>= 1)")
      ->required()
      ->check(not_negative);
  auto* causal = app.add_option("--causal", o->causal,
                                "Number of causal variants K <= M, chosen uniformly [default: "
                                "min(100, M); 0 if --h2 0]")
                     ->check(not_negative);
  app.add_option("--h2", o->sim.h2, "Target heritability, 0 <= H < 1 (0: no genetic effect)")
      ->capture_default_str();
  app.add_option("--missing", o->sim.missing_rate,
                 "Probability that a genotype call is missing, 0 <= R < 1")
      ->capture_default_str();
  app.add_option("--maf-min", o->sim.maf_min, "Smallest minor allele frequency")
      ->capture_default_str();
  app.add_option("--maf-max", o->sim.maf_max, "Largest minor allele frequency (<= 0.5)")
      ->capture_default_str();
  app.add_option("--seed", o->sim.seed, "Random seed; the output depends only on the options")
      ->capture_default_str()
      ->check(not_negative);
  app.add_option("--chromosomes", o->sim.chromosomes,
                 "Split the variants into C chromosomes of consecutive variants (1 <= C <= 22)")
      ->capture_default_str()
      ->check(not_negative);
  app.add_option("--populations", o->sim.populations,
                 "P populations of consecutive samples, each with its own allele frequencies")
      ->capture_default_str()
      ->check(not_negative);
  app.add_option("--fst", o->sim.fst, "Divergence F of the populations' frequencies, 0 < F < 1")
      ->capture_default_str();
  app.add_option("--population-shift", o->sim.population_shift,
                 "Add D k to the phenotype of population k (a confounder of structure)")
      ->capture_default_str();
  app.add_option("--relatives", o->sim.relatives,
                 "R parent-offspring pairs (samples 4b, 4b+1 for b < R), not in the .fam")
      ->capture_default_str()
      ->check(not_negative);
  app.add_option("--threads", o->threads, "Worker threads [default: all cores]")
      ->check(not_negative);
  app.add_flag("--quiet", o->quiet, "No progress display and no summary line");
  app.add_option("--out", o->out, "Output prefix")->check(output_path())->required();
  app.footer(
      "Writes PREFIX.bed/.bim/.fam (PLINK 1 binary, SNP-major; samples s1..sN, variants\n"
      "snp1..snpM on chromosome 1 unless --chromosomes), PREFIX.phen (FID IID value, no\n"
      "header) and PREFIX.truth.tsv, replacing files of those names; each is written under a\n"
      "hidden temporary name beside it and renamed when complete.\n"
      "\n"
      "Model: MAF log-uniform on [maf-min, maf-max] (density ~ 1/MAF, the neutral site-\n"
      "frequency spectrum: half the variants below 0.05 by default), A1 the minor allele with\n"
      "probability 1/2, Hardy-Weinberg genotypes, each call missing with probability R.\n"
      "K causal variants get standardised effects b ~ N(0,1), per-A1-allele effects\n"
      "BETA = b / sqrt(2p(1-p)); g_i = sum BETA_j (x_ij - 2p_j) (missing calls count as 2p_j);\n"
      "y = g + e, e ~ N(0, var_e) with var_e = var_g (1 - H) / H from the realised var_g.\n"
      "\n"
      "PREFIX.truth.tsv: '# key value' lines (seed, h2_target, h2_realised = var_g / var_y,\n"
      "var_g, var_e, var_y, missing_rate_observed, ...), then a header line and one line per\n"
      "causal variant: ID A1 BETA A1_FREQ A2 STD_BETA A1_FREQ_OBSERVED (A1_FREQ is the\n"
      "frequency the genotypes were drawn from, A1_FREQ_OBSERVED the one in the sample).\n"
      "Read it with e.g. pandas.read_csv(path, sep='\\t', comment='#').\n"
      "\n"
      "A study's shape (all off by default): --chromosomes C splits the variants into C\n"
      "runs of consecutive variants on chromosomes 1..C; --populations P makes P populations\n"
      "of consecutive samples (FID pop1..popP) whose A1 frequencies scatter around p_j with\n"
      "variance F p_j (1 - p_j) (--fst F, Balding-Nichols' moments, a truncated normal);\n"
      "--population-shift D adds D k to the phenotype of population k; --relatives R makes\n"
      "samples 4b+1 the offspring of samples 4b for b < R (one allele of the parent's\n"
      "genotype, one drawn), unrecorded in the .fam, as cryptic relatedness.\n"
      "\n"
      "Output is identical for a given seed whatever --threads (counter-based Philox4x32-10).");
  return [o, causal] {
    preprocess::simulate_options sim = o->sim;
    sim.out = o->out;
    if (causal->count() > 0) sim.causal = o->causal;
    sim.threads = o->threads;
    const auto limit = limit_threads(o->threads);

    progress_line line("simulate", !o->quiet);
    const preprocess::simulate_result r =
        preprocess::simulate(sim, [&line](const preprocess::simulate_progress& p) {
          line.update(p.variants_done, p.variants_total, "variants",
                      static_cast<double>(p.bytes_written), p.seconds);
        });
    line.finish();
    for (const std::string& w : r.warnings) std::cerr << "colflow: warning: " << w << "\n";
    if (!o->quiet) {
      char numbers[160];
      std::snprintf(numbers, sizeof numbers, "%zu causal, h2 %.4g (realised %.4g) in %.2f s",
                    r.causal.size(), r.h2_target, r.h2_realised, r.seconds);
      std::cout << "wrote " << o->out << ".{bed,bim,fam,phen,truth.tsv}: " << r.samples
                << " samples x " << r.variants << " variants ("
                << human_bytes(static_cast<double>(r.bed_bytes)) << " .bed), " << numbers << "\n";
    }
    return 0;
  };
}

}  // namespace colflow::cli
