// The converter's batches (preprocess/converter.cpp): however many columns a batch gathers and
// however many threads encode them, a store holds the same bytes.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>

#include "colflow/preprocess/matrix_source.hpp"
#include "preprocess_fixture.hpp"

namespace colflow::preprocess_tests {
namespace {

// A store's data and index, less their headers (which hold the store's random ID), and its
// variant table.
std::vector<char> store_bytes(const std::filesystem::path& store) {
  constexpr std::ptrdiff_t header = 64;
  std::vector<char> out;
  for (const char* file : {"columns.dat", "columns.idx", "columns.tsv"}) {
    const std::vector<char> bytes = test::read_file(store / file);
    const bool text = std::string_view(file).ends_with(".tsv");
    out.insert(out.end(), bytes.begin() + (text ? 0 : header), bytes.end());
  }
  return out;
}

TEST(ConverterBatchesTest, StoresAreTheSameBytesWhateverTheBatchesAndThreads) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  // uk10k: 6,717 columns of 911 bytes of codes, so that batches fill by their count.
  const std::string name = prefix("uk10k/uk10k_chr1_1mb");
  std::vector<char> first;
  for (const int threads : {1, 2}) {
    const tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                                    static_cast<std::size_t>(threads));
    // 1 token: batches of 64 columns; 500: of 13; 10,000: of one column each.
    for (const unsigned tokens : {1u, 500u, 10000u, 0u}) {
      SCOPED_TRACE(std::to_string(threads) + " threads, " + std::to_string(tokens) + " tokens");
      preprocess::bed_source source(preprocess::plink_paths::from_prefix(name));
      preprocess::convert_options o;
      o.out = dir / "s.cf";
      o.codec = preprocess::codec_choice::genotype_zstd;
      o.tokens = tokens;
      o.overwrite = true;
      std::uint64_t last = 0;
      bool in_order = true;
      preprocess::convert(source, o, [&](const preprocess::convert_progress& p) {
        in_order = in_order && p.columns_done == last + 1;
        last = p.columns_done;
      });
      EXPECT_TRUE(in_order);
      EXPECT_EQ(last, 6717u);
      const std::vector<char> bytes = store_bytes(dir / "s.cf");
      if (first.empty())
        first = bytes;
      else
        EXPECT_TRUE(bytes == first);
    }
  }
}

TEST(ConverterBatchesTest, BatchesOfWideColumnsEndAtTheirBytes) {
  // 300 float64 rows, 2,400 bytes a column: a batch is full at 28 columns (64 KiB), before its
  // 64; with 10,000 tokens each batch is one column.
  constexpr std::uint64_t rows = 300, columns = 500;
  std::vector<double> values(rows * columns);
  for (std::size_t k = 0; k < values.size(); ++k)
    values[k] = k % 97 == 0 ? std::nan("") : static_cast<double>((k * 7919) % 1000) / 250.0;
  test::temp_dir dir;
  std::vector<char> first;
  for (const unsigned tokens : {1u, 10000u}) {
    SCOPED_TRACE(std::to_string(tokens) + " tokens");
    preprocess::matrix_view m;
    m.data = reinterpret_cast<const std::byte*>(values.data());
    m.rows = rows;
    m.columns = columns;
    m.row_stride = 8;
    m.column_stride = static_cast<std::ptrdiff_t>(8 * rows);
    preprocess::matrix_source source(m);
    preprocess::convert_options o;
    o.out = dir / "d.cf";
    o.codec = preprocess::codec_choice::lz4;
    o.standardize = false;
    o.tokens = tokens;
    o.overwrite = true;
    EXPECT_EQ(preprocess::convert(source, o).columns, columns);
    const std::vector<char> bytes = store_bytes(dir / "d.cf");
    if (first.empty())
      first = bytes;
    else
      EXPECT_TRUE(bytes == first);
  }
  // The values came through in order.
  const store s = store::open(dir / "d.cf");
  std::vector<double> column(rows);
  s.read_column(123, column, decode_as::stored);
  EXPECT_EQ(column[7], values[123 * rows + 7]);
}

}  // namespace
}  // namespace colflow::preprocess_tests
