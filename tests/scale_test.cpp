// Stores at the edges of scale: a million columns (open and stream with bounded buffers), and
// a data file past 4 GiB (64-bit offsets, read in both access modes).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <iostream>

#include "colflow/colflow.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

// Column j's codes: every byte the same value, so the content of any column is known.
std::uint8_t column_byte(std::size_t j) { return static_cast<std::uint8_t>((j * 37 + 11) & 0xFF); }

TEST(ScaleTest, MillionColumnsOpenAndStreamWithBoundedBuffers) {
  test::temp_dir dir;
  const std::uint64_t rows = 100, columns = 1'000'000;
  {
    writer_options o;
    o.type = value_type::genotype;
    o.rows = rows;
    store_writer w(dir / "wide.cf", o, test::numbered_samples(rows));
    std::vector<std::uint8_t> codes(genotype_column_bytes(rows));
    // column_byte repeats every 256 columns: each of its frames is encoded once.
    std::vector<encoded_column> frames;
    for (std::uint64_t j = 0; j < columns; ++j) {
      if (j < 256) {
        std::fill(codes.begin(), codes.end(), column_byte(j));
        frames.push_back(encode_genotype_column(codes, rows, column_encoding{codec_id::none, 0}));
      }
      w.append(frames[j % 256], test::numbered_column(j));
    }
    w.finish();
  }
  const auto start = std::chrono::steady_clock::now();
  const store s = store::open(dir / "wide.cf");
  const double open_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(s.num_columns(), columns);
  std::cout << "open of a " << columns << "-column store: " << 1e3 * open_seconds << " ms\n";

  // One pass over every column with a small in-flight depth: the kernel sees each column's
  // codes in order, and no more buffers than the depth ever exist.
  stream_options so;
  so.in_flight = 4;
  so.decode_values = false;
  column_stream<double> stream(s, so);
  std::uint64_t seen = 0, wrong = 0;
  stream.run(all_columns(columns), [&](const column_view<double>& v) {
    wrong += v.codes[0] != column_byte(v.column) || v.codes.back() != column_byte(v.column) ||
             v.column != seen;
    ++seen;
    return true;
  });
  EXPECT_EQ(seen, columns);
  EXPECT_EQ(wrong, 0u);
  EXPECT_LE(stream.peak_buffers_in_use(), 4u);
}

TEST(ScaleTest, DataFilePastFourGibReadsItsLastColumns) {
  test::temp_dir dir;
  // 1 MiB per column, uncompressed: 4,100 columns end past 2^32 bytes.
  const std::uint64_t rows = std::uint64_t{1} << 22, columns = 4100;
  std::vector<std::uint8_t> codes(genotype_column_bytes(rows));
  // The store must fit beside what the tests running alongside write: without that room the
  // test says so and is skipped, rather than filling the disk under them.
  const std::uintmax_t needed = columns * codes.size() + (std::uintmax_t{1} << 30);
  const std::uintmax_t available = std::filesystem::space(dir.path()).available;
  if (available < needed) {
    GTEST_SKIP() << "needs " << (needed >> 20) << " MiB free in " << dir.path() << ", has "
                 << (available >> 20) << " MiB";
  }
  {
    writer_options o;
    o.type = value_type::genotype;
    o.rows = rows;
    store_writer w(dir / "big.cf", o, test::numbered_samples(rows));
    // column_byte repeats every 256 columns: each of its frames is encoded once and appended
    // 16 times (the encoding copies and checksums each column: 4.1 GiB, under ASan in seconds).
    std::vector<encoded_column> frames;
    for (std::uint64_t j = 0; j < columns; ++j) {
      if (j < 256) {
        std::fill(codes.begin(), codes.end(), column_byte(j));
        frames.push_back(encode_genotype_column(codes, rows, column_encoding{codec_id::none, 0}));
      }
      w.append(frames[j % 256], test::numbered_column(j));
    }
    w.finish();
  }
  for (const access_mode mode : {access_mode::mmap, access_mode::pread}) {
    open_options oo;
    oo.access = mode;
    const store s = store::open(dir / "big.cf", oo);
    ASSERT_EQ(s.num_columns(), columns);
    EXPECT_GT(s.entry(columns - 1).offset, std::uint64_t{1} << 32);
    std::vector<std::byte> payload(codes.size());
    for (std::size_t j :
         {std::size_t{0}, std::size_t{4094}, std::size_t{4098}, std::size_t{4099}}) {
      s.verify_checksum(j);
      s.read_payload(j, payload);
      const auto expected = static_cast<std::byte>(column_byte(j));
      EXPECT_EQ(std::count(payload.begin(), payload.end(), expected),
                static_cast<long>(payload.size()))
          << j;
    }
    // The stream reaches them too, and decodes the values they stand for.
    column_stream<double> stream(s, stream_options{.values = decode_as::stored});
    const std::vector<std::size_t> last = {columns - 2, columns - 1};
    stream.run(last, [&](const column_view<double>& v) {
      const std::uint8_t b = column_byte(v.column);
      const double lut[4] = {2.0, std::nan(""), 1.0, 0.0};
      for (Eigen::Index i : {Eigen::Index{0}, Eigen::Index{3}, v.values.size() - 1}) {
        const double expected = lut[(b >> (2 * (i % 4))) & 3];
        if (std::isnan(expected)) {
          EXPECT_TRUE(std::isnan(v.values[i]));
        } else {
          EXPECT_EQ(v.values[i], expected) << v.column << " " << i;
        }
      }
      return true;
    });
  }
}

}  // namespace
}  // namespace colflow
