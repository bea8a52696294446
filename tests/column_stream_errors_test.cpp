// Tests of column_stream's stops and failures: early stop, kernel exceptions, damaged frames
// (in passes and in batches), checksum mismatches, and a data file truncated during a pass.
#include <gtest/gtest.h>

#include <stdexcept>

#include "column_stream_fixture.hpp"

namespace colflow::column_stream_tests {
namespace {

// ==== Early stop and errors, per depth and block size

class StreamEarlyStopTest : public testing::TestWithParam<depth_case> {
 protected:
  watchdog dog_{time_limit};
};

TEST_P(StreamEarlyStopTest, StopsRightAfterTheKernelSaysSo) {
  const auto [depth, per_block] = GetParam();
  const genotype_data& g = genotypes();
  column_stream<double> stream(g.s, options_with(depth, per_block));
  std::mt19937_64 rng(5);
  const std::vector<std::size_t> order = random_order(100, columns, rng);
  for (mode m : {mode::pipelined, mode::sequential}) {
    for (std::size_t k : {0, 1, 7, 8, 9, 33, 99}) {
      SCOPED_TRACE(mode_name(m) + " stop at " + std::to_string(k));
      calls seen;
      const pass_stats st = run_pass<double>(stream, m, order, [&](const column_view<double>& v) {
        seen.emplace_back(v.column, v.position);
        return v.position != k;
      });
      EXPECT_EQ(seen, expected_calls(std::span(order).first(k + 1)));
      EXPECT_TRUE(st.stopped_early);
      EXPECT_EQ(st.columns, k + 1);
      EXPECT_EQ(st.bytes_decoded, (k + 1) * rows * sizeof(double));

      // The next pass runs in full.
      seen.clear();
      const pass_stats full = run_pass<double>(stream, m, order, [&](const column_view<double>& v) {
        seen.emplace_back(v.column, v.position);
        return true;
      });
      EXPECT_EQ(seen, expected_calls(order));
      EXPECT_FALSE(full.stopped_early);
      EXPECT_EQ(full.columns, order.size());
    }
  }
  EXPECT_LE(stream.peak_buffers_in_use(), depth);
}

INSTANTIATE_TEST_SUITE_P(DepthsAndBlocks, StreamEarlyStopTest, depth_cases, depth_case_name);

class StreamErrorTest : public testing::TestWithParam<depth_case> {
 protected:
  watchdog dog_{time_limit};
};

TEST_P(StreamErrorTest, KernelExceptionNamesColumnAndPositionAndStreamRecovers) {
  const auto [depth, per_block] = GetParam();
  const genotype_data& g = genotypes();
  column_stream<double> stream(g.s, options_with(depth, per_block));
  std::mt19937_64 rng(depth * 31 + per_block);
  const std::vector<std::size_t> order = random_order(80, columns, rng);
  std::uniform_int_distribution<std::size_t> pick(0, order.size() - 1);
  // 4 depths x 2 block sizes x 40 = 320 failing passes, each followed by a full one.
  for (int attempt = 0; attempt < 40; ++attempt) {
    const std::size_t p = pick(rng);
    const bool as_colflow_error = attempt % 2 == 1;
    const mode m = attempt % 5 == 4 ? mode::sequential : mode::pipelined;
    SCOPED_TRACE(mode_name(m) + " attempt " + std::to_string(attempt) + " throws at position " +
                 std::to_string(p));
    std::size_t calls_made = 0;
    try {
      run_pass<double>(stream, m, order, [&](const column_view<double>& v) -> bool {
        ++calls_made;
        if (v.position == p) {
          if (as_colflow_error) throw error(errc::bad_input, "kernel says no");
          throw std::runtime_error("kernel says no");
        }
        return true;
      });
      ADD_FAILURE() << "run did not throw";
    } catch (const error& e) {
      EXPECT_EQ(e.kind(), as_colflow_error ? errc::bad_input : errc::kernel_error);
      EXPECT_TRUE(names(e.message(), "column", order[p])) << e.message();
      EXPECT_TRUE(names(e.message(), "position", p)) << e.message();
      EXPECT_NE(e.message().find("kernel says no"), std::string::npos) << e.message();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a colflow::error: " << e.what();
    }
    // A cancelled pass calls the kernel no more.
    EXPECT_EQ(calls_made, p + 1);

    calls seen;
    std::size_t wrong_values = 0;
    const pass_stats st = stream.run(order, [&](const column_view<double>& v) {
      seen.emplace_back(v.column, v.position);
      wrong_values += !same_bits<double>(values_of<double>(v), g.z[v.column]);
      return true;
    });
    EXPECT_EQ(seen, expected_calls(order));
    EXPECT_EQ(wrong_values, 0u);
    EXPECT_EQ(st.columns, order.size());
    if (HasFailure()) break;  // one failing attempt tells the story
  }
  EXPECT_LE(stream.peak_buffers_in_use(), depth);
}

INSTANTIATE_TEST_SUITE_P(DepthsAndBlocks, StreamErrorTest, depth_cases, depth_case_name);

// A zstd genotype store whose column `bad` has a damaged frame (its magic number flipped),
// written once per process.
constexpr std::size_t bad = 23;

struct damaged_store {
  test::temp_dir dir;
  fs::path path = dir / "damaged.cf";
  bool damaged = [this] {
    test::write_genotype_store(path, rows, columns, {codec_id::zstd, 3, false}, 3);
    const std::uint64_t offset = store::open(path).entry(bad).offset;
    std::vector<char> data = test::read_file(path / "columns.dat");
    if (offset >= data.size()) return false;
    data[offset] = static_cast<char>(data[offset] ^ 0x5a);
    test::write_file(path / "columns.dat", data);
    return true;
  }();
};

class StreamCorruptFrameTest : public testing::Test {
 protected:
  void SetUp() override {
    static const damaged_store data;
    ASSERT_TRUE(data.damaged);
    path_ = data.path;
  }

