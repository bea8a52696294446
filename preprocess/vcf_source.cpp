// VCF and BCF input through htslib (colflow/preprocess/vcf_source.hpp). The values follow
// PLINK 2.00a3.5's VCF import, checked against plink2 itself by
// tests/vcf_source_test.cpp.
#include "colflow/preprocess/vcf_source.hpp"

#include <htslib/bgzf.h>
#include <htslib/hts.h>
#include <htslib/hts_endian.h>
#include <htslib/hts_log.h>
#include <htslib/kseq.h>  // KS_SEP_LINE
#include <htslib/kstring.h>
#include <htslib/tbx.h>  // hts_get_bgzfp
#include <htslib/vcf.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "colflow/codec/dosage_codec.hpp"
#include "colflow/codec/genotype_codec.hpp"
#include "colflow/error.hpp"

namespace colflow::preprocess {
namespace {

using dosage_field = vcf_options::dosage_field;
using half_call = vcf_options::half_call;

error bad_input(const std::filesystem::path& file, const std::string& what) {
  return input_error(file, what);
}

[[noreturn]] void bad(const std::filesystem::path& file, const std::string& what) {
  throw bad_input(file, what);
}

// htslib writes its diagnostics to stderr and the library never prints: silence it while one of
// our calls runs. The level is process-wide; the previous one is restored.
class quiet_htslib {
 public:
  quiet_htslib() : saved_(hts_get_log_level()) { hts_set_log_level(HTS_LOG_OFF); }
  ~quiet_htslib() { hts_set_log_level(saved_); }
  quiet_htslib(const quiet_htslib&) = delete;
  quiet_htslib& operator=(const quiet_htslib&) = delete;

