// Dense input from a comma- or tab-separated text matrix, read into columns.
#include "colflow/preprocess/csv_source.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <limits>
#include <string_view>

#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"

namespace colflow::preprocess {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw error(errc::bad_input, path + ": " + problem);
}

std::string line_text(std::uint64_t line_no) { return "line " + std::to_string(line_no); }

// A field as shown in a message: quoted, cut short when long.
std::string shown(std::string_view field) {
  constexpr std::size_t max_shown = 40;
  // Appended, not "'" + text: GCC 12 warns of a false overlap in the latter at -O3.
  std::string text("'");
  text.append(field.substr(0, max_shown));
  return text.append(field.size() <= max_shown ? "'" : "...'");
}

// The file, mapped read-only for the one pass of the constructor. Parsing from the mapping
// keeps the text out of the heap: only the parsed doubles are held (colflow/io/file_io.hpp).
class mapped_text {
 public:
  explicit mapped_text(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
      fail(path, "not a regular file");
    fd_ = open_read(path);
    map_ = mapped_file(fd_, access_hint::sequential);
  }

  std::string_view text() const noexcept {
    const auto b = map_.bytes();
    return {reinterpret_cast<const char*>(b.data()), b.size()};
  }

 private:
  file_descriptor fd_;
  mapped_file map_;
};

// Splits one line (without its line end) into fields, one at a time.
class field_reader {
 public:
  field_reader(std::string_view line, char delimiter, const std::string& path,
               std::uint64_t line_no)
      : line_(line), delimiter_(delimiter), path_(path), line_no_(line_no) {}

  // The next field, unquoted and trimmed; false after the last one. The view stays valid until
  // the next call. A line always has at least one field (an empty line has one empty field).
  bool next(std::string_view& field) {
    if (done_) return false;
    ++index_;
    skip_blanks();
    if (pos_ < line_.size() && line_[pos_] == '"') {
      field = read_quoted();
      skip_blanks();
      if (pos_ < line_.size() && line_[pos_] != delimiter_)
        fail(path_, line_text(line_no_) + ", column " + std::to_string(index_) +
                        ": text after the closing quote");
    } else {
      const std::size_t end = std::min(line_.find(delimiter_, pos_), line_.size());
      std::size_t last = end;
      while (last > pos_ && is_blank(line_[last - 1])) --last;
      field = line_.substr(pos_, last - pos_);
      pos_ = end;
    }
    if (pos_ < line_.size()) {
      ++pos_;  // the delimiter: another field follows, maybe an empty one
    } else {
      done_ = true;
    }
    return true;
  }

  // 1-based index of the field last returned.
  std::size_t index() const noexcept { return index_; }

 private:
  bool is_blank(char c) const noexcept { return (c == ' ' || c == '\t') && c != delimiter_; }
  void skip_blanks() {
    while (pos_ < line_.size() && is_blank(line_[pos_])) ++pos_;
  }

  std::string_view read_quoted() {
    ++pos_;  // opening quote
    const std::size_t start = pos_;
    bool escaped = false;  // the field holds "" and must be copied to be unescaped
    while (true) {
      const std::size_t quote = line_.find('"', pos_);
      if (quote == std::string_view::npos)
        fail(path_, line_text(line_no_) + ", column " + std::to_string(index_) +
                        ": unterminated quoted field (a quoted field cannot span lines)");
      if (quote + 1 < line_.size() && line_[quote + 1] == '"') {
        escaped = true;
        pos_ = quote + 2;
        continue;
      }
      pos_ = quote + 1;
      const std::string_view raw = line_.substr(start, quote - start);
      if (!escaped) return raw;
      unescaped_.clear();
      for (std::size_t i = 0; i < raw.size(); ++i) {
        unescaped_ += raw[i];
        if (raw[i] == '"') ++i;  // skip the second quote of ""
      }
      return unescaped_;
    }
  }

  std::string_view line_;
  char delimiter_;
  const std::string& path_;
  std::uint64_t line_no_;
  std::size_t pos_ = 0, index_ = 0;
  bool done_ = false;
  std::string unescaped_;
};

enum class parsed { number, missing, not_number, out_of_range };

parsed parse_number(std::string_view field, double& out) {
  if (field.empty() || field == "NA" || field == "NaN" || field == "nan") {
    out = std::numeric_limits<double>::quiet_NaN();
    return parsed::missing;
  }
  const char* first = field.data();
  const char* last = field.data() + field.size();
  // from_chars does not take the '+' that some writers put before positive numbers.
  if (*first == '+' && field.size() > 1 && first[1] != '-' && first[1] != '+') ++first;
  const auto [end, ec] = std::from_chars(first, last, out);
  if (ec == std::errc::result_out_of_range && end == last) {
    // from_chars reports underflow like overflow and leaves `out` alone. A number too small
    // for float64 (1e-400, as strtod and numpy read it) is zero; one too large is an error.
    const std::string_view digits(first, static_cast<std::size_t>(last - first));
    const std::size_t e = digits.find_first_of("eE");
    const bool underflow = e != std::string_view::npos
                               ? e + 1 < digits.size() && digits[e + 1] == '-'
                               : digits.find_first_of("123456789") > digits.find('.');
    if (!underflow) return parsed::out_of_range;
    out = digits.front() == '-' ? -0.0 : 0.0;
    return parsed::number;
  }
  if (ec != std::errc() || end != last) return parsed::not_number;
  return parsed::number;
}

