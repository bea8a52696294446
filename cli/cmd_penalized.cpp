// colflow ridge | lasso | enet: penalised regression paths by coordinate descent.
#include "analysis_setup.hpp"
#include "colflow/analysis/penalized.hpp"
#include "colflow/analysis/phenotype.hpp"
#include "colflow/error.hpp"
#include "commands.hpp"
#include "processes.hpp"
#include "validators.hpp"

namespace colflow::cli {

command add_penalized(CLI::App& app, penalty kind) {
  struct options {
    analysis_flags common;
    penalized_options fit;
    std::string pheno, pheno_name, out, predict;
    double lambda = 0;
  };
  auto o = std::make_shared<options>();
  o->fit.alpha = kind == penalty::lasso ? 1.0 : kind == penalty::ridge ? 0.0 : 0.5;
  add_analysis_flags(app, o->common);
  app.add_option("--pheno", o->pheno,
                 "Phenotype file: FID IID v1 ... (or #FID IID / #IID headers, .psam, .fam: "
                 "docs/ANALYSES.md; NA and -9 missing)")
      ->required();
  app.add_option("--pheno-name", o->pheno_name, "The phenotype column to fit (default: the first)");
  app.add_option("--out", o->out, "Output prefix: PREFIX.coef.tsv and PREFIX.path.tsv")
      ->check(output_path())
      ->required();
  app.add_option("--lambda", o->lambda, "Fit this one lambda instead of a path")
      ->check(positive_number());
  app.add_option("--nlambda", o->fit.n_lambda,
                 "Values on the path, from lambda_max down (default 100)")
      ->check(integer_range(1, 100000));
  app.add_option(
         "--lambda-min-ratio", o->fit.lambda_min_ratio,
         "Smallest lambda / lambda_max (default 1e-4 with more samples than columns, else 1e-2)")
      ->check(number_range(0.0, 1.0));
  if (kind == penalty::elastic_net)
    app.add_option("--alpha", o->fit.alpha, "Mixing: 1 is the lasso, 0 ridge (default 0.5)")
        ->check(number_range(0.0, 1.0));
  app.add_option("--tol", o->fit.tolerance,
                 "Converged when no coefficient moves more than this in a sweep (default 1e-7)")
      ->check(positive_number());
  app.add_option("--max-sweeps", o->fit.max_sweeps, "Sweeps per lambda at most (default 100000)")
      ->check(positive_integer());
  app.add_option("--predict", o->predict,
                 "Also predict the samples of this store (columns matched by ID, A1/A2 swaps\n"
                 "handled): PREFIX.pred.tsv with #FID IID and one column per lambda");
  app.footer(
      "Minimises 1/(2n) |y - b0 - Zb|^2 + lambda (alpha |b|_1 + (1 - alpha)/2 |b|^2) over the\n"
      "standardised columns Z of the samples with a phenotype (scikit-learn's ElasticNet with\n"
      "alpha = lambda, l1_ratio = alpha). PREFIX.coef.tsv: LAMBDA ID A1 BETA BETA_PER_UNIT for\n"
      "the non-zero coefficients (every coefficient for ridge); BETA is on the standardised\n"
      "scale, BETA_PER_UNIT per A1 allele (per unit for dense columns). PREFIX.path.tsv: LAMBDA\n"
      "NONZERO R2 OBJECTIVE SWEEPS FULL_PASSES CONVERGED per lambda. With --predict, the new\n"
      "samples are standardised with the fitted samples' means and SDs. On MPI ranks (mpirun\n"
      "-np R colflow ...) the samples are split among them; the files are the same bytes.");
  return [o, kind] {
    analysis_run run(kind == penalty::lasso   ? "lasso"
                     : kind == penalty::ridge ? "ridge"
                                              : "enet",
                     o->common);
    const store& s = run.source();
    std::vector<std::string> names;
    if (!o->pheno_name.empty()) names.push_back(o->pheno_name);
    const phenotype_table pheno = read_phenotypes(o->pheno, s.samples(), names, "PHENO");
    if (o->lambda > 0) o->fit.lambdas = {o->lambda};
    std::vector<double> y(pheno.values.col(0).data(),
                          pheno.values.col(0).data() + pheno.values.rows());
    // The statistics pass has a line of its own; the sweeps and checks are the steps of the
    // path, which has one line in lambda values.
    run.show_passes({"statistics", "predict"});
    const penalized_result fit = penalized_regression(s, run.selected(), y, o->fit, run.options());
    if (!is_writer()) return 0;  // rank 0 writes the results of every rank (the same bits)
    run.log(pheno.names[0] + ": " + std::to_string(fit.samples) + " samples used, lambda_max " +
            std::to_string(fit.lambda_max));
    const penalized_files files =
        write_penalized(s, run.selected(), fit, o->out,
                        kind == penalty::ridge ? coefficient_rows::all : coefficient_rows::nonzero,
                        o->common.digits);
    if (const std::size_t unconverged = unconverged_lambdas(fit); unconverged > 0)
      run.log("warning: " + std::to_string(unconverged) + " lambda(s) stopped at --max-sweeps");
    if (!o->predict.empty()) {
      const store target = store::open(o->predict);
      const column_match match = match_columns(s, run.selected(), target);
      if (match.missing > 0)
        run.log(o->predict + ": " + std::to_string(match.missing) +
                " fitted columns are not in this store and count as their mean");
      const Eigen::MatrixXd pred = predict(target, fit, match, run.options());
      run.log("wrote " + write_predictions(target, fit, pred, o->out, o->common.digits).string());
    }
    run.log("wrote " + files.coefficients.string() + " and " + files.path.string());
    return 0;
  };
}

}  // namespace colflow::cli
