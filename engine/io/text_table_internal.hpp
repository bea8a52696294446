// Whitespace-separated text tables as PLINK writes them (ID lists, phenotype and covariate
// files): the one tokenizer the readers of such files share.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "colflow/io/file_io.hpp"

namespace colflow::detail {

// A line with at least one field: its 1-based number and its text (without '\n' or a
// trailing '\r'), a view into the text it was split from.
struct text_record {
  std::size_t line;
  std::string_view text;
};

// The whole text of a table. Throws errc::not_found when the file does not exist,
// errc::io_error when it cannot be read.
std::string read_table_text(const std::filesystem::path& path);

// The text of a table mapped rather than read: a phenotype file of 100,000 samples and ten
// values is 12 MB, and a copy costs a page fault per 4 KiB of fresh memory besides the copy
// itself; a mapping reads the file's cached pages in place. A pipe (`<(cmd)`), which cannot be
// mapped, is read into memory instead. Throws as read_table_text.
class mapped_table_text {
 public:
  explicit mapped_table_text(const std::filesystem::path& path);
  std::string_view text() const noexcept {
    if (streamed_) return read_;
    const auto b = map_.bytes();
    return {reinterpret_cast<const char*>(b.data()), b.size()};
  }
  // Throws errc::io_error when the file shrank while mapped: the lost pages read as zeros, so
  // what was read from them is not the file. Callers check after reading, and before passing
  // on an error the text caused.
  void check_intact() const;

 private:
  std::filesystem::path path_;
  mapped_file map_;
  bool streamed_ = false;  // a pipe, read into read_ rather than mapped
  std::string read_;
};

// The lines of `text` that have a field, in order.
std::vector<text_record> split_records(std::string_view text);

// The fields of one line, split on spaces and tabs, into `fields` (cleared first).
void split_fields(std::string_view line, std::vector<std::string_view>& fields);

// Calls `record` for every non-empty line of `path` with its 1-based line number and its
// fields (split on spaces and tabs; a trailing '\r' is dropped). Throws errc::not_found when
// the file does not exist, errc::io_error when it cannot be read.
void for_each_record(
    const std::filesystem::path& path,
    const std::function<void(std::size_t line, std::span<const std::string_view> fields)>& record);

// "FILE:LINE: " for messages.
std::string where(const std::filesystem::path& path, std::size_t line);

// Throws errc::bad_input with "FILE:LINE: what".
[[noreturn]] void bad_input_at(const std::filesystem::path& path, std::size_t line,
                               const std::string& what);

}  // namespace colflow::detail