 private:
  htsLogLevel saved_;
};

struct file_closer {
  void operator()(htsFile* f) const { hts_close(f); }
};
struct header_deleter {
  void operator()(bcf_hdr_t* h) const { bcf_hdr_destroy(h); }
};
struct record_deleter {
  void operator()(bcf1_t* r) const { bcf_destroy(r); }
};
using file_ptr = std::unique_ptr<htsFile, file_closer>;
using header_ptr = std::unique_ptr<bcf_hdr_t, header_deleter>;
using record_ptr = std::unique_ptr<bcf1_t, record_deleter>;

struct line_buffer {
  kstring_t s = KS_INITIALIZE;
  line_buffer() = default;
  line_buffer(const line_buffer&) = delete;
  line_buffer& operator=(const line_buffer&) = delete;
  ~line_buffer() { ks_free(&s); }
  std::string_view view() const { return {s.s ? s.s : "", s.l}; }
};

const char* field_name(dosage_field f) { return f == dosage_field::gp ? "GP" : "DS"; }

// Opens the file and checks that htslib sees VCF or BCF, complete when bgzip-compressed.
file_ptr open_input(const vcf_options& o) {
  std::error_code ec;
  if (!std::filesystem::exists(o.path, ec))
    throw error(errc::not_found, "missing VCF/BCF file " + o.path.string());
  errno = 0;
  file_ptr f(hts_open(o.path.c_str(), "r"));
  // htslib fails with ENOEXEC on content whose format it cannot open (a damaged BCF, binary
  // data): a bad file rather than a failed system call.
  if (!f && errno == ENOEXEC)
    bad(o.path, "not a VCF or BCF file: htslib does not recognise its format");
  if (!f) throw_system_error(errno != 0 ? errno : EIO, "cannot open", o.path.string());
  const htsFormat* format = hts_get_format(f.get());
  if (format->format != vcf && format->format != bcf) {
    char* d = hts_format_description(format);
    const std::string found = d ? d : "an unknown format";
    std::free(d);
    bad(o.path, "not a VCF or BCF file: htslib reads it as " + found +
                    " (a VCF starts with a ##fileformat=VCF line)");
  }
  // A bgzip file truncated at a block boundary reads as a shorter valid file: only the missing
  // end-of-file block tells. Checked before threads are attached (it seeks).
  if (format->compression == bgzf) {
    BGZF* z = hts_get_bgzfp(f.get());
    if (z != nullptr && bgzf_check_EOF(z) == 0)
      bad(o.path,
          "no BGZF end-of-file marker: the file is truncated (bgzip ends every file with one)");
  }
  if (o.threads > 0 && hts_set_threads(f.get(), static_cast<int>(std::min(o.threads, 1024u))) != 0)
    throw error(errc::io_error, "cannot start " + std::to_string(o.threads) +
                                    " htslib threads to read " + o.path.string());
  return f;
}

// Reads a line into s as hts_getline does (without its '\n', nor a '\r' before it; counted in
// f->lineno): its length, -1 at the end of the file, < -1 on a read error. For compressed input
// with memchr: htslib 1.16's bgzf_getline compares byte by byte, which took a fifth of an
// import's time, twice. Unlike it, a decompression error within a line is an error rather than
// a shorter line.
int read_line(htsFile* f, kstring_t* s) {
  const htsCompression c = hts_get_format(f)->compression;
  if (c != gzip && c != bgzf) return hts_getline(f, KS_SEP_LINE, s);
  BGZF* z = f->fp.bgzf;
  s->l = 0;
  int state = 0;
  while (state == 0) {
    if (z->block_offset >= z->block_length) {
      if (bgzf_read_block(z) != 0) {
        state = -2;
        break;
      }
      if (z->block_length == 0) {
        state = -1;
        break;
      }
    }
    const char* buf = static_cast<const char*>(z->uncompressed_block) + z->block_offset;
    const auto avail = static_cast<std::size_t>(z->block_length - z->block_offset);
    const auto* newline = static_cast<const char*>(std::memchr(buf, '\n', avail));
    const std::size_t take = newline != nullptr ? static_cast<std::size_t>(newline - buf) : avail;
    if (newline != nullptr) state = 1;
    if (kputsn(buf, take, s) < 0) {
      state = -3;
      break;
    }
    z->block_offset += static_cast<int>(take) + (newline != nullptr ? 1 : 0);
    if (z->block_offset >= z->block_length) z->block_offset = z->block_length = 0;
  }
  ++f->lineno;
  if (state < -1 || (s->l == 0 && state < 0)) return state;
  if (s->l > 0 && s->s[s->l - 1] == '\r') --s->l;
  s->s[s->l] = '\0';
  return static_cast<int>(std::min<std::size_t>(s->l, INT_MAX));
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string_view::npos ? at : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

// Why htslib refused the header, where it can be told from the header text: the reason as
// ": ...", or an empty string.
std::string header_problem(const std::filesystem::path& path) {
  file_ptr f(hts_open(path.c_str(), "r"));
  if (!f) return "";
  std::vector<std::string> lines;
  if (hts_get_format(f.get())->format == bcf) {
    // BCF: "BCF\2\2", the text length (uint32 little-endian), the text.
    BGZF* z = hts_get_bgzfp(f.get());
    std::array<unsigned char, 9> head{};
    if (z == nullptr || bgzf_read(z, head.data(), head.size()) != 9) return "";
    const std::uint32_t length =
        head[5] | (head[6] << 8) | (head[7] << 16) | (static_cast<std::uint32_t>(head[8]) << 24);
    if (length > (1u << 30)) return "";
    std::string text(length, '\0');
    if (bgzf_read(z, text.data(), length) != static_cast<ssize_t>(length))
      return ": the BCF header is truncated";
    text.resize(std::strlen(text.c_str()));
    for (std::string_view l : split(text, '\n')) lines.emplace_back(l);
  } else {
    line_buffer line;
    while (hts_getline(f.get(), KS_SEP_LINE, &line.s) >= 0 && line.s.l > 0 && line.s.s[0] == '#')
      lines.emplace_back(line.view());
  }
  const auto chrom = std::find_if(lines.begin(), lines.end(),
                                  [](const std::string& l) { return l.starts_with("#CHROM"); });
  if (chrom == lines.end()) return ": no #CHROM line ends the header";
  const auto names = split(*chrom, '\t');
  static constexpr std::array<std::string_view, 8> fixed{"#CHROM", "POS",  "ID",     "REF",
                                                         "ALT",    "QUAL", "FILTER", "INFO"};
  if (names.size() < fixed.size() || !std::equal(fixed.begin(), fixed.end(), names.begin()))
    return ": the #CHROM line does not name the columns CHROM POS ID REF ALT QUAL FILTER INFO, "
           "separated by tabs";
  std::unordered_map<std::string_view, std::size_t> seen;
  for (std::size_t i = 9; i < names.size(); ++i) {
    const auto [it, added] = seen.emplace(names[i], i - 8);
    if (!added)
      return ": sample name '" + std::string(names[i]) + "' appears twice (samples " +
             std::to_string(it->second) + " and " + std::to_string(i - 8) +
             "); sample names must be unique, as PLINK 2 requires";
  }
  return ": htslib cannot parse it (check the ## meta-information lines)";
}

// The record errors of htslib that leave the record unusable. An undefined contig or tag is
// not one: htslib defines it as it goes, as bcftools does.
std::string record_error_text(int errcode) {
  std::string what;
  const auto add = [&](int bit, const char* text) {
    if (errcode & bit) what += std::string(what.empty() ? "" : ", ") + text;
  };
  add(BCF_ERR_NCOLS, "wrong number of columns");
  add(BCF_ERR_LIMITS, "a value beyond htslib's limits");
  add(BCF_ERR_CHAR, "an invalid character");
  add(BCF_ERR_CTG_INVALID, "an invalid contig name");
  add(BCF_ERR_TAG_INVALID, "an invalid tag");
  return what;
}
constexpr int fatal_record_errors =
    BCF_ERR_NCOLS | BCF_ERR_LIMITS | BCF_ERR_CHAR | BCF_ERR_CTG_INVALID | BCF_ERR_TAG_INVALID;

// The number of tabs in s, eight bytes at a time (std::count widens every byte to a 64-bit
// counter): the counting pass runs over the whole file.
std::size_t count_tabs(std::string_view s) {
  constexpr std::uint64_t ones = 0x0101010101010101, high = 0x8080808080808080,
                          low7 = 0x7f7f7f7f7f7f7f7f, tabs = ones * '\t', pairs = 0x00ff00ff00ff00ff;
  const char* p = s.data();
  std::size_t left = s.size(), count = 0;
  while (left >= 8) {
    // Up to 255 words into byte counters, then their sum.
    std::uint64_t counters = 0;
    for (int k = 0; k < 255 && left >= 8; ++k, p += 8, left -= 8) {
      std::uint64_t w;
      std::memcpy(&w, p, 8);
      const std::uint64_t x = w ^ tabs;                     // tabs are zero bytes
      const std::uint64_t other = ((x & low7) + low7) | x;  // high bit set for other bytes
      counters += (~other & high) >> 7;
    }
    const std::uint64_t sums = (counters & pairs) + ((counters >> 8) & pairs);
    count += static_cast<std::size_t>((sums * 0x0001000100010001) >> 48);
  }
  for (; left > 0; --left) count += *p++ == '\t';
  return count;
}

bool has_key(std::string_view format, std::string_view key) {
  for (std::string_view k : split(format, ':'))
    if (k == key) return true;
  return false;
}

// PLINK 2's fixed point: floor(16384 x + 1/2), x within 0..2.
std::uint16_t fixed_point(double x) {
  const double y = std::min(x * dosage_one + 0.5, double{dosage_max});
  return static_cast<std::uint16_t>(static_cast<std::int32_t>(y));
}

// One sample's GT, for the column of ALT allele `alt` (1-based) of a record of n_allele alleles.
enum class call_status { ok, missing, half, bad_allele, polyploid };
struct call {
  call_status status = call_status::missing;
  int alt_copies = 0;  // 0..2 when ok
  int ploidy = 0;
};

// The call of a GT of `ploidy` values (BCF-encoded, as bcf_get_genotypes gives them), g0 and g1
// its first two.
call call_of(int ploidy, std::int32_t g0, std::int32_t g1, int n_allele, int alt, half_call half) {
  call c;
  c.ploidy = ploidy;
  if (ploidy == 0) return c;  // no GT for this sample: missing
  if (ploidy > 2) {
    c.status = call_status::polyploid;
    return c;
  }
  // -1 missing, -2 out of range, else 1 for the column's ALT allele, 0 for REF (and, split,
  // for the other ALT alleles, as bcftools norm -m- writes them).
  const auto allele = [&](std::int32_t v) {
    if (v == bcf_int32_missing || bcf_gt_is_missing(v)) return -1;
    const int index = bcf_gt_allele(v);
    if (index >= n_allele) return -2;
    return index == alt ? 1 : 0;
  };
  const int a = allele(g0), b = ploidy == 2 ? allele(g1) : a;
  if (a == -2 || b == -2) {
    c.status = call_status::bad_allele;
    return c;
  }
  if (a == -1 && b == -1) return c;
  if (a >= 0 && b >= 0) {
    c.status = call_status::ok;
    c.alt_copies = ploidy == 1 ? 2 * a : a + b;  // a haploid call counts as homozygous
    return c;
  }
  const int known = a >= 0 ? a : b;
  switch (half) {
    case half_call::error:
      c.status = call_status::half;
      return c;
    case half_call::missing:
      return c;
    case half_call::haploid:
      c.status = call_status::ok;
      c.alt_copies = 2 * known;
      return c;
    case half_call::reference:
      c.status = call_status::ok;
      c.alt_copies = known;
      return c;
  }
  return c;
}

// The call of a sample's `width` GT values, ended early by bcf_int32_vector_end.
call read_call(const std::int32_t* g, int width, int n_allele, int alt, half_call half) {
  int ploidy = 0;
  while (ploidy < width && g[ploidy] != bcf_int32_vector_end) ++ploidy;
  return call_of(ploidy, ploidy > 0 ? g[0] : 0, ploidy > 1 ? g[1] : 0, n_allele, alt, half);
}

// GT as written, for messages: "./1", "0|1", "1".
std::string gt_text(const std::int32_t* g, int width) {
  std::string s;
  for (int i = 0; i < width && g[i] != bcf_int32_vector_end; ++i) {
    if (i > 0) s += bcf_gt_is_phased(g[i]) ? '|' : '/';
    s += (g[i] == bcf_int32_missing || bcf_gt_is_missing(g[i]))
             ? std::string(".")
             : std::to_string(bcf_gt_allele(g[i]));
  }
  return s.empty() ? "." : s;
}

std::string number_text(double x) {
  if (std::isnan(x)) return ".";
  std::array<char, 32> buf;
  return std::string(buf.data(), std::to_chars(buf.data(), buf.data() + buf.size(), x).ptr);
}

// Text from the file for a message: printable ASCII as it is, other bytes as \xNN, at most 40
// characters.
std::string shown(std::string_view s) {
  std::string out = "'";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i == 40) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static constexpr char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out + "'";
}

// ---- The sample columns of a VCF text line -----------------------------------------------
//
// Parsed here rather than by htslib's vcf_parse, which is not safe to run on several threads
// (it adds undefined tags to the shared header) and parses every FORMAT field into BCF arrays.
// A line is accepted exactly when vcf_parse accepts its sample columns (htslib 1.16's rules,
// restated below), so the values, and the records refused, are the same as through vcf_parse.
// The exception is a NUL byte, which vcf_parse reads as a column separator and which is refused
// here as an invalid character.

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The end of a sample's field: the next ':', tab or NUL (the line's end).
const char* field_end(const char* p) {
  while (*p != ':' && *p != '\t' && *p != '\0') ++p;
  return p;
}

// The end of one item of a field's list: the next ',', ':', tab or NUL.
const char* item_end(const char* p) {
  while (*p != ',' && *p != ':' && *p != '\t' && *p != '\0') ++p;
  return p;
}

// A plain decimal at s, digits with or without a fraction ("0.125", "2"), read as
// std::from_chars reads it: returns its end, or null for anything else and for more than 15
// significant digits or 22 decimals. Within those limits the integer of its digits and the
// power of ten are exact doubles, and one division rounds their quotient correctly. Reads up to
// the first character that is not part of the number (the line ends with a NUL).
const char* plain_number(const char* s, double& x) {
  static constexpr std::array<double, 23> pow10{1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                                1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                                1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  if (!is_digit(*s)) return nullptr;
  std::uint64_t n = 0;
  int significant = 0, decimals = 0;
  for (; is_digit(*s); ++s) {
    n = n * 10 + static_cast<std::uint64_t>(*s - '0');
    significant += n != 0;
  }
  if (*s == '.') {
    ++s;
    if (!is_digit(*s)) return nullptr;
    for (; is_digit(*s); ++s, ++decimals) {
      n = n * 10 + static_cast<std::uint64_t>(*s - '0');
      significant += n != 0;
    }
  }
  if (significant > 15 || decimals > 22) return nullptr;
  x = static_cast<double>(n) / pow10[static_cast<std::size_t>(decimals)];
  return s;
}

// Whether [s, e), which ends at a delimiter, is a plain decimal plain_number reads.
bool plain_decimal(const char* s, const char* e, double& x) { return plain_number(s, x) == e; }

// Whether htslib reads [s, e), one item of a Float field, to its end: "." (missing), nothing
// (htslib reads 0), or a number as strtod reads it (hts_str2dbl).
bool real_item_ok(const char* s, const char* e) {
  if (s == e) return true;
  if (*s == '.' && !is_digit(s[1])) return e == s + 1;
  double x = 0;
  if (plain_decimal(s, e, x)) return true;
  thread_local std::string copy;
  copy.assign(s, e);
  char* stop = nullptr;
  std::strtod(copy.c_str(), &stop);
  return stop == copy.c_str() + copy.size();
}

// Whether htslib reads [s, e), one item of an Integer field, to its end: "." or an optional
// sign and digits (none at all included: htslib reads them as missing).
bool integer_item_ok(const char* s, const char* e) {
  if (s < e && *s == '.') return e == s + 1;
  if (s < e && (*s == '+' || *s == '-')) ++s;
  while (s < e && is_digit(*s)) ++s;
  return s == e;
}

// Whether every item of the list field [s, e) passes `ok`.
template <typename F>
bool items_ok(const char* s, const char* e, F&& ok) {
  while (true) {
    const char* end = item_end(s);
    if (end > e) end = e;
    if (!ok(s, end)) return false;
    if (end == e) return true;
    s = end + 1;
  }
}

// A GT field as vcf_parse reads it: values '.' or an unsigned number (which htslib truncates to
// 32 bits: "4294967296" is allele 0), separated by '/' or '|', each stored as
// (allele + 1) << 1 | phased, 0 or 1 for '.'.
struct gt_field {
  int ploidy = 0;
  std::array<std::int32_t, 2> g{};  // the first two values
  bool unreadable = false;          // a value that is neither '.' nor a number
  bool too_large = false;           // an allele number beyond htslib's limit
};

// Parses the GT at p into `out` (and every value into `all` when given) and returns where it
// stops, as htslib's vcf_parse_format_fill5 does.
const char* parse_gt(const char* p, gt_field& out, std::vector<std::int32_t>* all = nullptr) {
  std::uint32_t phased = 0, max = 0;
  bool overflow = false;
  for (;; ++p) {
    std::uint32_t x;
    if (*p == '.') {
      ++p;
      x = phased;
    } else {
      std::uint32_t val;
      if (is_digit(*p) && !is_digit(p[1])) {
        val = static_cast<std::uint32_t>(*p++ - '0');
      } else {
        // hts_str2uint with the 506 bits htslib asks for: 152 digits unchecked (wrapping
        // modulo 2^64), then checked against 2^64 - 1.
        const char* start = p;
        if (*p == '+') ++p;
        std::uint64_t n = 0;
        unsigned fast = 153;
        while (--fast && is_digit(*p)) n = n * 10 + static_cast<std::uint64_t>(*p++ - '0');
        if (fast == 0) {
          constexpr std::uint64_t limit = ~std::uint64_t{0}, d10 = limit / 10,
                                  m10 = limit - 10 * d10;
          while (is_digit(*p)) {
            const auto d = static_cast<std::uint64_t>(*p - '0');
            if (n < d10 || (n == d10 && d <= m10)) {
              n = n * 10 + d;
              ++p;
            } else {
              while (is_digit(*++p)) {
              }
              n = limit;
              overflow = true;
              break;
            }
          }
        }
        out.unreadable |= p == start;
        val = static_cast<std::uint32_t>(n);
      }
      max = std::max(max, val);
      x = ((val + 1) << 1) | phased;
    }
    if (out.ploidy < 2) out.g[static_cast<std::size_t>(out.ploidy)] = static_cast<std::int32_t>(x);
    if (all != nullptr) all->push_back(static_cast<std::int32_t>(x));
    ++out.ploidy;
    phased = *p == '|';
    if (*p != '|' && *p != '/') break;
  }
  if (overflow || max > (std::uint32_t{INT32_MAX} >> 1) - 1) out.too_large = true;
  return p;
}

// A BCF record's FORMAT field as stored: `width` values a sample, of BCF type `type`. Read as
// bcf_get_format_values reads it, without its conversion of the whole array in the serial
// fetch.
struct stored_field {
  std::vector<std::uint8_t> bytes;
  int type = 0;
  int width = 0;  // 0: the record has no such field

  // The field of a record, a copy (false, for a message, when htslib would not read its type).
  bool assign(const bcf_fmt_t* f, std::size_t samples) {
    width = 0;
    if (f == nullptr || f->p == nullptr || f->n <= 0) return true;
    if (f->type != BCF_BT_INT8 && f->type != BCF_BT_INT16 && f->type != BCF_BT_INT32 &&
        f->type != BCF_BT_FLOAT)
      return false;
    type = f->type;
    width = f->n;
    bytes.assign(f->p, f->p + static_cast<std::size_t>(f->size) * samples);
    return true;
  }

  // Sample i's values as integers, as bcf_get_format_values gives them to an int32 array
  // (bcf_int32_missing, and bcf_int32_vector_end from the first end of the vector on), into g
  // (width values); the number of values before the vector's end.
  int integers(std::size_t i, std::int32_t* g) const {
    const std::uint8_t* p = bytes.data() + i * static_cast<std::size_t>(width) * bcf_type_size();
    int k = 0;
    for (; k < width; ++k) {
      std::int32_t v;
      bool missing, end;
      switch (type) {
        case BCF_BT_INT8:
          v = le_to_i8(p + k);
          missing = v == bcf_int8_missing;
          end = v == bcf_int8_vector_end;
          break;
        case BCF_BT_INT16:
          v = le_to_i16(p + 2 * k);
          missing = v == bcf_int16_missing;
          end = v == bcf_int16_vector_end;
          break;
        default:
          v = le_to_i32(p + 4 * k);
          missing = v == bcf_int32_missing;
          end = v == bcf_int32_vector_end;
          break;
      }
      if (end) break;
      g[k] = missing ? bcf_int32_missing : v;
    }
    const int n = k;
    for (; k < width; ++k) g[k] = bcf_int32_vector_end;
    return n;
  }

  // Sample i's values as bcf_get_format_values gives them to a float array, as doubles, NaN
  // for a missing one, up to the vector's end, into `out`.
  void reals(std::size_t i, std::vector<double>& out) const {
    out.clear();
    const std::uint8_t* p = bytes.data() + i * static_cast<std::size_t>(width) * bcf_type_size();
    for (int k = 0; k < width; ++k) {
      float x;
      switch (type) {
        case BCF_BT_FLOAT: {
          const std::uint32_t bits = le_to_u32(p + 4 * k);
          if (bits == bcf_float_vector_end) return;
          if (bits == bcf_float_missing) {
            out.push_back(std::nan(""));
            continue;
          }
          x = le_to_float(p + 4 * k);
          break;
        }
        default: {
          std::int32_t g;
          if (integers_at(p, k, g)) return;
          if (g == bcf_int32_missing) {
            out.push_back(std::nan(""));
            continue;
          }
          x = static_cast<float>(g);
        }
      }
      out.push_back(double{x});
    }
  }

 private:
  std::size_t bcf_type_size() const {
    return type == BCF_BT_INT8 ? 1 : type == BCF_BT_INT16 ? 2 : 4;
  }
  // Value k of an integer vector at p: true at its end.
  bool integers_at(const std::uint8_t* p, int k, std::int32_t& g) const {
    switch (type) {
      case BCF_BT_INT8:
        g = le_to_i8(p + k);
        if (g == bcf_int8_vector_end) return true;
        if (g == bcf_int8_missing) g = bcf_int32_missing;
        return false;
      case BCF_BT_INT16:
        g = le_to_i16(p + 2 * k);
        if (g == bcf_int16_vector_end) return true;
        if (g == bcf_int16_missing) g = bcf_int32_missing;
        return false;
      default:
        g = le_to_i32(p + 4 * k);
        return g == bcf_int32_vector_end;
    }
  }
};

}  // namespace

// A FORMAT column, analysed once (with the header) for the records that share it.
struct vcf_source::format_layout {
  // How htslib reads a field's values: by the type the header declares (String for a key it
  // does not declare), GT by its name.
  enum class syntax_t : std::uint8_t { text, integer, real, genotype };
  std::string format;             // as written
  std::vector<std::string> keys;  // its ':'-separated keys
  std::vector<syntax_t> syntax;   // one per key
  int gt = -1;                    // the key htslib reads genotypes from (Type=String), or -1
  int value = -1;                 // the first key of the dosage field, or -1
};

// One record as fetch hands it to decode: all that decoding needs, shared by the columns of a
// split record, immutable once made.
struct vcf_source::fetched_record {
  std::uint64_t record = 0;  // 1-based record number
  std::uint64_t line = 0;    // VCF text: its line number
  std::string site;          // BCF: "CHROM:POS ID", for messages
  int n_allele = 0;
  // VCF text: the line (NUL-terminated), where its sample columns start, its FORMAT.
  line_buffer text;
  std::size_t samples_at = 0;
  std::shared_ptr<const format_layout> layout;
  // BCF: GT (width 0 without it: no GT in FORMAT, or not declared Type=String) and the
  // dosage field, as stored.
  stored_field gt, dosage;
};

// What fetch returns: a record and the column's ALT allele in it.
struct vcf_source::fetched_column final : column_source::fetched {
  std::shared_ptr<const fetched_record> record;
  int alt = 1;  // 1-based
};

// Turns a fetched record into a column. Reads only the record and the source's constant
// facts (options, samples): decodes run on several threads at once.
class vcf_source::decoder {
 public:
  decoder(const vcf_source& source, const fetched_record& record, int alt)
      : options_(source.options_),
        samples_(source.samples_),
        is_bcf_(source.is_bcf_),
        r_(record),
        alt_(alt) {
    // The calls of the GTs of one or two alleles, by the class of each allele.
    const std::array<std::int32_t, 4> example{2, (alt_ + 1) << 1, 0, (r_.n_allele + 1) << 1};
    for (std::size_t a = 0; a < 4; ++a) {
      haploid_[a] = call_of(1, example[a], 0, r_.n_allele, alt_, options_.half);
      for (std::size_t b = 0; b < 4; ++b)
        diploid_[a * 4 + b] = call_of(2, example[a], example[b], r_.n_allele, alt_, options_.half);
    }
  }

