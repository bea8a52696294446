// assoc: per phenotype, the association of every selected column, linear or logistic as the
// command chooses, with the command's options, returned as numpy arrays.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "colflow/analysis/assoc.hpp"
#include "colflow/analysis/case_control.hpp"
#include "colflow/analysis/phenotype.hpp"
#include "colflow/analysis/sex_chromosomes.hpp"
#include "python_call.hpp"

using namespace nb::literals;

namespace colflow::python {
namespace {

// ---- arguments --------------------------------------------------------------------------------

firth_mode firth_mode_of(const std::string& firth) {
  if (firth == "always") return firth_mode::always;
  if (firth == "never") return firth_mode::never;
  if (firth == "fallback") return firth_mode::fallback;
  throw nb::value_error(("firth '" + firth + "' not known: fallback, always or never").c_str());
}

// The phenotypes by model, each in the given order: `binary` (logistic) and `quantitative`
// (linear). A kind "auto" is PLINK's case/control detection on the selected rows, as the
// command's.
void split_by_kind(const phenotype_table& all, const std::vector<std::string>& kinds,
                   const selection& sel, case_control_codes codes, std::vector<std::size_t>& binary,
                   std::vector<std::size_t>& quantitative) {
  for (std::size_t p = 0; p < kinds.size(); ++p) {
    const bool b = kinds[p] == "binary" ||
                   (kinds[p] == "auto" && is_case_control(all, p, sel.row_kept, codes));
    (b ? binary : quantitative).push_back(p);
  }
}

// ---- the models -------------------------------------------------------------------------------

// The results of one phenotype, filled by the sink column after column.
struct phenotype_columns {
  std::vector<std::uint64_t> n_obs;
  std::vector<double> beta, se, stat, p;
  std::vector<std::string> note;
  std::vector<bool> firth;

  void reserve(std::size_t m) {
    n_obs.reserve(m);
    beta.reserve(m);
    se.reserve(m);
    stat.reserve(m);
    p.reserve(m);
    note.reserve(m);
    firth.reserve(m);
  }
  void add(const assoc_result& r) {
    n_obs.push_back(r.n_obs);
    beta.push_back(r.beta);
    se.push_back(r.se);
    stat.push_back(r.t_stat);
    p.push_back(r.p);
    note.emplace_back(assoc_status_name(r.status));
    firth.push_back(r.firth);
  }
};

// One phenotype's results as the dict colflow.assoc turns into a DataFrame.
nb::dict result_dict(const std::string& name, bool logistic, std::size_t samples_used,
                     phenotype_columns&& o) {
  nb::dict d;
  d["name"] = name;
  d["model"] = logistic ? "logistic" : "linear";
  d["samples_used"] = samples_used;
  d["n_obs"] = to_numpy(std::move(o.n_obs));
  if (logistic) {
    // The odds ratios as the command's file has them (std::exp, not numpy's exp, whose last
    // bit can differ).
    std::vector<double> odds(o.beta.size());
    for (std::size_t k = 0; k < odds.size(); ++k) odds[k] = std::exp(o.beta[k]);
    d["odds_ratio"] = to_numpy(std::move(odds));
  }
  d["beta"] = to_numpy(std::move(o.beta));
  d["se"] = to_numpy(std::move(o.se));
  d["stat"] = to_numpy(std::move(o.stat));
  d["p"] = to_numpy(std::move(o.p));
  d["note"] = nb::cast(o.note);
  std::vector<std::uint8_t> f(o.firth.begin(), o.firth.end());
  d["firth"] = to_numpy(std::move(f));
  return d;
}

// What the models of one assoc call share.
struct assoc_call {
  const store& s;
  const selection& sel;
  const phenotype_table& all;  // every phenotype, as given
  const std::vector<std::string>& names;
  const phenotype_table* covariates;
  const std::vector<sample_sex>& sexes;
  case_control_codes codes;
  firth_mode firth;
  logistic_test test;
  bool quantile;
  int threads;
  python_call& call;
  const analysis_options& options;

