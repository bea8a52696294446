// The files of `colflow king`: PLINK 2's .kin0 table and the ID lists of its --king-cutoff,
// written band by band from king()'s counts.
#include <cmath>
#include <optional>
#include <string>

#include "analysis/shared/result_table_internal.hpp"
#include "colflow/analysis/king.hpp"
#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"
#include "io/plink_number_internal.hpp"
#include "io/tsv_writer_internal.hpp"

namespace colflow {
namespace {

void check_outputs(const king_outputs& o) {
  if (!o.table && !o.cutoff)
    throw error(errc::invalid_argument, "king: nothing to write (neither the table nor a cutoff)");
  if (o.table_filter && !(*o.table_filter <= 0.5))
    throw error(errc::invalid_argument, "king: table filter " + std::to_string(*o.table_filter) +
                                            " is above 0.5, the largest kinship");
  if (o.cutoff && !(*o.cutoff >= 0 && *o.cutoff < 0.5))
    throw error(errc::invalid_argument,
                "king: cutoff " + std::to_string(*o.cutoff) + " is outside [0, 0.5)");
}

void write_header(tsv_writer& out, const king_table_columns& c) {
  std::vector<std::string_view> names;
  if (c.id) {
    if (c.fid) names.push_back("FID1");
    names.push_back("IID1");
    if (c.fid) names.push_back("FID2");
    names.push_back("IID2");
  }
  if (c.nsnp) names.push_back("NSNP");
  if (c.hethet) names.push_back("HETHET");
  if (c.ibs0) names.push_back("IBS0");
  if (c.ibs1) {
    names.push_back("HET1_HOM2");
    names.push_back("HET2_HOM1");
  }
  if (c.kinship) names.push_back("KINSHIP");
  for (std::size_t k = 0; k < names.size(); ++k) {
    // Appended, not "#" + name: GCC 12 warns of a false overlap in the latter at -O3.
    std::string name(k == 0 ? "#" : "");
    out.text(name.append(names[k]));
  }
  out.end_line();
}

// A number as plink2 prints one: at its 6 digits with its rounding (io/plink_number_internal.hpp),
// otherwise to `digits` digits; NaN as "nan" (the shares when no variant has both calls, the
// kinship of 0/0).
void write_number(tsv_writer& out, double v, int digits) {
  if (digits == 6) {
    std::string text;
    append_plink_g6(text, v);
    out.text(text);
  } else if (std::isnan(v)) {
    out.text("nan");
  } else {
    out.number(v);
  }
}

// A count, or its share of the called variants as plink2 computes it: the count times the
// reciprocal of NSNP.
void write_share(tsv_writer& out, std::uint32_t count, double reciprocal, bool counts, int digits) {
  if (counts)
    out.integer(count);
  else
    write_number(out, reciprocal * static_cast<double>(count), digits);
}

void write_ids(tsv_writer& out, const sample_info& s) { out.text(s.fid).text(s.iid); }

// A "#FID IID" list of the samples at the given store rows.
void write_id_list(tsv_writer& out, const std::vector<sample_info>& samples,
                   const std::vector<std::size_t>& rows) {
  out.text("#FID").text("IID");
  out.end_line();
  for (const std::size_t row : rows) {
    write_ids(out, samples[row]);
    out.end_line();
  }
}

}  // namespace

struct king_writer::impl {
  impl(const store& s, const selection& selected, const std::filesystem::path& p,
       const king_outputs& o, int d)
      : source(s), sel(selected), prefix(p), outputs(o), digits(d) {}

  const store& source;
  const selection& sel;
  std::filesystem::path prefix;
  king_outputs outputs;
  int digits;
  std::optional<tsv_writer> table;
  std::size_t next_row = 0;
  std::vector<std::pair<std::size_t, std::size_t>> related;  // kinship above the cutoff
  summary done;

