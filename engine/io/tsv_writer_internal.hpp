/// @file tsv_writer_internal.hpp
/// A result table (tab-separated by default, one header line) written as a staged output
/// (staged_output.hpp): nothing appears under the target name until commit(), and an
/// abandoned table leaves nothing behind. Numbers are formatted with std::to_chars (%g style,
/// `digits` significant digits, NA for NaN), fast enough that writing millions of lines does
/// not dominate a scan.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

#include "colflow/io/staged_output.hpp"

namespace colflow {

/// Lines of a table formatted in memory exactly as tsv_writer formats them: a table whose lines
/// are formatted on several threads, a part each, then written in order (tsv_writer::append).
class tsv_lines {
 public:
  /// `digits` and `separator` as tsv_writer's.
  explicit tsv_lines(int digits, char separator = '\t');

  tsv_lines& text(std::string_view s);  ///< a field; "." when empty
  tsv_lines& number(double v);          ///< NA for NaN
  tsv_lines& integer(std::uint64_t v);
  void end_line();

  const std::string& str() const noexcept { return buffer_; }
  void clear() noexcept { buffer_.clear(); }

 private:
  void separator();

  std::string buffer_;
  int digits_;
  char separator_;
  bool line_start_ = true;
};

class tsv_writer {
 public:
  /// `digits`: significant digits of floating-point fields (1 to 17); `separator` between
  /// fields (a space for the formats of other tools that use one, such as regenie's).
  tsv_writer(std::filesystem::path path, int digits, char separator = '\t');
  ~tsv_writer();
  tsv_writer(const tsv_writer&) = delete;
  tsv_writer& operator=(const tsv_writer&) = delete;

  tsv_writer& text(std::string_view s);  ///< a field; "." when empty
  tsv_writer& number(double v);          ///< NA for NaN
  tsv_writer& integer(std::uint64_t v);
  void end_line();
  /// Whole lines formatted elsewhere (after the lines written so far).
  void append(const tsv_lines& lines);

  /// Flushes, fsyncs and closes the staged file, which keeps its temporary name: the slow
  /// part of commit(), which a caller of many tables runs for all of them at once, renaming
  /// none until all are written. Throws colflow::error naming the file on failure.
  void finish();
  /// finish() if not done, then renames into place (staged_output::commit, whose directory
  /// sync a caller of many tables may do once itself); throws colflow::error naming the file on
  /// failure.
  void commit(staged_output::directory_sync sync = staged_output::directory_sync::now);

  const std::filesystem::path& path() const noexcept { return output_.target(); }

 private:
  void flush_buffer();
  void write(const std::string& bytes);

  staged_output output_;
  std::FILE* file_ = nullptr;
  tsv_lines lines_;
};

}  // namespace colflow
