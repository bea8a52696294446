/// @file sample_blocks_internal.hpp
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

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <type_traits>
#include <vector>

#include "colflow/communicator.hpp"

namespace colflow {

/// Rows per sample block: 1,024 bytes of packed codes, 32 KiB of a double residual.
inline constexpr std::size_t sample_block_rows = 4096;

/// Columns shorter than this are computed on the calling thread. A column of one block has
/// nothing to share; from two whole blocks on, a second thread has a whole block to take, and
/// the team beats one thread (docs/SCALING.md). The choice never changes a result.
inline constexpr std::size_t parallel_rows_threshold = 2 * sample_block_rows;

namespace detail {
class block_team;
}

/// The blocks of a column of `rows` rows, and the loops over them.
///
/// Loops over long columns run on a team of the threads of the task arena the object is made in
/// (capped by any tbb::global_control, as `colflow --threads` sets it). An iterative analysis
/// runs one short loop per column, thousands per second, and starting and joining a
/// tbb::parallel_for for each is a large part of a 100,000-sample column's work; the team's
/// threads instead wait for the next column for a few microseconds, spinning, on oneTBB worker
/// threads they give back when no column comes. Each thread works first on its own stretch of
/// blocks (so its share of a residual stays in its cache, column after column) and then helps
/// with the others'; the calling thread takes part, and never waits for a thread that has not
/// started.
///
/// Split among processes (a communicator of several, colflow/communicator.hpp), each process
/// owns a contiguous range of blocks, about as many as the others: loops visit its own blocks
/// only, and sums exchange the blocks' partials (one collective per call) so that every process
/// adds all of them in block order, as a single process does. A per-row vector that loops
/// update is then current on each process's own rows only; gather() makes it whole.
///
/// Not thread-safe: one loop at a time per object, from one thread at a time.
class sample_blocks {
 public:
  /// Loops run across threads when the column has at least `parallel_from` rows (and more than
  /// one thread is allowed); sample_blocks::never keeps them on the calling thread. Results are
  /// the same either way. With a communicator of several processes, this process takes its
  /// share of the blocks (every process must then call each sum in the same order).
  explicit sample_blocks(std::size_t rows, std::size_t parallel_from = parallel_rows_threshold,
                         communicator* processes = nullptr);
  static constexpr std::size_t never = ~std::size_t{0};
  ~sample_blocks();
  sample_blocks(sample_blocks&&) noexcept;
  sample_blocks& operator=(sample_blocks&&) noexcept;

  std::size_t rows() const noexcept { return rows_; }
  /// Number of blocks (0 for no rows).
  std::size_t count() const noexcept { return count_; }
  /// First row of block b, and its number of rows.
  static constexpr std::size_t first(std::size_t b) noexcept { return b * sample_block_rows; }
  std::size_t size(std::size_t b) const noexcept {
    return std::min(sample_block_rows, rows_ - first(b));
  }
  /// Loops run across threads (a long column, and more than one thread allowed).
  bool parallel() const noexcept { return team_ != nullptr; }
  /// This process's blocks: [own_begin(), own_end()); all of them without a communicator.
  std::size_t own_begin() const noexcept { return own_begin_; }
  std::size_t own_end() const noexcept { return own_end_; }

  /// Makes every process's copy of `v` (one entry per row) whole: each process's own rows are
  /// sent to the others. A collective; nothing to do in a single process.
  void gather(std::span<double> v);

  /// Calls f(b, first_row, rows) once for every block; blocks may run at the same time on
  /// different threads, so f may write only what belongs to its block. f must not throw.
  template <typename F>
  void for_each(F&& f) {
    if (!team_) {
      for (std::size_t b = own_begin_; b < own_end_; ++b) f(b, first(b), size(b));
      return;
    }
    run(
        [](void* context, std::size_t b, std::size_t first_row, std::size_t rows) noexcept {
          (*static_cast<std::remove_reference_t<F>*>(context))(b, first_row, rows);
        },
        &f);
  }

  /// K sums over the rows at once: f(b, first_row, rows, partial) writes block b's K partials
  /// into partial[0..K); the result is, for each k, the partials added in block order
  /// ((0 + p₀) + p₁) + ...
  template <std::size_t K, typename F>
  std::array<double, K> sums(F&& f) {
    partials_.resize(K * count_);
    for_each([&](std::size_t b, std::size_t first_row, std::size_t rows) {
      f(b, first_row, rows, partials_.data() + K * b);
    });
    if (distributed(processes_)) exchange_partials(K);
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
  using block_function = void (*)(void*, std::size_t, std::size_t, std::size_t) noexcept;
  void run(block_function f, void* context);
  // Every process's blocks' partials (k per block) into partials_, from their owners.
  void exchange_partials(std::size_t k);

  std::size_t rows_, count_;
  communicator* processes_ = nullptr;
  std::size_t own_begin_ = 0, own_end_ = 0;
  std::vector<double> outgoing_;
  std::vector<std::size_t> counts_;
  std::unique_ptr<detail::block_team> team_;
  std::vector<double> partials_;
};

}  // namespace colflow
