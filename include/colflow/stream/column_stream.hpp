/// @file column_stream.hpp
/// Streaming columns of a store through a self-balancing oneTBB flow graph.
///
/// ```
///  source ─▶ limiter ─▶ decode (parallel) ─▶ sequencer ─▶ compute (serial) ─┐
///              ▲                                                            │
///              └──────────────── decrement (feedback edge) ◀────────────────┘
/// ```
/// A pass runs a kernel over any sequence of column indices (a subset, a permutation, repeats).
/// The kernel is called serially, in exactly that order, while the columns ahead of it are
/// decoded in parallel. The limiter admits a message only when compute has released one, so
/// decoding runs ahead exactly as far as compute consumes and at most `in_flight` buffers exist:
/// memory in flight is bounded by `in_flight × block bytes` whatever the number of columns.
/// The graph is built once per stream and reused by every pass.
///
/// Short columns are grouped: consecutive positions of the order travel together in one message
/// (a block of about `block_bytes` of decoded values), so the graph's per-message cost is paid
/// once per block, not once per column. The kernel still sees one column at a time, in order.
///
/// Results depend only on the data, the order and the kernel: never on the number of threads,
/// the in-flight depth or scheduling (decoding is a pure function of the frame).
#pragma once

#include <Eigen/Core>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "colflow/codec/genotype_codec.hpp"
#include "colflow/store/store.hpp"

namespace colflow {

/// How a stream decodes and schedules.
struct stream_options {
  /// Messages (blocks) admitted between the limiter and the end of compute; 0 = twice the
  /// worker threads of the calling arena.
  std::size_t in_flight = 0;
  /// Blocks decoded at once; 0 = no limit beyond in_flight.
  std::size_t decode_concurrency = 0;
  /// Standardised values (docs/DESIGN.md §2) or the stored values (dosages with NaN for missing).
  decode_as values = decode_as::standardized;
  /// Decode to values at all. Genotype kernels that work on the packed codes and the lookup
  /// table can switch it off: the stream then skips the float decode entirely.
  bool decode_values = true;
  /// Target decoded bytes per message: consecutive columns are grouped up to this size
  /// (a column larger than it travels alone).
  std::size_t block_bytes = std::size_t{1} << 20;
  /// Check each frame's checksum before decoding it.
  bool verify_checksums = false;
};

/// What the kernel receives for one column. Views are valid only during the kernel call.
template <typename T>
struct column_view {
  std::size_t column = 0;    ///< the column's index in the store
  std::size_t position = 0;  ///< its position in the pass's order
  column_stats stats;        ///< observed count, mean, SD, A1 frequency (from the index)
  /// The decoded values (empty when decode_values is off).
  Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>> values{nullptr, 0};
  /// Genotype stores: the packed 2-bit codes (ceil(n/4) bytes) and the column's lookup table
  /// for the stream's decode_as, so kernels can work without decoding. Empty otherwise.
  std::span<const std::uint8_t> codes;
  genotype_lut<T> lut{};
  /// The codes of the column the pass hands over next, when it is already decoded (empty
  /// otherwise): a kernel may ask for them early, as it computes this column.
  std::span<const std::uint8_t> next_codes;
};

/// What a pass did. compute_busy is the time spent in the kernel; compute_wait is the rest of
/// the pass's wall time, during which compute had no decoded column to work on (starved).
struct pass_stats {
  std::uint64_t columns = 0;
  std::uint64_t bytes_read = 0;     ///< frame bytes
  std::uint64_t bytes_decoded = 0;  ///< decoded value bytes handed to the kernel
  double wall_seconds = 0;
  double compute_busy_seconds = 0;
  double compute_wait_seconds = 0;
  bool stopped_early = false;  ///< the kernel asked to stop
};

/// Progress of a running pass, reported from the compute stage.
struct pass_progress {
  std::uint64_t columns_done = 0, columns_total = 0;
  std::uint64_t bytes_read = 0;
  double seconds = 0;
};

/// A kernel: called once per position of the order, serially and in order. Return false to
/// stop the pass early (e.g. on convergence). It may use nested tbb::parallel_for /
/// parallel_reduce; an exception it throws cancels the pass and reaches the caller of run()
/// as a colflow::error naming the column and position.
template <typename T>
using column_kernel = std::function<bool(const column_view<T>&)>;

/// A batch kernel: called once per message with the consecutive columns it holds, in order
/// (views valid only during the call), for passes whose columns do not depend on one another
/// (products with a fixed vector, statistics): it may spread them over threads. A pass whose
/// columns depend on the ones before takes them in order, and may still share work between
/// neighbours (BayesR's products of two columns). Return false to stop the pass after this batch.
/// Errors as for column_kernel, naming the batch's positions.
template <typename T>
using batch_kernel = std::function<bool(std::span<const column_view<T>>)>;

/// Streams the columns of one open store. T is the value type handed to kernels: double or
/// float. A stream is not thread-safe (one pass at a time) but any number of streams may
/// share a store.
template <typename T>
class column_stream {
 public:
  /// `source` must outlive the stream.
  explicit column_stream(const store& source, const stream_options& options = {});
  column_stream(column_stream&&) noexcept;
  column_stream& operator=(column_stream&&) noexcept;
  ~column_stream();

  /// Runs `kernel` over the columns `order` through the flow graph. Throws colflow::error
  /// (errc::invalid_argument for an index out of range, the decode or kernel error
  /// otherwise); the stream stays usable for the next pass.
  pass_stats run(std::span<const std::size_t> order, const column_kernel<T>& kernel);

  /// The same pass with `kernel` called once per message (about block_bytes of columns), not
  /// once per column: the batch's columns arrive together, in order.
  pass_stats run_batches(std::span<const std::size_t> order, const batch_kernel<T>& kernel);

  /// The same pass without the graph: decode then compute, one column at a time, on the
  /// calling thread. The baseline the benchmarks compare against.
  pass_stats run_sequential(std::span<const std::size_t> order, const column_kernel<T>& kernel);
  /// run_batches without the graph, as run_sequential.
  pass_stats run_batches_sequential(std::span<const std::size_t> order,
                                    const batch_kernel<T>& kernel);

  /// Called from the compute stage about every tenth of a second during a pass (and at the end).
  void on_progress(std::function<void(const pass_progress&)> callback);

  const store& source() const noexcept;
  const stream_options& options() const noexcept;
  /// The in-flight depth actually used (options.in_flight resolved).
  std::size_t in_flight() const noexcept;
  /// Columns per message for this store.
  std::size_t columns_per_block() const noexcept;
  /// The most buffers that were ever in use at once, over the stream's life (for tests of the
  /// memory bound: never above in_flight()).
  std::size_t peak_buffers_in_use() const noexcept;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

extern template class column_stream<double>;
extern template class column_stream<float>;

/// 0, 1, ..., n-1: the order of a plain pass over every column.
std::vector<std::size_t> all_columns(std::size_t n);

}  // namespace colflow
