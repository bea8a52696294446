// Whitespace-separated text tables (phenotypes, sample lists, sex files) read and split up.
#include <bit>
#include <cstdint>
#include <cstring>

#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"
#include "io/text_table_internal.hpp"

namespace colflow::detail {

namespace {

void require_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw error(errc::not_found, path.string() + ": no such file");
}

}  // namespace

std::string read_table_text(const std::filesystem::path& path) {
  require_file(path);
  return read_text_file(path);
}

mapped_table_text::mapped_table_text(const std::filesystem::path& path) : path_(path) {
  require_file(path);
  file_descriptor fd = open_read(path);
  streamed_ = !is_regular_file(fd);
  if (streamed_)
    read_ = read_all(fd);
  else
    map_ = mapped_file(std::move(fd), access_hint::will_need);
}

void mapped_table_text::check_intact() const {
  if (map_.damaged())
    throw error(errc::io_error, path_.string() + ": the file shrank while it was being read");
}

namespace {

// The high bit of each byte of `w` that is a space or a tab, and of no other: a zero byte of
// x is one whose low seven bits do not carry into the high bit when 0x7f is added, and whose
// own high bit is clear.
std::uint64_t blank_bytes(std::uint64_t w) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101u, low7 = 0x7f7f7f7f7f7f7f7fu;
  const auto zero_bytes = [](std::uint64_t x) { return ~(((x & low7) + low7) | x | low7); };
  return zero_bytes(w ^ (ones * ' ')) | zero_bytes(w ^ (ones * '\t'));
}

// The end of the field that starts at `i`: the next space or tab, or the end of the line.
// Eight bytes at a time: most fields of a phenotype file are eight to twelve characters, so a
// field's end is found in one or two words instead of a test per byte.
std::size_t field_end(std::string_view l, std::size_t i) noexcept {
  for (; i + 8 <= l.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, l.data() + i, 8);  // little-endian: the first byte is the lowest
    const std::uint64_t blanks = blank_bytes(w);
    if (blanks != 0) return i + static_cast<std::size_t>(std::countr_zero(blanks)) / 8;
  }
  while (i < l.size() && l[i] != ' ' && l[i] != '\t') ++i;
  return i;
}

}  // namespace

void split_fields(std::string_view l, std::vector<std::string_view>& fields) {
  static_assert(std::endian::native == std::endian::little);
  fields.clear();
  std::size_t i = 0;
  while (i < l.size()) {
    while (i < l.size() && (l[i] == ' ' || l[i] == '\t')) ++i;
    if (i == l.size()) break;
    const std::size_t end = field_end(l, i);
    fields.push_back(l.substr(i, end - i));
    i = end;
  }
}

std::vector<text_record> split_records(std::string_view text) {
  std::vector<text_record> records;
  std::size_t line = 0, start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(start, end - start);
    start = end + 1;
    ++line;
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    if (l.find_first_not_of(" \t") != std::string_view::npos) records.push_back({line, l});
  }
  return records;
}

void for_each_record(
    const std::filesystem::path& path,
    const std::function<void(std::size_t line, std::span<const std::string_view> fields)>& record) {
  const std::string text = read_table_text(path);
  std::vector<std::string_view> fields;
  for (const text_record& r : split_records(text)) {
    split_fields(r.text, fields);
    record(r.line, fields);
  }
}

std::string where(const std::filesystem::path& path, std::size_t line) {
  return path.string() + ":" + std::to_string(line) + ": ";
}

void bad_input_at(const std::filesystem::path& path, std::size_t line, const std::string& what) {
  throw error(errc::bad_input, where(path, line) + what);
}

}  // namespace colflow::detail
