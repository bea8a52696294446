// stats and pca: the column summaries and the principal components of a selection, run as the
// command runs them and returned as numpy arrays.

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "colflow/analysis/pca.hpp"
#include "colflow/analysis/stats.hpp"
#include "python_call.hpp"

using namespace nb::literals;

namespace colflow::python {
namespace {

// `colflow stats`: the column_summaries of the selection, a numpy array per field, and the
// selected columns (increasing).
nb::dict stats(const py_store& ps, index_array rows, index_array cols, int threads,
               nb::object progress) {
  const auto s = ps.get();
  const selection sel = make_selection(*s, span_of(rows), span_of(cols));
  std::vector<column_summary> sums;
  python_call call(std::move(progress), {});
  const analysis_options options = call.options();
  call.run(threads, [&] { sums = column_summaries(*s, sel, options); });
  const std::size_t m = sums.size();
  std::vector<std::uint64_t> observed(m), missing(m);
  std::vector<double> a1_freq(m), mean(m), sd(m), min(m), max(m);
  for (std::size_t k = 0; k < m; ++k) {
    observed[k] = sums[k].observed;
    missing[k] = sums[k].missing;
    a1_freq[k] = sums[k].a1_freq;
    mean[k] = sums[k].mean;
    sd[k] = sums[k].sd;
    min[k] = sums[k].min;
    max[k] = sums[k].max;
  }
  nb::dict d;
  d["column"] = indices_to_numpy(sel.columns);
  d["observed"] = to_numpy(std::move(observed));
  d["missing"] = to_numpy(std::move(missing));
  d["a1_freq"] = to_numpy(std::move(a1_freq));
  d["mean"] = to_numpy(std::move(mean));
  d["sd"] = to_numpy(std::move(sd));
  d["min"] = to_numpy(std::move(min));
  d["max"] = to_numpy(std::move(max));
  return d;
}

// `colflow pca`: the principal_components of the selection, as numpy arrays.
nb::dict pca(const py_store& ps, index_array rows, index_array cols, std::size_t k,
             std::size_t oversampling, std::size_t power_iterations, const std::string& scaling,
             std::uint64_t seed, bool loadings, int threads, nb::object progress) {
  const auto s = ps.get();
  const selection sel = make_selection(*s, span_of(rows), span_of(cols));
  pca_options o;
  o.components = k;
  o.oversampling = oversampling;
  o.power_iterations = power_iterations;
  if (scaling == "hwe")
    o.scaling = pca_scaling::hwe;
  else if (scaling != "standardized")
    throw nb::value_error(("scaling '" + scaling + "' not known: standardized or hwe").c_str());
  o.seed = seed;
  o.loadings = loadings;
  pca_result r;
  python_call call(std::move(progress), {});
  const analysis_options options = call.options();
  call.run(threads, [&] { r = principal_components(*s, sel, o, options); });
  nb::dict d;
  d["eigenvalues"] = to_numpy(
      std::vector<double>(r.eigenvalues.data(), r.eigenvalues.data() + r.eigenvalues.size()));
  d["eigenvectors"] = to_numpy(r.eigenvectors);
  d["loadings"] = loadings ? to_numpy(r.loadings) : nb::none();
  d["rows"] = indices_to_numpy(sel.rows);
  d["column"] = indices_to_numpy(sel.columns);
  d["columns_used"] = r.columns_used;
  d["passes"] = r.passes;
  d["residuals"] =
      to_numpy(std::vector<double>(r.residuals.data(), r.residuals.data() + r.residuals.size()));
  return d;
}

}  // namespace

void bind_stats(nb::module_& m) {
  m.def("stats", &stats, "store"_a, "rows"_a, "cols"_a, "threads"_a, "progress"_a.none());
  m.def("pca", &pca, "store"_a, "rows"_a, "cols"_a, "k"_a, "oversampling"_a, "power_iterations"_a,
        "scaling"_a, "seed"_a, "loadings"_a, "threads"_a, "progress"_a.none());
}

}  // namespace colflow::python
