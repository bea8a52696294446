// LD columns computed from a store and held in memory (analysis/ld_columns_in_memory.hpp).
#include "colflow/analysis/ld_columns_in_memory.hpp"

#include <algorithm>
#include <charconv>

#include "colflow/error.hpp"

namespace colflow {
namespace {

std::int64_t position(const column_info& c) {
  std::int64_t pos = 0;
  std::from_chars(c.pos.data(), c.pos.data() + c.pos.size(), pos);
  return pos;
}

}  // namespace

ld_columns_in_memory::ld_columns_in_memory(const store& s, const selection& sel,
                                           const ld_options& window, const std::string& name,
                                           const analysis_options& analysis)
    : name_(name) {
  ld_options o;
  o.statistic = ld_statistic::r;
  o.shape = ld_shape::band;
  o.window = window.window;
  o.window_kb = window.window_kb;
  o.window_cm = window.window_cm;
  const ld_result band = ld(s, sel, o, analysis);
  const std::size_t m = sel.columns.size();
  variants_.reserve(m);
  for (std::size_t j : sel.columns) {
    const column_info& c = s.columns()[j];
    variants_.push_back({c.id, c.chrom, position(c), c.a1, c.a2});
    variants_.back().samples = sel.rows.size();
  }
  // Row i of the band holds r(i, i .. end_i − 1). Column j's window starts at the first row
  // whose band reaches j; rows are ordered and their ends never decrease within a chromosome,
  // so every row between that one and j reaches j too.
  std::vector<std::size_t> row_start(m + 1, 0);
  for (std::size_t i = 0; i < m; ++i) row_start[i + 1] = row_start[i] + (band.band_end[i] - i);
  first_.assign(m, 0);
  offset_.assign(m + 1, 0);
  std::size_t first = 0;
  for (std::size_t j = 0; j < m; ++j) {
    while (first < j && band.band_end[first] <= j) ++first;
    first_[j] = first;
    offset_[j + 1] = offset_[j] + (band.band_end[j] - first);
  }
  values_.assign(offset_[m], 0.0f);
  for (std::size_t j = 0; j < m; ++j) {
    float* out = values_.data() + offset_[j];
    for (std::size_t i = first_[j]; i < band.band_end[j]; ++i) {
      // r(i, j): row min(i, j) holds it, at the distance between them.
      const std::size_t lo = std::min(i, j), hi = std::max(i, j);
      out[i - first_[j]] = hi < band.band_end[lo]
                               ? static_cast<float>(band.matrix[row_start[lo] + (hi - lo)])
                               : 0.0f;
    }
  }
}

void ld_columns_in_memory::pass(std::span<const std::size_t> indices,
                                const ld_column_visitor& visit) {
  for (std::size_t j : indices) visit(column(j));
}

ld_column ld_columns_in_memory::column(std::size_t index) {
  if (index >= variants_.size())
    throw error(errc::invalid_argument, name_ + ": no variant " + std::to_string(index));
  return {
      index, first_[index],
      std::span<const float>(values_.data() + offset_[index], offset_[index + 1] - offset_[index])};
}

}  // namespace colflow