  void genotypes(std::span<std::uint8_t> codes) const {
    std::fill(codes.begin(), codes.end(), std::uint8_t{0});
    if (is_bcf_)
      bcf_genotypes(codes);
    else
      text_columns<false>(codes, {});
  }

  void dosages(std::span<std::uint16_t> out) const {
    if (is_bcf_)
      bcf_dosages(out);
    else
      text_columns<true>({}, out);
  }

 private:
  const vcf_options& options_;
  const std::vector<sample_info>& samples_;
  bool is_bcf_;
  const fetched_record& r_;
  int alt_;

  static constexpr std::array<std::uint8_t, 3> code_of{0b11, 0b10, 0b00};

  // An allele's class: REF (or, split, another ALT allele), the column's ALT allele, missing,
  // or past the record's alleles. The call of a haploid or diploid GT depends on those alone.
  enum : std::uint8_t { ref_class, alt_class, dot_class, past_class };
  std::array<call, 4> haploid_;
  std::array<call, 16> diploid_;  // [4 * class of the first allele + class of the second]

  std::uint8_t class_of(int index) const {
    return index >= r_.n_allele ? past_class : index == alt_ ? alt_class : ref_class;
  }
  // Of a BCF-encoded GT value, as read_call reads it.
  std::uint8_t class_of_value(std::int32_t v) const {
    if (v == bcf_int32_missing || bcf_gt_is_missing(v)) return dot_class;
    return class_of(bcf_gt_allele(v));
  }

