#include "colflow/analysis/stats.hpp"

#include <algorithm>
#include <cmath>

#include "analysis/column_share_internal.hpp"
#include "analysis/selected_stats_internal.hpp"

namespace colflow {
namespace {

// The summary of a column's statistics over `n` selected samples.
column_summary summary_of(const column_stats& st, std::size_t n) {
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
  const std::size_t kept = sel.rows.size();
  const bool genotype = s.type() == value_type::genotype;

  if (holds_variants(s.type()) && sel.all_rows()) {
    // Every figure was computed at preprocessing and is kept in the index (docs/DESIGN.md §2).
    for (std::size_t k = 0; k < sel.columns.size(); ++k)
      out[k] = summary_of(s.entry(sel.columns[k]).stats, kept);
    return out;
  }

  if (distributed(options.processes)) {
    // Each process reads its share of the columns; the summaries are then exchanged.
    const detail::scan_part part = detail::part_of_scan(s, sel, options);
    constexpr std::size_t width = 7;
    std::vector<double> records;
    for (const column_summary& r : column_summaries(s, part.columns, part.alone))
      records.insert(records.end(),
                     {static_cast<double>(r.observed), static_cast<double>(r.missing), r.a1_freq,
                      r.mean, r.sd, r.min, r.max});
    const std::vector<double> all =
        detail::gather_records(part.share, *options.processes, records, width);
    for (std::size_t k = 0; k < out.size(); ++k) {
      const double* x = all.data() + width * k;
      out[k] = {static_cast<std::uint64_t>(x[0]),
                static_cast<std::uint64_t>(x[1]),
                x[2],
                x[3],
                x[4],
                x[5],
                x[6]};
    }
    return out;
  }

  stream_options so = options.stream;
  so.values = decode_as::stored;
  so.decode_values = !genotype;
  column_stream<double> stream(s, so);
  if (options.progress)
    stream.on_progress([&](const pass_progress& p) { options.progress("stats", p); });
  detail::selected_stats statistics(s, sel.row_kept);
  stream.run(sel.columns, [&](const column_view<double>& v) {
    column_summary& r = out[v.position];
    r = summary_of(statistics(v), kept);
    for (double x : statistics.kept_values())  // dense columns only
      if (!std::isnan(x)) {
        r.min = std::isnan(r.min) ? x : std::min(r.min, x);
        r.max = std::isnan(r.max) ? x : std::max(r.max, x);
      }
    return true;
  });
  return out;
}

}  // namespace colflow
