// An LD matrix on disk as the columns a summary-statistics sampler reads (ld_matrix_columns.hpp).
#include "colflow/analysis/ld_matrix_columns.hpp"

#include <algorithm>
#include <charconv>

namespace colflow {
namespace {

// A base-pair position as the sampler's variant table keeps it; 0 where the source has none.
std::int64_t position_of(const std::string& pos) {
  std::int64_t p = 0;
  const auto [end, ec] = std::from_chars(pos.data(), pos.data() + pos.size(), p);
  return ec == std::errc{} && end == pos.data() + pos.size() ? p : 0;
}

std::vector<ld_variant> variants_of(const ld_matrix& m) {
  std::vector<ld_variant> out;
  out.reserve(m.size());
  for (const ldm_variant& v : m.variants()) {
    ld_variant x;
    x.id = v.info.id;
    x.chrom = v.info.chrom;
    x.pos = position_of(v.info.pos);
    x.a1 = v.info.a1;
    x.a2 = v.info.a2;
    x.a1_freq = v.a1_freq;
    x.samples = static_cast<std::size_t>(v.n > 0 ? v.n : m.samples());
    out.push_back(std::move(x));
  }
  return out;
}

// A column as a sampler reads it: a dense one as it is, a sparse one spread out over the span of
// its rows, zeros between them (into `spread`).
ld_column as_column(std::size_t index, std::size_t first, std::span<const std::uint32_t> rows,
                    std::span<const float> values, std::vector<float>& spread) {
  if (rows.empty()) return {index, first, values};
  const std::size_t front = rows.front();
  spread.assign(std::size_t{rows.back()} - front + 1, 0.0f);
  for (std::size_t k = 0; k < rows.size(); ++k) spread[rows[k] - front] = values[k];
  return {index, front, spread};
}

}  // namespace

ld_matrix_columns::ld_matrix_columns(ld_matrix matrix, const std::string& path,
                                     stream_options options)
    : matrix_(std::move(matrix)),
      options_(options),
      variants_(variants_of(matrix_)),
      description_(path + " (" + std::string(matrix_.source_format()) + ")") {}

void ld_matrix_columns::pass(std::span<const std::size_t> indices, const ld_column_visitor& visit) {
  const std::vector<std::size_t> order(indices.begin(), indices.end());
  matrix_.stream(
      order,
      [&](const ld_column_view& c) {
        visit(as_column(c.position, c.first, c.rows, c.values, spread_));
        return true;
      },
      options_);
}

ld_column ld_matrix_columns::column(std::size_t index) {
  const std::size_t first = matrix_.read_column(index, rows_, values_);
  return as_column(index, first, rows_, values_, spread_);
}

}  // namespace colflow
