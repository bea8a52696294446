// colflow::benchmark_stream: the modes measured and their order, the passes timed, the
// measuring hooks, the figures' meaning, refused requests.
#include <gtest/gtest.h>

#include <map>

#include "colflow/colflow.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

TEST(StreamBenchmarkTest, MeasuresEachModeWithItsPassesAndHooks) {
  test::temp_dir dir;
  test::write_genotype_store(dir / "g.cf", 120, 25, {codec_id::zstd, 1, false});
  const store s = store::open(dir / "g.cf");
  benchmark_options o;
  o.modes = {benchmark_mode::ram, benchmark_mode::pipelined, benchmark_mode::sequential};
  o.passes = 3;
  o.warmup = 1;
  std::map<benchmark_mode, int> begun, ended;
  int open = 0;
  o.on_measure_begin = [&](benchmark_mode m) {
    ++begun[m];
    EXPECT_EQ(open++, 0) << "spans nest";
  };
  o.on_measure_end = [&](benchmark_mode m) {
    ++ended[m];
    --open;
  };
  const std::vector<benchmark_result> results = benchmark_stream(s, o);
  ASSERT_EQ(results.size(), 3u);
  // Pipelined, sequential, then ram, whatever the order asked.
  EXPECT_EQ(results[0].mode, benchmark_mode::pipelined);
  EXPECT_EQ(results[1].mode, benchmark_mode::sequential);
  EXPECT_EQ(results[2].mode, benchmark_mode::ram);
  EXPECT_EQ(benchmark_mode_name(results[1].mode), "sequential");
  for (const benchmark_result& r : results) {
    ASSERT_EQ(r.pass_seconds.size(), 3u);
    EXPECT_GT(r.seconds_per_pass, 0.0);
    EXPECT_NEAR(r.decoded_gb_per_s, 120.0 * 25 * 8 / r.seconds_per_pass / 1e9,
                1e-9 * r.decoded_gb_per_s);
    EXPECT_GT(r.busy_fraction, 0.0);
    EXPECT_LE(r.busy_fraction, 1.0 + 1e-9);
  }
  EXPECT_EQ(results[2].busy_fraction, 1.0);  // in memory the kernel is the whole pass
  // One span per timed streaming pass (not the warm-up), one for the whole ram mode.
  EXPECT_EQ(begun[benchmark_mode::pipelined], 3);
  EXPECT_EQ(begun[benchmark_mode::sequential], 3);
  EXPECT_EQ(begun[benchmark_mode::ram], 1);
  EXPECT_EQ(begun, ended);
}

TEST(StreamBenchmarkTest, SinglePrecisionCountsFourBytesAndBadRequestsAreRefused) {
  test::temp_dir dir;
  test::write_float_store(dir / "f.cf", value_type::float32, 40, 9, {codec_id::lz4, 1, true});
  const store s = store::open(dir / "f.cf");
  benchmark_options o;
  o.single_precision = true;
  o.kernel = benchmark_kernel::sum;
  o.modes = {benchmark_mode::sequential};
  o.passes = 1;
  o.warmup = 0;
  EXPECT_EQ(benchmark_decoded_bytes(s, o), 40.0 * 9 * 4);
  const auto results = benchmark_stream(s, o);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].mode, benchmark_mode::sequential);
  o.passes = 0;
  EXPECT_THROW(benchmark_stream(s, o), error);
  o.passes = 1;
  o.modes.clear();
  EXPECT_THROW(benchmark_stream(s, o), error);
}

}  // namespace
}  // namespace colflow
