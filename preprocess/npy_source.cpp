// Dense input from a NumPy .npy file: its header parsed, its data memory-mapped.
#include "colflow/preprocess/npy_source.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>
#include <span>
#include <string_view>
#include <utility>

#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"

namespace colflow::preprocess {
namespace {

static_assert(std::endian::native == std::endian::little,
              "npy_source copies little-endian floats as they are in memory");

constexpr std::string_view npy_magic = "\x93NUMPY";
constexpr std::size_t max_nesting = 16;

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw error(errc::bad_input, path + ": " + problem);
}

// The part of a Python literal that a .npy header may hold: strings, True/False/None,
// integers (with the 'L' suffix of Python 2 writers) and tuples or lists of those.
struct py_value {
  enum class type { string, boolean, none, integer, tuple, list } kind = type::none;
  std::string text;             // string
  bool flag = false;            // boolean
  bool negative = false;        // integer: sign and magnitude
  std::uint64_t magnitude = 0;  //
  std::vector<py_value> items;  // tuple, list
};

// Recursive descent over the header dict. numpy reads the header with ast.literal_eval; this
// accepts the same spellings for everything a valid header can contain, and nothing else.
class header_parser {
 public:
  header_parser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  std::vector<std::pair<std::string, py_value>> parse_dict() {
    std::vector<std::pair<std::string, py_value>> entries;
    expect('{');
    skip_space();
    while (peek() != '}') {
      skip_space();
      if (peek() != '\'' && peek() != '"') error_here("expected a quoted key");
      std::string key = parse_string();
      expect(':');
      entries.emplace_back(std::move(key), parse_value(0));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        skip_space();
      } else if (peek() != '}') {
        error_here("expected ',' or '}'");
      }
    }
    ++pos_;
    skip_space();
    // numpy pads the header with spaces and ends it with '\n'; a NUL pad is tolerated too.
    while (pos_ < text_.size() && text_[pos_] == '\0') ++pos_;
    if (pos_ != text_.size()) error_here("unexpected text after the closing '}'");
    return entries;
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }

  void expect(char c) {
    skip_space();
    if (peek() != c) error_here(std::string("expected '") + c + "'");
    ++pos_;
  }

  [[noreturn]] void error_here(const std::string& what) const {
    std::string shown(text_.substr(0, std::min<std::size_t>(text_.size(), 120)));
    while (!shown.empty() && (shown.back() == ' ' || shown.back() == '\n')) shown.pop_back();
    for (char& c : shown)
      if (c == '\n' || c == '\r' || c == '\0') c = ' ';
    fail(path_, "unparseable .npy header: " + what + " at character " + std::to_string(pos_) +
                    " of \"" + shown + (text_.size() > 120 ? "...\"" : "\""));
  }

  std::string parse_string() {
    const char quote = text_[pos_++];
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) error_here("unterminated string");
      char c = text_[pos_++];
      if (c == quote) return out;
      if (c == '\\') {
        if (pos_ >= text_.size()) error_here("unterminated string");
        c = text_[pos_++];
      }
      out += c;
    }
  }

  py_value parse_value(std::size_t depth) {
    if (depth > max_nesting) error_here("nesting too deep");
    skip_space();
    py_value v;
    const char c = peek();
    if (c == '\'' || c == '"') {
      v.kind = py_value::type::string;
      v.text = parse_string();
    } else if (c == '(' || c == '[') {
      v.kind = c == '(' ? py_value::type::tuple : py_value::type::list;
      const char close = c == '(' ? ')' : ']';
      bool saw_comma = false;
      ++pos_;
      skip_space();
      while (peek() != close) {
        v.items.push_back(parse_value(depth + 1));
        skip_space();
        if (peek() == ',') {
          saw_comma = true;
          ++pos_;
          skip_space();
        } else if (peek() != close) {
          error_here(std::string("expected ',' or '") + close + "'");
        }
      }
      ++pos_;
      // (5) is the integer 5 in Python, not a tuple: only a comma makes a 1-tuple.
      if (v.kind == py_value::type::tuple && v.items.size() == 1 && !saw_comma)
        return std::move(v.items.front());
    } else if (c == '-' || c == '+' || (c >= '0' && c <= '9')) {
      v.kind = py_value::type::integer;
      if (c == '-' || c == '+') {
        v.negative = c == '-';
        ++pos_;
      }
      const char* first = text_.data() + pos_;
      const char* last = text_.data() + text_.size();
      const auto [end, ec] = std::from_chars(first, last, v.magnitude);
      if (ec == std::errc::result_out_of_range) error_here("integer too large");
      if (ec != std::errc()) error_here("expected a value");
      pos_ += static_cast<std::size_t>(end - first);
      if (peek() == 'L' || peek() == 'l') ++pos_;  // Python 2 long
    } else {
      std::size_t end = pos_;
      while (end < text_.size() &&
             ((text_[end] >= 'A' && text_[end] <= 'Z') || (text_[end] >= 'a' && text_[end] <= 'z')))
        ++end;
      const std::string_view word = text_.substr(pos_, end - pos_);
      if (word == "True" || word == "False") {
        v.kind = py_value::type::boolean;
        v.flag = word == "True";
      } else if (word == "None") {
        v.kind = py_value::type::none;
      } else {
        error_here("expected a value");
      }
      pos_ = end;
    }
    return v;
  }

  std::string_view text_;
  const std::string& path_;
  std::size_t pos_ = 0;
};

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string value_text(const py_value& v) {
  switch (v.kind) {
    case py_value::type::string:
      return "'" + v.text + "'";
    case py_value::type::boolean:
      return v.flag ? "True" : "False";
    case py_value::type::none:
      return "None";
    case py_value::type::integer:
      // Appended, not "-" + digits: GCC 12 warns of a false overlap in the latter at -O3.
      return std::string(v.negative ? "-" : "").append(std::to_string(v.magnitude));
    case py_value::type::tuple:
    case py_value::type::list: {
      std::string s(1, v.kind == py_value::type::tuple ? '(' : '[');
      for (std::size_t i = 0; i < v.items.size(); ++i)
        s += (i ? ", " : "") + value_text(v.items[i]);
      if (v.kind == py_value::type::tuple && v.items.size() == 1) s += ',';
      return s + (v.kind == py_value::type::tuple ? ')' : ']');
    }
  }
  return "?";
}

