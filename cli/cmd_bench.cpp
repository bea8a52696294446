// colflow bench: how fast a store streams on this machine, like `zstd -b` for codecs.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "colflow/colflow.hpp"
#include "commands.hpp"
#include "memory_usage.hpp"
#include "validators.hpp"

namespace colflow::cli {

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
      ->check(integer_range(1, 1000));
  app.add_option("--warmup", o->warmup,
                 "Untimed passes per streaming mode before the timed ones (default 1; ram mode\n"
                 "needs none: decoding the matrix into memory touches it all)")
      ->check(integer_range(0, 100));
  app.add_option("--mode", o->mode,
                 "pipelined (the flow graph), sequential (decode then compute, one thread),\n"
                 "ram (decode everything into memory first, then pass over it), or all")
      ->check(one_of({"pipelined", "sequential", "ram", "all"}));
  app.add_option("--kernel", o->kernel,
                 "dot-axpy (z.r then r -= c z: the core of BayesR and coordinate descent), sum\n"
                 "(reads every value once) or none (decoding alone)")
      ->check(one_of({"dot-axpy", "sum", "none"}));
  app.add_option("--dtype", o->dtype, "Values handed to the kernel: f64 (default) or f32")
      ->check(one_of({"f64", "f32"}));
  app.add_option("--values", o->values,
                 "standardized (default: what the analyses read; dense values are standardised\n"
                 "on the fly) or stored (the values as stored: measures the codec alone)")
      ->check(one_of({"standardized", "stored"}));
  app.add_option("--threads", o->threads, "Worker threads (default: all cores)")
      ->check(non_negative_integer(std::numeric_limits<unsigned>::max()));
  app.add_option("--in-flight", o->in_flight, "Blocks in flight (default: 2 x threads)")
      ->check(non_negative_integer());
  app.add_option("--block-bytes", o->block_bytes,
                 "Decoded bytes per message; short columns are grouped (default 1 MiB)")
      ->check(non_negative_integer());
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
    benchmark_options b;
    b.modes = o->mode == "all"
                  ? std::vector<benchmark_mode>{benchmark_mode::pipelined,
                                                benchmark_mode::sequential, benchmark_mode::ram}
              : o->mode == "pipelined"  ? std::vector<benchmark_mode>{benchmark_mode::pipelined}
              : o->mode == "sequential" ? std::vector<benchmark_mode>{benchmark_mode::sequential}
                                        : std::vector<benchmark_mode>{benchmark_mode::ram};
    b.passes = o->passes;
    b.warmup = o->warmup;
    b.kernel = o->kernel == "dot-axpy" ? benchmark_kernel::dot_axpy
               : o->kernel == "sum"    ? benchmark_kernel::sum
                                       : benchmark_kernel::none;
    b.single_precision = o->dtype == "f32";
    b.stream.in_flight = o->in_flight;
    b.stream.block_bytes = o->block_bytes;
    b.stream.values = o->values == "stored" ? decode_as::stored : decode_as::standardized;
    if (std::find(b.modes.begin(), b.modes.end(), benchmark_mode::ram) != b.modes.end()) {
      // The ram mode holds the whole decoded matrix: refuse before swapping the machine.
      const double decoded = benchmark_decoded_bytes(s, b);
      const double available = static_cast<double>(available_memory());
      if (available > 0 && decoded > 0.8 * available)
        throw error(errc::invalid_argument, "--mode ram needs " + human_bytes(decoded) +
                                                " for the decoded matrix, but only " +
                                                human_bytes(available) + " of memory is available");
    }
    // Peak memory per mode, sampled over each measured span.
    memory_sampler sampler;
    std::map<benchmark_mode, memory_figures> memory;
    b.on_measure_begin = [&](benchmark_mode) { sampler.start(); };
    b.on_measure_end = [&](benchmark_mode mode) {
      const memory_figures f = sampler.stop();
      memory_figures& m = memory[mode];
      m.peak_rss = std::max(m.peak_rss, f.peak_rss);
      m.peak_anon = std::max(m.peak_anon, f.peak_anon);
    };
    const std::vector<benchmark_result> results = benchmark_stream(s, b);
    if (o->json) {
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (const benchmark_result& r : results) {
        nlohmann::ordered_json j;
        j["mode"] = std::string(benchmark_mode_name(r.mode));
        j["seconds_per_pass"] = r.seconds_per_pass;
        j["decoded_gb_per_s"] = r.decoded_gb_per_s;
        j["compute_busy_fraction"] = r.busy_fraction;
        j["peak_rss_bytes"] = memory[r.mode].peak_rss;
        j["peak_anon_bytes"] = memory[r.mode].peak_anon;
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
    for (const benchmark_result& r : results)
      std::printf("%-11s %12.4f %12.2f %8.2f %12s %12s\n",
                  std::string(benchmark_mode_name(r.mode)).c_str(), r.seconds_per_pass,
                  r.decoded_gb_per_s, r.busy_fraction,
                  human_bytes(static_cast<double>(memory[r.mode].peak_rss)).c_str(),
                  human_bytes(static_cast<double>(memory[r.mode].peak_anon)).c_str());
    return 0;
  };
}

}  // namespace colflow::cli
