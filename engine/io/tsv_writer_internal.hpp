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
  void separator();
  void flush_buffer();
  staged_output output_;
  std::FILE* file_ = nullptr;
  std::string buffer_;
  int digits_;
  char separator_;
  bool line_start_ = true;
};

}  // namespace colflow
