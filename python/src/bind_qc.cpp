// Quality control: qc (plink2's filters, `colflow qc`), clump (PLINK 1.9's --clump), hardy (the
// exact Hardy-Weinberg test per column, `colflow hardy`) and king (KING-robust kinship of sample
// pairs, `colflow king`), run as the commands run them and returned as numpy arrays.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "colflow/analysis/clump.hpp"
#include "colflow/analysis/hardy.hpp"
#include "colflow/analysis/king.hpp"
#include "colflow/analysis/p_value_table.hpp"
#include "colflow/analysis/qc_filters.hpp"
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

// `colflow king`: the pairs (i, j), i > j positions among the selected samples, whose kinship is
// at least `table_filter` (every pair without one), with their counts and kinship; and with a
// `cutoff`, the positions king_cutoff_removals removes over the pairs whose kinship exceeds it.
// The counts are made in bands of samples within `memory_limit` bytes (0: one band).
nb::dict king(const py_store& ps, index_array rows, index_array cols,
              std::optional<double> table_filter, std::optional<double> cutoff,
              std::uint64_t memory_limit, int threads, nb::object progress) {
  const auto s = ps.get();
  const selection sel = make_selection(*s, span_of(rows), span_of(cols));
  if (table_filter && !(*table_filter <= 0.5)) throw nb::value_error("table_filter is at most 0.5");
  if (cutoff && !(*cutoff >= 0 && *cutoff < 0.5))
    throw nb::value_error("cutoff is from 0 to below 0.5");
  const double keep_from = table_filter.value_or(-std::numeric_limits<double>::infinity());
  std::vector<std::int64_t> first, second;
  std::vector<std::uint64_t> nsnp, hethet, ibs0, het_hom, hom_het;
  std::vector<double> kinship;
  std::vector<std::pair<std::size_t, std::size_t>> related;
  const auto take = [&](const king_band& band) {
    for (std::size_t i = band.first_row; i < band.first_row + band.rows; ++i)
      for (std::size_t j = 0; j < i; ++j) {
        const king_pair_counts& c = band.pair(i, j);
        const double k = king_kinship(c);
        if (cutoff && k > *cutoff) related.emplace_back(i, j);
        if (k < keep_from) continue;  // NaN (0/0) is kept, as the command keeps it
        first.push_back(static_cast<std::int64_t>(i));
        second.push_back(static_cast<std::int64_t>(j));
        nsnp.push_back(c.called());
        hethet.push_back(c.hethet);
        ibs0.push_back(c.ibs0);
        het_hom.push_back(c.het_hom);
        hom_het.push_back(c.hom_het);
        kinship.push_back(k);
      }
  };
  python_call call(std::move(progress), {});
  const analysis_options options = call.options();
  std::vector<std::size_t> removed;
  call.run(threads, [&] {
    king_options k;
    k.memory_limit = memory_limit;
    colflow::king(*s, sel, k, options, take);
    if (cutoff) removed = king_cutoff_removals(sel.rows.size(), related);
  });
  nb::dict d;
  d["rows"] = indices_to_numpy(sel.rows);
  d["first"] = to_numpy(std::move(first));
  d["second"] = to_numpy(std::move(second));
  d["nsnp"] = to_numpy(std::move(nsnp));
  d["hethet"] = to_numpy(std::move(hethet));
  d["ibs0"] = to_numpy(std::move(ibs0));
  d["het_hom"] = to_numpy(std::move(het_hom));
  d["hom_het"] = to_numpy(std::move(hom_het));
  d["kinship"] = to_numpy(std::move(kinship));
  d["removed"] = cutoff ? indices_to_numpy(removed) : nb::none();
  return d;
}

// `colflow qc`: the selection narrowed by plink2's filters (each given only when set; `hwe` the
// threshold, with `hwe_midp` and `hwe_keep_fewhet` its modifiers), what each removed and
// plink2's log lines.
nb::dict qc(const py_store& ps, index_array rows, index_array cols, std::optional<double> mind,
            std::optional<double> geno, std::optional<double> hwe, bool hwe_midp,
            bool hwe_keep_fewhet, std::optional<double> min_maf, std::optional<double> max_maf,
            std::optional<double> min_mac, std::optional<double> max_mac, bool nonfounders,
            const std::optional<std::vector<std::string>>& sex, double hard_call_threshold,
            int threads, nb::object progress) {
  const auto s = ps.get();
  const selection sel = make_selection(*s, span_of(rows), span_of(cols));
  const std::vector<sample_sex> sexes = sexes_with(*s, sex);
  qc_filter_options o;
  o.mind = mind;
  o.geno = geno;
  if (hwe) o.hwe = hwe_filter{*hwe, hwe_midp, hwe_keep_fewhet};
  o.min_maf = min_maf;
  o.max_maf = max_maf;
  o.min_mac = min_mac;
  o.max_mac = max_mac;
  o.nonfounders = nonfounders;
  o.hard_call_threshold = hard_call_threshold;
  check_qc_filter_options(o);
  qc_filter_result r;
  python_call call(std::move(progress), {});
  const analysis_options options = call.options();
  call.run(threads, [&] { r = apply_qc_filters(*s, sel, sexes, o, options); });
  nb::dict d;
  d["rows"] = indices_to_numpy(r.selected.rows);
  d["columns"] = indices_to_numpy(r.selected.columns);
  d["removed"] =
      nb::make_tuple(r.removed.mind, r.removed.geno, r.removed.hwe, r.removed.allele_frequency);
  d["log"] = qc_filter_log(o, r);
  return d;
}

