#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"
#include "io/text_table_internal.hpp"

namespace colflow::detail {

void for_each_record(
    const std::filesystem::path& path,
    const std::function<void(std::size_t line, std::span<const std::string_view> fields)>& record) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw error(errc::not_found, path.string() + ": no such file");
  const std::string text = read_text_file(path);
  std::vector<std::string_view> fields;
  std::size_t line = 0, start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view l(text.data() + start, end - start);
    start = end + 1;
    ++line;
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    fields.clear();
    std::size_t i = 0;
    while (i < l.size()) {
      while (i < l.size() && (l[i] == ' ' || l[i] == '\t')) ++i;
      const std::size_t b = i;
      while (i < l.size() && l[i] != ' ' && l[i] != '\t') ++i;
      if (i > b) fields.push_back(l.substr(b, i - b));
    }
    if (!fields.empty()) record(line, fields);
  }
}

std::string where(const std::filesystem::path& path, std::size_t line) {
  return path.string() + ":" + std::to_string(line) + ": ";
}

}  // namespace colflow::detail
