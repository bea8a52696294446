/// @file stream_benchmark.hpp
/// How fast a store streams on this machine (`colflow bench`, like `zstd -b` for codecs):
/// timed passes of a small kernel over every column, through the flow graph (pipelined),
/// decode-then-compute on one thread (sequential), and over the matrix decoded into memory
/// first (ram, the uncompressed reference).
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>
#include <vector>

#include "colflow/store/store.hpp"
#include "colflow/stream/column_stream.hpp"

namespace colflow {

/// How the passes of a benchmark read the columns.
enum class benchmark_mode {
  pipelined,   ///< column_stream::run: the flow graph
  sequential,  ///< column_stream::run_sequential: decode then compute, one thread
  ram,         ///< every column decoded into one matrix first, then passes over it
};

/// "pipelined", "sequential", "ram".
std::string_view benchmark_mode_name(benchmark_mode mode) noexcept;

/// The kernel a pass runs on each column.
enum class benchmark_kernel {
  /// z·r, then r −= c z with a small step: the core of BayesR and coordinate descent.
  dot_axpy,
  sum,   ///< reads every value once
  none,  ///< reads nothing: a pass measures decoding alone
};

struct benchmark_options {
  /// The modes to measure; results come pipelined, sequential, then ram, whatever the order
  /// here.
  std::vector<benchmark_mode> modes = {benchmark_mode::pipelined, benchmark_mode::sequential,
                                       benchmark_mode::ram};
  std::size_t passes = 5;  ///< timed passes per mode (the median is reported)
  /// Untimed passes per streaming mode first (cold caches and the first touch of mapped pages
  /// would make the first timed pass an outlier); the ram mode needs none.
  std::size_t warmup = 1;
  benchmark_kernel kernel = benchmark_kernel::dot_axpy;
  bool single_precision = false;  ///< float values handed to the kernel instead of double
  stream_options stream;          ///< in-flight depth, block size, values of the stream
  /// Called on the calling thread just before and after each measured span, for a probe of
  /// something besides time (e.g. memory): each timed pass of a streaming mode; for ram, the
  /// decode into memory and every timed pass together.
  std::function<void(benchmark_mode)> on_measure_begin, on_measure_end;
};

/// The figures of one mode.
struct benchmark_result {
  benchmark_mode mode = benchmark_mode::pipelined;
  std::vector<double> pass_seconds;  ///< wall time of each timed pass
  double seconds_per_pass = 0;       ///< the median pass
  /// Values handed to the kernel per second of the median pass, in GB (rows × columns ×
  /// the value's size per pass).
  double decoded_gb_per_s = 0;
  /// The kernel's share of the passes' wall time: near 1 compute-bound, low decode-bound
  /// (1 for ram, where there is nothing else).
  double busy_fraction = 0;
};

/// Bytes of values a pass hands to the kernel, and the size of the ram mode's matrix:
/// rows × columns × 8 (4 with single_precision).
double benchmark_decoded_bytes(const store& s, const benchmark_options& options) noexcept;

/// Runs the benchmark. The streaming modes alternate pass by pass, so that a machine whose
/// speed drifts (other tenants, frequency) biases neither side of their ratio. Throws
/// colflow::error invalid_argument for no mode or no timed pass; the stream's errors.
std::vector<benchmark_result> benchmark_stream(const store& s, const benchmark_options& options);

}  // namespace colflow