  fs::path path_;
  watchdog dog_{time_limit};
};

TEST_F(StreamCorruptFrameTest, DecodeErrorNamesTheColumnAndOtherColumnsStillStream) {
  const store s = store::open(path_, {access_mode::mmap, false});
  std::vector<std::vector<double>> expected(columns, std::vector<double>(rows));
  for (std::size_t j = 0; j < columns; ++j)
    if (j != bad) s.read_column(j, expected[j]);
  std::vector<std::size_t> good = all_columns(columns);
  good.erase(good.begin() + bad);
  for (const auto& [depth, per_block] : every_depth_case) {
    column_stream<double> stream(s, options_with(depth, per_block));
    for (int attempt = 0; attempt < 2; ++attempt) {
      for (mode m : {mode::pipelined, mode::sequential}) {
        SCOPED_TRACE(depth_case_label(depth, per_block) + " " + mode_name(m));
        try {
          run_pass<double>(stream, m, all_columns(columns),
                           [](const column_view<double>&) { return true; });
          ADD_FAILURE() << "run did not throw";
        } catch (const error& e) {
          EXPECT_EQ(e.kind(), errc::corrupt_frame) << e.message();
          EXPECT_TRUE(names(e.message(), "column", bad)) << e.message();
          EXPECT_TRUE(names(e.message(), "position", bad)) << e.message();
        }
        std::size_t seen = 0, wrong_values = 0;
        const pass_stats st = run_pass<double>(stream, m, good, [&](const column_view<double>& v) {
          ++seen;
          wrong_values += !same_bits<double>(values_of<double>(v), expected[v.column]);
          return true;
        });
        EXPECT_EQ(seen, good.size());
        EXPECT_EQ(wrong_values, 0u);
        EXPECT_EQ(st.columns, good.size());
      }
    }
  }
}

TEST_F(StreamCorruptFrameTest,
       BatchesCoverTheOrderInOrderAndRaiseADecodeErrorAfterTheColumnsBefore) {
  const store s = store::open(path_, {access_mode::mmap, false});
  std::mt19937_64 rng(12);
  const std::vector<std::size_t> order = random_order(3 * columns, columns, rng);
  std::vector<std::size_t> good;
  for (std::size_t j : order)
    if (j != bad) good.push_back(j);
  for (const auto& [depth, per_block] : every_depth_case) {
    SCOPED_TRACE(depth_case_label(depth, per_block));
    column_stream<double> stream(s, options_with(depth, per_block));
    calls seen;
    std::size_t batches = 0, largest = 0;
    const pass_stats st = stream.run_batches(good, [&](std::span<const column_view<double>> b) {
      ++batches;
      largest = std::max(largest, b.size());
      for (const column_view<double>& v : b) seen.emplace_back(v.column, v.position);
      return true;
    });
    EXPECT_EQ(seen, expected_calls(good));  // every position once, in order
    EXPECT_EQ(st.columns, good.size());
    EXPECT_LE(largest, stream.columns_per_block());
    if (stream.columns_per_block() > 1 && good.size() >= 4 * depth * stream.columns_per_block()) {
      EXPECT_LT(batches, good.size());  // columns do travel together
    }
    // The damaged column: the columns before it are computed, then its error is raised.
    seen.clear();
    try {
      stream.run_batches(order, [&](std::span<const column_view<double>> b) {
        for (const column_view<double>& v : b) seen.emplace_back(v.column, v.position);
        return true;
      });
      ADD_FAILURE() << "run_batches did not throw";
    } catch (const error& e) {
      EXPECT_EQ(e.kind(), errc::corrupt_frame) << e.message();
      EXPECT_TRUE(names(e.message(), "column", bad)) << e.message();
    }
    const std::size_t first_bad =
        static_cast<std::size_t>(std::find(order.begin(), order.end(), bad) - order.begin());
    EXPECT_EQ(seen, expected_calls(std::span(order).first(first_bad)));
    // A kernel error names the batch's positions, and the stream stays usable.
    try {
      stream.run_batches(good, [&](std::span<const column_view<double>>) -> bool {
        throw std::runtime_error("boom");
      });
      ADD_FAILURE() << "run_batches did not throw";
    } catch (const error& e) {
      EXPECT_EQ(e.kind(), errc::kernel_error);
      EXPECT_NE(e.message().find("positions 0 to "), std::string::npos) << e.message();
      EXPECT_NE(e.message().find("boom"), std::string::npos) << e.message();
    }
    std::size_t again = 0;
    stream.run_batches(good, [&](std::span<const column_view<double>> b) {
      again += b.size();
      return again < 5;  // an early stop after the batch that reaches 5
    });
    EXPECT_GE(again, 5u);
    EXPECT_LT(again, 5u + stream.columns_per_block());
  }
}

TEST_F(StreamCorruptFrameTest, ChecksumVerificationReportsMismatch) {
  const store s = store::open(path_, {access_mode::mmap, false});
  const std::vector<std::size_t> order = {1, 2, bad, 4};
  for (const auto& [depth, per_block] : every_depth_case) {
    stream_options o = options_with(depth, per_block);
    o.verify_checksums = true;
    column_stream<double> stream(s, o);
    for (mode m : {mode::pipelined, mode::sequential}) {
      SCOPED_TRACE(depth_case_label(depth, per_block) + " " + mode_name(m));
      try {
        run_pass<double>(stream, m, order, [](const column_view<double>&) { return true; });
        ADD_FAILURE() << "run did not throw";
      } catch (const error& e) {
        EXPECT_EQ(e.kind(), errc::checksum_mismatch) << e.message();
        EXPECT_TRUE(names(e.message(), "column", bad)) << e.message();
        EXPECT_TRUE(names(e.message(), "position", 2)) << e.message();
      }
    }
  }
}

// The outcome of a pass depends only on the data, the order and the kernel
// (stream/column_stream.hpp), as with run_sequential: a damaged column after the kernel's stop must
// not fail the pass, and a kernel error before it is the one reported, whatever the depth (though
// decode, running ahead, may well have reached the damaged column first).
TEST_F(StreamCorruptFrameTest, DamagedColumnPastAnEarlyStopDoesNotFailThePass) {
  const store s = store::open(path_, {access_mode::mmap, false});
  for (const auto& [depth, per_block] : every_depth_case) {
    column_stream<double> stream(s, options_with(depth, per_block));
    for (mode m : {mode::pipelined, mode::sequential}) {
      SCOPED_TRACE(depth_case_label(depth, per_block) + " " + mode_name(m));
      std::size_t seen = 0;
      try {
        const pass_stats st =
            run_pass<double>(stream, m, all_columns(columns), [&](const column_view<double>& v) {
              ++seen;
              if (v.position == 0) std::this_thread::sleep_for(20ms);  // let decode run ahead
              return v.position < 2;
            });
        EXPECT_TRUE(st.stopped_early);
        EXPECT_EQ(seen, 3u);
      } catch (const error& e) {
        ADD_FAILURE() << "a pass stopped at position 2 failed on column " << bad << ": "
                      << e.message();
      }
    }
  }
}

TEST_F(StreamCorruptFrameTest, KernelErrorBeforeADamagedColumnIsTheOneReported) {
  const store s = store::open(path_, {access_mode::mmap, false});
  for (const auto& [depth, per_block] : every_depth_case) {
    column_stream<double> stream(s, options_with(depth, per_block));
    for (mode m : {mode::pipelined, mode::sequential}) {
      SCOPED_TRACE(depth_case_label(depth, per_block) + " " + mode_name(m));
      try {
        run_pass<double>(stream, m, all_columns(columns),
                         [&](const column_view<double>& v) -> bool {
                           if (v.position == 0) std::this_thread::sleep_for(20ms);
                           if (v.position == 2) throw std::runtime_error("kernel gives up");
                           return true;
                         });
        ADD_FAILURE() << "run did not throw";
      } catch (const error& e) {
        EXPECT_EQ(e.kind(), errc::kernel_error) << e.message();
        EXPECT_TRUE(names(e.message(), "position", 2)) << e.message();
      }
    }
  }
}

// ==== A data file truncated during a pass

// A data file truncated by another program during a pass: in mmap mode the reads past the new
// end would raise SIGBUS; the pass must fail with an error naming the file instead, and the
// process live on. In pread mode the short read fails the same way.
TEST(StreamTruncationTest, DataFileShrinkingDuringAPassFailsThePassNotTheProcess) {
  for (const access_mode access : {access_mode::mmap, access_mode::pread})
    for (const codec_id codec : {codec_id::none, codec_id::zstd}) {
      SCOPED_TRACE(std::string(access == access_mode::mmap ? "mmap " : "pread ") +
                   std::string(traits_of(codec).name));
      test::temp_dir dir;
      test::write_genotype_store(dir / "g.cf", 5000, 300,
                                 column_encoding{codec, codec == codec_id::none ? 0 : 1}, 4);
      const store s = store::open(dir / "g.cf", {access, false});
      stream_options o;
      o.in_flight = 2;
      o.block_bytes = 1;  // one column per message: most columns are read after the cut
      column_stream<double> stream(s, o);
      std::size_t seen = 0;
      try {
        stream.run(all_columns(300), [&](const column_view<double>& v) {
          if (v.position == 20)
            std::filesystem::resize_file(dir / "g.cf" / "columns.dat", 64 + 100);
          ++seen;
          return true;
        });
        ADD_FAILURE() << "the pass over a shrunk file succeeded";
      } catch (const error& e) {
        EXPECT_NE(std::string(e.what()).find("columns.dat"), std::string::npos) << e.what();
      }
      EXPECT_LT(seen, 300u);
      // Later reads fail cleanly too.
      std::vector<double> values(s.num_rows());
      EXPECT_THROW(s.read_column(299, values), error);
    }
}

}  // namespace
}  // namespace colflow::column_stream_tests