  void write_pair(std::size_t i, std::size_t j, const king_pair_counts& c, double kinship) {
    const king_table_columns& col = outputs.columns;
    tsv_writer& out = *table;
    if (col.id) {
      const sample_info &a = source.samples()[sel.rows[i]], &b = source.samples()[sel.rows[j]];
      if (col.fid) {
        write_ids(out, a);
        write_ids(out, b);
      } else {
        out.text(a.iid).text(b.iid);
      }
    }
    const std::uint64_t called = c.called();
    if (col.nsnp) out.integer(called);
    const double reciprocal = 1.0 / static_cast<double>(called);
    if (col.hethet) write_share(out, c.hethet, reciprocal, col.counts, digits);
    if (col.ibs0) write_share(out, c.ibs0, reciprocal, col.counts, digits);
    if (col.ibs1) {
      write_share(out, c.het_hom, reciprocal, col.counts, digits);
      write_share(out, c.hom_het, reciprocal, col.counts, digits);
    }
    if (col.kinship) write_number(out, kinship, digits);
    out.end_line();
  }
};

king_writer::king_writer(const store& s, const selection& sel, const std::filesystem::path& prefix,
                         const king_outputs& outputs, int digits)
    : impl_(std::make_unique<impl>(s, sel, prefix, outputs, digits)) {
  detail::check_digits(digits);
  check_outputs(outputs);
  if (outputs.table) {
    impl_->table.emplace(detail::prefixed(prefix, ".kin0"), digits);
    write_header(*impl_->table, outputs.columns);
  }
}

king_writer::~king_writer() = default;

void king_writer::write(const king_band& band) {
  impl& w = *impl_;
  if (band.first_row != w.next_row || band.width() > w.sel.rows.size() ||
      band.counts.size() != band.size())
    throw error(errc::invalid_argument, "king_writer: band of rows " +
                                            std::to_string(band.first_row) + "+" +
                                            std::to_string(band.rows) + " where row " +
                                            std::to_string(w.next_row) + " was expected");
  for (std::size_t i = band.first_row; i < band.width(); ++i)
    for (std::size_t j = 0; j < i; ++j) {
      const king_pair_counts& c = band.pair(i, j);
      const double kinship = king_kinship(c);
      if (w.outputs.cutoff && kinship > *w.outputs.cutoff) w.related.emplace_back(i, j);
      if (!w.table) continue;
      // A kinship of NaN (0/0) is never below the filter, as in plink2.
      if (w.outputs.table_filter && kinship < *w.outputs.table_filter) {
        ++w.done.pairs_filtered;
        continue;
      }
      w.write_pair(i, j, c, kinship);
      ++w.done.pairs_written;
    }
  w.next_row += band.rows;
}

king_writer::summary king_writer::commit() {
  impl& w = *impl_;
  if (w.next_row != w.sel.rows.size())
    throw error(errc::invalid_argument, "king_writer: " + std::to_string(w.next_row) + " of " +
                                            std::to_string(w.sel.rows.size()) + " rows written");
  const auto& samples = w.source.samples();
  std::vector<tsv_writer*> files;
  std::optional<tsv_writer> ids, kept, removed;
  if (w.table) {
    files.push_back(&*w.table);
    if (!w.outputs.columns.id) {
      ids.emplace(detail::prefixed(w.prefix, ".kin0.id"), w.digits);
      write_id_list(*ids, samples, w.sel.rows);
      files.push_back(&*ids);
    }
  }
  if (w.outputs.cutoff) {
    const std::vector<std::size_t> out = king_cutoff_removals(w.sel.rows.size(), w.related);
    std::vector<std::size_t> in_rows, out_rows;
    for (std::size_t i = 0, k = 0; i < w.sel.rows.size(); ++i) {
      const bool gone = k < out.size() && out[k] == i;
      (gone ? out_rows : in_rows).push_back(w.sel.rows[i]);
      k += gone;
    }
    kept.emplace(detail::prefixed(w.prefix, ".king.cutoff.in.id"), w.digits);
    removed.emplace(detail::prefixed(w.prefix, ".king.cutoff.out.id"), w.digits);
    write_id_list(*kept, samples, in_rows);
    write_id_list(*removed, samples, out_rows);
    files.push_back(&*kept);
    files.push_back(&*removed);
    w.done.removed = out.size();
  }
  // Everything is written and synced before the first rename.
  for (tsv_writer* f : files) f->finish();
  for (tsv_writer* f : files) {
    f->commit(staged_output::directory_sync::by_caller);
    w.done.files.push_back(f->path());
  }
  sync_directory(directory_of(w.done.files.front()));
  return w.done;
}

}  // namespace colflow
