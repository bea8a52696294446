// The .pvar of a .pgen (preprocess/pgen_reader.hpp), plain or zstd-compressed (.pvar.zst, told
// by its magic number rather than its name), read line by line: '#' header lines, a #CHROM line
// naming the columns (pgen_spec, "PVAR Format Specification"), or none for a .bim-like file.
#include <zstd.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include "colflow/error.hpp"
#include "pgen_reader.hpp"

namespace colflow::preprocess::detail::pgen {
namespace {

// Lines of a file, decompressing it on the way when it starts with zstd's magic number.
class line_source {
 public:
  explicit line_source(const std::filesystem::path& file) : file_(file) {
    std::error_code ec;
    if (!std::filesystem::exists(file, ec))
      throw error(errc::not_found, "missing .pvar file " + file.string());
    fd_ = open_read(file);
    size_ = fd_.size();
    std::uint8_t magic[4] = {};
    if (size_ >= 4) fd_.pread_exact(std::as_writable_bytes(std::span(magic)), 0);
    if (magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f && magic[3] == 0xfd) {
      stream_ = ZSTD_createDStream();
      if (!stream_)
        throw error(errc::io_error, "cannot allocate a zstd stream for " + file.string());
    }
  }
  ~line_source() { ZSTD_freeDStream(stream_); }
  line_source(const line_source&) = delete;
  line_source& operator=(const line_source&) = delete;

  // The next line without its end, or false at the end of the file.
  bool next(std::string& line) {
    line.clear();
    for (;;) {
      const char* begin = text_.data() + start_;
      const char* nl = static_cast<const char*>(std::memchr(begin, '\n', text_.size() - start_));
      if (nl) {
        line.append(begin, nl);
        start_ += static_cast<std::size_t>(nl - begin) + 1;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        return true;
      }
      line.append(begin, text_.size() - start_);
      text_.clear();
      start_ = 0;
      if (!refill()) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        return !line.empty();
      }
    }
  }

 private:
  // Appends the next chunk of text to text_; false at the end of the file.
  bool refill() {
    constexpr std::size_t chunk = std::size_t{1} << 18;
    if (!stream_) {
      if (pos_ >= size_) return false;
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, size_ - pos_));
      text_.resize(n);
      fd_.pread_exact(std::as_writable_bytes(std::span(text_.data(), n)), pos_);
      pos_ += n;
      return true;
    }
    std::vector<char> out(ZSTD_DStreamOutSize());
    for (;;) {
      if (in_.pos == in_.size) {
        if (pos_ >= size_) {
          if (!frame_done_)
            throw input_error(file_,
                              "the zstd stream is truncated (" + std::to_string(size_) + " bytes)");
          return false;
        }
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, size_ - pos_));
        compressed_.resize(n);
        fd_.pread_exact(std::as_writable_bytes(std::span(compressed_)), pos_);
        pos_ += n;
        in_ = {compressed_.data(), n, 0};
      }
      ZSTD_outBuffer o = {out.data(), out.size(), 0};
      const std::size_t r = ZSTD_decompressStream(stream_, &o, &in_);
      if (ZSTD_isError(r))
        throw input_error(file_, std::string("corrupt zstd stream: ") + ZSTD_getErrorName(r));
      frame_done_ = r == 0;
      if (o.pos > 0) {
        text_.append(out.data(), o.pos);
        return true;
      }
    }
  }

  std::filesystem::path file_;
  file_descriptor fd_;
  std::uint64_t size_ = 0, pos_ = 0;
  ZSTD_DStream* stream_ = nullptr;
  std::vector<char> compressed_;
  ZSTD_inBuffer in_ = {nullptr, 0, 0};
  bool frame_done_ = true;
  std::string text_;
  std::size_t start_ = 0;
};

// The first `count` whitespace-separated fields of a line (fewer if it has fewer).
std::size_t split_fields(const std::string& line, std::size_t count,
                         std::vector<std::string_view>& out) {
  out.clear();
  std::size_t i = 0;
  while (i < line.size() && out.size() < count) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.emplace_back(line.data() + start, i - start);
  }
  return out.size();
}

constexpr std::size_t absent = static_cast<std::size_t>(-1);

}  // namespace

