/// @file sample_blocks.hpp
/// Sample blocks: the unit of arithmetic of the iterative analyses (docs/DESIGN.md §4.8).
///
/// The rows of a store are cut into consecutive blocks of `sample_block_rows` rows (the last
/// one shorter). Every per-column reduction (a dot product with the residual, a sum, a sum of
/// squares) is computed block by block and the block partials are added in block order; every
/// per-column update (r −= δz) is done block by block. Which thread computes a block, how many
/// threads there are, or whether the blocks run in parallel at all never changes a bit of the
/// result: a block's partial is one fixed computation, and the sum over blocks one fixed order.
///
/// The block size is a constant, so the split depends on the number of rows only. It is a
/// multiple of 4, so every block starts on a whole byte of packed 2-bit genotype codes and the
/// packed-code kernels run on a block as on a short column. A column of at most one block
/// (uk10k's 3,642 samples) is computed exactly as a single call of those kernels.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <vector>

namespace colflow {

/// Rows per sample block: 1,024 bytes of packed codes, 32 KiB of a double residual.
inline constexpr std::size_t sample_block_rows = 4096;

/// Columns shorter than this are computed on the calling thread: below it, meeting the other
/// threads at the end of every column costs more than their share of the work saves (measured
/// on 2 cores: a fork and join costs about 1.5 µs, a packed dot product of 16,384 rows about
/// 5 µs). The choice never changes a result.
inline constexpr std::size_t parallel_rows_threshold = 4 * sample_block_rows;

/// The blocks of a column of `rows` rows, and the loops over them. Not thread-safe: one loop at
/// a time per object (it keeps the partials of its last reduction and the threads' affinity to
/// their blocks, so a thread finds its share of a residual in its own cache column after column).
class sample_blocks {
 public:
  /// `parallel`: may loops run across the threads of the calling task arena (false: always on
  /// the calling thread; results are the same).
  explicit sample_blocks(std::size_t rows, bool parallel = true)
      : rows_(rows),
        count_((rows + sample_block_rows - 1) / sample_block_rows),
        parallel_(parallel && rows >= parallel_rows_threshold),
        affinity_(std::make_unique<tbb::affinity_partitioner>()) {}

  std::size_t rows() const noexcept { return rows_; }
  /// Number of blocks (0 for no rows).
  std::size_t count() const noexcept { return count_; }
  /// First row of block b, and its number of rows.
  static constexpr std::size_t first(std::size_t b) noexcept { return b * sample_block_rows; }
  std::size_t size(std::size_t b) const noexcept {
    return std::min(sample_block_rows, rows_ - first(b));
  }
  /// Loops go across threads (long columns, more than one thread allowed: the calling arena's
  /// concurrency capped by any tbb::global_control, as `--threads` sets it).
  bool parallel() const noexcept {
    return parallel_ && tbb::this_task_arena::max_concurrency() > 1 &&
           tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism) > 1;
  }

  /// Calls f(b, first_row, rows) once for every block; blocks may run at the same time on
  /// different threads, so f may write only what belongs to its block.
  template <typename F>
  void for_each(F&& f) {
    if (!parallel()) {
      for (std::size_t b = 0; b < count_; ++b) f(b, first(b), size(b));
      return;
    }
    // Isolated: while it waits for the other threads' blocks, the calling thread takes no
    // unrelated task (a decode of the flow graph, say) that would hold up the next column.
    tbb::this_task_arena::isolate([&] {
      tbb::parallel_for(
          tbb::blocked_range<std::size_t>(0, count_),
          [&](const tbb::blocked_range<std::size_t>& range) {
            for (std::size_t b = range.begin(); b != range.end(); ++b) f(b, first(b), size(b));
          },
          *affinity_);
    });
  }

  /// K sums over the rows at once: f(b, first_row, rows, partial) writes block b's K partials
  /// into partial[0..K); the result is, for each k, the partials added in block order (0 + p₀)
  /// + p₁ + ...
  template <std::size_t K, typename F>
  std::array<double, K> sums(F&& f) {
    partials_.resize(K * count_);
    for_each([&](std::size_t b, std::size_t first_row, std::size_t rows) {
      f(b, first_row, rows, partials_.data() + K * b);
    });
    std::array<double, K> total{};
    for (std::size_t b = 0; b < count_; ++b)
      for (std::size_t k = 0; k < K; ++k) total[k] += partials_[K * b + k];
    return total;
  }

  /// One sum: f(b, first_row, rows) returns block b's partial.
  template <typename F>
  double sum(F&& f) {
    return sums<1>([&](std::size_t b, std::size_t first_row, std::size_t rows, double* out) {
      out[0] = f(b, first_row, rows);
    })[0];
  }

 private:
  std::size_t rows_, count_;
  bool parallel_;
  std::unique_ptr<tbb::affinity_partitioner> affinity_;
  std::vector<double> partials_;
};

}  // namespace colflow
