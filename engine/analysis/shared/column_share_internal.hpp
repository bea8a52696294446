// The scans' split of their columns among the processes of a run (docs/DESIGN.md §4.9): each
// process streams a contiguous range of the selected columns, the ranges balanced by the bytes
// the columns take in the store, and the per-column results are then exchanged so that every
// process holds all of them, in the selection's order.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "colflow/analysis/analysis.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/communicator.hpp"
#include "colflow/store/store.hpp"

namespace colflow::detail {

struct column_share {
  std::size_t begin = 0, end = 0;   // this process's positions in the selection
  std::vector<std::size_t> counts;  // columns of each process, in rank order
};

// Process r takes the columns whose stored bytes before them are in [r·T/R, (r+1)·T/R), T the
// bytes of all the selected columns: the split depends on the store and the selection only.
column_share share_columns(const store& s, std::span<const std::size_t> columns,
                           const communicator& processes);

// This process's part of a scan on several processes: its share of `sel`'s columns, the
// selection of those columns alone, and `options` for scanning them in this process alone.
struct scan_part {
  column_share share;
  selection columns;
  analysis_options alone;
};
scan_part part_of_scan(const store& s, const selection& sel, const analysis_options& options);

// Gives every process every process's records, `width` doubles per column of its share, in
// position order: `mine` has width · (end − begin) doubles; the result width · all columns.
std::vector<double> gather_records(const column_share& share, communicator& processes,
                                   std::span<const double> mine, std::size_t width);

}  // namespace colflow::detail