// The P-value tables of `clump`, in order: paths[k] read by the library's reader (with the
// column names given, else its defaults) or, where it is empty, the IDs and P-values given.
std::vector<p_value_table> clump_tables(const std::vector<std::string>& paths,
                                        const std::vector<std::vector<std::string>>& ids,
                                        const std::vector<std::vector<double>>& ps,
                                        const std::vector<std::string>& id_fields,
                                        const std::vector<std::string>& p_fields) {
  p_value_table_options o;
  if (!id_fields.empty()) o.id_fields = id_fields;
  if (!p_fields.empty()) o.p_fields = p_fields;
  std::vector<p_value_table> tables;
  for (std::size_t k = 0; k < paths.size(); ++k) {
    if (!paths[k].empty()) {
      tables.push_back(read_p_value_table(paths[k], o));
      continue;
    }
    p_value_table t;
    t.path = "table " + std::to_string(k + 1) + " (a DataFrame)";
    for (std::size_t i = 0; i < ids[k].size(); ++i)
      if (!std::isnan(ps[k][i]))
        t.entries.push_back({ids[k][i], ps[k][i], i + 1});
      else
        ++t.not_available;
    tables.push_back(std::move(t));
  }
  return tables;
}

// `colflow clump`: per clump its index (a store column), table, P, the five counts and the
// listed members (store columns and tables); the top variants the store lacks.
nb::dict clump(const py_store& ps, index_array rows, index_array cols,
               const std::vector<std::string>& paths,
               const std::vector<std::vector<std::string>>& ids,
               const std::vector<std::vector<double>>& p_values,
               const std::vector<std::string>& id_fields, const std::vector<std::string>& p_fields,
               double p1, double p2, double r2, double kb, bool allow_overlap, int threads,
               nb::object progress) {
  const auto s = ps.get();
  const selection sel = make_selection(*s, span_of(rows), span_of(cols));
  clump_options o{p1, p2, r2, kb, allow_overlap};
  check_clump_options(o);
  clump_result r;
  python_call call(std::move(progress), {});
  const analysis_options options = call.options();
  call.run(threads, [&] {
    const auto tables = clump_tables(paths, ids, p_values, id_fields, p_fields);
    r = colflow::clump(*s, sel, tables, o, options);
  });
  std::vector<std::int64_t> index, file;
  std::vector<double> p;
  std::vector<std::uint64_t> counts;
  nb::list members;
  for (const clump_group& g : r.clumps) {
    index.push_back(static_cast<std::int64_t>(sel.columns[g.index]));
    file.push_back(g.file);
    p.push_back(g.p);
    counts.insert(counts.end(), std::begin(g.counts), std::end(g.counts));
    nb::list listed;
    for (const clump_member& m : g.members)
      listed.append(nb::make_tuple(sel.columns[m.column], m.file));
    members.append(listed);
  }
  nb::list absent;
  for (const clump_absent& a : r.absent) absent.append(nb::make_tuple(a.id, a.p));
  nb::dict d;
  d["index"] = to_numpy(std::move(index));
  d["file"] = to_numpy(std::move(file));
  d["p"] = to_numpy(std::move(p));
  d["counts"] = to_numpy(std::move(counts));
  d["members"] = members;
  d["absent"] = absent;
  d["top_variants"] = r.top_variants;
  return d;
}

}  // namespace

void bind_qc(nb::module_& m) {
  m.def("clump", &clump, "store"_a, "rows"_a, "cols"_a, "paths"_a, "ids"_a, "p_values"_a,
        "id_fields"_a, "p_fields"_a, "p1"_a, "p2"_a, "r2"_a, "kb"_a, "allow_overlap"_a, "threads"_a,
        "progress"_a.none());
  m.def("qc", &qc, "store"_a, "rows"_a, "cols"_a, "mind"_a.none(), "geno"_a.none(), "hwe"_a.none(),
        "hwe_midp"_a, "hwe_keep_fewhet"_a, "min_maf"_a.none(), "max_maf"_a.none(),
        "min_mac"_a.none(), "max_mac"_a.none(), "nonfounders"_a, "sex"_a.none(),
        "hard_call_threshold"_a, "threads"_a, "progress"_a.none());
  m.def("king", &king, "store"_a, "rows"_a, "cols"_a, "table_filter"_a.none(), "cutoff"_a.none(),
        "memory_limit"_a, "threads"_a, "progress"_a.none());
  m.def("hardy", &hardy, "store"_a, "rows"_a, "cols"_a, "sex"_a.none(), "hard_call_threshold"_a,
        "threads"_a, "progress"_a.none());
}

}  // namespace colflow::python