  // The phenotypes `which` (indices into `all`) under one model: a dict per phenotype.
  nb::list scan(const std::vector<std::size_t>& which, bool logistic) {
    phenotype_table t = select_phenotypes(all, which);
    if (quantile && !logistic) quantile_normalize(t, sel.row_kept);
    std::vector<phenotype_columns> out(which.size());
    for (auto& o : out) o.reserve(sel.columns.size());
    assoc_summary summary;
    if (!which.empty()) summary = run(t, logistic, out);
    nb::list results;
    for (std::size_t q = 0; q < which.size(); ++q) {
      const std::size_t used = summary.samples_used.empty() ? 0 : summary.samples_used[q];
      results.append(result_dict(names[which[q]], logistic, used, std::move(out[q])));
    }
    return results;
  }

  // Runs the model over the selected columns on python_call's worker, into `out`.
  assoc_summary run(phenotype_table& t, bool logistic, std::vector<phenotype_columns>& out) {
    const auto sink = [&](std::size_t, std::size_t, std::span<const assoc_result> results) {
      for (std::size_t q = 0; q < results.size(); ++q) out[q].add(results[q]);
    };
    assoc_summary summary;
    call.run(threads, [&] {
      if (logistic) {
        code_case_control(t, codes);
        summary = logistic_association(s, sel, t, covariates, sink, firth, options, sexes, test);
      } else {
        summary = linear_association(s, sel, t, covariates, sink, options, sexes);
      }
    });
    return summary;
  }
};

// `colflow assoc`: per phenotype, the model, the results of every selected column (numpy
// arrays) and the samples it used. `kinds` per phenotype: "auto" (PLINK's case/control
// detection on the selected rows, as the command), "binary" or "quantitative". `sex`: the
// codes of sexes_with(); the two flags the command's --pheno-quantile-normalize (quantitative
// phenotypes) and --covar-variance-standardize.
nb::list assoc(const py_store& ps, index_array rows, index_array cols, table_array pheno,
               const std::vector<std::string>& names, std::optional<table_array> covar,
               const std::vector<std::string>& covar_names, const std::vector<std::string>& kinds,
               bool zero_one, const std::string& firth, bool score_test,
               const std::optional<std::vector<std::string>>& sex, bool quantile,
               bool covar_standardize, int threads, nb::object progress) {
  const auto s = ps.get();
  const selection sel = make_selection(*s, span_of(rows), span_of(cols));
  const std::size_t n = s->num_rows();
  const phenotype_table all = make_table(pheno, names, n);
  std::optional<phenotype_table> covariates;
  if (covar) covariates = make_table(*covar, covar_names, n);
  if (covar_standardize) {
    if (!covariates) throw nb::value_error("covar_variance_standardize needs covariates");
    variance_standardize(*covariates, sel.row_kept);
  }
  const std::vector<sample_sex> sexes = sexes_with(*s, sex);
  python_call call(std::move(progress), {});
  const analysis_options options = call.options();
  if (kinds.size() != names.size()) throw nb::value_error("one kind per phenotype");
  const firth_mode mode = firth_mode_of(firth);
  const case_control_codes codes =
      zero_one ? case_control_codes::zero_one : case_control_codes::one_two;
  std::vector<std::size_t> binary, quantitative;
  split_by_kind(all, kinds, sel, codes, binary, quantitative);
  assoc_call a{
      .s = *s,
      .sel = sel,
      .all = all,
      .names = names,
      .covariates = covariates ? &*covariates : nullptr,
      .sexes = sexes,
      .codes = codes,
      .firth = mode,
      .test = score_test ? logistic_test::score : logistic_test::wald,
      .quantile = quantile,
      .threads = threads,
      .call = call,
      .options = options,
  };
  nb::list results;
  for (nb::handle r : a.scan(quantitative, false)) results.append(r);
  for (nb::handle r : a.scan(binary, true)) results.append(r);
  nb::object column_array = indices_to_numpy(sel.columns);
  for (nb::handle r : results) r.attr("__setitem__")("column", column_array);
  return results;
}

}  // namespace

void bind_assoc(nb::module_& m) {
  m.def("assoc", &assoc, "store"_a, "rows"_a, "cols"_a, "pheno"_a, "names"_a, "covar"_a.none(),
        "covar_names"_a, "kinds"_a, "zero_one"_a, "firth"_a, "score_test"_a, "sex"_a.none(),
        "quantile"_a, "covar_standardize"_a, "threads"_a, "progress"_a.none());
}

}  // namespace colflow::python
