// The command's input files read for Python: phenotype and covariate files, sample lists and
// sex files given as paths, by the library's own readers with the command's rules, matched to
// a store's samples.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "colflow/analysis/phenotype.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/analysis/sex_chromosomes.hpp"

using namespace nb::literals;

namespace colflow::python {
namespace {

// read_phenotypes for the store's samples: the names and the values, store rows x names in
// column-major order (NaN where missing or not in the file).
nb::dict read_table(const py_store& ps, const std::string& path, const std::string& default_name) {
  const auto s = ps.get();
  phenotype_table t = read_phenotypes(path, s->samples(), {}, default_name);
  const auto* data = t.values.data();
  std::vector<double> values(data, data + t.values.size());
  nb::dict d;
  d["names"] = t.names;
  d["values"] = to_numpy(std::move(values));
  return d;
}

// The store rows a --keep list selects, increasing.
nb::object keep_rows(const py_store& ps, const std::string& path) {
  const auto s = ps.get();
  selection_files files;
  files.keep = path;
  return indices_to_numpy(select(*s, files).rows);
}

// Each store sample's sex after a --sex file: "1" male, "2" female, "0" unknown.
std::vector<std::string> read_sexes(const py_store& ps, const std::string& path) {
  const auto s = ps.get();
  const std::vector<sample_sex> sexes = read_sex_file(path, s->samples(), sexes_of(s->samples()));
  std::vector<std::string> codes;
  codes.reserve(sexes.size());
  for (const sample_sex x : sexes) codes.push_back(std::to_string(static_cast<int>(x)));
  return codes;
}

}  // namespace

void bind_inputs(nb::module_& m) {
  m.def("read_table", &read_table, "store"_a, "path"_a, "default_name"_a);
  m.def("keep_rows", &keep_rows, "store"_a, "path"_a);
  m.def("read_sexes", &read_sexes, "store"_a, "path"_a);
}

}  // namespace colflow::python
