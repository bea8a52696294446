// Tests of column_stream's lifetime and threads: a stream is destroyed safely whatever it did
// before, ten thousand failed passes leave nothing behind, and one thread can run a pass.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "column_stream_fixture.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace colflow::column_stream_tests {
namespace {

// ==== Lifetime and threads (in the file linked last: a crash here should hide few other tests)

// Runs `body` in this child process (gtest's death-test machinery re-executes this binary for
// the test), then exits 0 after printing "child done". A crash or a hang (reported after 10 s)
// fails the calling test only.
template <typename Body>
[[noreturn]] void child_main(Body body) {
  std::thread([] {
    std::this_thread::sleep_for(10s);
    std::fprintf(stderr, "child hung for 10 s\n");
    std::_Exit(3);
  }).detach();
  body();
  std::fprintf(stderr, "child done\n");
  std::exit(0);
}

// Calls `body(depth, k)` for in-flight depths 1, 2, 8, 64 and k = 0..9.
template <typename Body>
void for_each_depth(Body body) {
  for (std::size_t depth : {1, 2, 8, 64})
    for (std::size_t k = 0; k < 10; ++k) body(depth, k);
}

// One thread (no TBB worker can run anything behind the test's back, which makes a problem
// show every time), then the default parallelism.
template <typename Body>
void on_one_thread_then_all(Body body) {
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
    body();
  }
  body();
}

// A stream is destroyed safely whatever it did before: nothing at all, only sequential passes,
// or a pass rejected before it began.
class StreamLifetimeTest : public testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
  watchdog dog_{time_limit};
};

TEST_F(StreamLifetimeTest, DestroyedWithoutEverRunning) {
  const auto body = [] {
    on_one_thread_then_all([] {
      for_each_depth([](std::size_t depth, std::size_t k) {
        column_stream<double> stream(genotypes().s, options_with(depth, 1 + k % 2 * 7));
      });
    });
  };
  EXPECT_EXIT(child_main(body), testing::ExitedWithCode(0), "child done");
}

TEST_F(StreamLifetimeTest, DestroyedAfterOnlySequentialPasses) {
  // The baseline of the benchmarks: a stream that only ever runs run_sequential.
  const auto body = [] {
    on_one_thread_then_all([] {
      for_each_depth([](std::size_t depth, std::size_t k) {
        column_stream<double> stream(genotypes().s, options_with(depth, 1));
        stream.run_sequential(std::vector<std::size_t>{k, k + 1},
                              [](const column_view<double>&) { return true; });
      });
    });
  };
  EXPECT_EXIT(child_main(body), testing::ExitedWithCode(0), "child done");
}

TEST_F(StreamLifetimeTest, DestroyedAfterARejectedOrder) {
  const auto body = [] {
    on_one_thread_then_all([] {
      for_each_depth([](std::size_t depth, std::size_t k) {
        column_stream<double> stream(genotypes().s, options_with(depth, 1));
        try {
          stream.run(std::vector<std::size_t>{k, columns + k},
                     [](const column_view<double>&) { return true; });
        } catch (const error&) {
        }
      });
    });
  };
  EXPECT_EXIT(child_main(body), testing::ExitedWithCode(0), "child done");
}

TEST_F(StreamLifetimeTest, DestroyedAfterAFailedOrStoppedPass) {
  // After a pass through the graph, however it ended. (Default parallelism only: a first pass
  // on one thread is StreamThreadsTest's subject.)
  const auto body = [] {
    for_each_depth([](std::size_t depth, std::size_t k) {
      column_stream<double> stream(genotypes().s, options_with(depth, 1));
      try {
        stream.run(all_columns(columns), [&](const column_view<double>& v) -> bool {
          if (k % 2 == 0 && v.position == 7) throw std::runtime_error("stop here");
          return v.position < 7;
        });
      } catch (const error&) {
      }
    });
  };
  EXPECT_EXIT(child_main(body), testing::ExitedWithCode(0), "child done");
}

// A field of /proc/self/status ("Threads", "VmRSS" in kB).
long status_field(const std::string& name) {
  FILE* f = std::fopen("/proc/self/status", "r");
  char line[256];
  long value = -1;
  while (f && std::fgets(line, sizeof line, f))
    if (std::strncmp(line, name.c_str(), name.size()) == 0 && line[name.size()] == ':')
      value = std::strtol(line + name.size() + 1, nullptr, 10);
  if (f) std::fclose(f);
  return value;
}