std::uint32_t read_le(const unsigned char* p, std::size_t bytes) {
  std::uint32_t v = 0;
  for (std::size_t i = bytes; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

// The fixed part before the header: magic, version and the header's length.
struct npy_preamble {
  int version = 1;
  std::size_t header_offset = 0;
  std::uint64_t header_length = 0;
  std::uint64_t data_offset = 0;  // the first byte of the matrix
};

npy_preamble read_preamble(std::span<const std::byte> file, const std::string& path) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(file.data());
  const std::string_view head(reinterpret_cast<const char*>(bytes),
                              std::min<std::size_t>(file.size(), 12));
  if (head.substr(0, 4) == std::string_view("PK\x03\x04", 4))
    fail(path,
         "is a .npz archive (zip), not a .npy file; extract its arrays first "
         "(numpy.load, then numpy.save each one)");
  if (head.size() < npy_magic.size() || head.substr(0, npy_magic.size()) != npy_magic)
    fail(path, "not a .npy file (bad magic: expected \"\\x93NUMPY\")");
  if (file.size() < 10)
    fail(path, "truncated .npy file (" + std::to_string(file.size()) + " bytes)");
  const int major = bytes[6], minor = bytes[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    fail(path, "unsupported .npy format version " + std::to_string(major) + "." +
                   std::to_string(minor) + " (versions 1.0, 2.0 and 3.0 are read)");
  npy_preamble p;
  p.version = major;
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  p.header_offset = 8 + length_bytes;
  if (file.size() < p.header_offset)
    fail(path, "truncated .npy file (" + std::to_string(file.size()) + " bytes)");
  p.header_length = read_le(bytes + 8, length_bytes);
  p.data_offset = p.header_offset + p.header_length;
  if (p.data_offset > file.size())
    fail(path, "the .npy header of " + std::to_string(p.header_length) +
                   " bytes runs past the end of the file (" + std::to_string(file.size()) +
                   " bytes)");
  return p;
}

// The header dictionary's three keys, each present once and nothing else.
struct npy_header {
  const py_value* descr = nullptr;
  const py_value* order = nullptr;
  const py_value* shape = nullptr;
};

npy_header header_keys(const std::vector<std::pair<std::string, py_value>>& entries,
                       const std::string& path) {
  npy_header h;
  for (const auto& [key, value] : entries) {
    const py_value** slot = key == "descr"           ? &h.descr
                            : key == "fortran_order" ? &h.order
                            : key == "shape"         ? &h.shape
                                                     : nullptr;
    if (!slot) fail(path, "unexpected key '" + key + "' in the .npy header");
    if (*slot) fail(path, "duplicate key '" + key + "' in the .npy header");
    *slot = &value;
  }
  if (!h.descr) fail(path, "the .npy header has no 'descr' key");
  if (!h.order) fail(path, "the .npy header has no 'fortran_order' key");
  if (!h.shape) fail(path, "the .npy header has no 'shape' key");
  return h;
}

// Bytes per value of the dtype: little-endian float64 or float32 only.
std::size_t item_size_of(const py_value& descr, const std::string& path) {
  if (descr.kind != py_value::type::string)
    fail(path, "unsupported dtype " + value_text(descr) +
                   " (structured arrays are not read; save a plain float64 matrix)");
  if (descr.text == "<f8") return 8;
  if (descr.text == "<f4") return 4;
  if (descr.text == ">f8" || descr.text == ">f4")
    fail(path, "big-endian " + std::string(descr.text == ">f8" ? "float64" : "float32") + " ('" +
                   descr.text +
                   "') is not supported; convert it with numpy: numpy.save(path, "
                   "a.astype('<f8'))");
  fail(path, "unsupported dtype '" + descr.text +
                 "': only float64 ('<f8') and float32 ('<f4') are read; convert it with "
                 "numpy: numpy.save(path, a.astype('<f8'))");
}

bool fortran_order_of(const py_value& order, const std::string& path) {
  if (order.kind != py_value::type::boolean)
    fail(path, "'fortran_order' is " + value_text(order) + ", expected True or False");
  return order.flag;
}

// The shape: one or two non-negative dimensions holding at least one value.
std::vector<std::uint64_t> dims_of(const py_value& shape, const std::string& path) {
  if (shape.kind != py_value::type::tuple)
    fail(path, "'shape' is " + value_text(shape) + ", expected a tuple of integers");
  std::vector<std::uint64_t> dims;
  for (const py_value& d : shape.items) {
    if (d.kind != py_value::type::integer || (d.negative && d.magnitude != 0))
      fail(path, "'shape' " + value_text(shape) + " holds " + value_text(d) +
                     ", expected non-negative integers");
    dims.push_back(d.magnitude);
  }
  if (dims.size() != 1 && dims.size() != 2)
    fail(path, "shape " + shape_text(dims) + " is " + std::to_string(dims.size()) +
                   "-D; expected a 2-D matrix (samples, variables) or a 1-D vector");
  if (dims[0] == 0 || (dims.size() == 2 && dims[1] == 0))
    fail(path, "shape " + shape_text(dims) + " holds no values");
  return dims;
}

// rows * columns * item_size must be the bytes after the header (checked without overflow).
void check_data_size(const std::vector<std::uint64_t>& dims, std::size_t item_size,
                     std::uint64_t available, const std::string& path) {
  const std::uint64_t columns = dims.size() == 1 ? 1 : dims[1];
  std::uint64_t expected = 0;
  if (__builtin_mul_overflow(dims[0], columns, &expected) ||
      __builtin_mul_overflow(expected, std::uint64_t{item_size}, &expected))
    fail(path, "shape " + shape_text(dims) + " is too large (its size overflows 64 bits)");
  if (expected != available)
    fail(path, "expected " + std::to_string(expected) + " bytes of " +
                   (item_size == 8 ? "float64" : "float32") + " data for shape " +
                   shape_text(dims) + ", found " + std::to_string(available));
}

}  // namespace

npy_source::npy_source(const std::filesystem::path& path, const npy_options& options)
    : path_(path.string()), options_(options) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    fail(path_, "not a regular file");
  const file_descriptor fd = open_read(path);
  if (fd.size() == 0) fail(path_, "empty file, not a .npy file");
  map_ = std::make_unique<mapped_file>(fd, access_hint::normal);
  map_size_ = static_cast<std::size_t>(fd.size());
  const std::span<const std::byte> file = map_->bytes().first(map_size_);

  const npy_preamble preamble = read_preamble(file, path_);
  version_ = preamble.version;
  // Versions 1 and 2 are latin-1, version 3 utf-8: every character that a valid header for a
  // float array holds is ASCII, so one parser serves all three.
  const std::string_view header(reinterpret_cast<const char*>(file.data()) + preamble.header_offset,
                                preamble.header_length);
  const auto entries = header_parser(header, path_).parse_dict();
  const npy_header keys = header_keys(entries, path_);
  item_size_ = item_size_of(*keys.descr, path_);
  fortran_order_ = fortran_order_of(*keys.order, path_);
  const std::vector<std::uint64_t> dims = dims_of(*keys.shape, path_);
  one_dimensional_ = dims.size() == 1;
  rows_ = dims[0];
  columns_ = one_dimensional_ ? 1 : dims[1];
  if (one_dimensional_) fortran_order_ = true;
  check_data_size(dims, item_size_, map_size_ - preamble.data_offset, path_);
  open_matrix(file.data() + preamble.data_offset);
}

