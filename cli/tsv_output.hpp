// A result table written the way a store is: to a temporary name beside the target, renamed
// into place only once complete, so an interrupted run never leaves a truncated result that
// looks finished. Numbers are formatted with std::to_chars (%g style), fast enough that
// writing millions of lines does not dominate a scan.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

namespace colflow::cli {

class tsv_output {
 public:
  // `digits`: significant digits of floating-point fields.
  tsv_output(std::filesystem::path path, int digits);
  ~tsv_output();
  tsv_output(const tsv_output&) = delete;
  tsv_output& operator=(const tsv_output&) = delete;

  tsv_output& text(std::string_view s);          // "." when empty
  tsv_output& number(double v);                  // NA for NaN
  tsv_output& integer(std::uint64_t v);
  void end_line();
  // Flushes, syncs and renames into place; throws colflow::error naming the file on failure.
  void commit();
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  void separator();
  void flush_buffer();
  std::filesystem::path path_, temp_;
  std::FILE* file_ = nullptr;
  std::string buffer_;
  int digits_;
  bool line_start_ = true;
};

}  // namespace colflow::cli
