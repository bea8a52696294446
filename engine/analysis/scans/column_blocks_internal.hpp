// The association scans' blocks of columns: streamed columns are copied into a block, the
// block's columns are tested together once it is full (or the pass's last column is in), and
// their results reach the sink in column order. Each column's tests depend on that column
// alone, so the grouping into blocks, and how a test spreads a block over the threads, never
// change a result. Shared by the linear and the logistic scans.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "colflow/analysis/assoc.hpp"
#include "colflow/stream/column_stream.hpp"

namespace colflow::detail {

class column_block {
 public:
  // Room for `capacity` columns of `rows` samples: their packed genotype codes when `codes`,
  // their decoded values otherwise.
  column_block(std::size_t capacity, std::size_t rows, bool codes);

  std::size_t capacity() const noexcept { return columns_.size(); }
  std::size_t size() const noexcept { return filled_; }
  std::size_t rows() const noexcept { return rows_; }
  // Whether the block holds packed codes (not values).
  bool codes_only() const noexcept { return codes_only_; }
  // Column c of the block (c < size()): its packed codes, or its `rows` values.
  std::span<const std::uint8_t> codes(std::size_t c) const noexcept {
    return {codes_.data() + c * bytes_, bytes_};
  }
  const double* values(std::size_t c) const noexcept { return values_.data() + c * rows_; }
  // Its store column and its position in the pass's order.
  std::size_t column(std::size_t c) const noexcept { return columns_[c]; }
  std::size_t position(std::size_t c) const noexcept { return positions_[c]; }

  // Copies a streamed column in after the others; true when the block is then full.
  bool add(const column_view<double>& v);
  void clear() noexcept { filled_ = 0; }

 private:
  bool codes_only_;
  std::size_t rows_, bytes_;
  std::vector<std::uint8_t> codes_;
  std::vector<double> values_;
  std::vector<std::size_t> columns_, positions_;
  std::size_t filled_ = 0;
};

// Fills the results of a block's columns: results[c · phenotypes + q] for its column c and
// phenotype q. Called on the compute stage's thread; may spread the block over the threads.
using block_tests = std::function<void(const column_block&, std::span<assoc_result>)>;

// One pass of `stream` over `columns` (ascending), in blocks of `block.capacity()` columns
// (`block` empty), each tested by `tests` and its columns' results then handed to `sink` in
// order; a block's mapped frames are dropped from the resident set once it is copied.
pass_stats scan_in_blocks(column_stream<double>& stream, std::span<const std::size_t> columns,
                          column_block& block, std::size_t phenotypes, const block_tests& tests,
                          const assoc_sink& sink);

}  // namespace colflow::detail