  [[noreturn]] void fail(const std::string& what) const { bad(options_.path, what); }

  // "line 12 (record 3, 1:1000 rs1)" for VCF text, "record 3 (1:1000 rs1)" for BCF.
  std::string where() const {
    if (is_bcf_) return "record " + std::to_string(r_.record) + " (" + r_.site + ")";
    // CHROM and ID as written, POS as htslib read it (the counting pass checked the number).
    const auto fields = split(r_.text.view().substr(0, r_.samples_at), '\t');
    std::int64_t pos = 0;
    if (fields.size() > 2)
      std::from_chars(fields[1].data(), fields[1].data() + fields[1].size(), pos);
    return "line " + std::to_string(r_.line) + " (record " + std::to_string(r_.record) + ", " +
           std::string(fields[0]) + ":" + std::to_string(pos) + " " +
           std::string(fields.size() > 2 ? fields[2] : "") + ")";
  }

  std::string where_sample(std::size_t i) const {
    return where() + ", sample " + std::to_string(i + 1) + " '" + samples_[i].iid + "': ";
  }

  // A line htslib's parser refuses (VCF text), as the message of today's vcf_parse failure
  // names it, with the sample and the field at fault.
  error unparsable(const char* why, std::size_t i, const std::string& what) const {
    return bad_input(options_.path, "line " + std::to_string(r_.line) + " (record " +
                                        std::to_string(r_.record) + "): htslib cannot parse it" +
                                        (why != nullptr ? std::string(" (") + why + ")" : "") +
                                        ": sample " + std::to_string(i + 1) + " '" +
                                        samples_[i].iid + "': " + what);
  }

  // The error of sample i's GT call c, whose `width` values are g.
  error bad_call(std::size_t i, const call& c, const std::int32_t* g, int width) const {
    const std::string at = where_sample(i);
    const std::string written = gt_text(g, width);
    switch (c.status) {
      case call_status::half:
        return bad_input(
            options_.path,
            at + "GT '" + written +
                "' is a half-call (one allele missing); half-calls are an error by default, as "
                "in PLINK 2: read them as missing, haploid or reference (--vcf-half-call)");
      case call_status::bad_allele:
        return bad_input(options_.path, at + "GT '" + written +
                                            "' names an allele the record does not have (" +
                                            std::to_string(r_.n_allele - 1) + " ALT)");
      case call_status::polyploid:
        return bad_input(options_.path, at + "GT '" + written + "' has ploidy " +
                                            std::to_string(c.ploidy) +
                                            "; colflow reads haploid and diploid genotypes");
      default:
        return bad_input(options_.path, at + "invalid GT '" + written + "'");
    }
  }

  // Sample i's dosage from its call and its n values of the dosage field (see the header), or
  // nothing when it has no value and a bad GT call (for the caller to report).
  std::optional<std::uint16_t> dosage(std::size_t i, const call& c, const double* v,
                                      std::size_t n) const {
    const bool gp = options_.dosage == dosage_field::gp;
    // PLINK 2 reads a sample as haploid when its GT has one allele ("." included); without
    // GT in FORMAT, as diploid.
    const bool haploid = c.ploidy == 1;
    const std::size_t index =
        !gp && options_.split_multiallelic ? static_cast<std::size_t>(alt_ - 1) : 0;
    if (n <= index || std::isnan(v[index])) {
      // No value: the GT call's dosage, as PLINK 2 does.
      if (c.status == call_status::ok) return static_cast<std::uint16_t>(c.alt_copies * dosage_one);
      if (c.status == call_status::missing) return dosage_missing;
      return std::nullopt;
    }
    return gp ? gp_dosage(i, v, n, haploid) : ds_dosage(i, v[index], haploid);
  }

  // PLINK 2: x < 0 is refused, a haploid DS doubled, then x > 2 refused.
  std::uint16_t ds_dosage(std::size_t i, double ds, bool haploid) const {
    const double x = haploid ? 2 * ds : ds;
    if (!(ds >= 0) || !(x <= 2))
      fail(where_sample(i) + "DS " + number_text(ds) + " is outside 0.." +
           (haploid ? "1 (a haploid call)" : "2"));
    return fixed_point(x);
  }

  std::uint16_t gp_dosage(std::size_t i, const double* v, std::size_t n, bool haploid) const {
    // The probabilities of the biallelic record: the record's own, or, split, those of the
    // genotypes REF/REF, REF/a, a/a (haploid: REF, a), which bcftools norm -m- keeps.
    const auto n_allele = static_cast<std::size_t>(r_.n_allele);
    const auto a = static_cast<std::size_t>(alt_);
    std::array<double, 3> p{};
    std::size_t m = 0;
    if (n_allele <= 2) {
      m = std::min<std::size_t>(n, 3);
      std::copy(v, v + m, p.begin());
    } else if (n == n_allele) {
      p = {v[0], v[a], 0.0};
      m = 2;
    } else if (n == n_allele * (n_allele + 1) / 2) {
      const std::size_t het = a * (a + 1) / 2;
      p = {v[0], v[het], v[het + a]};
      m = 3;
    } else {
      fail(where_sample(i) + "GP has " + std::to_string(n) + " values, a record of " +
           std::to_string(n_allele) + " alleles has " + std::to_string(n_allele) +
           " (haploid) or " + std::to_string(n_allele * (n_allele + 1) / 2) + " (diploid)");
    }
    const std::size_t needed = haploid ? 2 : 3;
    if (m < needed)
      fail(where_sample(i) + "GP has " + std::to_string(m) + " values, a " +
           (haploid ? "haploid" : "diploid") + " call needs " + std::to_string(needed));
    for (std::size_t k = 0; k < needed; ++k)
      if (!(p[k] >= 0 && p[k] <= 1))
        fail(where_sample(i) + "GP value " + std::to_string(k + 1) + " '" + number_text(p[k]) +
             "' is not a probability within 0..1");
    // PLINK 2's arithmetic, in its order. All zero is missing, without falling back to GT.
    if (haploid) {
      const double denom = p[0] + p[1];
      return denom <= 0 ? dosage_missing : fixed_point(2 * p[1] / denom);
    }
    const double denom = p[0] + p[1] + p[2];
    return denom <= 0 ? dosage_missing : fixed_point((p[1] + 2 * p[2]) / denom);
  }

  // ---- BCF: the FORMAT arrays as stored.

  // Sample i's call; its GT values in g (gt.width of them) when not the quick path's.
  call bcf_call(std::size_t i, std::vector<std::int32_t>& g) const {
    const int width = r_.gt.width;
    if (width == 0) return {};
    if (width == 2 && r_.gt.type == BCF_BT_INT8) {
      // The quick path: two 8-bit values, as BCF stores diploid calls of few alleles.
      const auto a = static_cast<std::int8_t>(r_.gt.bytes[2 * i]);
      const auto b = static_cast<std::int8_t>(r_.gt.bytes[2 * i + 1]);
      const auto value = [](std::int8_t v) -> std::int32_t {
        return v == bcf_int8_missing ? bcf_int32_missing : v;
      };
      if (a != bcf_int8_vector_end && b != bcf_int8_vector_end)
        return diploid_[class_of_value(value(a)) * 4u + class_of_value(value(b))];
      if (a != bcf_int8_vector_end) return haploid_[class_of_value(value(a))];
    }
    g.resize(static_cast<std::size_t>(width));
    const int ploidy = r_.gt.integers(i, g.data());
    if (ploidy == 1) return haploid_[class_of_value(g[0])];
    if (ploidy == 2) return diploid_[class_of_value(g[0]) * 4u + class_of_value(g[1])];
    return read_call(g.data(), width, r_.n_allele, alt_, options_.half);
  }

