// colflow assoc: least-squares association scan of one or more phenotypes, one pass.
#include <optional>

#include "analysis_setup.hpp"
#include "colflow/analysis/assoc.hpp"
#include "colflow/analysis/phenotype.hpp"
#include "colflow/error.hpp"
#include "commands.hpp"
#include "processes.hpp"

namespace colflow::cli {

command add_assoc(CLI::App& app) {
  struct options {
    analysis_flags common;
    std::string pheno, covar, out;
    std::vector<std::string> pheno_names, covar_names;
    bool quantile_normalize = false, covar_standardize = false;
  };
  auto o = std::make_shared<options>();
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
  app.add_option("--out", o->out, "Output prefix: writes PREFIX.<phenotype>.assoc.tsv")->required();
  app.footer(
      "Per column and phenotype, ordinary least squares of the phenotype on an intercept, the\n"
      "column (the A1 dosage for genotypes) and the covariates, as PLINK 2 --glm does for a\n"
      "quantitative trait ('allow-no-covars' without --covar, 'hide-covar' with it).\n"
      "Output columns: #CHR POS ID A1 A2 N_OBS BETA SE T_STAT P NOTE. BETA is per A1 allele;\n"
      "P is two-sided from t with N_OBS - 2 - covariates degrees of freedom. Samples without\n"
      "the phenotype or a covariate are left out, and per column those with a missing call.\n"
      "A test without an estimate has NA values and a NOTE: CONST_COLUMN, TOO_FEW_SAMPLES or\n"
      "COLLINEAR (with the covariates); NOTE is '.' otherwise.");
  return [o] {
    analysis_run run("assoc", o->common);
    const store& s = run.source();
    phenotype_table pheno = read_phenotypes(o->pheno, s.samples(), o->pheno_names, "PHENO");
    if (o->quantile_normalize) quantile_normalize(pheno, run.selected().row_kept);
    run.log(o->pheno + ": " + std::to_string(pheno.matched_samples) + " of " +
            std::to_string(pheno.file_samples) + " samples in the store, " +
            std::to_string(pheno.names.size()) + " phenotype(s)");
    phenotype_table covar;
    if (!o->covar.empty()) {
      covar = read_phenotypes(o->covar, s.samples(), o->covar_names, "COVAR");
      run.log(o->covar + ": " + std::to_string(covar.matched_samples) + " of " +
              std::to_string(covar.file_samples) + " samples in the store, " +
              std::to_string(covar.names.size()) + " covariate(s)");
      if (o->covar_standardize) variance_standardize(covar, run.selected().row_kept);
    } else if (!o->covar_names.empty() || o->covar_standardize) {
      throw error(
          errc::invalid_argument,
          std::string(o->covar_standardize ? "--covar-variance-standardize" : "--covar-name") +
              " needs --covar");
    }

    // On MPI ranks, rank 0 alone writes (every rank receives every result).
    std::optional<assoc_writer> tables;
    if (is_writer()) tables.emplace(s, pheno.names, o->out, o->common.digits);
    const assoc_summary summary = linear_association(
        s, run.selected(), pheno, o->covar.empty() ? nullptr : &covar,
        tables ? tables->sink() : [](std::size_t, std::size_t, std::span<const assoc_result>) {},
        run.options());
    if (!tables) return 0;
    const auto& files = tables->commit();
    for (std::size_t p = 0; p < files.size(); ++p)
      run.log(pheno.names[p] + ": " + std::to_string(summary.samples_used[p]) +
              " samples used, wrote " + files[p].string());
    return 0;
  };
}

}  // namespace colflow::cli
