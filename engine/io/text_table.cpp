#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"
#include "io/text_table_internal.hpp"

namespace colflow::detail {

std::string read_table_text(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw error(errc::not_found, path.string() + ": no such file");
  return read_text_file(path);
}

mapped_table_text::mapped_table_text(const std::filesystem::path& path) : path_(path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw error(errc::not_found, path.string() + ": no such file");
  map_ = mapped_file(open_read(path), access_hint::will_need);
}

void mapped_table_text::check_intact() const {
  if (map_.damaged())
    throw error(errc::io_error, path_.string() + ": the file shrank while it was being read");
}

void split_fields(std::string_view l, std::vector<std::string_view>& fields) {
  fields.clear();
  std::size_t i = 0;
  while (i < l.size()) {
    while (i < l.size() && (l[i] == ' ' || l[i] == '\t')) ++i;
    const std::size_t b = i;
    while (i < l.size() && l[i] != ' ' && l[i] != '\t') ++i;
    if (i > b) fields.push_back(l.substr(b, i - b));
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

}  // namespace colflow::detail