// The data, read through matrix_source. Contiguous columns are read front to back once; a
// C-order file is swept once per block and benefits from the page cache between sweeps, so only
// the former gets the sequential hint.
void npy_source::open_matrix(const std::byte* data) {
  matrix_view m;
  m.data = data;
  m.rows = rows_;
  m.columns = columns_;
  m.item_size = item_size_;
  const auto item = static_cast<std::ptrdiff_t>(item_size_);
  m.row_stride = fortran_order_ ? item : item * static_cast<std::ptrdiff_t>(columns_);
  m.column_stride = fortran_order_ ? item * static_cast<std::ptrdiff_t>(rows_) : item;
  matrix_options mo;
  mo.description = description();
  mo.block_bytes = options_.block_bytes;
  matrix_ = std::make_unique<matrix_source>(m, std::move(mo));
  if (matrix_->contiguous_columns()) map_->advise(access_hint::sequential);
}

npy_source::~npy_source() = default;

std::vector<sample_info> npy_source::samples() const { return matrix_->samples(); }

column_info npy_source::column(std::uint64_t j) const { return matrix_->column(j); }

std::string npy_source::description() const {
  return "npy file " + path_ + " (" + (item_size_ == 8 ? "float64" : "float32") + ", " +
         (one_dimensional_ ? "1-D"
          : fortran_order_ ? "Fortran order"
                           : "C order") +
         ")";
}

void npy_source::read_values(std::uint64_t j, std::span<double> values) {
  matrix_->read_values(j, values);
}

}  // namespace colflow::preprocess
