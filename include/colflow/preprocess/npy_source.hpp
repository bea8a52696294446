/// @file npy_source.hpp
/// Dense input from a NumPy .npy file: a memory-mapped float64 or float32 matrix, as a
/// column_source of values (a matrix_source over the mapping). Part of libcolflow_preprocess
/// (colflow::preprocess).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "colflow/preprocess/column_source.hpp"
#include "colflow/preprocess/matrix_source.hpp"

namespace colflow {
class mapped_file;  // colflow/io/file_io.hpp
}  // namespace colflow

namespace colflow::preprocess {

/// Tuning of npy_source.
struct npy_options {
  /// Memory that a C-order matrix may use to transpose a block of columns at a time, so that
  /// the file is swept once per block instead of once per column (when fewer than two columns
  /// fit, each column is gathered straight into the caller's buffer). The default keeps the
  /// block within a large cache; raise it when the file does not fit in RAM, where the number
  /// of sweeps (columns / columns per block) dominates.
  std::size_t block_bytes = std::size_t{16} << 20;
};

/// A NumPy .npy file (format versions 1.0, 2.0 and 3.0) holding a matrix of samples in rows
/// and variables in columns: shape (N, M) gives N rows (samples) and M columns. A 1-D array of
/// shape (N,) is one column. The dtype must be little-endian float64 ('<f8') or float32
/// ('<f4'); both are returned as doubles, NaN stays NaN (missing). C and Fortran order are
/// both read.
///
/// The file is memory-mapped read-only, never read whole. A Fortran-order matrix stores each
/// column contiguously, so read_values is a copy. A C-order matrix stores rows contiguously:
/// columns are gathered block by block (npy_options::block_bytes), each block costing one
/// sweep over the file. For matrices much larger than RAM, Fortran order (np.asfortranarray)
/// is therefore the fast layout.
///
/// The .npy format carries no names: samples are FID = IID = "row1".."rowN", columns are
/// "col1".."colM".
///
/// Errors (colflow::error): not_found or io_error when the file cannot be opened or mapped;
/// bad_input, with a message naming the file, for a bad magic string, an unsupported format
/// version, an unparseable header, a missing or unknown header key, a dtype other than '<f8'
/// or '<f4' (big-endian data is refused), a shape that is not 1-D or 2-D or holds no values,
/// or a file whose size is not exactly the header plus N * M * itemsize bytes.
///
/// Thread safety: none; the converter calls one source from one thread at a time. The file
/// must not be truncated while the source is open (the mapping would fault).
class npy_source final : public column_source {
 public:
  explicit npy_source(const std::filesystem::path& path, const npy_options& options = {});
  ~npy_source() override;
  npy_source(const npy_source&) = delete;
  npy_source& operator=(const npy_source&) = delete;

  value_type kind() const override { return value_type::float64; }
  std::uint64_t rows() const override { return rows_; }
  std::uint64_t columns() const override { return columns_; }
  std::vector<sample_info> samples() const override;
  column_info column(std::uint64_t j) const override;
  /// "npy file PATH (float64, C order)", "(float32, Fortran order)" or "(float64, 1-D)".
  std::string description() const override;

  /// Column j (j < columns(), values.size() == rows(), else errc::invalid_argument) as doubles.
  void read_values(std::uint64_t j, std::span<double> values) override;

  /// 8 for '<f8', 4 for '<f4'.
  std::size_t item_size() const noexcept { return item_size_; }
  /// True when the array is stored in Fortran (column-major) order, or is 1-D.
  bool fortran_order() const noexcept { return fortran_order_; }
  /// The format version of the file (1, 2 or 3).
  int format_version() const noexcept { return version_; }

 private:
  void open_matrix(const std::byte* data);

  std::string path_;
  std::uint64_t rows_ = 0, columns_ = 0;
  std::size_t item_size_ = 8;
  bool fortran_order_ = false;
  bool one_dimensional_ = false;
  int version_ = 1;
  npy_options options_;

  // The whole file, mapped read-only, and the matrix past its header, read through
  // matrix_source.
  std::unique_ptr<mapped_file> map_;
  std::size_t map_size_ = 0;
  std::unique_ptr<matrix_source> matrix_;
};

}  // namespace colflow::preprocess
