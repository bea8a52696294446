// penalized (ridge, lasso, enet) and bayesr: a phenotype's model fitted over the selected
// columns as the command fits it, its tables returned as numpy arrays.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "colflow/analysis/bayesr.hpp"
#include "colflow/analysis/penalized.hpp"
#include "python_call.hpp"

using namespace nb::literals;

namespace colflow::python {
namespace {

using phenotype_array = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// One phenotype value per store row (NaN missing), as the commands take the first column of
// read_phenotypes' table.
std::span<const double> phenotype_of(phenotype_array pheno, const store& s) {
  if (pheno.shape(0) != s.num_rows())
    throw nb::value_error("a phenotype must have one value per store sample");
  return {pheno.data(), pheno.shape(0)};
}

// ---- penalized --------------------------------------------------------------------------------

// The fields of PREFIX.path.tsv, one value per λ.
void add_path(nb::dict& d, const penalized_result& fit) {
  const std::size_t steps = fit.path.size();
  std::vector<double> lambda(steps), r2(steps), objective(steps);
  std::vector<std::uint64_t> nonzero(steps), sweeps(steps), full_passes(steps);
  std::vector<std::uint8_t> converged(steps);
  for (std::size_t k = 0; k < steps; ++k) {
    const penalized_step& st = fit.path[k];
    lambda[k] = st.lambda;
    nonzero[k] = st.nonzero;
    r2[k] = st.r_squared;
    objective[k] = st.objective;
    sweeps[k] = st.sweeps;
    full_passes[k] = st.full_passes;
    converged[k] = st.converged;
  }
  d["lambda"] = to_numpy(std::move(lambda));
  d["nonzero"] = to_numpy(std::move(nonzero));
  d["r2"] = to_numpy(std::move(r2));
  d["objective"] = to_numpy(std::move(objective));
  d["sweeps"] = to_numpy(std::move(sweeps));
  d["full_passes"] = to_numpy(std::move(full_passes));
  d["converged"] = to_numpy(std::move(converged));
}

// The fields of PREFIX.coef.tsv, rows as write_penalized orders them: per λ, the non-zero
// coefficients, or every coefficient with `all_coefficients`.
void add_coefficients(nb::dict& d, const penalized_result& fit, const selection& sel,
                      bool all_coefficients) {
  std::vector<std::int64_t> step_of, column_of;
  std::vector<double> beta, per_unit;
  std::vector<double> every;
  for (std::size_t k = 0; k < fit.path.size(); ++k) {
    const auto add = [&](std::size_t p, double b) {
      step_of.push_back(static_cast<std::int64_t>(k));
      column_of.push_back(static_cast<std::int64_t>(sel.columns[p]));
      beta.push_back(b);
      per_unit.push_back(per_unit_coefficient(fit, p, b));
    };
    if (all_coefficients) {
      every.assign(sel.columns.size(), 0.0);
      for (const auto& [p, b] : fit.coefficients[k]) every.at(p) = b;
      for (std::size_t p = 0; p < every.size(); ++p) add(p, every[p]);
    } else {
      for (const auto& [p, b] : fit.coefficients[k]) add(p, b);
    }
  }
  d["coef_step"] = to_numpy(std::move(step_of));
  d["coef_column"] = to_numpy(std::move(column_of));
  d["coef_beta"] = to_numpy(std::move(beta));
  d["coef_per_unit"] = to_numpy(std::move(per_unit));
}

// `colflow ridge | lasso | enet`: the path and coefficient tables (numpy arrays of the fields
// of PREFIX.path.tsv and PREFIX.coef.tsv), and with `target` the predictions of its samples
// (PREFIX.pred.tsv).
nb::dict penalized(const py_store& ps, index_array rows, index_array cols, phenotype_array pheno,
                   double alpha, const std::vector<double>& lambdas, std::size_t n_lambda,
                   double lambda_min_ratio, double tolerance, std::size_t max_sweeps,
                   bool all_coefficients, const py_store* target, int threads,
                   nb::object progress) {
  const auto s = ps.get();
  const selection sel = make_selection(*s, span_of(rows), span_of(cols));
  const std::span<const double> y = phenotype_of(pheno, *s);
  penalized_options o;
  o.alpha = alpha;
  o.lambdas = lambdas;
  o.n_lambda = n_lambda;
  o.lambda_min_ratio = lambda_min_ratio;
  o.tolerance = tolerance;
  o.max_sweeps = max_sweeps;
  const std::shared_ptr<const store> other = target ? target->get() : nullptr;
  penalized_result fit;
  Eigen::MatrixXd predictions;
  std::size_t target_missing = 0;
  // As the command shows them: the statistics pass, the path in λ values, the predictions.
  python_call call(std::move(progress), {"statistics", "predict"});
  const analysis_options options = call.options();
  call.run(threads, [&] {
    fit = penalized_regression(*s, sel, y, o, options);
    if (other) {
      const column_match match = match_columns(*s, sel, *other);
      target_missing = match.missing;
      predictions = predict(*other, fit, match, options);
    }
  });
  nb::dict d;
  d["samples"] = fit.samples;
  d["intercept"] = fit.intercept;
  d["lambda_max"] = fit.lambda_max;
  add_path(d, fit);
  add_coefficients(d, fit, sel, all_coefficients);
  d["column"] = indices_to_numpy(sel.columns);
  d["predictions"] = other ? to_numpy(predictions) : nb::none();
  d["target_missing"] = target_missing;
  return d;
}

// ---- bayesr -----------------------------------------------------------------------------------

bayesr_execution execution_of(const std::string& mode) {
  if (mode == "auto") return bayesr_execution::automatic;
  if (mode == "pipelined") return bayesr_execution::pipelined;
  if (mode == "sequential") return bayesr_execution::sequential;
  if (mode == "in-memory") return bayesr_execution::in_memory;
  throw nb::value_error(
      ("mode '" + mode + "' not known: auto, pipelined, sequential or in-memory").c_str());
}

// The fields of PREFIX.trace.tsv, one value (a row of `pi`) per kept iteration.
void add_trace(nb::dict& d, const bayesr_result& r) {
  const std::size_t kept = r.trace.size(), classes = r.classes;
  std::vector<std::uint64_t> iteration(kept), nonzero(kept);
  std::vector<double> mu(kept), sigma2_g(kept), sigma2_e(kept), h2(kept), var_g(kept);
  Eigen::MatrixXd pi(static_cast<Eigen::Index>(kept), static_cast<Eigen::Index>(classes));
  for (std::size_t t = 0; t < kept; ++t) {
    const bayesr_sample& x = r.trace[t];
    iteration[t] = x.iteration;
    mu[t] = x.mu;
    sigma2_g[t] = x.sigma2_g;
    sigma2_e[t] = x.sigma2_e;
    h2[t] = x.h2;
    var_g[t] = x.genetic_variance;
    nonzero[t] = x.nonzero;
    for (std::size_t k = 0; k < classes && k < x.pi.size(); ++k)
      pi(static_cast<Eigen::Index>(t), static_cast<Eigen::Index>(k)) = x.pi[k];
  }
  d["iteration"] = to_numpy(std::move(iteration));
  d["mu"] = to_numpy(std::move(mu));
  d["sigma2_g"] = to_numpy(std::move(sigma2_g));
  d["sigma2_e"] = to_numpy(std::move(sigma2_e));
  d["h2"] = to_numpy(std::move(h2));
  d["var_g"] = to_numpy(std::move(var_g));
  d["nonzero"] = to_numpy(std::move(nonzero));
  d["pi"] = to_numpy(pi);
}

// The fields of PREFIX.effects.tsv (moved out of `r`) and the figures the command logs.
void add_effects(nb::dict& d, bayesr_result& r) {
  bayesr_per_unit_effects unit = per_unit_effects(r);
  const bayesr_summary summary = summarize(r);
  d["pip"] = to_numpy(std::move(r.inclusion));
  d["beta"] = to_numpy(std::move(r.beta_mean));
  d["beta_sd"] = to_numpy(std::move(r.beta_sd));
  d["beta_per_unit"] = to_numpy(std::move(unit.beta_mean));
  d["beta_per_unit_sd"] = to_numpy(std::move(unit.beta_sd));
  d["posterior_samples"] = r.posterior_samples;
  d["kept"] = summary.kept;
  d["h2_mean"] = summary.h2.mean;
  d["h2_sd"] = summary.h2.sd;
  d["nonzero_mean"] = summary.nonzero.mean;
  d["h2_ess"] = summary.h2.ess;
  d["h2_geweke_z"] = summary.h2.geweke_z;
  // The rows of PREFIX.summary.tsv, in its order: (PARAMETER, MEAN, SD, ESS, GEWEKE_Z).
  nb::list rows;
  for (const auto& [name, q] :
       {std::pair{"H2", &summary.h2}, std::pair{"SIGMA2_G", &summary.sigma2_g},
        std::pair{"SIGMA2_E", &summary.sigma2_e}, std::pair{"NONZERO", &summary.nonzero}})
    rows.append(nb::make_tuple(name, q->mean, q->sd, q->ess, q->geweke_z));
  d["summary"] = rows;
}

// `colflow bayesr`: the trace and effect tables (numpy arrays of the fields of PREFIX.trace.tsv
// and PREFIX.effects.tsv) and the figures the command logs.
nb::dict bayesr_chain(const py_store& ps, index_array rows, index_array cols, phenotype_array pheno,
                      std::size_t iterations, std::size_t burnin, std::size_t thin,
                      std::uint64_t seed, const std::vector<double>& mixture,
                      double dirichlet_prior, double g_df, double g_scale, double e_df,
                      double e_scale, const std::string& checkpoint, std::size_t checkpoint_every,
                      bool resume, const std::string& mode, int threads, nb::object progress) {
  bayesr_options o;
  o.iterations = iterations;
  o.burnin = burnin;
  o.thin = thin;
  o.seed = seed;
  o.mixture = mixture;
  o.dirichlet_alpha = dirichlet_prior;
  o.sigma2_g_df = g_df;
  o.sigma2_g_scale = g_scale;
  o.sigma2_e_df = e_df;
  o.sigma2_e_scale = e_scale;
  o.checkpoint = checkpoint;
  o.checkpoint_every = checkpoint.empty() ? 0 : checkpoint_every;
  o.resume = resume;
  o.execution = execution_of(mode);
  check_bayesr_options(o);
  const auto s = ps.get();
  const selection sel = make_selection(*s, span_of(rows), span_of(cols));
  const std::span<const double> y = phenotype_of(pheno, *s);
  bayesr_result r;
  // As the command shows them: the statistics pass, then the chain in iterations.
  python_call call(std::move(progress), {"statistics"});
  const analysis_options options = call.options();
  call.run(threads, [&] { r = bayesr(*s, sel, y, o, options); });
  nb::dict d;
  d["samples"] = r.samples;
  d["phenotype_mean"] = r.phenotype_mean;
  d["phenotype_sd"] = r.phenotype_sd;
  add_trace(d, r);
  d["column"] = indices_to_numpy(sel.columns);
  add_effects(d, r);
  d["resumed_from"] = r.resumed_from;
  d["iterations_run"] = r.iterations_run;
  d["seconds"] = r.seconds;
  d["compute_busy_seconds"] = r.compute_busy_seconds;
  d["mode"] = r.execution == bayesr_execution::sequential  ? "sequential"
              : r.execution == bayesr_execution::in_memory ? "in-memory"
                                                           : "pipelined";
  return d;
}

}  // namespace

void bind_regression(nb::module_& m) {
  m.def("penalized", &penalized, "store"_a, "rows"_a, "cols"_a, "pheno"_a, "alpha"_a, "lambdas"_a,
        "n_lambda"_a, "lambda_min_ratio"_a, "tolerance"_a, "max_sweeps"_a, "all_coefficients"_a,
        "target"_a.none(), "threads"_a, "progress"_a.none());
  m.def("bayesr", &bayesr_chain, "store"_a, "rows"_a, "cols"_a, "pheno"_a, "iterations"_a,
        "burnin"_a, "thin"_a, "seed"_a, "mixture"_a, "dirichlet_prior"_a, "g_df"_a, "g_scale"_a,
        "e_df"_a, "e_scale"_a, "checkpoint"_a, "checkpoint_every"_a, "resume"_a, "mode"_a,
        "threads"_a, "progress"_a.none());
}

}  // namespace colflow::python
