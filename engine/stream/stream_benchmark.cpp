// Timed passes over a store in each benchmark mode (colflow/stream/stream_benchmark.hpp).
#include "colflow/stream/stream_benchmark.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <chrono>

#include "colflow/error.hpp"

namespace colflow {
namespace {

// The kernels over one column. dot-axpy keeps its step small so that the residual stays
// bounded over many passes; `total` is kept so the compiler cannot drop the work.
template <typename T>
struct kernels {
  Eigen::Matrix<T, Eigen::Dynamic, 1> residual;
  double total = 0;
  benchmark_kernel kind;
  T step;

  kernels(std::uint64_t rows, benchmark_kernel k)
      : residual(Eigen::Matrix<T, Eigen::Dynamic, 1>::Ones(static_cast<Eigen::Index>(rows))),
        kind(k),
        step(static_cast<T>(1e-3 / static_cast<double>(std::max<std::uint64_t>(rows, 2) - 1))) {}

  template <typename Column>
  void apply(const Column& z) {
    switch (kind) {
      case benchmark_kernel::dot_axpy: {
        const T d = z.dot(residual);
        residual.noalias() -= (step * d) * z;
        total += static_cast<double>(d);
        break;
      }
      case benchmark_kernel::sum:
        total += static_cast<double>(z.sum());
        break;
      case benchmark_kernel::none:
        break;
    }
  }
};

// The median pass, the busy fraction over every pass, and the rate of the median pass.
benchmark_result summarise(benchmark_mode mode, const std::vector<double>& seconds,
                           const std::vector<double>& busy, double decoded_bytes) {
  benchmark_result r;
  r.mode = mode;
  r.pass_seconds = seconds;
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  r.seconds_per_pass = sorted[sorted.size() / 2];
  double wall_sum = 0, busy_sum = 0;
  for (std::size_t p = 0; p < seconds.size(); ++p) {
    wall_sum += seconds[p];
    busy_sum += busy[p];
  }
  r.busy_fraction = wall_sum > 0 ? busy_sum / wall_sum : 0;
  r.decoded_gb_per_s = decoded_bytes / r.seconds_per_pass / 1e9;
  return r;
}

template <typename T>
std::vector<benchmark_result> run(const store& s, const benchmark_options& o) {
  using clock = std::chrono::steady_clock;
  const auto order = all_columns(s.num_columns());
  const double decoded_bytes = benchmark_decoded_bytes(s, o);
  const auto wants = [&](benchmark_mode m) {
    return std::find(o.modes.begin(), o.modes.end(), m) != o.modes.end();
  };
  const auto begin = [&](benchmark_mode m) {
    if (o.on_measure_begin) o.on_measure_begin(m);
  };
  const auto end = [&](benchmark_mode m) {
    if (o.on_measure_end) o.on_measure_end(m);
  };
  std::vector<benchmark_result> results;

  std::vector<benchmark_mode> streaming;
  for (benchmark_mode m : {benchmark_mode::pipelined, benchmark_mode::sequential})
    if (wants(m)) streaming.push_back(m);
  if (!streaming.empty()) {
    kernels<T> k(s.num_rows(), o.kernel);
    column_stream<T> stream(s, o.stream);
    const column_kernel<T> kernel = [&](const column_view<T>& v) {
      k.apply(v.values);
      return true;
    };
    std::vector<std::vector<double>> seconds(streaming.size()), busy(streaming.size());
    const auto pass = [&](benchmark_mode mode) {
      return mode == benchmark_mode::sequential ? stream.run_sequential(order, kernel)
                                                : stream.run(order, kernel);
    };
    for (std::size_t p = 0; p < o.warmup; ++p)
      for (benchmark_mode mode : streaming) pass(mode);
    for (std::size_t p = 0; p < o.passes; ++p)
      for (std::size_t m = 0; m < streaming.size(); ++m) {
        begin(streaming[m]);
        const pass_stats ps = pass(streaming[m]);
        end(streaming[m]);
        seconds[m].push_back(ps.wall_seconds);
        busy[m].push_back(ps.compute_busy_seconds);
      }
    for (std::size_t m = 0; m < streaming.size(); ++m)
      results.push_back(summarise(streaming[m], seconds[m], busy[m], decoded_bytes));
  }

  if (wants(benchmark_mode::ram)) {
    begin(benchmark_mode::ram);
    kernels<T> k(s.num_rows(), o.kernel);
    Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic> m(static_cast<Eigen::Index>(s.num_rows()),
                                                       static_cast<Eigen::Index>(s.num_columns()));
    for (std::size_t j = 0; j < s.num_columns(); ++j)
      s.read_column(j, std::span<T>(m.col(static_cast<Eigen::Index>(j)).data(), s.num_rows()),
                    o.stream.values);
    std::vector<double> seconds;
    for (std::size_t p = 0; p < o.passes; ++p) {
      const auto t0 = clock::now();
      for (std::size_t j : order) k.apply(m.col(static_cast<Eigen::Index>(j)));
      seconds.push_back(std::chrono::duration<double>(clock::now() - t0).count());
    }
    end(benchmark_mode::ram);
    // In memory the kernel is all a pass does: busy all the time.
    results.push_back(summarise(benchmark_mode::ram, seconds, seconds, decoded_bytes));
  }
  return results;
}

}  // namespace

std::string_view benchmark_mode_name(benchmark_mode mode) noexcept {
  switch (mode) {
    case benchmark_mode::pipelined:
      return "pipelined";
    case benchmark_mode::sequential:
      return "sequential";
    case benchmark_mode::ram:
      return "ram";
  }
  return "?";
}

double benchmark_decoded_bytes(const store& s, const benchmark_options& o) noexcept {
  return static_cast<double>(s.num_rows()) * static_cast<double>(s.num_columns()) *
         static_cast<double>(o.single_precision ? sizeof(float) : sizeof(double));
}

std::vector<benchmark_result> benchmark_stream(const store& s, const benchmark_options& o) {
  if (o.modes.empty()) throw error(errc::invalid_argument, "benchmark: no mode to measure");
  if (o.passes == 0) throw error(errc::invalid_argument, "benchmark: no timed pass");
  return o.single_precision ? run<float>(s, o) : run<double>(s, o);
}

}  // namespace colflow
