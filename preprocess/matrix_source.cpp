// Dense input from a float64 or float32 matrix in memory, in any layout.
#include "colflow/preprocess/matrix_source.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <utility>

#include "colflow/error.hpp"

namespace colflow::preprocess {
namespace {

// Converts out.size() values, the first at `src` and each `step` bytes after the previous one,
// into `out`. memcpy per value: neither the data nor the strides need be aligned (a hand-made
// .npy file, a numpy view).
template <typename T>
void copy_strided(const std::byte* src, std::ptrdiff_t step, std::span<double> out) {
  if constexpr (std::is_same_v<T, double>)
    if (step == static_cast<std::ptrdiff_t>(sizeof(double))) {
      std::memcpy(out.data(), src, out.size() * sizeof(double));
      return;
    }
  for (double& v : out) {
    T x;
    std::memcpy(&x, src, sizeof(T));
    v = static_cast<double>(x);
    src += step;
  }
}

// Transposes `count` neighbouring columns of `n` rows (element (i, k) at
// first + i * row_step + k * column_step) into `out`, column-major. Tiles of rows keep both the
// rows read and the column stretches written in cache; a plain row-by-row scatter would touch
// `count` cache lines per row.
template <typename T>
void gather_block(const std::byte* first, std::ptrdiff_t row_step, std::ptrdiff_t column_step,
                  std::size_t n, std::size_t count, double* out) {
  constexpr std::size_t tile = 64;
  for (std::size_t i0 = 0; i0 < n; i0 += tile) {
    const std::size_t rows_in_tile = std::min(tile, n - i0);
    for (std::size_t k = 0; k < count; ++k) {
      const std::byte* src = first + static_cast<std::ptrdiff_t>(i0) * row_step +
                             static_cast<std::ptrdiff_t>(k) * column_step;
      double* dst = out + k * n + i0;
      for (std::size_t i = 0; i < rows_in_tile; ++i, src += row_step) {
        T v;
        std::memcpy(&v, src, sizeof(T));
        dst[i] = static_cast<double>(v);
      }
    }
  }
}

// A name that a PLINK-style list (--keep, --extract: whitespace-separated) can hold.
void check_name(const std::string& name, const char* what, std::size_t index) {
  if (name.empty())
    throw error(errc::invalid_argument,
                std::string(what) + " " + std::to_string(index + 1) + " is an empty name");
  if (name.find_first_of(" \t\r\n\v\f") != std::string::npos)
    throw error(errc::invalid_argument, std::string(what) + " " + std::to_string(index + 1) + " '" +
                                            name +
                                            "' holds whitespace, which sample and variant "
                                            "lists cannot hold");
}

}  // namespace

matrix_source::matrix_source(const matrix_view& matrix, matrix_options options)
    : matrix_(matrix), options_(std::move(options)) {
  if (matrix_.item_size != 4 && matrix_.item_size != 8)
    throw error(errc::invalid_argument, "a matrix source holds float64 or float32 values, not " +
                                            std::to_string(matrix_.item_size) + "-byte items");
  if (matrix_.rows == 0 || matrix_.columns == 0 || !matrix_.data)
    throw error(errc::invalid_argument, "a matrix source needs at least one row and one column");
  if (!options_.samples.empty() && options_.samples.size() != matrix_.rows)
    throw error(errc::invalid_argument, std::to_string(options_.samples.size()) +
                                            " samples named for a matrix of " +
                                            std::to_string(matrix_.rows) + " rows");
  if (!options_.column_ids.empty() && options_.column_ids.size() != matrix_.columns)
    throw error(errc::invalid_argument, std::to_string(options_.column_ids.size()) +
                                            " column names for a matrix of " +
                                            std::to_string(matrix_.columns) + " columns");
  for (std::size_t i = 0; i < options_.samples.size(); ++i) {
    check_name(options_.samples[i].fid, "the FID of sample", i);
    check_name(options_.samples[i].iid, "the IID of sample", i);
  }
  for (std::size_t j = 0; j < options_.column_ids.size(); ++j)
    check_name(options_.column_ids[j], "column", j);
  contiguous_columns_ =
      matrix_.columns == 1 || matrix_.row_stride == static_cast<std::ptrdiff_t>(matrix_.item_size);
  if (options_.description.empty())
    options_.description =
        std::string("matrix in memory (") + (matrix_.item_size == 8 ? "float64" : "float32") +
        (contiguous_columns_ ? ", Fortran order)"
         : matrix_.column_stride == static_cast<std::ptrdiff_t>(matrix_.item_size) ? ", C order)"
                                                                                   : ", strided)");
  block_columns_ = std::clamp<std::uint64_t>(options_.block_bytes / sizeof(double) / matrix_.rows,
                                             1, matrix_.columns);
}

std::vector<sample_info> matrix_source::samples() const {
  if (!options_.samples.empty()) return options_.samples;
  std::vector<sample_info> out;
  out.reserve(matrix_.rows);
  for (std::uint64_t i = 0; i < matrix_.rows; ++i) {
    std::string id = "row" + std::to_string(i + 1);
    out.push_back({id, id, "0", "0", "0", "-9"});
  }
  return out;
}

column_info matrix_source::column(std::uint64_t j) const {
  column_info c;
  c.id = options_.column_ids.empty() ? "col" + std::to_string(j + 1)
                                     : options_.column_ids.at(static_cast<std::size_t>(j));
  return c;
}

void matrix_source::load_block(std::uint64_t first) {
  block_first_ = first;
  block_count_ = std::min(matrix_.columns - first, block_columns_);
  block_.resize(static_cast<std::size_t>(block_count_ * matrix_.rows));
  const std::byte* start =
      matrix_.data + static_cast<std::ptrdiff_t>(first) * matrix_.column_stride;
  const auto n = static_cast<std::size_t>(matrix_.rows);
  const auto count = static_cast<std::size_t>(block_count_);
  if (matrix_.item_size == 8)
    gather_block<double>(start, matrix_.row_stride, matrix_.column_stride, n, count, block_.data());
  else
    gather_block<float>(start, matrix_.row_stride, matrix_.column_stride, n, count, block_.data());
}

void matrix_source::read_values(std::uint64_t j, std::span<double> values) {
  check_read(j, values.size());
  if (contiguous_columns_ || block_columns_ == 1) {
    // A contiguous column is one copy; without room for two columns in a block, a strided
    // column is gathered straight into the caller's buffer.
    const std::byte* src = matrix_.data + static_cast<std::ptrdiff_t>(j) * matrix_.column_stride;
    if (matrix_.item_size == 8)
      copy_strided<double>(src, matrix_.row_stride, values);
    else
      copy_strided<float>(src, matrix_.row_stride, values);
    return;
  }
  if (j < block_first_ || j >= block_first_ + block_count_) load_block(j);
  const auto k = static_cast<std::size_t>(j - block_first_);
  std::copy_n(block_.begin() + static_cast<std::ptrdiff_t>(k * matrix_.rows), matrix_.rows,
              values.begin());
}

}  // namespace colflow::preprocess
