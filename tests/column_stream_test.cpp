// Tests of column_stream (include/colflow/stream/column_stream.hpp): the order the kernel sees, the
// values it gets, the memory bound and determinism. The errors, the options and reports, nested
// parallelism and the stream's lifetime are tested in column_stream_*_test.cpp, with the helpers
// of column_stream_fixture.hpp.
//
// Every fixture runs a watchdog: a pass that hangs aborts the test binary with a message
// instead of leaving ctest waiting for its own timeout.
#include <gtest/gtest.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <cmath>
#include <set>

#include "column_stream_fixture.hpp"

namespace colflow::column_stream_tests {
namespace {

// ==== Order: the kernel sees exactly the order, whatever the depth and block size

class StreamOrderTest : public testing::TestWithParam<depth_case> {
 protected:
  watchdog dog_{time_limit};
};

// Both modes on one stream, in turn: run_sequential must work on a stream that ran the graph
// and the other way round.
TEST_P(StreamOrderTest, KernelSeesExactlyTheOrder) {
  const auto [depth, per_block] = GetParam();
  const genotype_data& g = genotypes();
  column_stream<double> stream(g.s, options_with(depth, per_block));
  ASSERT_EQ(stream.in_flight(), depth);
  ASSERT_EQ(stream.columns_per_block(), per_block);

  std::mt19937_64 rng(depth * 100 + per_block);
  std::vector<std::size_t> subset = all_columns(columns);
  std::shuffle(subset.begin(), subset.end(), rng);
  subset.resize(17);
  const std::vector<std::vector<std::size_t>> orders = {
      random_order(150, columns, rng),  // a permutation with repeats, not a multiple of 8
      shuffled_columns(columns, rng),
      subset,
      {},
      {42},
      {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7},  // one column, repeated across block boundaries
      all_columns(columns),
      random_order(3 * columns + 5, columns, rng),
  };
  for (const auto& order : orders) {
    for (mode m : {mode::pipelined, mode::sequential}) {
      SCOPED_TRACE(mode_name(m) + ", order of " + std::to_string(order.size()));
      calls seen;
      std::size_t wrong_values = 0;
      const pass_stats st = run_pass<double>(stream, m, order, [&](const column_view<double>& v) {
        seen.emplace_back(v.column, v.position);
        // The values travel with their column (no buffer mix-up between blocks).
        if (v.column >= columns || !same_bits<double>(values_of<double>(v), g.z[v.column]))
          ++wrong_values;
        return true;
      });
      EXPECT_EQ(seen, expected_calls(order));
      EXPECT_EQ(wrong_values, 0u);
      EXPECT_EQ(st.columns, order.size());
      EXPECT_FALSE(st.stopped_early);
    }
  }
  EXPECT_LE(stream.peak_buffers_in_use(), depth);
}

INSTANTIATE_TEST_SUITE_P(DepthsAndBlocks, StreamOrderTest, depth_cases, depth_case_name);

// ==== Values: pipelined == sequential == store::read_column, for every codec and store type

class StreamValuesTest : public testing::TestWithParam<values_case> {
 protected:
  void SetUp() override {
    const written_store& w = written(GetParam());
    path_ = w.path;
    codes_ = w.codes;
  }

  // Every pass kind over one order: kernel values == read_column, and the genotype extras.
  template <typename T>
  void check(const store& s, decode_as as) {
    const auto expected = read_all<T>(s, as);
    const bool genotype = s.type() == value_type::genotype;
    std::mt19937_64 rng(11);
    const std::vector<std::size_t> order = random_order(90, columns, rng);
    for (std::size_t per_block : {std::size_t{1}, std::size_t{8}}) {
      stream_options o;
      o.in_flight = 4;
      o.values = as;
      o.block_bytes = per_block == 1 ? 1 : block_of<T>(per_block);
      column_stream<T> stream(s, o);
      for (mode m : {mode::pipelined, mode::sequential}) {
        SCOPED_TRACE(mode_name(m) + " block " + std::to_string(per_block));
        std::size_t seen = 0, bad_values = 0, bad_codes = 0, bad_lut_decode = 0;
        std::vector<T> decoded(rows);
        run_pass<T>(stream, m, order, [&](const column_view<T>& v) {
          ++seen;
          if (!same_bits<T>(values_of<T>(v), expected[v.column])) ++bad_values;
          if (genotype) {
            if (!std::equal(v.codes.begin(), v.codes.end(), codes_[v.column].begin(),
                            codes_[v.column].end()))
              ++bad_codes;
            // The codes and the table are what the values were decoded from.
            decode_genotypes(v.codes, v.lut, std::span<T>(decoded));
            if (!same_bits<T>(decoded, values_of<T>(v))) ++bad_lut_decode;
          } else if (!v.codes.empty()) {
            ++bad_codes;
          }
          return true;
        });
        EXPECT_EQ(seen, order.size());
        EXPECT_EQ(bad_values, 0u);
        EXPECT_EQ(bad_codes, 0u);
        EXPECT_EQ(bad_lut_decode, 0u);
      }
    }

    // decode_values = false: no values, but valid codes (genotype) that decode to them. One
    // column per message, and for genotype stores also the default block_bytes (a float store
    // without values has no decoded bytes to size its messages by: see StreamArgumentTest).
    std::vector<std::size_t> block_sizes = {1};
    if (genotype) block_sizes.push_back(stream_options{}.block_bytes);
    for (std::size_t block_bytes : block_sizes) {
      stream_options o;
      o.in_flight = 4;
      o.values = as;
      o.decode_values = false;
      o.block_bytes = block_bytes;
      column_stream<T> stream(s, o);
      for (mode m : {mode::pipelined, mode::sequential}) {
        SCOPED_TRACE(mode_name(m) + " without values, block_bytes " + std::to_string(block_bytes));
        std::size_t seen = 0, with_values = 0, bad_codes = 0;
        std::vector<T> decoded(rows);
        const pass_stats st = run_pass<T>(stream, m, order, [&](const column_view<T>& v) {
          ++seen;
          if (v.values.size() != 0) ++with_values;
          if (!genotype) {
            bad_codes += !v.codes.empty();
          } else if (v.codes.size() < genotype_column_bytes(rows)) {
            ++bad_codes;
          } else {
            decode_genotypes(v.codes, v.lut, std::span<T>(decoded));
            bad_codes += !same_bits<T>(decoded, expected[v.column]);
          }
          return true;
        });
        EXPECT_EQ(seen, order.size());
        EXPECT_EQ(with_values, 0u);
        EXPECT_EQ(bad_codes, 0u);
        EXPECT_EQ(st.bytes_decoded, 0u);
      }
    }
  }

