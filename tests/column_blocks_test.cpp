// The association scans' blocks of columns (analysis/column_blocks_internal.hpp): every column
// reaches the tests once, with its own codes or values, in blocks of the capacity and a short
// last one, and its results reach the sink in the pass's order.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "analysis/scans/column_blocks_internal.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

// A result that names its column and phenotype, so the sink can tell which it got.
assoc_result tagged(std::size_t column, std::size_t phenotype) {
  assoc_result r;
  r.n_obs = column * 10 + phenotype;
  return r;
}

struct scan_record {
  std::vector<std::size_t> block_sizes;
  std::vector<std::size_t> positions, columns;  // as the sink received them
  bool results_match = true;
};

// Scans `order` in blocks of `capacity`; `check(block, c)` checks column c of each block.
template <typename Check>
scan_record scan(const store& s, const std::vector<std::size_t>& order, std::size_t capacity,
                 bool codes, std::size_t phenotypes, Check&& check) {
  stream_options so;
  so.values = decode_as::stored;
  so.decode_values = !codes;
  column_stream<double> stream(s, so);
  detail::column_block block(capacity, s.num_rows(), codes);
  scan_record record;
  const pass_stats ps = detail::scan_in_blocks(
      stream, order, block, phenotypes,
      [&](const detail::column_block& b, std::span<assoc_result> results) {
        EXPECT_EQ(results.size(), b.size() * phenotypes);
        record.block_sizes.push_back(b.size());
        for (std::size_t c = 0; c < b.size(); ++c) {
          check(b, c);
          for (std::size_t q = 0; q < phenotypes; ++q)
            results[c * phenotypes + q] = tagged(b.column(c), q);
        }
      },
      [&](std::size_t position, std::size_t column, std::span<const assoc_result> results) {
        record.positions.push_back(position);
        record.columns.push_back(column);
        if (results.size() != phenotypes) record.results_match = false;
        for (std::size_t q = 0; q < results.size(); ++q)
          if (results[q].n_obs != tagged(column, q).n_obs) record.results_match = false;
      });
  EXPECT_EQ(ps.columns, order.size());
  return record;
}

class ColumnBlocksTest : public ::testing::TestWithParam<column_encoding> {};

TEST_P(ColumnBlocksTest, GenotypeColumnsArriveWholeInBlocksAndResultsInOrder) {
  test::temp_dir dir;
  const std::size_t rows = 7, m = 11;
  const auto codes = test::write_genotype_store(dir / "g.cf", rows, m, GetParam());
  const store s = store::open(dir / "g.cf");
  const std::vector<std::size_t> order = {4, 0, 10, 3, 3, 7, 1, 9, 2, 8};
  const scan_record r =
      scan(s, order, 3, true, 2, [&](const detail::column_block& b, std::size_t c) {
        const std::vector<std::uint8_t>& expected = codes[b.column(c)];
        ASSERT_EQ(b.codes(c).size(), expected.size());
        EXPECT_EQ(std::memcmp(b.codes(c).data(), expected.data(), expected.size()), 0);
        EXPECT_EQ(order[b.position(c)], b.column(c));
      });
  EXPECT_EQ(r.block_sizes, (std::vector<std::size_t>{3, 3, 3, 1}));
  EXPECT_EQ(r.columns, order);
  std::vector<std::size_t> positions(order.size());
  for (std::size_t p = 0; p < positions.size(); ++p) positions[p] = p;
  EXPECT_EQ(r.positions, positions);
  EXPECT_TRUE(r.results_match);
}

TEST_P(ColumnBlocksTest, DenseValuesArriveWholeAndAFullLastBlockIsTestedOnce) {
  test::temp_dir dir;
  const std::size_t rows = 7, m = 6;
  const auto values =
      test::write_float_store(dir / "f.cf", value_type::float64, rows, m, GetParam());
  const store s = store::open(dir / "f.cf");
  const std::vector<std::size_t> order = {5, 4, 3, 2, 1, 0};
  const scan_record r =
      scan(s, order, 2, false, 1, [&](const detail::column_block& b, std::size_t c) {
        for (std::size_t i = 0; i < rows; ++i) {
          const double want = values[b.column(c)][i], got = b.values(c)[i];
          if (std::isnan(want))
            EXPECT_TRUE(std::isnan(got));
          else
            EXPECT_EQ(got, want);
        }
      });
  EXPECT_EQ(r.block_sizes, (std::vector<std::size_t>{2, 2, 2}));
  EXPECT_EQ(r.columns, order);
  EXPECT_TRUE(r.results_match);
}

std::string codec_name(const ::testing::TestParamInfo<column_encoding>& param) {
  return test::encoding_name(param.param);
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, ColumnBlocksTest, ::testing::ValuesIn(test::all_encodings()),
                         codec_name);

}  // namespace
}  // namespace colflow