  void bcf_genotypes(std::span<std::uint8_t> codes) const {
    static thread_local std::vector<std::int32_t> g;
    std::size_t i = 0;
    if (r_.gt.width == 2 && r_.gt.type == BCF_BT_INT8) {
      // Two 8-bit values a sample: the codes of diploid calls by the classes of the values,
      // the other samples by the loop below (from the first one).
      std::array<std::uint8_t, 256> class_of_byte;
      for (int v = -128; v < 128; ++v)
        class_of_byte[static_cast<std::uint8_t>(v)] =
            v == bcf_int8_vector_end
                ? 4
                : class_of_value(v == bcf_int8_missing ? bcf_int32_missing : v);
      std::array<std::uint8_t, 16> code;
      for (std::size_t k = 0; k < 16; ++k) {
        const call& c = diploid_[k];
        code[k] = c.status == call_status::ok ? code_of[static_cast<std::size_t>(c.alt_copies)]
                  : c.status == call_status::missing ? 0b01
                                                     : 0xff;
      }
      const std::uint8_t* p = r_.gt.bytes.data();
      for (; i < samples_.size(); ++i) {
        const std::uint8_t a = class_of_byte[p[2 * i]], b = class_of_byte[p[2 * i + 1]];
        if ((a | b) > 3) break;  // a vector's end: haploid, or no GT
        const std::uint8_t c = code[a * 4u + b];
        if (c == 0xff) break;
        codes[i / 4] |= static_cast<std::uint8_t>(c << (2 * (i % 4)));
      }
    }
    for (; i < samples_.size(); ++i) {
      const call c = bcf_call(i, g);
      std::uint8_t code = 0b01;
      if (c.status == call_status::ok)
        code = code_of[static_cast<std::size_t>(c.alt_copies)];
      else if (c.status != call_status::missing)
        throw bad_gt_call(i, c);
      codes[i / 4] |= static_cast<std::uint8_t>(code << (2 * (i % 4)));
    }
  }

  void bcf_dosages(std::span<std::uint16_t> out) const {
    static thread_local std::vector<std::int32_t> g;
    static thread_local std::vector<double> values;
    values.clear();
    const bool one_float = r_.dosage.width == 1 && r_.dosage.type == BCF_BT_FLOAT;
    for (std::size_t i = 0; i < samples_.size(); ++i) {
      const call c = bcf_call(i, g);
      double x = 0;
      const double* v = values.data();
      std::size_t n = 0;
      if (one_float) {
        // The quick path: one float a sample (DS of a biallelic record).
        const std::uint8_t* p = r_.dosage.bytes.data() + 4 * i;
        const std::uint32_t bits = le_to_u32(p);
        if (bits != bcf_float_vector_end) {
          x = bits == bcf_float_missing ? std::nan("") : double{le_to_float(p)};
          v = &x;
          n = 1;
        }
      } else if (r_.dosage.width > 0) {
        r_.dosage.reals(i, values);
        v = values.data();
        n = values.size();
      }
      const std::optional<std::uint16_t> d = dosage(i, c, v, n);
      if (!d) throw bad_gt_call(i, c);
      out[i] = *d;
    }
  }

  // The error of sample i's bad GT call c (BCF).
  error bad_gt_call(std::size_t i, const call& c) const {
    std::vector<std::int32_t> g(static_cast<std::size_t>(r_.gt.width));
    r_.gt.integers(i, g.data());
    return bad_call(i, c, g.data(), r_.gt.width);
  }

  // ---- VCF text: the sample columns parsed from the line.
  //
  // The problems a line can have rank as they did when htslib parsed the whole line first:
  // (0) a sample with more fields than FORMAT has keys, or a wrong number of sample columns,
  // then (1) a field htslib cannot read (GT, Integer and Float fields), in sample order, then
  // (2) a dosage value that is not a number, then (3) what the values mean (a half-call, a DS
  // outside 0..2, ...). The first problem of the best rank is reported.

  template <bool Dosages>
  void text_columns(std::span<std::uint8_t> codes, std::span<std::uint16_t> out) const {
    using syntax = format_layout::syntax_t;
    const format_layout& f = *r_.layout;
    const char* p = r_.text.s.s + r_.samples_at;
    const char* const end = r_.text.s.s + r_.text.s.l;
    const std::size_t n = samples_.size(), keys = f.syntax.size();
    const bool has_gt = f.gt >= 0;
    const auto gt_key = static_cast<std::size_t>(f.gt);
    const auto value_key = Dosages && f.value >= 0 ? static_cast<std::size_t>(f.value) : keys;
    const half_call half = options_.half;
    static thread_local std::vector<double> sample_values;
    std::vector<double>& values = sample_values;  // a sample's values of the dosage field
    const auto ends_field = [end](const char* q) { return q == end || *q == ':' || *q == '\t'; };

    // The classes of the single-digit alleles of GTs such as "0/1", "1", "./." (the quick
    // path), 10 for '.'.
    std::array<std::uint8_t, 11> digit_class{};
    for (int a = 0; a < 10; ++a) digit_class[static_cast<std::size_t>(a)] = class_of(a);
    digit_class[10] = dot_class;
    const auto allele_index = [](char c) -> int {
      if (is_digit(c)) return c - '0';
      return c == '.' ? 10 : -1;
    };

    int rank = 4;  // of `problem`; 4: none
    std::optional<error> problem;
    const auto report = [&](int r, error&& e) {
      if (r < rank) {
        rank = r;
        problem = std::move(e);
      }
    };
    // Rank 0: thrown at once, nothing outranks the first.
    const auto too_many_fields = [&](std::size_t i, std::size_t fields) {
      throw unparsable("wrong number of columns", i,
                       std::to_string(fields) + " ':'-separated fields, FORMAT " + shown(f.format) +
                           " has " + std::to_string(keys));
    };
    // The rest of sample i, from p, whose field k it is: only its fields are counted.
    const auto count_rest = [&](std::size_t i, std::size_t k) {
      std::size_t fields = k + 1;
      for (; p < end && *p != '\t'; ++p) fields += *p == ':';
      if (fields > keys) too_many_fields(i, fields);
    };

    std::size_t i = 0;
    if constexpr (!Dosages) {
      if (keys == 1 && has_gt) {
        // FORMAT GT: the samples whose GT is "a/b", "a|b" or "a" of single-digit alleles or '.'
        // and a good call are coded here, the others by the loop below (from the first one).
        std::array<std::uint8_t, 11 * 11> diploid_code;
        std::array<std::uint8_t, 11> haploid_code;
        const auto code_of_call = [](const call& c) -> std::uint8_t {
          if (c.status == call_status::ok) return code_of[static_cast<std::size_t>(c.alt_copies)];
          return c.status == call_status::missing ? 0b01 : 0xff;
        };
        for (std::size_t a = 0; a < 11; ++a) {
          haploid_code[a] = code_of_call(haploid_[digit_class[a]]);
          for (std::size_t b = 0; b < 11; ++b)
            diploid_code[a * 11 + b] = code_of_call(diploid_[digit_class[a] * 4u + digit_class[b]]);
        }
        for (; i < n && p < end; ++i) {
          const int a = allele_index(p[0]);
          if (a < 0) break;
          std::uint8_t code;
          if (p[1] == '/' || p[1] == '|') {
            const int b = allele_index(p[2]);
            if (b < 0 || !(p[3] == '\t' || p + 3 == end)) break;
            code = diploid_code[static_cast<std::size_t>(a * 11 + b)];
            if (code == 0xff) break;
            p += 4;
          } else {
            if (!(p[1] == '\t' || p + 1 == end)) break;
            code = haploid_code[static_cast<std::size_t>(a)];
            if (code == 0xff) break;
            p += 2;
          }
          codes[i / 4] |= static_cast<std::uint8_t>(code << (2 * (i % 4)));
        }
      }
    } else {
      const bool ds_only = keys == 1 && f.value == 0;
      const bool gt_ds = keys == 2 && f.gt == 0 && f.value == 1;
      if (options_.dosage == dosage_field::ds && !options_.split_multiallelic &&
          (ds_only || gt_ds)) {
        // FORMAT DS or GT:DS: the samples whose GT (when there) is as in the genotype loop, and
        // whose DS is '.', a plain decimal within range or absent, are read here, the others by
        // the loop below (from the first one).
        const auto gt_dosage = [](const call& c) -> std::uint32_t {
          if (c.status == call_status::ok)
            return static_cast<std::uint32_t>(c.alt_copies * dosage_one);
          return c.status == call_status::missing ? dosage_missing : 0x10000;
        };
        for (; i < n && p < end; ++i) {
          const char* q = p;
          call c;  // none without GT (diploid)
          if (gt_ds) {
            const int a = allele_index(q[0]);
            if (a < 0) break;
            if (q[1] == '/' || q[1] == '|') {
              const int b = allele_index(q[2]);
              if (b < 0) break;
              c = diploid_[digit_class[static_cast<std::size_t>(a)] * 4u +
                           digit_class[static_cast<std::size_t>(b)]];
              q += 3;
            } else {
              c = haploid_[digit_class[static_cast<std::size_t>(a)]];
              q += 1;
            }
            if (q == end || *q == '\t') {  // no DS: the call's dosage
              const std::uint32_t d = gt_dosage(c);
              if (d > 0xffff) break;
              out[i] = static_cast<std::uint16_t>(d);
              p = q + 1;
              continue;
            }
            if (*q != ':') break;
            ++q;
          }
          double x = 0;
          if (q[0] == '.' && (q + 1 == end || q[1] == '\t')) {
            // A missing DS: the call's dosage.
            const std::uint32_t d = gt_dosage(c);
            if (d > 0xffff) break;
            out[i] = static_cast<std::uint16_t>(d);
            p = q + 2;
            continue;
          }
          const char* stop = plain_number(q, x);
          if (stop == nullptr || !(stop == end || *stop == '\t')) break;
          // PLINK 2: a haploid DS doubled, then refused outside 0..2 (as ds_dosage).
          const double y = c.ploidy == 1 ? 2 * x : x;
          if (!(y <= 2)) break;
          out[i] = fixed_point(y);
          p = stop + 1;
        }
      }
    }
    for (; i < n; ++i) {
      if (p > end)
        throw unparsable("wrong number of columns", i,
                         "missing: the line has " + std::to_string(i) +
                             " sample columns (did the file change?)");
      const char* const sample = p;
      if (p == end && i + 1 == n) {
        // A line ending in a tab: htslib counts one sample too few (and complains after
        // reading the others).
        report(1, unparsable("wrong number of columns", i, "empty, the line ends with a tab"));
        ++p;
        continue;
      }
      if (rank <= 1) {
        // Only a sample with too many fields can outrank the problem found.
        count_rest(i, 0);
        ++p;
        continue;
      }
      call c;  // the sample's call, when GT was read
      bool gt_read = false;
      if constexpr (Dosages) values.clear();
      const char* value_at = nullptr;  // the dosage field, when not read yet
      bool value_read = false;
      for (std::size_t k = 0;;) {
        const char* const start = p;
        bool bad_field = false;
        switch (f.syntax[k]) {
          case syntax::genotype: {
            if (k == gt_key) {
              // The quick path: "a/b", "a|b" or "a" of single-digit alleles or '.'.
              const int a = allele_index(p[0]);
              if (a >= 0) {
                if (p[1] == '/' || p[1] == '|') {
                  const int b = allele_index(p[2]);
                  if (b >= 0 && ends_field(p + 3)) {
                    c = diploid_[digit_class[static_cast<std::size_t>(a)] * 4u +
                                 digit_class[static_cast<std::size_t>(b)]];
                    gt_read = true;
                    p += 3;
                    break;
                  }
                } else if (ends_field(p + 1)) {
                  c = haploid_[digit_class[static_cast<std::size_t>(a)]];
                  gt_read = true;
                  p += 1;
                  break;
                }
              }
            }
            gt_field g;
            p = parse_gt(p, g);
            if (g.unreadable || g.too_large) {
              report(1, unparsable(nullptr, i,
                                   "GT " + shown(std::string_view(start, field_end(start))) +
                                       (g.too_large ? " has an allele number beyond htslib's limit"
                                                    : " is not alleles ('.' or a number) "
                                                      "separated by / or |")));
              bad_field = true;
            } else if (k == gt_key) {
              c = call_of(g.ploidy, g.g[0], g.g[1], r_.n_allele, alt_, half);
              gt_read = true;
            }
            break;
          }
          case syntax::real: {
            if (Dosages && k == value_key && rank > 2) {
              // The quick path: "." or plain decimals, read and checked at once.
              const std::size_t before = values.size();
              const char* q = p;
              if (*q == '.' && ends_field(q + 1)) {
                // PLINK 2 reads a '.' field as missing; split, each ALT allele's value stands
                // alone, as in the records bcftools norm -m- writes.
                if (r_.n_allele > 2) values.push_back(std::nan(""));
                ++q;
              } else {
                double x = 0;
                while ((q = plain_number(q, x)) != nullptr) {
                  values.push_back(x);
                  if (*q != ',') break;
                  ++q;
                }
              }
              if (q != nullptr && ends_field(q)) {
                value_read = true;
                p = q;
                break;
              }
              values.resize(before);
            }
            p = field_end(p);
            if (!items_ok(start, p, real_item_ok)) {
              report(1, unparsable("an invalid character", i,
                                   f.keys[k] + " " + shown(std::string_view(start, p))));
              bad_field = true;
            } else if (k == value_key) {
              value_at = start;
            }
            break;
          }
          case syntax::integer:
            p = field_end(p);
            if (!items_ok(start, p, integer_item_ok)) {
              report(1, unparsable("an invalid character", i,
                                   f.keys[k] + " " + shown(std::string_view(start, p))));
              bad_field = true;
            }
            break;
          case syntax::text:
            p = field_end(p);
            break;
        }
        if (bad_field) {
          p = start;  // the field holds no ':'
          count_rest(i, k);
          break;
        }
        if (p == end || *p == '\t') break;
        if (*p == ':') {
          ++p;
          if (++k == keys) count_rest(i, k);  // throws: one field more than the keys
          // A ':' that ends the line ends the sample: htslib reads no empty field after it.
          if (p == end) break;
          continue;
        }
        // A character where the field should end (a NUL byte among them).
        const char* stop = *p == '\0' ? p + 1 : field_end(p);
        report(1, unparsable("an invalid character", i,
                             (f.keys[k].empty() ? std::string("a field") : f.keys[k]) + " " +
                                 shown(std::string_view(start, stop))));
        count_rest(i, k);
        break;
      }
      ++p;  // past the tab (or the line's end)
      if (rank <= 1) continue;

      // The dosage field's values, as they were parsed from the line (rank 2: not a number).
      if constexpr (Dosages) {
        if (!value_read && value_at != nullptr && rank > 2 &&
            !text_values(value_at, i, values, report))
          continue;
      }
      if (rank <= 3) continue;

      // What the values mean (rank 3). A GT that a sample lacks is '.', as htslib fills it in
      // (haploid, missing).
      if (has_gt && !gt_read) c = call_of(1, bcf_int32_missing, 0, r_.n_allele, alt_, half);
      if constexpr (Dosages) {
        try {
          const std::optional<std::uint16_t> d = dosage(i, c, values.data(), values.size());
          if (d)
            out[i] = *d;
          else
            report(3, call_error(sample, i, c));
        } catch (const error& e) {
          report(3, error(e));
        }
      } else {
        std::uint8_t code = 0b01;
        if (c.status == call_status::ok)
          code = code_of[static_cast<std::size_t>(c.alt_copies)];
        else if (c.status != call_status::missing)
          report(3, call_error(sample, i, c));
        codes[i / 4] |= static_cast<std::uint8_t>(code << (2 * (i % 4)));
      }
    }
    if (p <= end)
      throw unparsable("wrong number of columns", n - 1,
                       "more sample columns follow than the header names (did the file change?)");
    if (problem) throw *problem;
    if (!Dosages && !has_gt) fail(where() + ": no GT field in FORMAT (did the file change?)");
  }

