// colflow assoc: association scan of one or more phenotypes: least squares for quantitative
// traits, logistic regression for case/control ones, one pass per model.
#include <algorithm>
#include <optional>

#include "analysis_setup.hpp"
#include "colflow/analysis/assoc.hpp"
#include "colflow/analysis/case_control.hpp"
#include "colflow/analysis/phenotype.hpp"
#include "colflow/analysis/sex_chromosomes.hpp"
#include "colflow/analysis/wgr.hpp"
#include "colflow/error.hpp"
#include "commands.hpp"
#include "processes.hpp"
#include "validators.hpp"

namespace colflow::cli {
namespace {

// Whether `name` is in `list`.
bool listed(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

struct assoc_options {
  analysis_flags common;
  std::string pheno, covar, out, sex, loco;
  std::vector<std::string> pheno_names, covar_names, binary, quantitative;
  bool quantile_normalize = false, covar_standardize = false, zero_one = false, beta = false;
  bool score_test = false;
  std::string firth = "fallback";
  CLI::Option* firth_flag = nullptr;
  CLI::Option* binary_flag = nullptr;
  CLI::Option* quantitative_flag = nullptr;
};

// Sorts the phenotypes of `all` into case/control and quantitative ones: as --binary and
// --quantitative name them, else by their values on the selected rows.
void split_phenotypes(const assoc_options& o, const phenotype_table& all,
                      std::span<const std::uint8_t> kept, case_control_codes codes,
                      std::vector<std::size_t>& binary, std::vector<std::size_t>& quantitative) {
  // A flag given without names comes as one empty name.
  const auto names = [](const std::vector<std::string>& given) {
    std::vector<std::string> out;
    for (const std::string& n : given)
      if (!n.empty()) out.push_back(n);
    return out;
  };
  const std::vector<std::string> binary_names = names(o.binary),
                                 quantitative_names = names(o.quantitative);
  const bool all_binary = o.binary_flag->count() > 0 && binary_names.empty(),
             all_quantitative = o.quantitative_flag->count() > 0 && quantitative_names.empty();
  if (all_binary && all_quantitative)
    throw error(errc::invalid_argument,
                "--binary and --quantitative cannot both apply to every phenotype");
  for (const auto* list : {&binary_names, &quantitative_names})
    for (const std::string& name : *list)
      if (!listed(all.names, name))
        throw error(errc::invalid_argument,
                    std::string(list == &binary_names ? "--binary" : "--quantitative") + " " +
                        name + ": no such phenotype in " + o.pheno);
  for (std::size_t p = 0; p < all.names.size(); ++p) {
    const std::string& name = all.names[p];
    const bool b = listed(binary_names, name), q = listed(quantitative_names, name);
    if (b && q)
      throw error(errc::invalid_argument, name + " is named by both --binary and --quantitative");
    const bool is_binary =
        b || (!q && (all_binary || (!all_quantitative && is_case_control(all, p, kept, codes))));
    (is_binary ? binary : quantitative).push_back(p);
  }
}

// Each phenotype's LOCO predictions from the list, in the table's order. Predictions that
// colflow wgr fitted under the other model (log odds for a quantitative scan, or a
// quantitative trait's scale as a case/control offset) are refused.
std::vector<Eigen::MatrixXd> loco_of(const std::string& list, const phenotype_table& pheno,
                                     const store& s, bool case_control) {
  loco_predictions all = read_loco(list, s.samples());
  std::vector<Eigen::MatrixXd> out;
  for (const std::string& name : pheno.names) {
    const auto it = std::find(all.traits.begin(), all.traits.end(), name);
    if (it == all.traits.end())
      throw error(errc::invalid_argument, "--loco " + list + ": no line for the phenotype " + name);
    const auto t = static_cast<std::size_t>(it - all.traits.begin());
    const std::string& fitted = all.models[t];
    if (!fitted.empty() && (fitted == "binary") != case_control)
      throw error(errc::invalid_argument,
                  "--loco " + list + ": " + name + " was fitted as " + fitted +
                      " by colflow wgr (its .wgr.tsv), but is tested here as " +
                      (case_control ? "case/control" : "quantitative") + ": fit it again with --" +
                      (case_control ? "binary" : "quantitative") + ", or test it with --" +
                      (case_control ? "quantitative" : "binary"));
    out.push_back(std::move(all.values[t]));
  }
  return out;
}

// The command's options and help, into `o`.
void declare_options(CLI::App& app, assoc_options* o) {
  add_analysis_flags(app, o->common);
  app.add_option("--pheno", o->pheno,
                 "Phenotype file: FID IID v1 v2 ... (or #FID IID / #IID headers, .psam, .fam: "
                 "docs/ANALYSES.md; NA and -9 missing)")
      ->required();
  app.add_option("--pheno-name", o->pheno_names,
                 "Phenotype columns to test, by header name (default: all)");
  app.add_option("--covar", o->covar, "Covariate file, same format");
  app.add_option("--covar-name", o->covar_names, "Covariate columns to use (default: all)");
  app.add_flag("--pheno-quantile-normalize", o->quantile_normalize,
               "Replace each phenotype by its rank-based inverse normal transform over the "
               "selected samples with a value, as PLINK 2: qnorm((rank - 0.5) / n), ties averaged");
  app.add_flag("--covar-variance-standardize", o->covar_standardize,
               "Centre each covariate and scale it to variance 1 over the selected samples with a "
               "value, as PLINK 2 (the tested columns' results do not change; the fit is better "
               "conditioned)");
  o->binary_flag =
      app.add_option("--binary", o->binary,
                     "Analyse these phenotypes (all without names) as case/control traits, by "
                     "logistic regression")
          ->expected(0, -1);
  o->quantitative_flag =
      app.add_option("--quantitative", o->quantitative,
                     "Analyse these phenotypes (all without names) as quantitative traits, by "
                     "least squares")
          ->expected(0, -1);
  app.add_flag("--1", o->zero_one,
               "Case/control phenotypes are coded 0 control, 1 case (-9/NA missing), as PLINK's "
               "--1; by default 1 control, 2 case, 0/-9/NA missing");
  o->firth_flag =
      app.add_option(
             "--firth", o->firth,
             "When logistic regression uses Firth's penalised likelihood: fallback (when an "
             "allele is absent among cases or controls, or the plain fit does not converge; "
             "PLINK 2's default), always, never")
          ->check(CLI::IsMember({"fallback", "always", "never"}))
          ->capture_default_str();
  app.add_flag("--score-test", o->score_test,
               "Case/control traits: the score test of regenie's step 2 in place of the fitted\n"
               "Wald test: one pass per column at the fit without it, no Newton steps (BETA is\n"
               "one step from 0, SE 1/sqrt(score variance)); a missing call takes the column's\n"
               "mean. Not with --firth");
  app.add_flag("--beta", o->beta,
               "Case/control tables: the log odds ratio and its SE (BETA SE) in place of OR and "
               "LOG(OR)_SE");
  app.add_option(
      "--sex", o->sex,
      "Samples' sexes for X and Y tests, as plink2 --update-sex reads them: FID IID SEX\n"
      "lines, or a header #FID IID ... SEX ... / #IID ... SEX ...; SEX 1/M male, 2/F\n"
      "female, 0/NA unknown. Samples absent keep the store's sex (the .fam's)");
  app.add_option("--loco,--pred", o->loco,
                 "LOCO predictions of whole-genome regression (PREFIX_pred.list of colflow wgr\n"
                 "or regenie's step 1): as regenie's step 2, each column is tested on the trait\n"
                 "less its chromosome's prediction (quantitative) or with the prediction as an\n"
                 "offset of the log odds (case/control); chromosomes 1-22 and X");
  app.add_option("--out", o->out,
                 "Output prefix: writes PREFIX.<phenotype>.assoc.tsv (quantitative) or "
                 "PREFIX.<phenotype>.logistic.tsv (case/control)")
      ->check(output_path())
      ->required();
  app.footer(
      "Per column and phenotype, a regression of the phenotype on an intercept, the column (the\n"
      "A1 dosage for genotypes) and the covariates, as PLINK 2 --glm does ('allow-no-covars'\n"
      "without --covar, 'hide-covar' with it).\n"
      "A phenotype whose values are all 1, 2 or missing (0, -9, NA) is case/control (0/1 with\n"
      "--1), any other quantitative; --binary and --quantitative override the detection.\n"
      "Quantitative: ordinary least squares; columns #CHR POS ID A1 A2 N_OBS BETA SE T_STAT P\n"
      "NOTE, P two-sided from t with N_OBS - 2 - covariates degrees of freedom.\n"
      "Case/control: logistic regression (Newton's method from the fit without the column),\n"
      "Firth's penalised likelihood as --firth says, Wald test (or regenie's score test with\n"
      "--score-test); columns #CHR POS ID A1 A2 FIRTH? N_OBS OR LOG(OR)_SE Z_STAT P NOTE, OR\n"
      "per A1 allele.\n"
      "Samples without the phenotype or a covariate are left out, and per column those with a\n"
      "missing call (with --score-test a missing call takes the column's mean). A test without\n"
      "an estimate has NA values and a NOTE: CONST_COLUMN, TOO_FEW_SAMPLES, COLLINEAR (with\n"
      "the covariates) or NOT_CONVERGED; NOTE is '.' otherwise.\n"
      "Sex chromosomes, as PLINK 2 --glm by default: on X sex is one more covariate (when it\n"
      "varies) and samples of unknown sex are left out, a male's call counting 0 or 2 copies;\n"
      "on Y only males are tested; on Y and MT a call counts 0 or 1 copies (haploid). Sexes\n"
      "come from the store (the .fam's), or --sex.");
}

// The run's inputs: the phenotypes split by model, the covariates and the samples' sexes.
struct assoc_inputs {
  phenotype_table pheno, cases, covar;
  bool has_covariates = false;
  std::vector<sample_sex> sexes;
  const phenotype_table* covariates() const { return has_covariates ? &covar : nullptr; }
};

assoc_inputs read_inputs(const assoc_options& o, analysis_run& run) {
  if (o.score_test && o.firth_flag->count() > 0)
    throw error(errc::invalid_argument,
                "--firth applies to the fitted Wald test; --score-test fits no column");
  const store& s = run.source();
  const phenotype_table all = run.read_table(o.pheno, o.pheno_names, "PHENO", "phenotype(s)");
  const auto& kept = run.selected().row_kept;
  const case_control_codes codes =
      o.zero_one ? case_control_codes::zero_one : case_control_codes::one_two;
  std::vector<std::size_t> binary, quantitative;
  split_phenotypes(o, all, kept, codes, binary, quantitative);
  assoc_inputs in;
  in.pheno = select_phenotypes(all, quantitative);
  in.cases = select_phenotypes(all, binary);
  code_case_control(in.cases, codes);
  for (const std::string& name : in.cases.names) run.log(name + ": case/control");
  if (o.quantile_normalize) quantile_normalize(in.pheno, kept);
  if (!o.covar.empty()) {
    in.covar = run.read_table(o.covar, o.covar_names, "COVAR", "covariate(s)");
    in.has_covariates = true;
    if (o.covar_standardize) variance_standardize(in.covar, kept);
  } else if (!o.covar_names.empty() || o.covar_standardize) {
    throw error(errc::invalid_argument,
                std::string(o.covar_standardize ? "--covar-variance-standardize" : "--covar-name") +
                    " needs --covar");
  }
  in.sexes = o.sex.empty() ? sexes_of(s.samples())
                           : read_sex_file(o.sex, s.samples(), sexes_of(s.samples()));
  return in;
}

// On MPI ranks, rank 0 alone writes (every rank receives every result).
const auto discard = [](std::size_t, std::size_t, std::span<const assoc_result>) {};

// The quantitative traits' scan, into `tables` (on the writer).
assoc_summary scan_linear(const assoc_options& o, analysis_run& run, const assoc_inputs& in,
                          std::optional<assoc_writer>& tables, std::size_t& untested) {
  const store& s = run.source();
  if (is_writer()) tables.emplace(s, in.pheno.names, o.out, o.common.digits);
  const assoc_sink sink = tables ? tables->sink() : assoc_sink(discard);
  if (o.loco.empty())
    return linear_association(s, run.selected(), in.pheno, in.covariates(), sink, run.options(),
                              in.sexes);
  const std::vector<Eigen::MatrixXd> loco = loco_of(o.loco, in.pheno, s, false);
  return linear_association_loco(s, run.selected(), in.pheno, in.covariates(), loco, sink, untested,
                                 run.options(), in.sexes);
}

// The case/control traits' scan, into `tables` (on the writer).
assoc_summary scan_logistic(const assoc_options& o, analysis_run& run, const assoc_inputs& in,
                            std::optional<assoc_writer>& tables, std::size_t& untested) {
  const store& s = run.source();
  if (is_writer())
    tables.emplace(s, in.cases.names, o.out, o.common.digits, assoc_model::logistic, !o.beta);
  const assoc_sink sink = tables ? tables->sink() : assoc_sink(discard);
  const firth_mode firth = o.firth == "always"  ? firth_mode::always
                           : o.firth == "never" ? firth_mode::never
                                                : firth_mode::fallback;
  const logistic_test test = o.score_test ? logistic_test::score : logistic_test::wald;
  if (o.loco.empty())
    return logistic_association(s, run.selected(), in.cases, in.covariates(), sink, firth,
                                run.options(), in.sexes, test);
  const std::vector<Eigen::MatrixXd> loco = loco_of(o.loco, in.cases, s, true);
  return logistic_association_loco(s, run.selected(), in.cases, in.covariates(), loco, sink,
                                   untested, firth, run.options(), in.sexes, test);
}

// Commits one model's tables and says what each holds.
void report(analysis_run& run, std::optional<assoc_writer>& tables, const phenotype_table& t,
            const assoc_summary& summary) {
  if (!tables) return;
  const auto& files = tables->commit();
  for (std::size_t p = 0; p < files.size(); ++p)
    run.log(t.names[p] + ": " + std::to_string(summary.samples_used[p]) + " samples used, wrote " +
            files[p].string());
}

int run_assoc(const assoc_options& o) {
  analysis_run run("assoc", o.common);
  const assoc_inputs in = read_inputs(o, run);
  // The tables of both models are committed together at the end, so a failed run leaves none.
  std::optional<assoc_writer> linear_tables, logistic_tables;
  assoc_summary linear, logistic;
  std::size_t untested = 0;
  if (!in.pheno.names.empty()) linear = scan_linear(o, run, in, linear_tables, untested);
  if (!in.cases.names.empty()) logistic = scan_logistic(o, run, in, logistic_tables, untested);
  if (untested != 0)
    run.log(std::to_string(untested) +
            " columns are not on chromosomes 1-22 or X: not tested with --loco");
  if (!is_writer()) return 0;
  report(run, linear_tables, in.pheno, linear);
  report(run, logistic_tables, in.cases, logistic);
  return 0;
}

}  // namespace

command add_assoc(CLI::App& app) {
  auto o = std::make_shared<assoc_options>();
  declare_options(app, o.get());
  return [o] { return run_assoc(*o); };
}

}  // namespace colflow::cli
