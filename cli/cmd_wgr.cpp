// colflow wgr: whole-genome regression (regenie's step 1), LOCO predictions for assoc --loco.
#include <cstdio>
#include <thread>

#include "analysis_setup.hpp"
#include "colflow/analysis/case_control.hpp"
#include "colflow/analysis/phenotype.hpp"
#include "colflow/analysis/wgr.hpp"
#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"
#include "commands.hpp"
#include "memory_usage.hpp"
#include "processes.hpp"
#include "validators.hpp"

namespace colflow::cli {
namespace {

struct wgr_flags {
  analysis_flags common;
  std::string pheno, covar, out, lowmem_prefix;
  std::vector<std::string> pheno_names, covar_names;
  bool quantile_normalize = false, quantitative = false, binary = false, zero_one = false,
       lowmem = false, loocv = false, l1_full = false, allow_short_chromosomes = false;
  std::size_t block_size = 1000, folds = 5, level0 = 5, level1 = 5;
  std::uint64_t memory_mib = 0;
  const CLI::Option* folds_flag = nullptr;
};

std::string format(const char* pattern, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, pattern, v);
  return buf;
}

// The run's sizes and memory, and the refusal of a run that would not fit.
void check_memory(analysis_run& run, const wgr_plan& plan, std::uint64_t limit) {
  const auto bytes = [](std::uint64_t b) { return human_bytes(static_cast<double>(b)); };
  run.log(std::to_string(plan.samples) + " samples, " + std::to_string(plan.traits) +
          " trait(s), " + std::to_string(plan.columns) + " columns in " +
          std::to_string(plan.blocks) + " blocks, " + std::to_string(plan.predictors) +
          " level-1 predictors; memory " + bytes(plan.peak_bytes()) + " (predictors " +
          bytes(plan.predictor_bytes) + ", level 0 " + bytes(plan.level0_bytes) + ", level 1 " +
          bytes(plan.level1_bytes) + ", other " + bytes(plan.fixed_bytes) + ")" +
          (plan.spill_bytes != 0 ? ", predictors spilled to disk: " + bytes(plan.spill_bytes)
                                 : std::string()) +
          (limit != 0 ? ", limit " + bytes(limit) : std::string()));
  if (limit != 0 && plan.peak_bytes() > limit)
    throw error(errc::invalid_argument,
                "wgr needs " + bytes(plan.peak_bytes()) + ", more than the limit of " +
                    bytes(limit) +
                    " (--memory): the predictors take traits x samples x predictors x 8 bytes "
                    "(samples x predictors x 8 with --lowmem); run fewer traits at once, or raise "
                    "--block-size to have fewer predictors");
}

// The command's options and help, into `o`.
void declare_options(CLI::App& app, wgr_flags* o) {
  add_analysis_flags(app, o->common);
  app.add_option("--pheno", o->pheno, "Trait file, as assoc reads it (docs/ANALYSES.md)")
      ->required();
  app.add_option("--pheno-name", o->pheno_names, "Trait columns to fit (default: all)");
  app.add_option("--covar", o->covar, "Covariate file, same format");
  app.add_option("--covar-name", o->covar_names, "Covariate columns to use (default: all)");
  app.add_flag("--pheno-quantile-normalize", o->quantile_normalize,
               "Replace each trait by its rank-based inverse normal transform, as assoc does");
  app.add_flag("--quantitative,--qt", o->quantitative,
               "Fit every trait as quantitative, also those that look case/control");
  app.add_flag("--binary,--bt", o->binary, "Fit every trait as case/control");
  app.add_flag("--1", o->zero_one,
               "Case/control traits are coded 0 control, 1 case (-9/NA missing), as PLINK's --1; "
               "by default 1 control, 2 case, 0/-9/NA missing");
  app.add_option("--block-size,--bsize", o->block_size,
                 "Columns per level-0 block, within a chromosome")
      ->check(integer_range(1, std::size_t{1} << 20))
      ->capture_default_str();
  app.add_flag("--allow-short-chromosomes", o->allow_short_chromosomes,
               "Accepted for older command lines; changes nothing: a chromosome with fewer columns "
               "than one block is always one smaller block, as in regenie");
  o->folds_flag =
      app.add_option("--folds,--cv", o->folds,
                     "Folds of the cross-validation (consecutive samples). Given, it holds even "
                     "where leave-one-out would be chosen")
          ->check(integer_range(2, 1000))
          ->capture_default_str();
  app.add_flag("--loocv", o->loocv,
               "Leave-one-out cross-validation: each sample its own fold. Chosen by itself, as "
               "regenie does, when a case/control trait has fewer than 5000 samples and "
               "--folds is not given");
  app.add_flag("--l1-full", o->l1_full,
               "With --loocv: a case/control trait's LOCO predictions from the level-1 fit on "
               "every sample, not from each sample's leave-one-out fit");
  app.add_option("--l0", o->level0, "Shrinkage values of level 0 (heritabilities 0.01 ... 0.99)")
      ->check(integer_range(2, 100))
      ->capture_default_str();
  app.add_option("--l1", o->level1, "Shrinkage values of level 1, likewise")
      ->check(integer_range(2, 100))
      ->capture_default_str();
  app.add_flag("--lowmem", o->lowmem,
               "Keep the level-0 predictors in a scratch file beside the output (removed at the "
               "end, also after a crash) rather than in memory: memory then holds one trait's at "
               "a time. Chosen by itself when the run would not fit in memory otherwise");
  app.add_option("--lowmem-prefix", o->lowmem_prefix,
                 "With --lowmem: put the scratch file in this prefix's folder (as regenie's)");
  app.add_option("--memory", o->memory_mib,
                 "MiB the run may use (default: half the available memory); a run that needs "
                 "more is refused before it starts")
      ->check(integer_range(1, std::uint64_t{1} << 40));
  app.add_option("--out", o->out,
                 "Output prefix: PREFIX_<i>.loco per trait, PREFIX_pred.list, PREFIX.wgr.tsv")
      ->check(output_path())
      ->required();
  app.footer(
      "Step 1 of regenie (Mbatchou et al. 2021): covariates projected out of traits and\n"
      "columns; level 0, ridge regressions of blocks of columns within each chromosome at\n"
      "shrinkages M(1 - h2)/h2, fitted on all folds but one and predicting that one; level 1, a\n"
      "ridge regression of the trait on those predictions (for a case/control trait a ridge\n"
      "logistic regression with the covariates' fit as offset), its shrinkage chosen by\n"
      "cross-validation; then, per chromosome, the prediction from every other chromosome.\n"
      "With leave-one-out (--loocv; by itself below 5000 samples with a case/control trait, as\n"
      "regenie) each sample's predictions come from fits without it, derived exactly from the\n"
      "fit on every sample (one Newton step for a case/control trait's level 1).\n"
      "A trait whose values are all 1, 2 or missing (0/1 with --1) is case/control, as in assoc;\n"
      "--binary and --quantitative override the detection for every trait.\n"
      "Columns on chromosomes 1-22 and X are used (X counted as 23); others are left out.\n"
      "PREFIX_<i>.loco and PREFIX_pred.list are regenie's files: give the list to\n"
      "'colflow assoc --loco' or to regenie's step 2 (--pred). PREFIX.wgr.tsv lists each\n"
      "trait's level-1 shrinkages with their cross-validated loss (mean squared error, or\n"
      "-log-likelihood per sample for a case/control trait).\n"
      "With one trait, the samples without it are left out; with several, a missing value of a\n"
      "quantitative trait is the trait's mean, and a sample without a case/control status is\n"
      "left out of that trait's fits, its predictions NA (as regenie does).\n"
      "--lowmem keeps the level-0 predictors in an unnamed scratch file until level 1.");
}

// The traits with their models (case/control ones coded 0/1), checked against the options.
phenotype_table read_traits(const wgr_flags& o, analysis_run& run,
                            std::vector<bool>& case_control) {
  if (o.loocv && o.folds_flag->count() != 0)
    throw error(errc::invalid_argument, "--loocv and --folds cannot both apply");
  if (o.l1_full && !o.loocv) throw error(errc::invalid_argument, "--l1-full needs --loocv");
  phenotype_table traits = run.read_table(o.pheno, o.pheno_names, "PHENO", "trait(s)");
  const auto& kept = run.selected().row_kept;
  if (o.binary && o.quantitative)
    throw error(errc::invalid_argument, "--binary and --quantitative cannot both apply");
  const case_control_codes codes =
      o.zero_one ? case_control_codes::zero_one : case_control_codes::one_two;
  case_control.assign(traits.names.size(), false);
  for (std::size_t p = 0; p < traits.names.size(); ++p) {
    case_control[p] = o.binary || (!o.quantitative && is_case_control(traits, p, kept, codes));
    if (!case_control[p]) continue;
    run.log(traits.names[p] + ": case/control");
    phenotype_table one = select_phenotypes(traits, std::vector<std::size_t>{p});
    code_case_control(one, codes);
    traits.values.col(static_cast<Eigen::Index>(p)) = one.values.col(0);
  }
  if (o.quantile_normalize) {
    if (std::find(case_control.begin(), case_control.end(), true) != case_control.end())
      throw error(errc::invalid_argument,
                  "--pheno-quantile-normalize applies to quantitative traits only");
    quantile_normalize(traits, kept);
  }
  return traits;
}

// The model's options; the predictors go to a scratch file with --lowmem, or when the run
// would not fit in `limit` otherwise.
wgr_options model_options(const wgr_flags& o, analysis_run& run, const phenotype_table& traits,
                          const phenotype_table* covariates, std::vector<bool> case_control,
                          std::size_t threads, std::uint64_t limit) {
  wgr_options options;
  options.block_size = o.block_size;
  options.allow_short_chromosomes = o.allow_short_chromosomes;
  options.folds = o.folds;
  options.validation = o.loocv                      ? wgr_validation::leave_one_out
                       : o.folds_flag->count() != 0 ? wgr_validation::folds
                                                    : wgr_validation::automatic;
  options.level1_full_fit = o.l1_full;
  options.level0_h2 = heritability_grid(o.level0);
  options.level1_h2 = heritability_grid(o.level1);
  options.case_control = std::move(case_control);
  const std::filesystem::path spill_directory =
      directory_of(o.lowmem_prefix.empty() ? std::filesystem::path(o.out)
                                           : std::filesystem::path(o.lowmem_prefix));
  if (!o.lowmem_prefix.empty() && !o.lowmem)
    throw error(errc::invalid_argument, "--lowmem-prefix needs --lowmem");
  if (o.lowmem) {
    options.spill_directory = spill_directory;
  } else if (plan_wgr(run.source(), run.selected(), traits, covariates, options, threads)
                 .peak_bytes() > limit) {
    options.spill_directory = spill_directory;
    run.log("the predictors would not fit in memory: spilled to disk as with --lowmem");
  }
  return options;
}

// What the fit left out and chose, per trait.
void report(analysis_run& run, const wgr_options& options, const wgr_result& result) {
  if (result.left_out_columns != 0)
    run.log(std::to_string(result.left_out_columns) +
            " selected columns are not on chromosomes 1-22 or X: left out");
  if (result.constant_columns != 0)
    run.log(std::to_string(result.constant_columns) +
            " columns are constant once the covariates are projected out: they predict nothing");
  for (const wgr_trait& t : result.traits)
    run.log(t.name + ": level 1 h2 " + format("%g", options.level1_h2[t.chosen]) +
            (t.case_control ? ", cross-validated -log-likelihood per sample " +
                                  format("%.4f", t.level1_loss[t.chosen])
                            : ", cross-validated R2 " + format("%.4f", t.cv_r2)) +
            " (" + std::to_string(t.values) + " values)");
}

int run_wgr(const wgr_flags& o) {
  analysis_run run("wgr", o.common);
  const store& s = run.source();
  std::vector<bool> case_control;
  const phenotype_table traits = read_traits(o, run, case_control);
  phenotype_table covar;
  if (!o.covar.empty()) {
    covar = run.read_table(o.covar, o.covar_names, "COVAR", "covariate(s)");
  } else if (!o.covar_names.empty()) {
    throw error(errc::invalid_argument, "--covar-name needs --covar");
  }
  const phenotype_table* covariates = o.covar.empty() ? nullptr : &covar;
  const std::size_t threads = std::max<std::size_t>(
      o.common.threads != 0 ? o.common.threads : std::thread::hardware_concurrency(), 1);
  const std::uint64_t limit = o.memory_mib != 0 ? o.memory_mib << 20 : available_memory() / 2;
  const wgr_options options =
      model_options(o, run, traits, covariates, std::move(case_control), threads, limit);
  const wgr_plan plan = plan_wgr(s, run.selected(), traits, covariates, options, threads);
  if (plan.leave_one_out)
    run.log(o.loocv ? "leave-one-out cross-validation"
                    : "leave-one-out cross-validation: a case/control trait and fewer than 5000 "
                      "samples (as regenie; --folds keeps K folds)");
  check_memory(run, plan, limit);
  const wgr_result result =
      whole_genome_regression(s, run.selected(), traits, covariates, options, run.options());
  report(run, options, result);
  if (!is_writer()) return 0;
  const wgr_files files = write_wgr(s, result, o.out, o.common.digits);
  run.log("wrote " + files.pred_list.string() + ", " + files.summary.string() + " and " +
          std::to_string(files.loco.size()) + " .loco file(s)");
  return 0;
}

}  // namespace

command add_wgr(CLI::App& app) {
  auto o = std::make_shared<wgr_flags>();
  declare_options(app, o.get());
  return [o] { return run_wgr(*o); };
}

}  // namespace colflow::cli
