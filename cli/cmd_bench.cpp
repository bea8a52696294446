// colflow bench: how fast a store streams on this machine, like `zstd -b` for codecs.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>

#include "colflow/colflow.hpp"
#include "commands.hpp"
#include "memory_usage.hpp"

namespace colflow::cli {
namespace {

struct mode_result {
  std::string mode;
  double seconds_per_pass = 0, decoded_gb_per_s = 0, busy_fraction = 0;
  memory_figures memory;
};

// The kernels. dot-axpy is the core of BayesR and coordinate descent: a dot product with the
// residual, then a residual update with a small step (kept small so values stay bounded). sum
// reads every value once; none reads nothing, so that a pass measures decoding alone.
enum class kernel_kind { dot_axpy, sum, none };

template <typename T>
struct kernels {
  Eigen::Matrix<T, Eigen::Dynamic, 1> residual;
  double total = 0;
  kernel_kind kind;
  T step;

  kernels(std::uint64_t rows, kernel_kind k)
      : residual(Eigen::Matrix<T, Eigen::Dynamic, 1>::Ones(static_cast<Eigen::Index>(rows))),
        kind(k),
        step(static_cast<T>(1e-3 / static_cast<double>(std::max<std::uint64_t>(rows, 2) - 1))) {}

  template <typename Column>
  void apply(const Column& z) {
    switch (kind) {
      case kernel_kind::dot_axpy: {
        const T d = z.dot(residual);
        residual.noalias() -= (step * d) * z;
        total += static_cast<double>(d);
        break;
      }
      case kernel_kind::sum:
        total += static_cast<double>(z.sum());
        break;
      case kernel_kind::none:
        break;
    }
  }
};

// Median seconds per pass, busy fraction, decoded GB/s and memory of one mode.
mode_result summarise(const std::string& mode, const std::vector<double>& seconds,
                      const std::vector<double>& busy, double decoded_bytes,
                      const memory_figures& memory) {
  mode_result r;
  r.mode = mode;
  r.memory = memory;
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
std::vector<mode_result> run_bench(const store& s, const std::vector<std::string>& modes,
                                   std::size_t passes, std::size_t warmup, kernel_kind kernel_type,
                                   const stream_options& options) {
  using clock = std::chrono::steady_clock;
  const auto order = all_columns(s.num_columns());
  const double decoded_bytes =
      static_cast<double>(s.num_rows()) * static_cast<double>(s.num_columns()) * sizeof(T);
  const auto wants = [&](const char* m) {
    return std::find(modes.begin(), modes.end(), m) != modes.end();
  };
  std::vector<mode_result> results;

  // The streaming modes alternate pass by pass, so that a machine whose speed drifts (other
  // tenants, frequency) biases neither side of the pipelined/sequential ratio.
  std::vector<std::string> streaming;
  for (const char* m : {"pipelined", "sequential"})
    if (wants(m)) streaming.push_back(m);
  if (!streaming.empty()) {
    kernels<T> k(s.num_rows(), kernel_type);
    column_stream<T> stream(s, options);
    const column_kernel<T> kernel = [&](const column_view<T>& v) {
      k.apply(v.values);
      return true;
    };
    std::vector<std::vector<double>> seconds(streaming.size()), busy(streaming.size());
    std::vector<memory_figures> memory(streaming.size());
    const auto pass = [&](const std::string& mode) {
      return mode == "sequential" ? stream.run_sequential(order, kernel) : stream.run(order, kernel);
    };
    // Untimed passes first: the first touch of every mapped page and cold caches would
    // otherwise make the first timed pass of a short run an outlier.
    for (std::size_t p = 0; p < warmup; ++p)
      for (const std::string& mode : streaming) pass(mode);
    for (std::size_t p = 0; p < passes; ++p)
      for (std::size_t m = 0; m < streaming.size(); ++m) {
        memory_sampler sampler;
        sampler.start();
        const pass_stats ps = pass(streaming[m]);
        const memory_figures f = sampler.stop();
        memory[m].peak_rss = std::max(memory[m].peak_rss, f.peak_rss);
        memory[m].peak_anon = std::max(memory[m].peak_anon, f.peak_anon);
        seconds[m].push_back(ps.wall_seconds);
        busy[m].push_back(ps.compute_busy_seconds);
      }
    for (std::size_t m = 0; m < streaming.size(); ++m)
      results.push_back(summarise(streaming[m], seconds[m], busy[m], decoded_bytes, memory[m]));
  }

  if (wants("ram")) {
    // The uncompressed reference: the whole matrix decoded in memory, passes over it.
    const double available = static_cast<double>(available_memory());
    if (available > 0 && decoded_bytes > 0.8 * available)
      throw error(errc::invalid_argument,
                  "--mode ram needs " + human_bytes(decoded_bytes) +
                      " for the decoded matrix, but only " + human_bytes(available) +
                      " of memory is available");
    memory_sampler sampler;
    sampler.start();
    kernels<T> k(s.num_rows(), kernel_type);
    Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic> m(static_cast<Eigen::Index>(s.num_rows()),
                                                       static_cast<Eigen::Index>(s.num_columns()));
    for (std::size_t j = 0; j < s.num_columns(); ++j)
      s.read_column(j, std::span<T>(m.col(static_cast<Eigen::Index>(j)).data(), s.num_rows()),
                    options.values);
    std::vector<double> seconds;
    for (std::size_t p = 0; p < passes; ++p) {
      const auto t0 = clock::now();
      for (std::size_t j : order) k.apply(m.col(static_cast<Eigen::Index>(j)));
      seconds.push_back(std::chrono::duration<double>(clock::now() - t0).count());
    }
    results.push_back(summarise("ram", seconds, seconds, decoded_bytes, sampler.stop()));
  }
  return results;
}

}  // namespace

command add_bench(CLI::App& app) {
  struct options {
    std::string store, mode = "all", kernel = "dot-axpy", dtype = "f64", values = "standardized";
    std::size_t passes = 5, warmup = 1, in_flight = 0, block_bytes = std::size_t{1} << 20;
    unsigned threads = 0;
    bool json = false;
  };
  auto o = std::make_shared<options>();
  app.add_option("STORE", o->store, "The store directory")->required();
  app.add_option("--passes", o->passes, "Passes per mode; the median is reported (default 5)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--warmup", o->warmup,
                 "Untimed passes per streaming mode before the timed ones (default 1; ram mode\n"
                 "needs none: decoding the matrix into memory touches it all)")
      ->check(CLI::Range(0, 100));
  app.add_option("--mode", o->mode,
                 "pipelined (the flow graph), sequential (decode then compute, one thread),\n"
                 "ram (decode everything into memory first, then pass over it), or all")
      ->check(CLI::IsMember({"pipelined", "sequential", "ram", "all"}));
  app.add_option("--kernel", o->kernel,
                 "dot-axpy (z.r then r -= c z: the core of BayesR and coordinate descent), sum\n"
                 "(reads every value once) or none (decoding alone)")
      ->check(CLI::IsMember({"dot-axpy", "sum", "none"}));
  app.add_option("--dtype", o->dtype, "Values handed to the kernel: f64 (default) or f32")
      ->check(CLI::IsMember({"f64", "f32"}));
  app.add_option("--values", o->values,
                 "standardized (default: what the analyses read; dense values are standardised\n"
                 "on the fly) or stored (the values as stored: measures the codec alone)")
      ->check(CLI::IsMember({"standardized", "stored"}));
  app.add_option("--threads", o->threads, "Worker threads (default: all cores)");
  app.add_option("--in-flight", o->in_flight, "Blocks in flight (default: 2 x threads)");
  app.add_option("--block-bytes", o->block_bytes,
                 "Decoded bytes per message; short columns are grouped (default 1 MiB)");
  app.add_flag("--json", o->json,
               "Print a JSON list of objects with keys mode, seconds_per_pass, decoded_gb_per_s,\n"
               "compute_busy_fraction, peak_rss_bytes, peak_anon_bytes");
  app.footer(
      "decoded GB/s counts the values handed to the kernel (rows x columns x 8 bytes for f64).\n"
      "compute busy fraction is the kernel's share of the pass: near 1 means compute-bound\n"
      "(decoding keeps up), low means the kernel waited for data. peak_rss includes the\n"
      "mapped store's page cache; peak_anon excludes it.");
  return [o] {
    const auto threads = limit_threads(o->threads);
    const store s = store::open(o->store);
    std::vector<std::string> modes =
        o->mode == "all" ? std::vector<std::string>{"pipelined", "sequential", "ram"}
                         : std::vector<std::string>{o->mode};
    stream_options so;
    so.in_flight = o->in_flight;
    so.block_bytes = o->block_bytes;
    so.values = o->values == "stored" ? decode_as::stored : decode_as::standardized;
    const kernel_kind kernel = o->kernel == "dot-axpy" ? kernel_kind::dot_axpy
                               : o->kernel == "sum"    ? kernel_kind::sum
                                                       : kernel_kind::none;
    const auto results = o->dtype == "f32"
                             ? run_bench<float>(s, modes, o->passes, o->warmup, kernel, so)
                             : run_bench<double>(s, modes, o->passes, o->warmup, kernel, so);
    if (o->json) {
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (const mode_result& r : results) {
        nlohmann::ordered_json j;
        j["mode"] = r.mode;
        j["seconds_per_pass"] = r.seconds_per_pass;
        j["decoded_gb_per_s"] = r.decoded_gb_per_s;
        j["compute_busy_fraction"] = r.busy_fraction;
        j["peak_rss_bytes"] = r.memory.peak_rss;
        j["peak_anon_bytes"] = r.memory.peak_anon;
        list.push_back(j);
      }
      std::cout << list.dump(2) << "\n";
      return 0;
    }
    std::printf("%s: %llu rows x %llu columns, %s, kernel %s, %zu passes\n", o->store.c_str(),
                static_cast<unsigned long long>(s.num_rows()),
                static_cast<unsigned long long>(s.num_columns()),
                std::string(value_type_name(s.type())).c_str(), o->kernel.c_str(), o->passes);
    std::printf("%-11s %12s %12s %8s %12s %12s\n", "mode", "s/pass", "decoded GB/s", "busy",
                "peak RSS", "peak anon");
    for (const mode_result& r : results)
      std::printf("%-11s %12.4f %12.2f %8.2f %12s %12s\n", r.mode.c_str(), r.seconds_per_pass,
                  r.decoded_gb_per_s, r.busy_fraction,
                  human_bytes(static_cast<double>(r.memory.peak_rss)).c_str(),
                  human_bytes(static_cast<double>(r.memory.peak_anon)).c_str());
    return 0;
  };
}

}  // namespace colflow::cli
