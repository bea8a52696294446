/// @file matrix_source.hpp
/// Dense input from a float64 or float32 matrix in memory, in any layout, as a column_source of
/// values. Part of libcolflow_preprocess (colflow::preprocess). npy_source reads a .npy file
/// through it (over the file's mapping); a program converts its own arrays with it, without a
/// file (the Python package's colflow.preprocess of a numpy array).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "colflow/preprocess/column_source.hpp"

namespace colflow::preprocess {

/// A matrix of samples in rows and variables in columns that its owner keeps alive and
/// unchanged while a matrix_source reads it. Element (i, j) is the value of `item_size` bytes
/// (8: float64, 4: float32, native byte order) at data + i * row_stride + j * column_stride.
/// Strides are in bytes and may be negative or unaligned: values are copied byte-wise.
/// Fortran (column-major) order: row_stride == item_size; C order: column_stride == item_size.
struct matrix_view {
  const std::byte* data = nullptr;  ///< element (0, 0)
  std::uint64_t rows = 0, columns = 0;
  std::size_t item_size = 8;
  std::ptrdiff_t row_stride = 8, column_stride = 0;
};

/// What matrix_source needs besides the matrix.
struct matrix_options {
  /// The samples, one per row (FID IID father mother sex phenotype as a .fam line holds them);
  /// empty: FID = IID = "row1".."rowN", father, mother and sex "0", phenotype "-9", as
  /// npy_source names them.
  std::vector<sample_info> samples;
  /// The column names, one per column; empty: "col1".."colM".
  std::vector<std::string> column_ids;
  /// What description() returns; empty: "matrix in memory (float64, C order)" and the like.
  std::string description;
  /// Memory that a matrix whose columns are not contiguous may use to transpose a block of
  /// columns at a time, so that it is swept once per block rather than once per column (when
  /// fewer than two columns fit, each column is gathered straight into the caller's buffer).
  std::size_t block_bytes = std::size_t{16} << 20;
};

/// A matrix in memory (matrix_view) read as a dense column_source: values are returned as
/// doubles, NaN stays NaN (missing). A column of contiguous values (Fortran order, or a single
/// column) is one copy; other layouts are gathered in blocks of columns
/// (matrix_options::block_bytes), each block one sweep over the rows.
///
/// Errors (colflow::error), from the constructor: errc::invalid_argument for a matrix without
/// rows or columns or without data, an item size other than 4 or 8, as many names as neither
/// rows nor columns (samples, column_ids), and a sample's FID or IID or a column name that is
/// empty or holds whitespace (PLINK-style sample and variant lists could not name it).
///
/// Thread safety: none; the converter calls one source from one thread at a time.
class matrix_source final : public column_source {
 public:
  matrix_source(const matrix_view& matrix, matrix_options options = {});

  value_type kind() const override { return value_type::float64; }
  std::uint64_t rows() const override { return matrix_.rows; }
  std::uint64_t columns() const override { return matrix_.columns; }
  std::vector<sample_info> samples() const override;
  column_info column(std::uint64_t j) const override;
  std::string description() const override { return options_.description; }

  /// Column j (j < columns(), values.size() == rows(), else errc::invalid_argument) as doubles.
  void read_values(std::uint64_t j, std::span<double> values) override;

  /// True when each column's values are contiguous (Fortran order, or one column).
  bool contiguous_columns() const noexcept { return contiguous_columns_; }

 private:
  void load_block(std::uint64_t first);

  matrix_view matrix_;
  matrix_options options_;
  bool contiguous_columns_ = false;

  // Columns [block_first_, block_first_ + block_count_) transposed, column-major.
  std::vector<double> block_;
  std::uint64_t block_columns_ = 1;  // columns per block, from options_.block_bytes
  std::uint64_t block_first_ = 0, block_count_ = 0;
};

}  // namespace colflow::preprocess
