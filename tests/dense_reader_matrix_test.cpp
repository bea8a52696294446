// The dense input reader matrix_source: a matrix in memory, in any layout and block size,
// named as given or as npy_source names a file's, and bad shapes and names refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "dense_reader_fixture.hpp"

namespace colflow::preprocess::dense_reader_tests {
namespace {

// ---------------------------------------------------------------------------------------------
// matrix_source: a matrix in memory, any layout

// A rows x columns matrix of cell() values inside a larger buffer, with element (i, j) at
// byte offset origin + i * row_stride + j * column_stride (strides in items here).
struct strided_matrix {
  std::vector<std::byte> bytes;
  matrix_view view;
};

strided_matrix make_matrix(std::size_t rows, std::size_t columns, std::size_t item,
                           std::ptrdiff_t row_step, std::ptrdiff_t column_step) {
  // Room for every offset, with the origin placed so that negative steps stay inside.
  const auto r = static_cast<std::ptrdiff_t>(rows) - 1,
             c = static_cast<std::ptrdiff_t>(columns) - 1;
  const std::ptrdiff_t low =
      std::min<std::ptrdiff_t>(0, r * row_step) + std::min<std::ptrdiff_t>(0, c * column_step);
  const std::ptrdiff_t high =
      std::max<std::ptrdiff_t>(0, r * row_step) + std::max<std::ptrdiff_t>(0, c * column_step);
  strided_matrix m;
  // One spare byte in front: every value is then unaligned.
  m.bytes.assign(static_cast<std::size_t>(high - low + 1) * item + 1, std::byte{0x7f});
  const std::ptrdiff_t origin = 1 - low * static_cast<std::ptrdiff_t>(item);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < columns; ++j) {
      const std::ptrdiff_t at = origin + (static_cast<std::ptrdiff_t>(i) * row_step +
                                          static_cast<std::ptrdiff_t>(j) * column_step) *
                                             static_cast<std::ptrdiff_t>(item);
      const double v = cell(i, j);
      const float f = static_cast<float>(v);
      std::memcpy(m.bytes.data() + at, item == 8 ? static_cast<const void*>(&v) : &f, item);
    }
  m.view.data = m.bytes.data() + origin;
  m.view.rows = rows;
  m.view.columns = columns;
  m.view.item_size = item;
  m.view.row_stride = row_step * static_cast<std::ptrdiff_t>(item);
  m.view.column_stride = column_step * static_cast<std::ptrdiff_t>(item);
  return m;
}

TEST(MatrixSourceTest, ReadsEveryLayoutAndBlockSize) {
  const std::size_t rows = 13, columns = 9;
  const auto r = static_cast<std::ptrdiff_t>(rows), c = static_cast<std::ptrdiff_t>(columns);
  // Fortran, C, every other row and column of larger matrices, rows and columns reversed.
  const std::vector<std::pair<std::ptrdiff_t, std::ptrdiff_t>> layouts = {
      {1, r}, {c, 1}, {2, 2 * r + 3}, {2 * c, 2}, {-c, 1}, {1, -r}, {-1, -r}};
  for (const std::size_t item : {std::size_t{8}, std::size_t{4}})
    for (const auto& [row_step, column_step] : layouts)
      for (std::size_t block_columns : {0, 2, 4, 1000}) {
        SCOPED_TRACE("item " + std::to_string(item) + ", steps " + std::to_string(row_step) + " " +
                     std::to_string(column_step) + ", block " + std::to_string(block_columns));
        const strided_matrix m = make_matrix(rows, columns, item, row_step, column_step);
        matrix_options o;
        o.block_bytes = block_columns * rows * sizeof(double);
        matrix_source source(m.view, o);
        EXPECT_EQ(source.contiguous_columns(), row_step == 1);
        const auto expected = made_up_columns(rows, columns, item == 4);
        expect_columns(source, expected);
        std::vector<double> got(rows);
        for (std::size_t j : {8, 3, 3, 0, 7, 1, 8}) {
          source.read_values(j, got);
          for (std::size_t i = 0; i < rows; ++i) ASSERT_TRUE(same_bits(got[i], expected[j][i]));
        }
      }
}

TEST(MatrixSourceTest, NamesSamplesAndColumnsAsGivenOrAsNpySourceDoes) {
  const strided_matrix m = make_matrix(3, 2, 8, 2, 1);
  matrix_source unnamed(m.view);
  EXPECT_EQ(unnamed.kind(), value_type::float64);
  EXPECT_EQ(unnamed.description(), "matrix in memory (float64, C order)");
  ASSERT_EQ(unnamed.samples().size(), 3u);
  EXPECT_EQ(unnamed.samples()[2].fid, "row3");
  EXPECT_EQ(unnamed.samples()[2].iid, "row3");
  EXPECT_EQ(unnamed.samples()[2].phenotype, "-9");
  EXPECT_EQ(unnamed.column(1).id, "col2");
  EXPECT_EQ(unnamed.column(1).chrom, "");

  matrix_options o;
  o.samples = {{"f1", "a", "0", "0", "1", "2.5"},
               {"f1", "b", "0", "0", "2", "-9"},
               {"c", "c", "0", "0", "0", "-9"}};
  o.column_ids = {"x", "y"};
  o.description = "my matrix";
  matrix_source named(m.view, o);
  EXPECT_EQ(named.samples()[0].sex, "1");
  EXPECT_EQ(named.samples()[1].iid, "b");
  EXPECT_EQ(named.column(0).id, "x");
  EXPECT_EQ(named.column(1).id, "y");
  EXPECT_EQ(named.description(), "my matrix");
  std::vector<double> column(3);
  EXPECT_TRUE(fails_with([&] { named.read_values(2, column); }, errc::invalid_argument,
                         "my matrix: column 2 is out of range"));
}

TEST(MatrixSourceTest, RefusesBadShapesAndNames) {
  const strided_matrix m = make_matrix(3, 2, 8, 2, 1);
  matrix_view v = m.view;
  v.item_size = 2;
  EXPECT_TRUE(fails_with([&] { matrix_source s(v); }, errc::invalid_argument, "2-byte items"));
  v = m.view;
  v.rows = 0;
  EXPECT_TRUE(fails_with([&] { matrix_source s(v); }, errc::invalid_argument, "one row"));
  v = m.view;
  v.data = nullptr;
  EXPECT_TRUE(fails_with([&] { matrix_source s(v); }, errc::invalid_argument, "one row"));
  matrix_options o;
  o.column_ids = {"x"};
  EXPECT_TRUE(fails_with([&] { matrix_source s(m.view, o); }, errc::invalid_argument,
                         "1 column names for a matrix of 2 columns"));
  o.column_ids = {"x", "y z"};
  EXPECT_TRUE(fails_with([&] { matrix_source s(m.view, o); }, errc::invalid_argument,
                         "column 2 'y z' holds whitespace"));
  o.column_ids = {"", "y"};
  EXPECT_TRUE(
      fails_with([&] { matrix_source s(m.view, o); }, errc::invalid_argument, "empty name"));
  o.column_ids.clear();
  o.samples = {{"a", "a", "0", "0", "0", "-9"}};
  EXPECT_TRUE(fails_with([&] { matrix_source s(m.view, o); }, errc::invalid_argument,
                         "1 samples named for a matrix of 3 rows"));
  o.samples = {{"a", "a", "0", "0", "0", "-9"},
               {"b", "b\t", "0", "0", "0", "-9"},
               {"c", "c", "0", "0", "0", "-9"}};
  EXPECT_TRUE(fails_with([&] { matrix_source s(m.view, o); }, errc::invalid_argument,
                         "the IID of sample 2"));
}

}  // namespace
}  // namespace colflow::preprocess::dense_reader_tests
