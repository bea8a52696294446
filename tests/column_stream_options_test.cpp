// Tests of column_stream's arguments and reports: orders out of range, the defaults of the
// options, messages sized by block_bytes, a moved stream, progress callbacks and pass stats.
#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include "column_stream_fixture.hpp"

namespace colflow::column_stream_tests {
namespace {

// ==== Invalid orders

class StreamArgumentTest : public testing::Test {
 protected:
  watchdog dog_{time_limit};
};

TEST_F(StreamArgumentTest, OrderIndexOutOfRangeIsRejectedBeforeAnythingRuns) {
  const genotype_data& g = genotypes();
  column_stream<double> stream(g.s, options_with(4, 1));
  const std::vector<std::vector<std::size_t>> bad_orders = {
      {0, 1, columns}, {columns + 100}, {3, static_cast<std::size_t>(-1), 4}};
  for (const auto& order : bad_orders) {
    for (mode m : {mode::pipelined, mode::sequential}) {
      std::size_t calls_made = 0;
      try {
        run_pass<double>(stream, m, order, [&](const column_view<double>&) {
          ++calls_made;
          return true;
        });
        ADD_FAILURE() << mode_name(m) << " accepted an out-of-range column";
      } catch (const error& e) {
        EXPECT_EQ(e.kind(), errc::invalid_argument) << e.message();
      }
      EXPECT_EQ(calls_made, 0u) << mode_name(m);
    }
  }
  std::size_t seen = 0;
  stream.run(all_columns(columns), [&](const column_view<double>&) { return ++seen, true; });
  EXPECT_EQ(seen, columns);
}

// Each stream below runs a pass before it is destroyed: StreamLifetimeTest covers streams
// that never ran one.
TEST_F(StreamArgumentTest, InFlightDefaultsToTwiceTheArenaConcurrency) {
  const genotype_data& g = genotypes();
  column_stream<double> stream(g.s);
  EXPECT_EQ(stream.in_flight(),
            2 * static_cast<std::size_t>(tbb::this_task_arena::max_concurrency()));
  EXPECT_EQ(&stream.source(), &g.s);
  EXPECT_EQ(stream.options().block_bytes, stream_options{}.block_bytes);
  std::size_t seen = 0;
  stream.run(all_columns(columns), [&](const column_view<double>&) { return ++seen, true; });
  EXPECT_EQ(seen, columns);
  EXPECT_LE(stream.peak_buffers_in_use(), stream.in_flight());
}

TEST_F(StreamArgumentTest, ColumnsPerBlockFollowsBlockBytes) {
  const genotype_data& g = genotypes();
  const std::vector<std::size_t> order = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 59, 58};
  const auto check = [&](auto& stream, std::size_t expected_per_block) {
    EXPECT_EQ(stream.columns_per_block(), expected_per_block);
    std::vector<std::size_t> seen;
    stream.run(order, [&](const auto& v) { return seen.push_back(v.column), true; });
    EXPECT_EQ(seen, order) << expected_per_block << " columns per block";
  };
  stream_options o;
  o.in_flight = 2;
  o.block_bytes = 1;
  column_stream<double> one(g.s, o);
  check(one, 1);
  o.block_bytes = 5 * rows * sizeof(double) + 7;
  column_stream<double> five(g.s, o);
  check(five, 5);
  column_stream<float> ten(g.s, o);
  check(ten, 10);
  // Without values, a genotype block is sized by its codes.
  o.decode_values = false;
  column_stream<double> codes_only(g.s, o);
  check(codes_only, o.block_bytes / genotype_column_bytes(rows));
}

// Messages are sized by what they carry: a float store's columns are no smaller for not
// being decoded, so switching values off must not make a message group more of them (each
// grouped column costs pool memory: in_flight x columns_per_block slots are allocated).
TEST_F(StreamArgumentTest, FloatStoreWithoutValuesGroupsNoMoreColumnsThanWithValues) {
  const written_store& w = written({value_type::float64, {codec_id::zstd, 3, false}});
  const store s = store::open(w.path);
  stream_options o;
  o.in_flight = 1;
  o.block_bytes = 10 * rows * sizeof(double);
  column_stream<double> with_values(s, o);
  o.decode_values = false;
  column_stream<double> without_values(s, o);
  EXPECT_EQ(with_values.columns_per_block(), 10u);
  EXPECT_LE(without_values.columns_per_block(), with_values.columns_per_block());
  std::vector<std::size_t> seen;
  for (auto* stream : {&with_values, &without_values}) {
    seen.clear();
    stream->run(all_columns(columns),
                [&](const column_view<double>& v) { return seen.push_back(v.column), true; });
    EXPECT_EQ(seen, all_columns(columns));
  }
}

TEST_F(StreamArgumentTest, MovedStreamStillRuns) {
  const genotype_data& g = genotypes();
  column_stream<double> first(g.s, options_with(3, 2));
  column_stream<double> second(std::move(first));
  calls seen;
  const std::vector<std::size_t> order = {5, 4, 3, 5};
  second.run(order, [&](const column_view<double>& v) {
    seen.emplace_back(v.column, v.position);
    return true;
  });
  EXPECT_EQ(seen, expected_calls(order));
}

// ==== Progress and stats

std::uint64_t frame_bytes(const store& s, std::span<const std::size_t> order) {
  std::uint64_t sum = 0;
  for (std::size_t j : order) sum += s.entry(j).frame_size;
  return sum;
}

class StreamProgressTest : public testing::Test {
 protected:
  watchdog dog_{time_limit};
};

TEST_F(StreamProgressTest, CalledEveryPassAndEndsAtTheOrderSize) {
  const genotype_data& g = genotypes();
  column_stream<double> stream(g.s, options_with(4, 1));
  std::vector<pass_progress> reports;
  stream.on_progress([&](const pass_progress& p) { reports.push_back(p); });
  std::mt19937_64 rng(4);
  for (mode m : {mode::pipelined, mode::sequential}) {
    for (const std::vector<std::size_t>& order :
         {random_order(70, columns, rng), std::vector<std::size_t>{3}, all_columns(columns)}) {
      reports.clear();
      run_pass<double>(stream, m, order, [](const column_view<double>&) { return true; });
      ASSERT_FALSE(reports.empty()) << mode_name(m) << " order of " << order.size();
      EXPECT_EQ(reports.back().columns_done, order.size());
      EXPECT_EQ(reports.back().columns_total, order.size());
      EXPECT_EQ(reports.back().bytes_read, frame_bytes(g.s, order));
      for (std::size_t i = 1; i < reports.size(); ++i) {
        EXPECT_LE(reports[i - 1].columns_done, reports[i].columns_done);
        EXPECT_LE(reports[i - 1].seconds, reports[i].seconds);
      }
    }
  }
}

TEST_F(StreamProgressTest, ReportsDuringALongPass) {
  const genotype_data& g = genotypes();
  column_stream<double> stream(g.s, options_with(4, 1));
  std::vector<std::uint64_t> done;
  stream.on_progress([&](const pass_progress& p) { done.push_back(p.columns_done); });
  // 60 columns x 6 ms: well over the tenth of a second between reports.
  stream.run(all_columns(columns), [](const column_view<double>&) {
    std::this_thread::sleep_for(6ms);
    return true;
  });
  ASSERT_GE(done.size(), 2u);
  EXPECT_LT(done.front(), columns);
  EXPECT_EQ(done.back(), columns);
}

class StreamStatsTest : public testing::Test {
 protected:
  watchdog dog_{time_limit};
};

TEST_F(StreamStatsTest, CountsColumnsBytesAndTime) {
  const genotype_data& g = genotypes();
  std::mt19937_64 rng(8);
  const std::vector<std::size_t> order = random_order(90, columns, rng);
  for (std::size_t per_block : {1, 8}) {
    column_stream<double> stream(g.s, options_with(4, per_block));
    column_stream<float> stream_f(g.s, options_with(4, per_block));
    for (mode m : {mode::pipelined, mode::sequential}) {
      SCOPED_TRACE(mode_name(m) + " block " + std::to_string(per_block));
      const pass_stats st = run_pass<double>(stream, m, order, [](const column_view<double>&) {
        std::this_thread::sleep_for(200us);
        return true;
      });
      EXPECT_EQ(st.columns, order.size());
      EXPECT_EQ(st.bytes_read, frame_bytes(g.s, order));
      EXPECT_EQ(st.bytes_decoded, order.size() * rows * sizeof(double));
      EXPECT_GE(st.wall_seconds, st.compute_busy_seconds);
      EXPECT_GE(st.compute_busy_seconds, 90 * 200e-6);
      EXPECT_GE(st.compute_wait_seconds, 0.0);
      EXPECT_NEAR(st.compute_busy_seconds + st.compute_wait_seconds, st.wall_seconds, 1e-9);
      EXPECT_FALSE(st.stopped_early);

      const pass_stats sf =
          run_pass<float>(stream_f, m, order, [](const column_view<float>&) { return true; });
      EXPECT_EQ(sf.columns, order.size());
      EXPECT_EQ(sf.bytes_read, frame_bytes(g.s, order));
      EXPECT_EQ(sf.bytes_decoded, order.size() * rows * sizeof(float));
      EXPECT_GE(sf.wall_seconds, sf.compute_busy_seconds);
    }
  }
  // An empty pass did nothing.
  column_stream<double> stream(g.s, options_with(2, 1));
  const pass_stats none = stream.run({}, [](const column_view<double>&) { return true; });
  EXPECT_EQ(none.columns, 0u);
  EXPECT_EQ(none.bytes_read, 0u);
  EXPECT_EQ(none.bytes_decoded, 0u);
  EXPECT_FALSE(none.stopped_early);
}

}  // namespace
}  // namespace colflow::column_stream_tests