  // The error of a bad GT call of sample i, whose columns start at `sample`.
  error call_error(const char* sample, std::size_t i, const call& c) const {
    const format_layout& f = *r_.layout;
    const char* p = sample;
    for (int k = 0; k < f.gt; ++k) p = field_end(p) + 1;
    std::vector<std::int32_t> all;
    gt_field g;
    parse_gt(p, g, &all);
    return bad_call(i, c, all.data(), static_cast<int>(all.size()));
  }

  // The values of the dosage field at `s`, sample i's, parsed as PLINK 2 reads them: false,
  // with a problem reported, when one is not a number.
  template <typename Report>
  bool text_values(const char* s, std::size_t i, std::vector<double>& values,
                   Report& report) const {
    const char* const e = field_end(s);
    // PLINK 2 reads '?' or a '.' not followed by a digit as a missing field. Split, each ALT
    // allele's value stands alone, as in the records bcftools norm -m- writes.
    if (s == e || *s == '?' || (*s == '.' && (e - s == 1 || !is_digit(s[1])) && r_.n_allele <= 2))
      return true;
    while (true) {
      const char* item = s;
      const char* stop = item_end(s);
      if (stop > e) stop = e;
      double x = 0;
      if (stop - item == 1 && *item == '.') {
        x = std::nan("");
      } else {
        if (item < stop && *item == '+') ++item;
        if (!plain_decimal(item, stop, x)) {
          const auto [ptr, ec] = std::from_chars(item, stop, x);
          if (ec != std::errc() || ptr != stop) {
            report(2, bad_input(options_.path, where_sample(i) + field_name(options_.dosage) +
                                                   " value '" + std::string(item, stop) +
                                                   "' is not a number"));
            return false;
          }
        }
      }
      values.push_back(x);
      if (stop == e) return true;
      s = stop + 1;
    }
  }
};

// The second, streaming pass: the open file and the current record.
struct vcf_source::state {
  const vcf_options* options = nullptr;
  int samples = 0;
  std::uint64_t columns = 0, records = 0;
  bool is_bcf = false;

  file_ptr file;
  header_ptr header;
  record_ptr record;
  line_buffer line;                  // VCF text: the current line as read
  line_buffer site;                  // the part of it htslib parses (vcf_parse cuts it up)
  std::uint64_t record_index = 0;    // 1-based number of the current record; 0 before the first
  std::uint64_t line_number = 0;     // VCF text: the current record's line
  std::uint64_t first_column = 0;    // the current record's first column
  std::uint64_t record_columns = 0;  // its number of columns
  std::size_t samples_at = 0;        // VCF text: where the line's sample columns start
  std::shared_ptr<const format_layout> layout;                // VCF text: the record's FORMAT
  std::vector<std::shared_ptr<const format_layout>> layouts;  // the FORMATs seen lately
  std::shared_ptr<const fetched_record> fetched;              // the current record, fetched
  [[noreturn]] void fail(const std::string& what) const { bad(options->path, what); }

  // "line 12 (record 3, 1:1000 rs1)" for VCF text, "record 3 (1:1000 rs1)" for BCF.
  std::string site_text() const {
    const bcf1_t* rec = record.get();
    return std::string(bcf_seqname_safe(header.get(), rec)) + ":" + std::to_string(rec->pos + 1) +
           " " + rec->d.id;
  }
  std::string where() const {
    if (is_bcf) return "record " + std::to_string(record_index) + " (" + site_text() + ")";
    return "line " + std::to_string(line_number) + " (record " + std::to_string(record_index) +
           ", " + site_text() + ")";
  }

