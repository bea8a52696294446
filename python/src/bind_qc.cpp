// Quality control: hardy (the exact Hardy-Weinberg test per column, `colflow hardy`), run as the
// command runs it and returned as numpy arrays.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "colflow/analysis/hardy.hpp"
#include "python_call.hpp"

using namespace nb::literals;

namespace colflow::python {
namespace {

// `colflow hardy`: per selected column the counts in the store's alleles (A1 the .bim's fifth
// column), the males' calls on X, the test's P and mid-p (NaN where none is made) and whether
// the column is on X; the selected columns (increasing).
nb::dict hardy(const py_store& ps, index_array rows, index_array cols,
               const std::optional<std::vector<std::string>>& sex, double hard_call_threshold,
               int threads, nb::object progress) {
  const auto s = ps.get();
  const selection sel = make_selection(*s, span_of(rows), span_of(cols));
  const std::vector<sample_sex> sexes = sexes_with(*s, sex);
  hardy_options o;
  o.hard_call_threshold = hard_call_threshold;
  std::vector<hardy_result> results;
  python_call call(std::move(progress), {});
  const analysis_options options = call.options();
  call.run(threads, [&] { results = colflow::hardy(*s, sel, sexes, o, options); });
  const std::size_t m = results.size();
  std::vector<std::uint64_t> hom_a1(m), het(m), hom_a2(m), male_a1(m), male_a2(m);
  std::vector<double> p(m), midp(m);
  std::vector<std::uint8_t> on_x(m);
  for (std::size_t k = 0; k < m; ++k) {
    const hardy_result& r = results[k];
    hom_a1[k] = r.genotypes.hom_a1;
    het[k] = r.genotypes.het;
    hom_a2[k] = r.genotypes.hom_a2;
    male_a1[k] = r.males.a1;
    male_a2[k] = r.males.a2;
    p[k] = r.test.p;
    midp[k] = r.test.midp;
    on_x[k] = r.kind == chromosome_kind::x;
  }
  nb::dict d;
  d["column"] = indices_to_numpy(sel.columns);
  d["hom_a1"] = to_numpy(std::move(hom_a1));
  d["het"] = to_numpy(std::move(het));
  d["hom_a2"] = to_numpy(std::move(hom_a2));
  d["male_a1"] = to_numpy(std::move(male_a1));
  d["male_a2"] = to_numpy(std::move(male_a2));
  d["p"] = to_numpy(std::move(p));
  d["midp"] = to_numpy(std::move(midp));
  d["on_x"] = to_numpy(std::move(on_x));
  return d;
}

}  // namespace

void bind_qc(nb::module_& m) {
  m.def("hardy", &hardy, "store"_a, "rows"_a, "cols"_a, "sex"_a.none(), "hard_call_threshold"_a,
        "threads"_a, "progress"_a.none());
}

}  // namespace colflow::python
