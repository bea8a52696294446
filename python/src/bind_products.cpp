// score, ld and grm: the products of the genotype matrix, run as the commands run them and
// returned as numpy arrays (colflow/_products.py makes the DataFrames and sparse matrices).

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "colflow/analysis/grm.hpp"
#include "colflow/analysis/ld.hpp"
#include "colflow/analysis/score.hpp"
#include "colflow/error.hpp"
#include "python_call.hpp"

using namespace nb::literals;

namespace colflow::python {
namespace {

using weight_array = nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

score_options make_score_options(const std::string& scaling, bool no_mean_imputation) {
  score_options o;
  o.no_mean_imputation = no_mean_imputation;
  if (scaling == "center")
    o.scale = score_options::scaling::center;
  else if (scaling == "variance-standardize")
    o.scale = score_options::scaling::variance_standardize;
  else if (scaling != "none")
    throw nb::value_error(
        ("scaling must be None, 'center' or 'variance-standardize', not '" + scaling + "'")
            .c_str());
  return o;
}

nb::dict score_dict(const store& s, const selection& sel, const score_table& table,
                    const score_options& o, int threads, nb::object progress) {
  score_result r;
  python_call call(std::move(progress), {});
  const analysis_options options = call.options();
  call.run(threads, [&] { r = score(s, sel, table, o, options); });
  nb::dict d;
  d["format"] = table.format;
  d["names"] = r.names;
  d["rows"] = indices_to_numpy(r.rows);
  d["columns"] = indices_to_numpy(r.columns);
  d["sums"] = to_numpy(std::move(r.sums));
  d["dosage_sums"] = to_numpy(std::move(r.dosage_sums));
  d["allele_counts"] = to_numpy(std::move(r.allele_counts));
  d["denominators"] = to_numpy(std::move(r.denominators));
  d["entries_used"] = r.entries_used;
  d["missing_ids"] = r.missing_ids;
  d["allele_mismatches"] = r.allele_mismatches;
  return d;
}

// `colflow score --score FILE ID ALLELE SCORES... [header | header-read]`.
nb::dict score_from_file(const py_store& ps, index_array rows, index_array cols,
                         const std::string& path, std::size_t id_column, std::size_t allele_column,
                         const std::vector<std::size_t>& score_columns, const std::string& header,
                         const std::string& scaling, bool no_mean_imputation, int threads,
                         nb::object progress) {
  const auto s = ps.get();
  const selection sel = make_selection(*s, span_of(rows), span_of(cols));
  score_file file;
  file.path = path;
  file.id_column = id_column;
  file.allele_column = allele_column;
  file.score_columns = score_columns;
  file.header = header == "read"   ? score_file::header_line::read
                : header == "skip" ? score_file::header_line::skip
                                   : score_file::header_line::none;
  const score_table table = read_score_file(file);
  return score_dict(*s, sel, table, make_score_options(scaling, no_mean_imputation), threads,
                    std::move(progress));
}

// Scores from entries Python holds: IDs, alleles and a weight per entry and score.
nb::dict score_from_table(const py_store& ps, index_array rows, index_array cols,
                          const std::vector<std::string>& ids,
                          const std::vector<std::string>& alleles, weight_array weights,
                          const std::vector<std::string>& names, const std::string& scaling,
                          bool no_mean_imputation, int threads, nb::object progress) {
  const auto s = ps.get();
  const selection sel = make_selection(*s, span_of(rows), span_of(cols));
  if (ids.size() != alleles.size() || weights.shape(0) != ids.size() ||
      weights.shape(1) != names.size())
    throw nb::value_error("score: the IDs, alleles and weights differ in length");
  score_table table;
  table.format = "table";
  table.names = names;
  for (std::size_t e = 0; e < ids.size(); ++e) {
    score_table::entry entry{ids[e], alleles[e], e + 1, {}};
    entry.weights.assign(weights.data() + e * names.size(),
                         weights.data() + (e + 1) * names.size());
    table.entries.push_back(std::move(entry));
  }
  return score_dict(*s, sel, table, make_score_options(scaling, no_mean_imputation), threads,
                    std::move(progress));
}

// `colflow ld`: the table's pairs, or the matrix (square or band) of the selected columns.
nb::dict ld_pairs(const py_store& ps, index_array rows, index_array cols, bool r2,
                  const std::string& shape, bool inter_chr, std::int64_t window, double window_kb,
                  double window_cm, double min_r2, bool with_freqs, int threads,
                  nb::object progress) {
  const auto s = ps.get();
  const selection sel = make_selection(*s, span_of(rows), span_of(cols));
  ld_options o;
  o.statistic = r2 ? ld_statistic::r2 : ld_statistic::r;
  o.shape = shape == "square" ? ld_shape::square
            : shape == "band" ? ld_shape::band
                              : ld_shape::table;
  o.inter_chr = inter_chr;
  o.window = window;
  o.window_kb = window_kb;
  o.window_cm = window_cm;
  o.min_r2 = min_r2;
  o.with_freqs = with_freqs;
  ld_result r;
  python_call call(std::move(progress), {});
  const analysis_options options = call.options();
  call.run(threads, [&] { r = ld(*s, sel, o, options); });
  std::vector<std::uint64_t> a, b;
  std::vector<double> rv, r2v;
  for (const ld_pair& p : r.pairs) {
    a.push_back(p.a);
    b.push_back(p.b);
    rv.push_back(p.r);
    r2v.push_back(p.r2);
  }
  nb::dict d;
  d["columns"] = indices_to_numpy(sel.columns);
  d["a"] = to_numpy(std::move(a));
  d["b"] = to_numpy(std::move(b));
  d["r"] = to_numpy(std::move(rv));
  d["r2"] = to_numpy(std::move(r2v));
  d["matrix"] = to_numpy(std::move(r.matrix));
  d["band_end"] = indices_to_numpy(r.band_end);
  d["a1_freq"] = to_numpy(std::move(r.a1_freq));
  return d;
}

// `colflow grm`: the whole matrix (column-major) and its divisors, and the rows it covers.
nb::dict grm_matrix_of(const py_store& ps, index_array rows, index_array cols, bool centered,
                       bool mean_impute, int threads, nb::object progress) {
  const auto s = ps.get();
  const selection sel = make_selection(*s, span_of(rows), span_of(cols));
  grm_options o;
  o.scaling = centered ? grm_scaling::centered : grm_scaling::standardized;
  o.missing = mean_impute ? grm_missing::mean_impute : grm_missing::pairwise;
  grm_matrix g;
  python_call call(std::move(progress), {});
  const analysis_options options = call.options();
  call.run(threads, [&] { g = grm_dense(*s, sel, o, options); });
  nb::dict d;
  d["rows"] = indices_to_numpy(sel.rows);
  d["values"] = to_numpy(std::vector<double>(g.values.data(), g.values.data() + g.values.size()));
  d["variants"] =
      to_numpy(std::vector<double>(g.variants.data(), g.variants.data() + g.variants.size()));
  d["variants_used"] = g.plan.variants;
  return d;
}

}  // namespace

void bind_products(nb::module_& m) {
  m.def("score_from_file", &score_from_file, "store"_a, "rows"_a, "cols"_a, "path"_a, "id_column"_a,
        "allele_column"_a, "score_columns"_a, "header"_a, "scaling"_a, "no_mean_imputation"_a,
        "threads"_a, "progress"_a.none());
  m.def("score_from_table", &score_from_table, "store"_a, "rows"_a, "cols"_a, "ids"_a, "alleles"_a,
        "weights"_a, "names"_a, "scaling"_a, "no_mean_imputation"_a, "threads"_a,
        "progress"_a.none());
  m.def("ld", &ld_pairs, "store"_a, "rows"_a, "cols"_a, "r2"_a, "shape"_a, "inter_chr"_a,
        "window"_a, "window_kb"_a, "window_cm"_a, "min_r2"_a, "with_freqs"_a, "threads"_a,
        "progress"_a.none());
  m.def("grm", &grm_matrix_of, "store"_a, "rows"_a, "cols"_a, "centered"_a, "mean_impute"_a,
        "threads"_a, "progress"_a.none());
}

}  // namespace colflow::python