  // Makes the record holding column j current. The columns are those the counting pass found;
  // a file that changed since is an error rather than a wrong column.
  void seek(std::uint64_t j) {
    if (j >= columns)
      throw error(errc::invalid_argument, "vcf_source: column " + std::to_string(j) +
                                              " is past the last column " +
                                              std::to_string(columns - 1));
    if (!file) {
      file_ptr f = open_input(*options);
      header_ptr h(bcf_hdr_read(f.get()));
      if (!h || bcf_hdr_nsamples(h.get()) != samples)
        fail("the header changed since the file was opened");
      record.reset(bcf_init());
      header = std::move(h);
      file = std::move(f);
    }
    if (record_index > 0 && j < first_column)
      throw error(errc::invalid_argument,
                  "vcf_source: column " + std::to_string(j) + " asked for after column " +
                      std::to_string(first_column) +
                      "; the file is streamed, columns must be read in increasing order");
    while (record_index == 0 || j >= first_column + record_columns) advance();
  }

  void advance() {
    first_column += record_columns;
    ++record_index;
    fetched.reset();
    // BCF is read a record at a time. VCF text is read a line at a time: htslib parses the
    // fixed fields (and, once for each new FORMAT, the FORMAT), the decoder the samples.
    int ret;
    if (is_bcf) {
      ret = bcf_read(file.get(), header.get(), record.get());
    } else {
      ret = read_line(file.get(), &line.s);
      if (ret >= 0) {
        line_number = static_cast<std::uint64_t>(file->lineno);
        ret = parse_site();
      }
    }
    if (ret == -1)
      fail("the file ended at record " + std::to_string(record_index) +
           ", the first reading found " + std::to_string(records) +
           " records (did the file change?)");
    if (ret < -1 || (record->errcode & fatal_record_errors)) {
      const std::string at = is_bcf ? "record " + std::to_string(record_index)
                                    : "line " + std::to_string(line_number) + " (record " +
                                          std::to_string(record_index) + ")";
      const std::string why = record_error_text(record->errcode);
      fail(at + ": htslib cannot parse it" + (why.empty() ? "" : " (" + why + ")"));
    }
    bcf_unpack(record.get(), BCF_UN_STR);
    const int alts = std::max(record->n_allele - 1, 0);
    if (alts > 1 && !options->split_multiallelic)
      fail(where() + ": has " + std::to_string(alts) + " ALT alleles (did the file change?)");
    record_columns = options->split_multiallelic ? std::max(alts, 1) : 1;
    if (first_column + record_columns > columns)
      fail(where() + ": more columns than the first reading found (did the file change?)");
  }

  // VCF text: hands CHROM..INFO to vcf_parse (with FORMAT and a '.' for every sample when the
  // FORMAT is new: htslib checks it, defines its undeclared keys, and the layout is made), and
  // finds the sample columns. Returns vcf_parse's result.
  int parse_site() {
    const std::string_view text = line.view();
    std::size_t info_end = std::string_view::npos, format_end = std::string_view::npos;
    for (std::size_t tabs = 0, at = 0; tabs < 9; ++tabs, ++at) {
      at = text.find('\t', at);
      if (at == std::string_view::npos) break;
      (tabs == 7 ? info_end : format_end) = at;
    }
    if (info_end == std::string_view::npos || format_end == std::string_view::npos ||
        format_end < info_end)
      fail("line " + std::to_string(line_number) + " (record " + std::to_string(record_index) +
           "): no sample columns, the first reading found some (did the file change?)");
    samples_at = format_end + 1;
    // htslib would end the line at a NUL byte, as the decoder refuses one in the samples.
    if (text.substr(0, format_end).find('\0') != std::string_view::npos)
      fail("line " + std::to_string(line_number) + " (record " + std::to_string(record_index) +
           "): htslib cannot parse it (an invalid character): a NUL byte in CHROM..FORMAT");
    const std::string_view format = text.substr(info_end + 1, format_end - info_end - 1);
    layout.reset();
    for (const auto& l : layouts)
      if (l->format == format) layout = l;
    ks_clear(&site.s);
    if (layout) {
      kputsn(text.data(), info_end, &site.s);
    } else {
      kputsn(text.data(), format_end, &site.s);
      for (int i = 0; i < samples; ++i) kputsn("\t.", 2, &site.s);
    }
    if (vcf_parse(&site.s, header.get(), record.get()) < 0) return -2;
    if (!layout && !(record->errcode & fatal_record_errors)) {
      layout = make_layout(format);
      if (layouts.size() == 16) layouts.erase(layouts.begin());
      layouts.push_back(layout);
    }
    return 0;
  }

  std::shared_ptr<const format_layout> make_layout(std::string_view format) const {
    auto l = std::make_shared<format_layout>();
    l->format = std::string(format);
    const char* value_key =
        options->dosage == dosage_field::none ? nullptr : field_name(options->dosage);
    for (std::string_view key : split(format, ':')) {
      const std::string k(key);
      const int id = bcf_hdr_id2int(header.get(), BCF_DT_ID, k.c_str());
      const int type = id >= 0 && bcf_hdr_idinfo_exists(header.get(), BCF_HL_FMT, id)
                           ? bcf_hdr_id2type(header.get(), BCF_HL_FMT, id)
                           : BCF_HT_STR;
      const int index = static_cast<int>(l->keys.size());
      format_layout::syntax_t s = format_layout::syntax_t::text;
      if (type == BCF_HT_INT)
        s = format_layout::syntax_t::integer;
      else if (type == BCF_HT_REAL)
        s = format_layout::syntax_t::real;
      else if (k == "GT")
        s = format_layout::syntax_t::genotype;
      if (s == format_layout::syntax_t::genotype && l->gt < 0) l->gt = index;
      if (value_key != nullptr && k == value_key && l->value < 0) l->value = index;
      l->keys.push_back(k);
      l->syntax.push_back(s);
    }
    return l;
  }

