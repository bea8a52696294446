// colflow ridge | lasso | enet: penalised regression paths by coordinate descent.
#include <cmath>
#include <cstdio>

#include "analysis_setup.hpp"
#include "colflow/error.hpp"
#include "colflow/analysis/penalized.hpp"
#include "colflow/analysis/phenotype.hpp"
#include "commands.hpp"
#include "colflow/io/tsv_writer.hpp"

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
                 "Phenotype file: FID IID v1 ... (optional #FID/FID header; NA and -9 missing)")
      ->required();
  app.add_option("--pheno-name", o->pheno_name, "The phenotype column to fit (default: the first)");
  app.add_option("--out", o->out, "Output prefix: PREFIX.coef.tsv and PREFIX.path.tsv")->required();
  app.add_option("--lambda", o->lambda, "Fit this one lambda instead of a path")
      ->check(CLI::PositiveNumber);
  app.add_option("--nlambda", o->fit.n_lambda, "Values on the path, from lambda_max down (default 100)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--lambda-min-ratio", o->fit.lambda_min_ratio,
                 "Smallest lambda / lambda_max (default 1e-4 with more samples than columns, else 1e-2)")
      ->check(CLI::Range(0.0, 1.0));
  if (kind == penalty::elastic_net)
    app.add_option("--alpha", o->fit.alpha, "Mixing: 1 is the lasso, 0 ridge (default 0.5)")
        ->check(CLI::Range(0.0, 1.0));
  app.add_option("--tol", o->fit.tolerance,
                 "Converged when no coefficient moves more than this in a sweep (default 1e-7)")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-sweeps", o->fit.max_sweeps, "Sweeps per lambda at most (default 100000)");
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
      "samples are standardised with the fitted samples' means and SDs.");
  return [o, kind] {
    analysis_run run(kind == penalty::lasso ? "lasso" : kind == penalty::ridge ? "ridge" : "enet",
                     o->common);
    const store& s = run.source();
    std::vector<std::string> names;
    if (!o->pheno_name.empty()) names.push_back(o->pheno_name);
    const phenotype_table pheno = read_phenotypes(o->pheno, s.samples(), names, "PHENO");
    if (o->lambda > 0) o->fit.lambdas = {o->lambda};
    std::vector<double> y(pheno.values.col(0).data(), pheno.values.col(0).data() + pheno.values.rows());
    const penalized_result fit = penalized_regression(s, run.selected(), y, o->fit, run.options());
    run.log(pheno.names[0] + ": " + std::to_string(fit.samples) + " samples used, lambda_max " +
            std::to_string(fit.lambda_max));

    const auto& columns = s.columns();
    const auto& selected = run.selected().columns;
    tsv_writer coef(o->out + ".coef.tsv", o->common.digits);
    for (const char* h : {"LAMBDA", "ID", "A1", "BETA", "BETA_PER_UNIT"}) coef.text(h);
    coef.end_line();
    for (std::size_t k = 0; k < fit.path.size(); ++k) {
      const auto write = [&](std::size_t p, double b) {
        const column_info& c = columns[selected[p]];
        const double sd = fit.columns[p].sd;
        coef.number(fit.path[k].lambda).text(c.id).text(c.a1).number(b).number(sd > 0 ? b / sd : 0.0);
        coef.end_line();
      };
      if (kind == penalty::ridge) {
        std::vector<double> all(selected.size(), 0.0);
        for (const auto& [p, b] : fit.coefficients[k]) all[p] = b;
        for (std::size_t p = 0; p < all.size(); ++p) write(p, all[p]);
      } else {
        for (const auto& [p, b] : fit.coefficients[k]) write(p, b);
      }
    }
    coef.commit();
    tsv_writer path(o->out + ".path.tsv", o->common.digits);
    for (const char* h : {"LAMBDA", "NONZERO", "R2", "OBJECTIVE", "SWEEPS", "FULL_PASSES", "CONVERGED"})
      path.text(h);
    path.end_line();
    std::size_t unconverged = 0;
    for (const penalized_step& st : fit.path) {
      path.number(st.lambda).integer(st.nonzero).number(st.r_squared).number(st.objective);
      path.integer(st.sweeps).integer(st.full_passes).text(st.converged ? "1" : "0");
      path.end_line();
      unconverged += !st.converged;
    }
    path.commit();
    if (unconverged > 0)
      run.log("warning: " + std::to_string(unconverged) + " lambda(s) stopped at --max-sweeps");
    if (!o->predict.empty()) {
      const store target = store::open(o->predict);
      const column_match match = match_columns(s, run.selected(), target);
      if (match.missing > 0)
        run.log(o->predict + ": " + std::to_string(match.missing) +
                " fitted columns are not in this store and count as their mean");
      const Eigen::MatrixXd pred = predict(target, fit, match, run.options());
      tsv_writer out(o->out + ".pred.tsv", o->common.digits);
      out.text("#FID").text("IID");
      for (const penalized_step& st : fit.path) {
        char name[48];
        std::snprintf(name, sizeof name, "LAMBDA=%.*g", o->common.digits, st.lambda);
        out.text(name);
      }
      out.end_line();
      const auto& samples = target.samples();
      for (Eigen::Index i = 0; i < pred.rows(); ++i) {
        out.text(samples[static_cast<std::size_t>(i)].fid).text(samples[static_cast<std::size_t>(i)].iid);
        for (Eigen::Index k = 0; k < pred.cols(); ++k) out.number(pred(i, k));
        out.end_line();
      }
      out.commit();
      run.log("wrote " + o->out + ".pred.tsv");
    }
    run.log("wrote " + o->out + ".coef.tsv and " + o->out + ".path.tsv");
    return 0;
  };
}

}  // namespace colflow::cli
