// The table of `colflow stats`, written from column_summaries().
#include <limits>
#include <string>

#include "analysis/shared/result_table_internal.hpp"
#include "colflow/analysis/stats.hpp"
#include "colflow/error.hpp"
#include "io/tsv_writer_internal.hpp"

namespace colflow {

void write_stats(const store& s, const selection& sel, std::span<const column_summary> summaries,
                 const std::filesystem::path& file, int digits) {
  detail::check_digits(digits);
  if (summaries.size() != sel.columns.size())
    throw error(errc::invalid_argument, "write_stats: " + std::to_string(summaries.size()) +
                                            " summaries for " + std::to_string(sel.columns.size()) +
                                            " selected columns");
  tsv_writer out(file, digits);
  const bool genotype = holds_variants(s.type());
  if (genotype)
    detail::write_header(out, {"#CHR", "ID", "POS", "A1", "A2", "OBS_CT", "MISSING_CT", "F_MISS",
                               "A1_FREQ", "MEAN", "SD"});
  else
    detail::write_header(out, {"ID", "OBS_CT", "MISSING_CT", "MEAN", "SD", "MIN", "MAX"});
  const auto& columns = s.columns();
  for (std::size_t k = 0; k < summaries.size(); ++k) {
    const column_info& c = columns[sel.columns[k]];
    const column_summary& r = summaries[k];
    if (genotype) {
      out.text(c.chrom).text(c.id).text(c.pos).text(c.a1).text(c.a2);
      // Over the counted samples: the selected ones, but on Y only the males (PLINK 2's .vmiss).
      const double counted = static_cast<double>(r.observed + r.missing);
      out.integer(r.observed).integer(r.missing);
      out.number(counted > 0 ? static_cast<double>(r.missing) / counted
                             : std::numeric_limits<double>::quiet_NaN());
      out.number(r.a1_freq).number(r.mean).number(r.sd);
    } else {
      out.text(c.id).integer(r.observed).integer(r.missing).number(r.mean).number(r.sd);
      out.number(r.min).number(r.max);
    }
    out.end_line();
  }
  out.commit();
}

}  // namespace colflow