  // The current record as decode needs it, made once for all its columns.
  const std::shared_ptr<const fetched_record>& fetch() {
    if (fetched) return fetched;
    auto f = std::make_shared<fetched_record>();
    f->record = record_index;
    f->line = line_number;
    f->n_allele = record->n_allele;
    if (!is_bcf) {
      // A copy of the line: fetch reads the next one into the same buffer.
      if (kputsn(line.s.s, line.s.l, &f->text.s) < 0) throw std::bad_alloc();
      f->samples_at = samples_at;
      f->layout = layout;
    } else {
      // BCF: GT and the dosage field as stored, found here (with the header), read in decode,
      // as bcf_get_genotypes and bcf_get_format_float read them.
      f->site = site_text();
      const auto n = static_cast<std::size_t>(samples);
      const auto field = [&](const char* key) -> const bcf_fmt_t* {
        const int id = bcf_hdr_id2int(header.get(), BCF_DT_ID, key);
        if (!bcf_hdr_idinfo_exists(header.get(), BCF_HL_FMT, id)) return nullptr;
        // GT is read when the header declares it Type=String (htslib's rule), the dosage field
        // is Type=Float (the constructor checked).
        if (std::strcmp(key, "GT") == 0 &&
            bcf_hdr_id2type(header.get(), BCF_HL_FMT, id) != BCF_HT_STR)
          return nullptr;
        return bcf_get_fmt_id(record.get(), id);
      };
      if (!f->gt.assign(field("GT"), n))
        fail(where() + ": htslib cannot read its FORMAT field GT (stored as BCF type " +
             std::to_string(field("GT")->type) + ")");
      if (options->dosage == dosage_field::none && f->gt.width == 0)
        fail(where() + ": no GT field in FORMAT (did the file change?)");
      if (options->dosage != dosage_field::none) {
        const char* key = field_name(options->dosage);
        if (!f->dosage.assign(field(key), n))
          fail(where() + ": htslib cannot read its FORMAT field " + key);
      }
    }
    fetched = std::move(f);
    return fetched;
  }
};

vcf_source::vcf_source(const vcf_options& options)
    : options_(options), state_(std::make_unique<state>()) {
  const quiet_htslib quiet;
  const std::filesystem::path& path = options_.path;
  file_ptr file = open_input(options_);
  is_bcf_ = hts_get_format(file.get())->format == bcf;
  header_ptr header(bcf_hdr_read(file.get()));
  if (!header) bad(path, "cannot read the VCF header" + header_problem(path));
  const int n = bcf_hdr_nsamples(header.get());
  if (n <= 0) bad(path, "no samples: the #CHROM line names no sample column after FORMAT");
  samples_.reserve(static_cast<std::size_t>(n));
  std::unordered_map<std::string_view, int> seen;
  for (int i = 0; i < n; ++i) {
    const char* name = header->samples[i];
    if (!seen.emplace(name, i).second)
      bad(path,
          "sample name '" + std::string(name) + "' appears twice; sample names must be unique");
    samples_.push_back({"0", name, "0", "0", "0", "-9"});
  }
  const dosage_field field = options_.dosage;
  if (field != dosage_field::none) {
    const char* key = field_name(field);
    const int id = bcf_hdr_id2int(header.get(), BCF_DT_ID, key);
    if (!bcf_hdr_idinfo_exists(header.get(), BCF_HL_FMT, id))
      bad(path, std::string("the header declares no FORMAT field ") + key +
                    " (##FORMAT=<ID=" + key + ",...>): the file has no " + key +
                    " dosages (read its GT calls without a dosage field)");
    if (bcf_hdr_id2type(header.get(), BCF_HL_FMT, id) != BCF_HT_REAL)
      bad(path, std::string("FORMAT field ") + key + " is not declared Type=Float");
  }

  // The counting pass: the record structure only, no genotypes parsed.
  const std::uint64_t expected_fields = 9 + static_cast<std::uint64_t>(n);
  const bool split_alleles = options_.split_multiallelic;
  // `where` names the record for a message; it is built only when there is one to write.
  const auto check_record = [&](const auto& where, std::uint64_t alts, bool has_gt, bool has_dosage,
                                std::string_view alt_text) {
    if (alts > 1 && !split_alleles)
      bad(path, where() + ": has " + std::to_string(alts) + " ALT alleles (" +
                    std::string(alt_text) +
                    "); colflow reads biallelic records: add --split-multiallelic (one column "
                    "per ALT allele, as bcftools norm -m- gives)");
    if (field == dosage_field::none && !has_gt)
      bad(path, where() +
                    ": no GT field in FORMAT; colflow reads genotypes from GT (or dosages "
                    "from DS or GP)");
    if (field != dosage_field::none && !has_gt && !has_dosage)
      bad(path, where() + ": neither " + field_name(field) +
                    " nor GT in FORMAT: the record holds no dosage or genotype");
    columns_ += split_alleles ? std::max<std::uint64_t>(alts, 1) : 1;
  };
  if (is_bcf_) {
    record_ptr rec(bcf_init());
    int ret;
    while ((ret = bcf_read(file.get(), header.get(), rec.get())) == 0) {
      ++records_;
      bcf_unpack(rec.get(), BCF_UN_STR);
      const auto where = [&] {
        return "record " + std::to_string(records_) + " (" +
               bcf_seqname_safe(header.get(), rec.get()) + ":" + std::to_string(rec->pos + 1) +
               " " + rec->d.id + ")";
      };
      if (rec->errcode & fatal_record_errors)
        bad(path, where() + ": htslib cannot read it (" + record_error_text(rec->errcode) + ")");
      if (rec->n_sample != static_cast<std::uint32_t>(n))
        bad(path, where() + ": " + std::to_string(rec->n_sample) + " samples, the header names " +
                      std::to_string(n));
      std::string alts;
      for (int a = 1; a < rec->n_allele && rec->n_allele > 2; ++a) {
        if (a > 1) alts += ',';
        alts += rec->d.allele[a];
      }
      const bool has_gt = bcf_get_fmt(header.get(), rec.get(), "GT") != nullptr;
      const bool has_dosage = field != dosage_field::none &&
                              bcf_get_fmt(header.get(), rec.get(), field_name(field)) != nullptr;
      check_record(where, static_cast<std::uint64_t>(std::max(rec->n_allele - 1, 0)), has_gt,
                   has_dosage, alts);
    }
    if (ret < -1)
      bad(path, "record " + std::to_string(records_ + 1) +
                    ": htslib cannot read it (the BCF file is corrupt or truncated)");
  } else {
    line_buffer line;
    int ret;
    while ((ret = read_line(file.get(), &line.s)) >= 0) {
      ++records_;
      const std::string_view text = line.view();
      const auto line_no = [&] { return "line " + std::to_string(file->lineno); };
      if (text.empty())
        bad(path, line_no() + ": empty line (a record has 8 or more tab-separated fields)");
      // The first nine fields; the others are only counted.
      std::array<std::string_view, 9> f;
      std::size_t fields = 0, start = 0;
      while (fields < f.size()) {
        const std::size_t tab = text.find('\t', start);
        f[fields++] = text.substr(start, tab == std::string_view::npos ? tab : tab - start);
        if (tab == std::string_view::npos) {
          start = text.size() + 1;
          break;
        }
        start = tab + 1;
      }
      if (start <= text.size()) fields += 1 + count_tabs(text.substr(start));
      const auto where = [&] {
        return line_no() + " (record " + std::to_string(records_) + ", " + std::string(f[0]) + ":" +
               std::string(f[1]) + " " + std::string(f[2]) + ")";
      };
      if (fields < 8)
        bad(path, where() + ": " + std::to_string(fields) +
                      " tab-separated fields, a record has at least 8 (CHROM POS ID REF ALT QUAL "
                      "FILTER INFO)");
      if (fields != expected_fields)
        bad(path, where() + ": " + std::to_string(fields < 9 ? 0 : fields - 9) +
                      " sample columns, the header names " + std::to_string(n) + " samples");
      std::int64_t pos = 0;
      const auto [end, ec] = std::from_chars(f[1].data(), f[1].data() + f[1].size(), pos);
      if (ec != std::errc() || end != f[1].data() + f[1].size())
        bad(path, where() + ": POS '" + std::string(f[1]) + "' is not an integer");
      const std::uint64_t alts =
          f[4] == "." ? 0
                      : 1 + static_cast<std::uint64_t>(std::count(f[4].begin(), f[4].end(), ','));
      check_record(where, alts, has_key(f[8], "GT"),
                   field != dosage_field::none && has_key(f[8], field_name(field)), f[4]);
    }
    if (ret < -1)
      bad(path, "after line " + std::to_string(file->lineno) +
                    ": htslib cannot read on (the file is corrupt or truncated)");
  }
  if (records_ == 0) bad(path, "no records: the file has a header but no variant");
  state_->options = &options_;
  state_->samples = n;
  state_->columns = columns_;
  state_->records = records_;
  state_->is_bcf = is_bcf_;
}

vcf_source::~vcf_source() {
  const quiet_htslib quiet;
  state_.reset();
}

value_type vcf_source::kind() const {
  return options_.dosage == dosage_field::none ? value_type::genotype : value_type::dosage;
}

std::string vcf_source::description() const {
  std::string d = (is_bcf_ ? "BCF " : "VCF ") + options_.path.string();
  if (options_.dosage != dosage_field::none)
    d += std::string(", dosages from ") + field_name(options_.dosage);
  if (options_.split_multiallelic && columns_ != records_) d += ", multi-allelic records split";
  return d;
}

column_info vcf_source::column(std::uint64_t j) const {
  const quiet_htslib quiet;
  state& s = *state_;
  s.seek(j);
  const bcf1_t* rec = s.record.get();
  const int alt = static_cast<int>(j - s.first_column) + 1;
  return {bcf_seqname_safe(s.header.get(), rec),
          rec->d.id,
          "0",
          std::to_string(rec->pos + 1),
          rec->n_allele > alt ? rec->d.allele[alt] : ".",
          rec->d.allele[0]};
}

std::unique_ptr<column_source::fetched> vcf_source::fetch(std::uint64_t j) {
  const quiet_htslib quiet;
  state& s = *state_;
  s.seek(j);
  auto f = std::make_unique<fetched_column>();
  f->record = s.fetch();
  f->alt = static_cast<int>(j - s.first_column) + 1;
  return f;
}

const vcf_source::fetched_column& vcf_source::column_of(const fetched& raw) {
  const auto* f = dynamic_cast<const fetched_column*>(&raw);
  if (f == nullptr)
    throw error(errc::invalid_argument, "vcf_source: decode of what another source fetched");
  return *f;
}

void vcf_source::decode_genotypes(const fetched& raw, std::span<std::uint8_t> codes) const {
  if (options_.dosage != dosage_field::none)
    throw error(errc::invalid_argument,
                "vcf_source: " + description() + " is a dosage source; read_dosages reads it");
  const std::size_t bytes = genotype_column_bytes(samples_.size());
  if (codes.size() < bytes) throw error(errc::invalid_argument, "vcf_source: bad buffer");
  const fetched_column& f = column_of(raw);
  decoder(*this, *f.record, f.alt).genotypes(codes.first(bytes));
}

void vcf_source::decode_dosages(const fetched& raw, std::span<std::uint16_t> dosages) const {
  if (options_.dosage == dosage_field::none)
    throw error(errc::invalid_argument,
                "vcf_source: " + description() + " is a genotype source; read_genotypes reads it");
  if (dosages.size() != samples_.size())
    throw error(errc::invalid_argument, "vcf_source: bad buffer");
  const fetched_column& f = column_of(raw);
  decoder(*this, *f.record, f.alt).dosages(dosages);
}

void vcf_source::read_genotypes(std::uint64_t j, std::span<std::uint8_t> codes) {
  if (options_.dosage != dosage_field::none)
    throw error(errc::invalid_argument,
                "vcf_source: " + description() + " is a dosage source; read_dosages reads it");
  const std::size_t bytes = genotype_column_bytes(samples_.size());
  if (j >= columns_ || codes.size() < bytes)
    throw error(errc::invalid_argument, "vcf_source: bad column or buffer");
  decode_genotypes(*fetch(j), codes);
}

void vcf_source::read_dosages(std::uint64_t j, std::span<std::uint16_t> dosages) {
  if (options_.dosage == dosage_field::none)
    throw error(errc::invalid_argument,
                "vcf_source: " + description() + " is a genotype source; read_genotypes reads it");
  check_read(j, dosages.size());
  decode_dosages(*fetch(j), dosages);
}

}  // namespace colflow::preprocess
