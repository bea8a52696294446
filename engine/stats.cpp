#include "colflow/stats.hpp"

#include <algorithm>
#include <cmath>

#include "colflow/store_writer.hpp"

namespace colflow {
namespace {

column_summary genotype_summary(const genotype_counts& c, std::size_t n) {
  const column_stats st = genotype_stats(c, n);
  column_summary s;
  s.observed = st.observed;
  s.missing = n - st.observed;
  s.a1_freq = st.a1_freq;
  s.mean = st.mean;
  s.sd = st.sd;
  return s;
}

}  // namespace

std::vector<column_summary> column_summaries(const store& s, const selection& sel,
                                             const analysis_options& options) {
  std::vector<column_summary> out(sel.columns.size());
  const std::size_t n = s.num_rows(), kept = sel.rows.size();
  const bool genotype = s.type() == value_type::genotype;

  if (genotype && sel.all_rows()) {
    // Every figure was computed at preprocessing and is kept in the index (DESIGN §2).
    for (std::size_t k = 0; k < sel.columns.size(); ++k) {
      const column_stats st = s.entry(sel.columns[k]).stats;
      column_summary& r = out[k];
      r.observed = st.observed;
      r.missing = n - st.observed;
      r.a1_freq = st.a1_freq;
      r.mean = st.mean;
      r.sd = st.sd;
    }
    return out;
  }

  stream_options so = options.stream;
  so.values = decode_as::stored;
  so.decode_values = !genotype;
  column_stream<double> stream(s, so);
  if (options.progress)
    stream.on_progress([&](const pass_progress& p) { options.progress("stats", p); });
  const std::vector<std::uint8_t> mask = genotype ? make_sample_mask(sel.row_kept)
                                                  : std::vector<std::uint8_t>{};
  std::vector<double> kept_values(kept);
  stream.run(sel.columns, [&](const column_view<double>& v) {
    column_summary& r = out[v.position];
    if (genotype) {
      r = genotype_summary(count_genotypes(v.codes, n, mask), kept);
      return true;
    }
    for (std::size_t i = 0; i < kept; ++i) kept_values[i] = v.values[static_cast<Eigen::Index>(sel.rows[i])];
    const column_stats st = dense_stats(kept_values);
    r.observed = st.observed;
    r.missing = kept - st.observed;
    r.mean = st.mean;
    r.sd = st.sd;
    for (double x : kept_values)
      if (!std::isnan(x)) {
        r.min = std::isnan(r.min) ? x : std::min(r.min, x);
        r.max = std::isnan(r.max) ? x : std::max(r.max, x);
      }
    return true;
  });
  return out;
}

}  // namespace colflow
