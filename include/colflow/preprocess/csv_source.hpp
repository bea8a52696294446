/// @file csv_source.hpp
/// Dense input from a comma- or tab-separated text matrix, as a column_source of values. Part
/// of libcolflow_preprocess (colflow::preprocess).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "colflow/preprocess/column_source.hpp"

namespace colflow::preprocess {

/// Whether a CSV file has a header row or a sample-ID column.
enum class csv_presence : std::uint8_t {
  detect,   ///< decided from the content (see csv_source)
  present,  ///< always
  absent,   ///< never
};

/// How csv_source reads a file.
struct csv_options {
  /// The field separator; '\0' detects it: the first ',' or '\t' of the first line (',' when
  /// the first line has neither, i.e. a single column).
  char delimiter = '\0';
  /// A first row of column names.
  csv_presence header = csv_presence::detect;
  /// A first column of sample IDs.
  csv_presence ids = csv_presence::detect;
};

/// A text matrix with samples in rows and variables in columns, fields separated by ',' or
/// '\t'. The whole file is parsed once, in the constructor, into memory as float64 (8 bytes
/// per value, column-major): CSV input is meant for matrices up to a few GB. Larger matrices
/// belong in a .npy file (npy_source), which is memory-mapped instead.
///
/// Layout:
/// - An optional header row of column names. Detected as present when a field of the first
///   line, other than the first one, is not a number; or when only the first field is not a
///   number but the first field of every later line is (a header whose first name labels the
///   sample-ID column).
/// - An optional first column of sample IDs (FID = IID = the ID). Detected as present when the
///   first field of some data row is not a number, when the header's first name is empty
///   (the corner cell that R's write.csv and pandas' to_csv write), or when the header has one
///   field fewer than the data rows (R's write.table with row names). Numeric IDs in a file
///   without a header are taken for values: say csv_presence::present.
/// - Missing values: an empty field, NA, NaN or nan (NaN in the column). Numbers are parsed
///   with std::from_chars (a leading '+' is accepted; inf and -inf are kept as they are).
/// - Fields may be quoted with '"' ("" inside quotes is one '"'); a quoted field cannot span
///   lines. Spaces around fields are ignored. LF and CRLF line ends, a UTF-8 byte-order mark
///   and trailing blank lines are accepted.
/// Without a header, columns are "col1".."colM" (also for an empty header name); without IDs,
/// samples are "row1".."rowN".
///
/// Errors (colflow::error): not_found or io_error when the file cannot be opened or read;
/// invalid_argument for a bad delimiter option; bad_input, naming the file and the line, for
/// an empty file, a header without data rows, a file with no value columns, a row whose
/// number of fields differs from the first line (`x.csv: line 17 has 5 fields, expected 6`),
/// a field that is not a number (`x.csv: line 3, column 4: 'abc' is not a number`; columns
/// count from 1 and include the ID column), an empty sample ID or one holding whitespace, and
/// an unterminated quote.
///
/// Thread safety: const members may be called from many threads; read_values from one.
class csv_source final : public column_source {
 public:
  explicit csv_source(const std::filesystem::path& path, const csv_options& options = {});

  value_type kind() const override { return value_type::float64; }
  std::uint64_t rows() const override { return rows_; }
  std::uint64_t columns() const override { return columns_; }
  std::vector<sample_info> samples() const override;
  column_info column(std::uint64_t j) const override;
  /// "CSV file PATH".
  std::string description() const override;

  /// Column j (j < columns(), values.size() == rows(), else errc::invalid_argument).
  void read_values(std::uint64_t j, std::span<double> values) override;

  /// What was used or detected.
  char delimiter() const noexcept { return delimiter_; }
  bool has_header() const noexcept { return has_header_; }
  bool has_ids() const noexcept { return !sample_ids_.empty(); }

 private:
  std::string path_;
  std::uint64_t rows_ = 0, columns_ = 0;
  char delimiter_ = ',';
  bool has_header_ = false;
  std::vector<double> values_;           // column-major: column j is [j * rows_, (j+1) * rows_)
  std::vector<std::string> sample_ids_;  // empty: "row1".."rowN"
  std::vector<std::string> column_ids_;  // empty: "col1".."colM"
};

}  // namespace colflow::preprocess
