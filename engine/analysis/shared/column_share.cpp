// The scans' split of their columns among processes, balanced by stored bytes, and the gather.
#include "analysis/shared/column_share_internal.hpp"
#include "colflow/error.hpp"

namespace colflow::detail {

column_share share_columns(const store& s, std::span<const std::size_t> columns,
                           const communicator& processes) {
  const auto size = static_cast<std::size_t>(processes.size());
  const auto rank = static_cast<std::size_t>(processes.rank());
  std::vector<std::uint64_t> before(columns.size() + 1, 0);  // stored bytes before position p
  for (std::size_t p = 0; p < columns.size(); ++p)
    before[p + 1] = before[p] + s.entry(columns[p]).frame_size;
  const std::uint64_t total = before.back();
  // The first position of process r: the first whose bytes before it reach r·T/R (integer
  // arithmetic, so every process computes the same boundaries).
  std::vector<std::size_t> first(size + 1, columns.size());
  for (std::size_t r = 0, p = 0; r < size; ++r) {
    // ⌊T·r/R⌋ without overflow: (T div R)·r + ⌊(T mod R)·r / R⌋.
    const std::uint64_t target = total / size * r + total % size * r / size;
    while (p < columns.size() && before[p] < target) ++p;
    first[r] = p;
  }
  column_share share;
  share.begin = first[rank];
  share.end = first[rank + 1];
  for (std::size_t r = 0; r < size; ++r) share.counts.push_back(first[r + 1] - first[r]);
  return share;
}

scan_part part_of_scan(const store& s, const selection& sel, const analysis_options& options) {
  scan_part part{share_columns(s, sel.columns, *options.processes), sel, options};
  part.columns.columns.assign(sel.columns.begin() + static_cast<std::ptrdiff_t>(part.share.begin),
                              sel.columns.begin() + static_cast<std::ptrdiff_t>(part.share.end));
  part.alone.processes = nullptr;
  return part;
}

std::vector<double> gather_records(const column_share& share, communicator& processes,
                                   std::span<const double> mine, std::size_t width) {
  std::vector<std::size_t> counts;
  std::size_t total = 0;
  for (std::size_t c : share.counts) {
    counts.push_back(c * width);
    total += c * width;
  }
  if (mine.size() != width * (share.end - share.begin))
    throw error(errc::invalid_argument, "gather_records: this process's records do not fit");
  std::vector<double> all(total);
  processes.all_gather(mine, all, counts);
  return all;
}

}  // namespace colflow::detail
