// The blocks of columns of the association scans (column_blocks_internal.hpp).
#include <algorithm>

#include "analysis/scans/column_blocks_internal.hpp"
#include "colflow/kernels/genotype_kernels.hpp"

namespace colflow::detail {

column_block::column_block(std::size_t capacity, std::size_t rows, bool codes)
    : codes_only_(codes),
      rows_(rows),
      bytes_(codes ? genotype_column_bytes(rows) : 0),
      codes_(capacity * bytes_),
      values_(codes ? 0 : capacity * rows),
      columns_(capacity),
      positions_(capacity) {}

bool column_block::add(const column_view<double>& v) {
  if (codes_only_)
    std::copy_n(v.codes.begin(), bytes_,
                codes_.begin() + static_cast<std::ptrdiff_t>(filled_ * bytes_));
  else
    std::copy_n(v.values.data(), rows_,
                values_.begin() + static_cast<std::ptrdiff_t>(filled_ * rows_));
  columns_[filled_] = v.column;
  positions_[filled_] = v.position;
  return ++filled_ == capacity();
}

pass_stats scan_in_blocks(column_stream<double>& stream, std::span<const std::size_t> columns,
                          column_block& block, std::size_t phenotypes, const block_tests& tests,
                          const assoc_sink& sink) {
  std::vector<assoc_result> results(block.capacity() * phenotypes);
  return stream.run(columns, [&](const column_view<double>& v) {
    if (!block.add(v) && v.position + 1 != columns.size()) return true;
    // The block holds copies: the pass never returns to its columns' frames, which leave the
    // resident set (they stay in the page cache).
    stream.source().drop_pages(block.column(0), block.column(block.size() - 1));
    tests(block, std::span(results).first(block.size() * phenotypes));
    for (std::size_t c = 0; c < block.size(); ++c)
      sink(block.position(c), block.column(c),
           std::span<const assoc_result>(results.data() + c * phenotypes, phenotypes));
    block.clear();
    return true;
  });
}

}  // namespace colflow::detail