bool is_numeric(std::string_view field) {
  double ignored;
  return parse_number(field, ignored) != parsed::not_number;
}

// Lines of the text, without their line ends ("\n" or "\r\n").
class line_reader {
 public:
  explicit line_reader(std::string_view text) : text_(text) {}
  bool next(std::string_view& line) {
    if (pos_ > text_.size()) return false;
    const std::size_t end = std::min(text_.find('\n', pos_), text_.size());
    line = text_.substr(pos_, end - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = end + 1;
    return true;
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

// The text of the file less a UTF-8 byte-order mark and the trailing line ends (trailing blank
// lines are not rows); an empty file is refused.
std::string_view body_of(std::string_view text, const std::string& path) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  if (text.empty()) fail(path, "empty file");
  return text;
}

// A delimiter option that cannot separate fields is refused before the file is opened.
void check_delimiter_option(char option, const std::string& path) {
  if (option == '"' || option == '\n' || option == '\r' || option == ' ')
    throw error(errc::invalid_argument,
                path + ": the CSV delimiter cannot be a quote, a space or a line break");
}

// The option's delimiter, or (option '\0') the first comma or tab of the first line, else ','.
char delimiter_of(std::string_view text, char option) {
  if (option != '\0') return option;
  const std::string_view first_line = text.substr(0, text.find('\n'));
  const std::size_t at = first_line.find_first_of(",\t");
  return at == std::string_view::npos ? ',' : first_line[at];
}

// What a cheap first read of the lines tells before any value is parsed: enough to decide the
// layout and to size the value array exactly.
struct csv_survey {
  std::vector<std::string> first;  // the first line's fields: the header or the first row
  std::uint64_t lines = 1;
  bool later_first_numeric = true;  // the first field of every later line is a number or missing
  std::size_t second_fields = 0;    // the fields of line 2 (0 without one)
};

csv_survey survey(std::string_view text, char delimiter, const std::string& path) {
  csv_survey s;
  line_reader lines(text);
  std::string_view line;
  lines.next(line);
  field_reader first(line, delimiter, path, 1);
  for (std::string_view f; first.next(f);) s.first.emplace_back(f);
  while (lines.next(line)) {
    ++s.lines;
    field_reader fields(line, delimiter, path, s.lines);
    std::string_view f;
    fields.next(f);
    if (s.later_first_numeric && !is_numeric(f)) s.later_first_numeric = false;
    if (s.lines == 2) {
      while (fields.next(f)) {
      }
      s.second_fields = fields.index();
    }
  }
  return s;
}

// Where the names, the sample IDs and the values are (the rules of csv_source.hpp).
struct csv_layout {
  bool header = false;
  bool ids = false;
  bool header_without_corner = false;  // R's write.table: one name fewer than fields
  std::size_t fields = 0;              // on every data line, the ID included
};

bool header_present(const csv_survey& s, const csv_options& options) {
  if (options.header != csv_presence::detect) return options.header == csv_presence::present;
  const bool first_numeric = is_numeric(s.first.front());
  const bool others_numeric = std::all_of(s.first.begin() + 1, s.first.end(),
                                          [](const std::string& f) { return is_numeric(f); });
  // A lone non-numeric first field is a header only if it cannot be a sample ID: there are no
  // IDs, or it is the only field, or no later line starts with a non-number.
  return !others_numeric || (!first_numeric && options.ids != csv_presence::present &&
                             (options.ids == csv_presence::absent || s.first.size() == 1 ||
                              (s.lines > 1 && s.later_first_numeric)));
}

csv_layout layout_of(const csv_survey& s, const csv_options& options) {
  csv_layout l;
  l.header = header_present(s, options);
  l.header_without_corner = l.header && s.lines > 1 && s.first.size() + 1 == s.second_fields &&
                            options.ids != csv_presence::absent;
  if (options.ids != csv_presence::detect) {
    l.ids = options.ids == csv_presence::present;
  } else {  // never an ID column that would leave no values
    l.ids =
        l.header_without_corner ||
        (s.first.size() > 1 && ((l.header && s.first.front().empty()) || !s.later_first_numeric ||
                                (!l.header && !is_numeric(s.first.front()))));
  }
  l.fields = l.header_without_corner ? s.second_fields : s.first.size();
  return l;
}

// The header's column names (empty ones numbered), the ID column's name left out.
std::vector<std::string> column_names(std::vector<std::string> header, const csv_layout& l,
                                      const std::string& path) {
  std::vector<std::string> names;
  const std::size_t skip = l.ids && !l.header_without_corner ? 1 : 0;
  for (std::size_t k = skip; k < header.size(); ++k) {
    std::string& name = header[k];
    if (name.find_first_of("\t\r\n") != std::string::npos)
      fail(path, "line 1, column " + std::to_string(k + 1) + ": column name " + shown(name) +
                     " holds a tab or line break, which a store cannot keep");
    names.push_back(name.empty() ? "col" + std::to_string(names.size() + 1) : std::move(name));
  }
  return names;
}

void check_sample_id(const std::string& id, std::uint64_t line_no, const std::string& path) {
  if (id.empty()) fail(path, line_text(line_no) + ": empty sample ID");
  if (id.find_first_of(" \t\r\n") != std::string::npos)
    fail(path, line_text(line_no) + ": sample ID " + shown(id) +
                   " holds whitespace, which PLINK-style sample files cannot hold");
}

// Parses one data line into row `row` of the column-major values (rows per column: n); returns
// its sample ID (empty without an ID column).
std::string parse_row(std::string_view line, std::uint64_t line_no, const csv_layout& l,
                      char delimiter, const std::string& path, std::size_t row, std::size_t n,
                      std::vector<double>& values) {
  const std::size_t id_fields = l.ids ? 1 : 0;
  field_reader fields(line, delimiter, path, line_no);
  std::string id;
  for (std::string_view f; fields.next(f);) {
    const std::size_t k = fields.index() - 1;
    if (k >= l.fields) continue;  // counted for the message below
    if (k < id_fields) {
      id = f;  // checked once the line is known to have the right shape
      continue;
    }
    switch (parse_number(f, values[(k - id_fields) * n + row])) {
      case parsed::number:
      case parsed::missing:
        break;
      case parsed::not_number:
        fail(path, line_text(line_no) + ", column " + std::to_string(k + 1) + ": " + shown(f) +
                       " is not a number");
      case parsed::out_of_range:
        fail(path, line_text(line_no) + ", column " + std::to_string(k + 1) + ": " + shown(f) +
                       " is out of the range of float64");
    }
  }
  if (fields.index() != l.fields)
    fail(path, line_text(line_no) + " has " + std::to_string(fields.index()) +
                   (fields.index() == 1 ? " field" : " fields") + ", expected " +
                   std::to_string(l.fields));
  if (l.ids) check_sample_id(id, line_no, path);
  return id;
}

// The values (column-major, `rows` per column) and the sample IDs of the data lines.
struct csv_rows {
  std::vector<double> values;
  std::vector<std::string> ids;  // empty without an ID column
};

csv_rows read_rows(std::string_view text, const csv_layout& layout, char delimiter,
                   const std::string& path, std::size_t rows, std::size_t columns) {
  csv_rows out;
  out.values.resize(rows * columns);
  if (layout.ids) out.ids.reserve(rows);
  line_reader lines(text);
  std::string_view line;
  std::uint64_t line_no = 0;
  if (layout.header) {
    lines.next(line);
    ++line_no;
  }
  for (std::size_t row = 0; lines.next(line); ++row) {
    std::string id = parse_row(line, ++line_no, layout, delimiter, path, row, rows, out.values);
    if (layout.ids) out.ids.push_back(std::move(id));
  }
  return out;
}

}  // namespace

csv_source::csv_source(const std::filesystem::path& path, const csv_options& options)
    : path_(path.string()) {
  check_delimiter_option(options.delimiter, path_);
  const mapped_text file(path_);
  const std::string_view text = body_of(file.text(), path_);
  delimiter_ = delimiter_of(text, options.delimiter);
  csv_survey lines = survey(text, delimiter_, path_);
  const csv_layout layout = layout_of(lines, options);
  has_header_ = layout.header;
  if (layout.fields <= (layout.ids ? 1u : 0u))
    fail(path_, "no data columns (only the sample ID column)");
  columns_ = layout.fields - (layout.ids ? 1 : 0);
  rows_ = lines.lines - (has_header_ ? 1 : 0);
  if (rows_ == 0) fail(path_, "no data rows (only a header line)");
  if (has_header_) column_ids_ = column_names(std::move(lines.first), layout, path_);
  csv_rows parsed = read_rows(text, layout, delimiter_, path_, static_cast<std::size_t>(rows_),
                              static_cast<std::size_t>(columns_));
  values_ = std::move(parsed.values);
  sample_ids_ = std::move(parsed.ids);
}

std::vector<sample_info> csv_source::samples() const {
  std::vector<sample_info> out;
  out.reserve(rows_);
  for (std::uint64_t i = 0; i < rows_; ++i) {
    const std::string id = sample_ids_.empty() ? "row" + std::to_string(i + 1)
                                               : sample_ids_[static_cast<std::size_t>(i)];
    out.push_back({id, id, "0", "0", "0", "-9"});
  }
  return out;
}

column_info csv_source::column(std::uint64_t j) const {
  column_info c;
  c.id = column_ids_.empty() ? "col" + std::to_string(j + 1)
                             : column_ids_[static_cast<std::size_t>(j)];
  return c;
}

std::string csv_source::description() const { return "CSV file " + path_; }

void csv_source::read_values(std::uint64_t j, std::span<double> values) {
  check_read(j, values.size());
  const auto n = static_cast<std::size_t>(rows_);
  std::copy_n(values_.begin() + static_cast<std::ptrdiff_t>(j * n), n, values.begin());
}

}  // namespace colflow::preprocess
