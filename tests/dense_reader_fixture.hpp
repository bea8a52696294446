// Shared by the dense input readers' tests (dense_reader*_test.cpp): the committed inputs of
// tests/data/dense, an error matcher, bitwise column checks and the made-up test matrix.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "colflow/preprocess/csv_source.hpp"
#include "colflow/preprocess/matrix_source.hpp"
#include "colflow/preprocess/npy_source.hpp"
#include "test_support.hpp"

namespace colflow::preprocess::dense_reader_tests {

namespace fs = std::filesystem;
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

const fs::path dense_data = fs::path(COLFLOW_TEST_SOURCE_DIR) / "data" / "dense";

// ---------------------------------------------------------------------------------------------
// Helpers

// Runs `f`, which must throw colflow::error with `code` and a message containing `fragment`.
// When `file` is given, the message must also start with "FILE: ".
template <typename F>
::testing::AssertionResult fails_with(F&& f, errc code, const std::string& fragment,
                                      const fs::path& file = {}) {
  try {
    f();
  } catch (const colflow::error& e) {
    if (e.kind() != code)
      return ::testing::AssertionFailure()
             << "error code " << static_cast<int>(e.kind()) << ", expected "
             << static_cast<int>(code) << ": " << e.message();
    if (!file.empty() && !e.message().starts_with(file.string() + ": "))
      return ::testing::AssertionFailure()
             << "message \"" << e.message() << "\" does not start with the file name";
    if (e.message().find(fragment) == std::string::npos)
      return ::testing::AssertionFailure()
             << "message \"" << e.message() << "\" lacks \"" << fragment << "\"";
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "no error; expected one with \"" << fragment << "\"";
}

// Bitwise equality, so that NaN == NaN and -0.0 != 0.0.
inline bool same_bits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

// Every column of `source` must equal `expected` (expected[j][i] = row i of column j).
inline void expect_columns(column_source& source,
                           const std::vector<std::vector<double>>& expected) {
  ASSERT_EQ(source.columns(), expected.size());
  for (std::size_t j = 0; j < expected.size(); ++j) {
    ASSERT_EQ(source.rows(), expected[j].size());
    std::vector<double> got(expected[j].size(), -12345.0);
    source.read_values(j, got);
    for (std::size_t i = 0; i < got.size(); ++i)
      EXPECT_TRUE(same_bits(got[i], expected[j][i])) << "column " << j << " row " << i << ": got "
                                                     << got[i] << ", expected " << expected[j][i];
  }
}

inline void write_text(const fs::path& p, const std::string& text) {
  test::write_file(p, std::vector<char>(text.begin(), text.end()));
}

// The value at (i, j) of the made-up test matrices: exact in float32, with a NaN at (1, 0).
inline double cell(std::size_t i, std::size_t j) {
  if (i == 1 && j == 0) return nan;
  return static_cast<double>(i) * 10.0 + static_cast<double>(j) - 2.25;
}

inline std::vector<std::vector<double>> made_up_columns(std::size_t rows, std::size_t columns,
                                                        bool as_float) {
  std::vector<std::vector<double>> out(columns, std::vector<double>(rows));
  for (std::size_t j = 0; j < columns; ++j)
    for (std::size_t i = 0; i < rows; ++i)
      out[j][i] = as_float ? static_cast<double>(static_cast<float>(cell(i, j))) : cell(i, j);
  return out;
}

}  // namespace colflow::preprocess::dense_reader_tests