  fs::path path_;
  std::vector<std::vector<std::uint8_t>> codes_;
  watchdog dog_{time_limit};
};

// One test per store kind and codec (each writes its store): every value type and decode_as,
// then pread access and checksum verification.
TEST_P(StreamValuesTest, PipelinedEqualsSequentialEqualsReadColumn) {
  const store s = store::open(path_);
  for (decode_as as : {decode_as::standardized, decode_as::stored}) {
    const std::string how = as == decode_as::standardized ? "standardized" : "stored";
    {
      SCOPED_TRACE("double, " + how);
      check<double>(s, as);
    }
    {
      SCOPED_TRACE("float, " + how);
      check<float>(s, as);
    }
  }
  {
    SCOPED_TRACE("pread access");
    check<double>(store::open(path_, {access_mode::pread, false}), decode_as::standardized);
  }
  // verify_checksums on a sound store changes nothing.
  const auto expected = read_all<double>(s, decode_as::standardized);
  stream_options o;
  o.in_flight = 3;
  o.verify_checksums = true;
  column_stream<double> stream(s, o);
  std::size_t wrong_values = 0;
  stream.run(all_columns(columns), [&](const column_view<double>& v) {
    wrong_values += !same_bits<double>(values_of<double>(v), expected[v.column]);
    return true;
  });
  EXPECT_EQ(wrong_values, 0u) << "with verify_checksums";
}

std::vector<values_case> every_store_kind() {
  std::vector<values_case> cases;
  for (value_type t : {value_type::genotype, value_type::float64, value_type::float32})
    for (const column_encoding& e : test::all_encodings()) cases.push_back({t, e});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, StreamValuesTest, testing::ValuesIn(every_store_kind()),
                         [](const testing::TestParamInfo<values_case>& param) {
                           return values_case_name(param.param);
                         });

// ==== Memory: never more buffers than in_flight()

constexpr std::uint64_t long_rows = 6000, long_columns = 24;

struct long_store {
  test::temp_dir dir;
  fs::path path = dir / "f.cf";
  store s = [this] {
    test::write_float_store(path, value_type::float64, long_rows, long_columns,
                            {codec_id::zlib, 6, true});
    return store::open(path);
  }();
};

std::string depth_name(const testing::TestParamInfo<std::size_t>& param) {
  return "Depth" + std::to_string(param.param);
}

class StreamMemoryTest : public testing::TestWithParam<std::size_t> {
 protected:
  watchdog dog_{time_limit};
};

TEST_P(StreamMemoryTest, SlowKernelNeverHoldsMoreThanInFlightBuffers) {
  const std::size_t depth = GetParam();
  const genotype_data& g = genotypes();
  column_stream<double> stream(g.s, options_with(depth, 1));
  ASSERT_EQ(stream.in_flight(), depth);
  std::set<const double*> buffers;
  const std::vector<std::size_t> order = all_columns(40);
  stream.run(order, [&](const column_view<double>& v) {
    buffers.insert(v.values.data());
    std::this_thread::sleep_for(1ms);  // compute-bound: decode runs as far ahead as it may
    return true;
  });
  EXPECT_LE(stream.peak_buffers_in_use(), depth);
  // An independent count: one column per block, so each distinct address is a pool buffer.
  EXPECT_LE(buffers.size(), depth);
  // The bound is reached, so the check above is not vacuous: decode did run ahead.
  if (tbb::this_task_arena::max_concurrency() > 1) {
    EXPECT_EQ(stream.peak_buffers_in_use(), depth);
  }
}

TEST_P(StreamMemoryTest, SlowDecodeNeverHoldsMoreThanInFlightBuffers) {
  const std::size_t depth = GetParam();
  // Long columns through zlib with shuffle: decoding costs far more than the kernel.
  static const long_store data;
  const store& s = data.s;
  const auto expected = read_all<double>(s, decode_as::standardized);
  for (std::size_t per_block : {std::size_t{1}, std::size_t{3}}) {
    stream_options o;
    o.in_flight = depth;
    o.block_bytes = per_block * long_rows * sizeof(double);
    column_stream<double> stream(s, o);
    ASSERT_EQ(stream.columns_per_block(), per_block);
    std::size_t seen = 0, wrong_values = 0;
    stream.run(all_columns(long_columns), [&](const column_view<double>& v) {
      ++seen;
      wrong_values += !same_bits<double>(values_of<double>(v), expected[v.column]);
      return true;
    });
    EXPECT_EQ(seen, long_columns);
    EXPECT_EQ(wrong_values, 0u);
    EXPECT_LE(stream.peak_buffers_in_use(), depth) << "block of " << per_block;
    EXPECT_GE(stream.peak_buffers_in_use(), 1u);
  }
}

INSTANTIATE_TEST_SUITE_P(Depths, StreamMemoryTest,
                         testing::Values(std::size_t{1}, std::size_t{2}, std::size_t{8}),
                         depth_name);

// ==== Determinism: a Gibbs-like residual update gives the same bits whatever the threads

class StreamDeterminismTest : public testing::Test {
 protected:
  watchdog dog_{time_limit};
};

// y = z_0 + z_5 / 2 + noise, with a fixed seed.
std::vector<double> made_up_phenotype(const genotype_data& g) {
  std::mt19937_64 rng(2024);
  std::normal_distribution<double> noise(0, 1);
  std::vector<double> y(rows);
  for (std::size_t i = 0; i < rows; ++i) y[i] = g.z[0][i] + 0.5 * g.z[5][i] + noise(rng);
  return y;
}

// One residual update: b = z.r / (n - 1) / 2; r -= b z. Plain loops, a fixed summation order.
void update_residual(std::span<const double> z, std::vector<double>& r) {
  double dot = 0;
  for (std::size_t i = 0; i < r.size(); ++i) dot += z[i] * r[i];
  const double b = dot / static_cast<double>(rows - 1) * 0.5;
  for (std::size_t i = 0; i < r.size(); ++i) r[i] -= b * z[i];
}

constexpr int residual_passes = 5;

std::vector<double> residuals_by_stream(column_stream<double>& stream, mode m,
                                        const std::vector<double>& y) {
  std::vector<double> r = y;
  std::mt19937_64 rng(77);
  for (int pass = 0; pass < residual_passes; ++pass) {
    const std::vector<std::size_t> order = shuffled_columns(columns, rng);
    run_pass<double>(stream, m, order, [&](const column_view<double>& v) {
      update_residual(values_of<double>(v), r);
      return true;
    });
  }
  return r;
}

TEST_F(StreamDeterminismTest, ResidualsAreBitIdenticalForAnyThreadsAndDepth) {
  const genotype_data& g = genotypes();
  const std::vector<double> y = made_up_phenotype(g);

  // The oracle: the same computation straight from read_column, no stream.
  std::vector<double> reference = y;
  {
    std::mt19937_64 rng(77);
    for (int pass = 0; pass < residual_passes; ++pass)
      for (std::size_t j : shuffled_columns(columns, rng)) update_residual(g.z[j], reference);
  }
  // The computation depends on the order: a stream that reordered would not match.
  {
    std::vector<double> unshuffled = y;
    for (int pass = 0; pass < residual_passes; ++pass)
      for (std::size_t j = 0; j < columns; ++j) update_residual(g.z[j], unshuffled);
    ASSERT_FALSE(same_bits<double>(unshuffled, reference));
  }

  for (std::size_t threads : {1, 2, 8}) {
    std::vector<std::pair<std::string, column_stream<double>>> streams;
    for (std::size_t depth : {1, 32})
      for (std::size_t per_block : {1, 8})
        streams.emplace_back(depth_case_label(depth, per_block),
                             warmed_stream<double>(g.s, options_with(depth, per_block)));
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    for (auto& [label, stream] : streams) {
      for (mode m : {mode::pipelined, mode::sequential}) {
        const std::vector<double> r = residuals_by_stream(stream, m, y);
        EXPECT_TRUE(same_bits<double>(r, reference))
            << mode_name(m) << " threads " << threads << " " << label;
      }
    }
  }
}

}  // namespace
}  // namespace colflow::column_stream_tests
