// What `colflow bayesr` reports from a chain: the posterior summary of its trace, the effects on
// the phenotype's scale, and the trace, effect and summary tables.
#include <string>
#include <utility>
#include <vector>

#include "analysis/shared/result_table_internal.hpp"
#include "colflow/analysis/bayesr.hpp"
#include "colflow/analysis/chain_diagnostics.hpp"
#include "colflow/error.hpp"
#include "io/tsv_writer_internal.hpp"

namespace colflow {

bayesr_summary summarize(const bayesr_result& r) {
  std::vector<double> h2, sigma2_g, sigma2_e, nonzero;
  for (const bayesr_sample& t : r.trace)
    if (t.iteration > r.burnin) {
      h2.push_back(t.h2);
      sigma2_g.push_back(t.sigma2_g);
      sigma2_e.push_back(t.sigma2_e);
      nonzero.push_back(static_cast<double>(t.nonzero));
    }
  return {.kept = h2.size(),
          .h2 = summarize_chain(h2),
          .sigma2_g = summarize_chain(sigma2_g),
          .sigma2_e = summarize_chain(sigma2_e),
          .nonzero = summarize_chain(nonzero)};
}

bayesr_per_unit_effects per_unit_effects(const bayesr_result& r) {
  const std::size_t m = r.columns.size();
  if (r.beta_mean.size() != m || r.beta_sd.size() != m)
    throw error(errc::invalid_argument,
                "per_unit_effects: the result's effects and columns differ");
  bayesr_per_unit_effects e;
  e.beta_mean.resize(m);
  e.beta_sd.resize(m);
  for (std::size_t p = 0; p < m; ++p) {
    const double sd = r.columns[p].sd;
    const double unit = sd > 0 ? r.phenotype_sd / sd : 0.0;
    e.beta_mean[p] = r.beta_mean[p] * unit;
    e.beta_sd[p] = r.beta_sd[p] * unit;
  }
  return e;
}

bayesr_files bayesr_output_files(const std::filesystem::path& prefix) {
  return {.trace = detail::prefixed(prefix, ".trace.tsv"),
          .effects = detail::prefixed(prefix, ".effects.tsv"),
          .summary = detail::prefixed(prefix, ".summary.tsv")};
}

namespace {

void write_trace(const bayesr_result& r, const std::filesystem::path& path, int digits) {
  tsv_writer trace(path, digits);
  for (const char* h : {"ITER", "MU", "SIGMA2_G", "SIGMA2_E", "H2", "VAR_G", "NONZERO"})
    trace.text(h);
  // A chain whose thinning kept nothing still names its classes in the header.
  const std::size_t classes = r.classes > 0     ? r.classes
                              : r.trace.empty() ? 0
                                                : r.trace[0].pi.size();
  for (std::size_t k = 0; k < classes; ++k) trace.text("PI_" + std::to_string(k));
  trace.end_line();
  for (const bayesr_sample& t : r.trace) {
    trace.integer(t.iteration).number(t.mu).number(t.sigma2_g).number(t.sigma2_e).number(t.h2);
    trace.number(t.genetic_variance).integer(t.nonzero);
    for (double p : t.pi) trace.number(p);
    trace.end_line();
  }
  trace.commit();
}

void write_effects(const store& s, const selection& sel, const bayesr_result& r,
                   const bayesr_per_unit_effects& unit, const std::filesystem::path& path,
                   int digits) {
  const auto& columns = s.columns();
  tsv_writer effects(path, digits);
  detail::write_header(effects,
                       {"ID", "A1", "PIP", "BETA", "BETA_SD", "BETA_PER_UNIT", "BETA_PER_UNIT_SD"});
  for (std::size_t p = 0; p < sel.columns.size(); ++p) {
    const column_info& c = columns[sel.columns[p]];
    effects.text(c.id)
        .text(c.a1)
        .number(r.inclusion[p])
        .number(r.beta_mean[p])
        .number(r.beta_sd[p]);
    effects.number(unit.beta_mean[p]).number(unit.beta_sd[p]);
    effects.end_line();
  }
  effects.commit();
}

// A row per quantity of colflow.plot.chain_summary, in its order, named by the trace's header.
void write_summary(const bayesr_result& r, const std::filesystem::path& path, int digits) {
  const bayesr_summary summary = summarize(r);
  tsv_writer table(path, digits);
  detail::write_header(table, {"PARAMETER", "MEAN", "SD", "ESS", "GEWEKE_Z", "KEPT"});
  for (const auto& [name, q] :
       {std::pair{"H2", &summary.h2}, std::pair{"SIGMA2_G", &summary.sigma2_g},
        std::pair{"SIGMA2_E", &summary.sigma2_e}, std::pair{"NONZERO", &summary.nonzero}}) {
    table.text(name).number(q->mean).number(q->sd).number(q->ess).number(q->geweke_z);
    table.integer(summary.kept).end_line();
  }
  table.commit();
}

}  // namespace

bayesr_files write_bayesr(const store& s, const selection& sel, const bayesr_result& r,
                          const std::filesystem::path& prefix, int digits) {
  detail::check_digits(digits);
  if (r.columns.size() != sel.columns.size() || r.inclusion.size() != sel.columns.size())
    throw error(errc::invalid_argument, "write_bayesr: the result is not of this selection");
  // Every check passes (per_unit_effects' included) before a file is written.
  const bayesr_per_unit_effects unit = per_unit_effects(r);
  const bayesr_files files = bayesr_output_files(prefix);
  write_trace(r, files.trace, digits);
  write_effects(s, sel, r, unit, files.effects, digits);
  write_summary(r, files.summary, digits);
  return files;
}

}  // namespace colflow
