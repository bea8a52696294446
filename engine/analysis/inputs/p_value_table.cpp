// The P-value tables `colflow clump` reads (analysis/p_value_table.hpp): columns found by
// header name, NA lines skipped, anything else that is not a P-value refused by file and line.
#include "colflow/analysis/p_value_table.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>

#include "colflow/error.hpp"
#include "io/text_table_internal.hpp"

namespace colflow {
namespace {

constexpr std::size_t no_column = static_cast<std::size_t>(-1);

// The column of the first name of `names` in the header (a name earlier in the list wins,
// whatever its place in the header); none when no name is there.
std::size_t find_column(const std::filesystem::path& path, std::size_t line,
                        const std::vector<std::string_view>& header,
                        const std::vector<std::string>& names, std::string& found) {
  for (const std::string& name : names) {
    std::size_t at = no_column;
    for (std::size_t k = 0; k < header.size(); ++k) {
      if (header[k] != name) continue;
      if (at != no_column)
        detail::bad_input_at(path, line, "the header names column '" + name + "' twice");
      at = k;
    }
    if (at != no_column) {
      found = name;
      return at;
    }
  }
  return no_column;
}

std::string listed(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

bool is_not_available(std::string_view v) {
  return v == "NA" || v == "nan" || v == "NaN" || v == "-nan" || v == ".";
}

// The P-value of a field: false when it is not a number.
bool parse_number(std::string_view v, double& x) {
  if (!v.empty() && v.front() == '+') v.remove_prefix(1);
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  return ec == std::errc() && end == v.data() + v.size() && !std::isnan(x);
}

}  // namespace

p_value_table read_p_value_table(const std::filesystem::path& path,
                                 const p_value_table_options& options) {
  const std::string text = detail::read_table_text(path);
  const std::vector<detail::text_record> records = detail::split_records(text);
  if (records.empty()) throw error(errc::bad_input, path.string() + ": the table is empty");
  p_value_table t;
  t.path = path;
  std::vector<std::string_view> fields;
  detail::split_fields(records[0].text, fields);
  const std::size_t header_line = records[0].line;
  const std::size_t id = find_column(path, header_line, fields, options.id_fields, t.id_field);
  const std::size_t p = find_column(path, header_line, fields, options.p_fields, t.p_field);
  if (id == no_column)
    detail::bad_input_at(path, header_line,
                         "no variant ID column in the header (looked for " +
                             listed(options.id_fields) + "; --clump-snp-field names others)");
  if (p == no_column)
    detail::bad_input_at(path, header_line,
                         "no P-value column in the header (looked for " + listed(options.p_fields) +
                             "; --clump-field names others)");
  const bool log10 = t.p_field == "LOG10P" || t.p_field == "LOG10_P";
  const std::size_t needed = std::max(id, p) + 1;
  t.entries.reserve(records.size() - 1);
  for (std::size_t r = 1; r < records.size(); ++r) {
    const std::size_t line = records[r].line;
    detail::split_fields(records[r].text, fields);
    if (fields.size() < needed)
      detail::bad_input_at(path, line,
                           std::to_string(fields.size()) + " fields where column " + t.p_field +
                               " or " + t.id_field + " needs " + std::to_string(needed));
    const std::string_view v = fields[p];
    if (is_not_available(v)) {
      ++t.not_available;
      continue;
    }
    double x = 0;
    if (!parse_number(v, x))
      detail::bad_input_at(path, line,
                           "column " + t.p_field + ": '" + std::string(v) + "' is not a number");
    if (log10) x = std::pow(10.0, -x);
    if (!(x >= 0) || x > 1)
      detail::bad_input_at(
          path, line,
          "column " + t.p_field + ": '" + std::string(v) + "' is not a P-value in [0, 1]");
    t.entries.push_back({std::string(fields[id]), x, line});
  }
  return t;
}

}  // namespace colflow
