// Tests of nested parallelism in a column_stream kernel: TBB algorithms inside the kernel give
// the right sums at any thread count, and their exceptions reach the caller.
#include <gtest/gtest.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <functional>
#include <stdexcept>

#include "column_stream_fixture.hpp"

namespace colflow::column_stream_tests {
namespace {

// ==== Nested parallelism inside the kernel

class StreamNestedTest : public testing::Test {
 protected:
  watchdog dog_{time_limit};
};

// Sum over columns of the sum of squares of the values, computed with nested TBB algorithms.
struct nested_sums {
  double deterministic = 0;  // parallel_for + parallel_deterministic_reduce
  double plain = 0;          // parallel_reduce (summation order may vary)
};

nested_sums nested_pass(column_stream<double>& stream, mode m, std::span<const std::size_t> order) {
  nested_sums sums;
  std::vector<double> squares(rows);
  run_pass<double>(stream, m, order, [&](const column_view<double>& v) {
    const auto z = values_of<double>(v);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, z.size(), 16),
                      [&](const tbb::blocked_range<std::size_t>& r) {
                        for (std::size_t i = r.begin(); i < r.end(); ++i) squares[i] = z[i] * z[i];
                      });
    sums.deterministic += tbb::parallel_deterministic_reduce(
        tbb::blocked_range<std::size_t>(0, squares.size(), 16), 0.0,
        [&](const tbb::blocked_range<std::size_t>& r, double acc) {
          for (std::size_t i = r.begin(); i < r.end(); ++i) acc += squares[i];
          return acc;
        },
        std::plus<>());
    sums.plain += tbb::parallel_reduce(
        tbb::blocked_range<std::size_t>(0, z.size(), 16), 0.0,
        [&](const tbb::blocked_range<std::size_t>& r, double acc) {
          for (std::size_t i = r.begin(); i < r.end(); ++i) acc += z[i] * z[i];
          return acc;
        },
        std::plus<>());
    return true;
  });
  return sums;
}

TEST_F(StreamNestedTest, KernelWithNestedParallelAlgorithmsGetsTheRightSums) {
  const genotype_data& g = genotypes();
  std::mt19937_64 rng(9);
  const std::vector<std::size_t> order = random_order(120, columns, rng);
  double expected = 0;
  for (std::size_t j : order)
    for (double x : g.z[j]) expected += x * x;

  column_stream<double> baseline_stream(g.s, options_with(1, 1));
  nested_pass(baseline_stream, mode::pipelined, order);  // the stream ran the graph before
  const nested_sums baseline = nested_pass(baseline_stream, mode::sequential, order);
  EXPECT_NEAR(baseline.deterministic, expected, 1e-9 * expected);
  EXPECT_NEAR(baseline.plain, expected, 1e-9 * expected);

  for (std::size_t threads : {1, 2, 8}) {
    column_stream<double> shallow = warmed_stream<double>(g.s, options_with(1, 4));
    column_stream<double> deep = warmed_stream<double>(g.s, options_with(8, 4));
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    for (auto* stream : {&shallow, &deep}) {
      const std::size_t depth = stream->in_flight();
      const nested_sums s = nested_pass(*stream, mode::pipelined, order);
      EXPECT_EQ(std::bit_cast<std::uint64_t>(s.deterministic),
                std::bit_cast<std::uint64_t>(baseline.deterministic))
          << "threads " << threads << " depth " << depth;
      EXPECT_NEAR(s.plain, expected, 1e-9 * expected);
    }
  }
}

TEST_F(StreamNestedTest, ExceptionFromANestedParallelForReachesTheCaller) {
  const genotype_data& g = genotypes();
  const std::vector<std::size_t> order = all_columns(columns);
  for (std::size_t depth : {1, 8}) {
    column_stream<double> stream(g.s, options_with(depth, 1));
    for (std::size_t p : {0, 17, 59}) {
      SCOPED_TRACE("depth " + std::to_string(depth) + " throws at position " + std::to_string(p));
      try {
        stream.run(order, [&](const column_view<double>& v) {
          tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rows, 16),
                            [&](const tbb::blocked_range<std::size_t>& r) {
                              if (v.position == p && r.begin() == 0)
                                throw std::runtime_error("nested failure");
                            });
          return true;
        });
        ADD_FAILURE() << "run did not throw";
      } catch (const error& e) {
        EXPECT_EQ(e.kind(), errc::kernel_error) << e.message();
        EXPECT_TRUE(names(e.message(), "column", order[p])) << e.message();
        EXPECT_TRUE(names(e.message(), "position", p)) << e.message();
        EXPECT_NE(e.message().find("nested failure"), std::string::npos) << e.message();
      }
      const nested_sums sums = nested_pass(stream, mode::pipelined, order);
      double expected = 0;
      for (std::size_t j : order)
        for (double x : g.z[j]) expected += x * x;
      EXPECT_NEAR(sums.plain, expected, 1e-9 * expected);
    }
  }
}

}  // namespace
}  // namespace colflow::column_stream_tests