TEST_F(StreamLifetimeTest, TenThousandFailedCancelledOrStoppedPassesLeakNothing) {
  // Kernel exceptions, cancellations and early stops at random positions, on one stream and on
  // fresh ones: afterwards no thread, buffer or memory is left behind and the stream still runs.
  column_stream<double> stream(genotypes().s, options_with(4, 1));
  std::mt19937_64 rng(12);
  std::uint64_t failed = 0, stopped = 0;
  const auto passes = [&](int count) {
    for (int k = 0; k < count; ++k) {
      const std::size_t at = rng() % columns;
      const auto how = rng() % 3;
      const auto kernel = [&](const column_view<double>& v) -> bool {
        if (v.position == at && how == 0) throw std::runtime_error("kernel failure");
        if (v.position == at && how == 1) throw error(errc::cancelled, "cancelled by the test");
        return !(how == 2 && v.position == at);
      };
      try {
        if (k % 16 == 0) {
          column_stream<double> fresh(genotypes().s, options_with(1 + k % 5, 1 + k % 3));
          stopped += fresh.run(all_columns(columns), kernel).stopped_early;
        } else {
          stopped += stream.run(all_columns(columns), kernel).stopped_early;
        }
      } catch (const error&) {
        ++failed;
      }
    }
  };
  passes(500);  // the steady state: TBB's workers started, pools allocated
  const long threads = status_field("Threads"), rss = status_field("VmRSS");
  passes(10000);
  EXPECT_GT(failed, 6000u);
  EXPECT_GT(stopped, 3000u);
  EXPECT_EQ(status_field("Threads"), threads);
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer keeps freed memory in quarantine, so RSS grows without any leak; its
  // leak checker looks for unreachable blocks instead.
  (void)rss;
  EXPECT_EQ(__lsan_do_recoverable_leak_check(), 0) << "leaks after 10,000 passes";
#else
  EXPECT_LT(status_field("VmRSS") - rss, 4096) << "kB grown over 10,000 passes";
#endif
  EXPECT_LE(stream.peak_buffers_in_use(), stream.in_flight());
  // Still usable: a whole pass sees every column, in order.
  std::size_t seen = 0;
  stream.run(all_columns(columns), [&](const column_view<double>& v) {
    EXPECT_EQ(v.position, seen++);
    return true;
  });
  EXPECT_EQ(seen, columns);
}

// The calling thread alone can run a pass: nothing may wait for a TBB worker thread to exist
// (tbb::global_control max_allowed_parallelism 1, e.g. colflow bench --threads 1).
class StreamThreadsTest : public testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
  watchdog dog_{time_limit};
};

TEST_F(StreamThreadsTest, FirstPassOnOneThreadCompletes) {
  const auto body = [] {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
    for (std::size_t depth : {1, 2, 8}) {
      for (std::size_t per_block : {1, 8}) {
        column_stream<double> stream(genotypes().s, options_with(depth, per_block));
        std::size_t seen = 0;
        const auto count = [&](const column_view<double>&) { return ++seen, true; };
        for (int pass = 0; pass < 2; ++pass) stream.run(all_columns(columns), count);
        if (seen != 2 * columns) {
          std::fprintf(stderr, "depth %zu: %zu calls\n", depth, seen);
          std::_Exit(4);
        }
      }
    }
  };
  EXPECT_EXIT(child_main(body), testing::ExitedWithCode(0), "child done");
}

TEST_F(StreamThreadsTest, StreamBuiltWithWorkersRunsOnOneThread) {
  // The control: the stream ran its first pass with workers about; then one thread is enough.
  const auto body = [] {
    for (std::size_t depth : {1, 2, 8}) {
      column_stream<double> stream = warmed_stream<double>(genotypes().s, options_with(depth, 1));
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
      std::size_t seen = 0;
      stream.run(all_columns(columns), [&](const column_view<double>&) { return ++seen, true; });
      if (seen != columns) std::_Exit(4);
    }
  };
  EXPECT_EXIT(child_main(body), testing::ExitedWithCode(0), "child done");
}

}  // namespace
}  // namespace colflow::column_stream_tests