struct pvar_reader::impl {
  std::filesystem::path file;
  line_source lines;
  std::uint64_t line_no = 0;
  // Column positions; absent for ID and CM when the file has none.
  std::size_t chrom = 0, id = absent, pos = absent, ref = absent, alt = absent, cm = absent;
  std::size_t needed = 0;  // fields a line must have
  std::string pending;     // a headerless file's first line, read to count its fields
  bool has_pending = false;
  std::string line;
  std::vector<std::string_view> fields;

  explicit impl(const std::filesystem::path& f) : file(f), lines(f) { read_header(); }

  [[noreturn]] void fail(const std::string& what) const {
    throw input_error(file, "line " + std::to_string(line_no) + ": " + what);
  }

  void read_header() {
    while (lines.next(line)) {
      ++line_no;
      if (line.empty() || line.find_first_not_of(" \t") == std::string::npos) continue;
      if (line.rfind("#CHROM", 0) == 0) return name_columns();
      if (line[0] == '#') continue;
      // No #CHROM line: the .bim order, CHROM ID [CM] POS ALT REF.
      const std::size_t n = split_fields(line, 7, fields);
      if (n < 5)
        fail("expected 5 or 6 fields (a .bim-like line: CHROM ID [CM] POS ALT REF), found " +
             std::to_string(n));
      id = 1;
      if (n >= 6) {
        cm = 2, pos = 3, alt = 4, ref = 5;
      } else {
        pos = 2, alt = 3, ref = 4;
      }
      needed = n >= 6 ? 6 : 5;
      pending = line;
      has_pending = true;
      return;
    }
    if (line_no == 0) throw input_error(file, "no variants (the file is empty)");
    fail("no variants (the file ends in its header)");
  }

  void name_columns() {
    split_fields(line, absent, fields);
    for (std::size_t c = 1; c < fields.size(); ++c) {
      const std::string_view name = fields[c];
      std::size_t* slot = name == "POS"   ? &pos
                          : name == "ID"  ? &id
                          : name == "REF" ? &ref
                          : name == "ALT" ? &alt
                          : name == "CM"  ? &cm
                                          : nullptr;
      if (name == "FORMAT") break;
      if (!slot) {
        if (name == "QUAL" || name == "FILTER" || name == "INFO") continue;
        fail("unknown column '" + std::string(name) + "' in the #CHROM line");
      }
      if (*slot != absent) fail("column " + std::string(name) + " appears twice");
      *slot = c;
    }
    if (pos == absent || ref == absent || alt == absent)
      fail("the #CHROM line lacks POS, REF or ALT");
    needed = 1 + std::max({pos, ref, alt, id == absent ? 0 : id, cm == absent ? 0 : cm});
  }

  bool next(column_info& out) {
    for (;;) {
      if (has_pending) {
        has_pending = false;
        line.swap(pending);
      } else {
        if (!lines.next(line)) return false;
        ++line_no;
      }
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      if (line[0] == '#') fail("a '#' line after the header");
      const std::size_t n = split_fields(line, needed, fields);
      if (n < needed)
        fail("expected at least " + std::to_string(needed) + " fields, found " + std::to_string(n));
      const std::string_view alt_allele = fields[alt];
      const std::string_view variant_id = id == absent ? "." : fields[id];
      if (alt_allele.find(',') != std::string_view::npos)
        fail("variant " + std::string(variant_id) + " has ALT alleles " + std::string(alt_allele) +
             "; colflow refuses multiallelic variants as plink2 --make-bed does (plink2 "
             "--max-alleles 2)");
      std::int64_t position = 0;
      const std::string_view p = fields[pos];
      const auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), position);
      if (ec != std::errc() || end != p.data() + p.size())
        fail("position '" + std::string(p) + "' is not an integer");
      out = {std::string(fields[chrom]),
             std::string(variant_id),
             cm == absent ? std::string("0") : std::string(fields[cm]),
             std::string(p),
             std::string(alt_allele),
             std::string(fields[ref])};
      return true;
    }
  }
};

pvar_reader::pvar_reader(const std::filesystem::path& file) : impl_(std::make_unique<impl>(file)) {}
pvar_reader::~pvar_reader() = default;
bool pvar_reader::next(column_info& out) { return impl_->next(out); }
std::uint64_t pvar_reader::line() const noexcept { return impl_->line_no; }

std::uint64_t count_pvar(const std::filesystem::path& file) {
  pvar_reader r(file);
  column_info c;
  std::uint64_t n = 0;
  while (r.next(c)) ++n;
  if (n == 0) throw input_error(file, "no variants (the file ends in its header)");
  return n;
}

}  // namespace colflow::preprocess::detail::pgen
