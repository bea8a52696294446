// VCF and BCF input through htslib (colflow/preprocess/vcf_source.hpp). The values follow
// PLINK 2.00a3.5's VCF import, checked against plink2 itself by
// tests/vcf_source_test.cpp.
#include "colflow/preprocess/vcf_source.hpp"

#include <htslib/bgzf.h>
#include <htslib/hts.h>
#include <htslib/hts_log.h>
#include <htslib/kseq.h>  // KS_SEP_LINE
#include <htslib/kstring.h>
#include <htslib/tbx.h>  // hts_get_bgzfp
#include <htslib/vcf.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include "colflow/codec/dosage_codec.hpp"
#include "colflow/codec/genotype_codec.hpp"
#include "colflow/error.hpp"

namespace colflow::preprocess {
namespace {

using dosage_field = vcf_options::dosage_field;
using half_call = vcf_options::half_call;

[[noreturn]] void bad(const std::filesystem::path& file, const std::string& what) {
  // "name: problem", plus the full path when the name alone does not locate the file.
  const std::string name = file.filename().string();
  throw error(errc::bad_input,
              name + ": " + what + (file.string() == name ? "" : " (" + file.string() + ")"));
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

// An output array of bcf_get_format_* (malloc'ed and grown by htslib).
template <typename T>
struct hts_array {
  T* data = nullptr;
  int capacity = 0;
  hts_array() = default;
  hts_array(const hts_array&) = delete;
  hts_array& operator=(const hts_array&) = delete;
  ~hts_array() { std::free(data); }
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

call read_call(const std::int32_t* g, int width, int n_allele, int alt, half_call half) {
  call c;
  while (c.ploidy < width && g[c.ploidy] != bcf_int32_vector_end) ++c.ploidy;
  if (c.ploidy == 0) return c;  // no GT for this sample: missing
  if (c.ploidy > 2) {
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
  const int a = allele(g[0]), b = c.ploidy == 2 ? allele(g[1]) : a;
  if (a == -2 || b == -2) {
    c.status = call_status::bad_allele;
    return c;
  }
  if (a == -1 && b == -1) return c;
  if (a >= 0 && b >= 0) {
    c.status = call_status::ok;
    c.alt_copies = c.ploidy == 1 ? 2 * a : a + b;  // a haploid call counts as homozygous
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

}  // namespace

// The second, streaming pass: the open file and the current record, decoded on demand.
struct vcf_source::state {
  const vcf_options* options = nullptr;
  int samples = 0;
  std::uint64_t columns = 0, records = 0;
  const std::vector<sample_info>* sample_list = nullptr;
  bool is_bcf = false;

  file_ptr file;
  header_ptr header;
  record_ptr record;
  line_buffer line;                  // VCF text: the current line, which vcf_parse cuts up
  std::string text;                  // VCF text with a dosage field: the line as read
  std::uint64_t record_index = 0;    // 1-based number of the current record; 0 before the first
  std::uint64_t first_column = 0;    // the current record's first column
  std::uint64_t record_columns = 0;  // its number of columns
  bool decoded = false;
  hts_array<std::int32_t> gt;
  int gt_width = 0;  // GT values per sample, 0 without GT
  // The dosage field's values, sample i's at values[offset[i]], count[i] of them (0 when the
  // sample has none); NaN for a missing value.
  std::vector<double> values;
  std::vector<std::uint32_t> offset, count;
  hts_array<float> floats;

  [[noreturn]] void fail(const std::string& what) const { bad(options->path, what); }

  // "line 12 (record 3, 1:1000 rs1)" for VCF text, "record 3 (1:1000 rs1)" for BCF.
  std::string where() const {
    const bcf1_t* rec = record.get();
    const std::string id = std::string(bcf_seqname_safe(header.get(), rec)) + ":" +
                           std::to_string(rec->pos + 1) + " " + rec->d.id;
    if (is_bcf) return "record " + std::to_string(record_index) + " (" + id + ")";
    return "line " + std::to_string(file->lineno) + " (record " + std::to_string(record_index) +
           ", " + id + ")";
  }

  std::string where_sample(std::size_t i) const {
    return where() + ", sample " + std::to_string(i + 1) + " '" + (*sample_list)[i].iid + "': ";
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
    // VCF text is read a line at a time and handed to htslib's parser (what bcf_read does),
    // keeping a copy of the line when dosages are parsed from it.
    int ret;
    if (is_bcf) {
      ret = bcf_read(file.get(), header.get(), record.get());
    } else {
      ret = hts_getline(file.get(), KS_SEP_LINE, &line.s);
      if (ret >= 0) {
        if (options->dosage != dosage_field::none) text.assign(line.view());
        ret = vcf_parse(&line.s, header.get(), record.get());
        if (ret < 0) ret = -2;
      }
    }
    if (ret == -1)
      fail("the file ended at record " + std::to_string(record_index) +
           ", the first reading found " + std::to_string(records) +
           " records (did the file change?)");
    if (ret < -1 || (record->errcode & fatal_record_errors)) {
      const std::string at = is_bcf ? "record " + std::to_string(record_index)
                                    : "line " + std::to_string(file->lineno) + " (record " +
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
    decoded = false;
  }

  // Unpacks GT and the dosage field of the current record, once for all its columns.
  void decode() {
    if (decoded) return;
    const int n = bcf_get_genotypes(header.get(), record.get(), &gt.data, &gt.capacity);
    gt_width = n > 0 ? n / samples : 0;
    if (options->dosage == dosage_field::none && gt_width == 0)
      fail(where() + ": no GT field in FORMAT (did the file change?)");
    if (options->dosage != dosage_field::none) {
      values.clear();
      offset.assign(static_cast<std::size_t>(samples), 0);
      count.assign(static_cast<std::size_t>(samples), 0);
      if (is_bcf)
        decode_floats();
      else
        decode_text();
    }
    decoded = true;
  }

  // BCF: the values as stored, floats, which is what PLINK 2 reads from a BCF file.
  void decode_floats() {
    const char* key = field_name(options->dosage);
    const int m =
        bcf_get_format_float(header.get(), record.get(), key, &floats.data, &floats.capacity);
    if (m == -3) return;  // the record has no such field
    if (m < 0) fail(where() + ": htslib cannot read its FORMAT field " + key);
    const std::size_t width = static_cast<std::size_t>(m / samples);
    for (std::size_t i = 0; i < static_cast<std::size_t>(samples); ++i) {
      const float* v = floats.data + i * width;
      offset[i] = static_cast<std::uint32_t>(values.size());
      std::size_t k = 0;
      for (; k < width && !bcf_float_is_vector_end(v[k]); ++k)
        values.push_back(bcf_float_is_missing(v[k]) ? std::nan("") : double{v[k]});
      count[i] = static_cast<std::uint32_t>(k);
    }
  }

  // VCF text: the values parsed from the line as doubles, as PLINK 2 parses them. htslib keeps
  // 32-bit floats, and a value written with more digits than a float holds could then round to
  // another 1/16384 than PLINK 2's when it lies close to a rounding boundary.
  void decode_text() {
    const std::string_view key = field_name(options->dosage);
    std::string_view rest = text;
    // Skip CHROM..INFO, then find the key's place in FORMAT.
    for (int f = 0; f < 8; ++f) {
      const std::size_t tab = rest.find('\t');
      rest = tab == std::string_view::npos ? std::string_view() : rest.substr(tab + 1);
    }
    const std::size_t format_end = std::min(rest.find('\t'), rest.size());
    const auto keys = split(rest.substr(0, format_end), ':');
    const auto it = std::find(keys.begin(), keys.end(), key);
    if (it == keys.end()) return;
    const std::size_t index = static_cast<std::size_t>(it - keys.begin());
    rest.remove_prefix(std::min(format_end + 1, rest.size()));
    for (std::size_t i = 0; i < static_cast<std::size_t>(samples); ++i) {
      const std::size_t tab = std::min(rest.find('\t'), rest.size());
      std::string_view field = rest.substr(0, tab);
      rest.remove_prefix(std::min(tab + 1, rest.size()));
      offset[i] = static_cast<std::uint32_t>(values.size());
      // The index-th ':'-separated subfield, absent when the sample has fewer.
      bool present = true;
      for (std::size_t k = 0; k < index && present; ++k) {
        const std::size_t colon = field.find(':');
        present = colon != std::string_view::npos;
        if (present) field.remove_prefix(colon + 1);
      }
      if (!present) continue;
      field = field.substr(0, field.find(':'));
      // PLINK 2 reads '?' or a '.' not followed by a digit as a missing field. Split, each
      // ALT allele's value stands alone, as in the records bcftools norm -m- writes.
      if (field.empty() || field[0] == '?' ||
          (field[0] == '.' && (field.size() == 1 || field[1] < '0' || field[1] > '9') &&
           record->n_allele <= 2))
        continue;
      std::uint32_t k = 0;
      for (std::string_view v : split(field, ',')) {
        ++k;
        if (v == ".") {
          values.push_back(std::nan(""));
          continue;
        }
        if (!v.empty() && v[0] == '+') v.remove_prefix(1);
        double x = 0;
        const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
        if (ec != std::errc() || end != v.data() + v.size())
          fail(where_sample(i) + std::string(key) + " value '" + std::string(v) +
               "' is not a number");
        values.push_back(x);
      }
      count[i] = k;
    }
  }

  [[noreturn]] void bad_call(std::size_t i, const call& c) const {
    const std::string at = where_sample(i);
    const std::int32_t* g = gt.data + i * static_cast<std::size_t>(gt_width);
    const std::string written = gt_text(g, gt_width);
    switch (c.status) {
      case call_status::half:
        fail(at + "GT '" + written +
             "' is a half-call (one allele missing); half-calls are an error by default, as in "
             "PLINK 2: read them as missing, haploid or reference (--vcf-half-call)");
      case call_status::bad_allele:
        fail(at + "GT '" + written + "' names an allele the record does not have (" +
             std::to_string(record->n_allele - 1) + " ALT)");
      case call_status::polyploid:
        fail(at + "GT '" + written + "' has ploidy " + std::to_string(c.ploidy) +
             "; colflow reads haploid and diploid genotypes");
      default:
        fail(at + "invalid GT '" + written + "'");
    }
  }

  call sample_call(std::size_t i, int alt) const {
    if (gt_width == 0) return {};
    return read_call(gt.data + i * static_cast<std::size_t>(gt_width), gt_width, record->n_allele,
                     alt, options->half);
  }

  void genotypes(int alt, std::span<std::uint8_t> codes) const {
    static constexpr std::array<std::uint8_t, 3> code_of{0b11, 0b10, 0b00};
    std::fill(codes.begin(), codes.end(), std::uint8_t{0});
    for (std::size_t i = 0; i < static_cast<std::size_t>(samples); ++i) {
      const call c = sample_call(i, alt);
      std::uint8_t code = 0b01;
      if (c.status == call_status::ok)
        code = code_of[static_cast<std::size_t>(c.alt_copies)];
      else if (c.status != call_status::missing)
        bad_call(i, c);
      codes[i / 4] |= static_cast<std::uint8_t>(code << (2 * (i % 4)));
    }
  }

  void dosages(int alt, std::span<std::uint16_t> out) const {
    const bool gp = options->dosage == dosage_field::gp;
    for (std::size_t i = 0; i < static_cast<std::size_t>(samples); ++i) {
      const call c = sample_call(i, alt);
      // PLINK 2 reads a sample as haploid when its GT has one allele ("." included); without
      // GT in FORMAT, as diploid.
      const bool haploid = c.ploidy == 1;
      const double* v = values.data() + offset[i];
      const std::size_t n = count[i];
      const std::size_t index = !gp && options->split_multiallelic ? alt - 1 : 0;
      if (n <= index || std::isnan(v[index])) {
        // No value: the GT call's dosage, as PLINK 2 does.
        if (c.status == call_status::ok)
          out[i] = static_cast<std::uint16_t>(c.alt_copies * dosage_one);
        else if (c.status == call_status::missing)
          out[i] = dosage_missing;
        else
          bad_call(i, c);
        continue;
      }
      out[i] = gp ? gp_dosage(i, v, n, alt, haploid) : ds_dosage(i, v[index], haploid);
    }
  }

  // PLINK 2: x < 0 is refused, a haploid DS doubled, then x > 2 refused.
  std::uint16_t ds_dosage(std::size_t i, double ds, bool haploid) const {
    const double x = haploid ? 2 * ds : ds;
    if (!(ds >= 0) || !(x <= 2))
      fail(where_sample(i) + "DS " + number_text(ds) + " is outside 0.." +
           (haploid ? "1 (a haploid call)" : "2"));
    return fixed_point(x);
  }

  std::uint16_t gp_dosage(std::size_t i, const double* v, std::size_t n, int alt,
                          bool haploid) const {
    // The probabilities of the biallelic record: the record's own, or, split, those of the
    // genotypes REF/REF, REF/a, a/a (haploid: REF, a), which bcftools norm -m- keeps.
    const std::size_t n_allele = static_cast<std::size_t>(record->n_allele);
    const std::size_t a = static_cast<std::size_t>(alt);
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
    while ((ret = hts_getline(file.get(), KS_SEP_LINE, &line.s)) >= 0) {
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
      if (start <= text.size())
        fields += 1 + static_cast<std::size_t>(std::count(
                          text.begin() + static_cast<std::ptrdiff_t>(start), text.end(), '\t'));
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
  state_->sample_list = &samples_;
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

void vcf_source::read_genotypes(std::uint64_t j, std::span<std::uint8_t> codes) {
  if (options_.dosage != dosage_field::none)
    throw error(errc::invalid_argument,
                "vcf_source: " + description() + " is a dosage source; read_dosages reads it");
  const std::size_t bytes = genotype_column_bytes(samples_.size());
  if (j >= columns_ || codes.size() < bytes)
    throw error(errc::invalid_argument, "vcf_source: bad column or buffer");
  const quiet_htslib quiet;
  state& s = *state_;
  s.seek(j);
  s.decode();
  s.genotypes(static_cast<int>(j - s.first_column) + 1, codes.first(bytes));
}

void vcf_source::read_dosages(std::uint64_t j, std::span<std::uint16_t> dosages) {
  if (options_.dosage == dosage_field::none)
    throw error(errc::invalid_argument,
                "vcf_source: " + description() + " is a genotype source; read_genotypes reads it");
  check_read(j, dosages.size());
  const quiet_htslib quiet;
  state& s = *state_;
  s.seek(j);
  s.decode();
  s.dosages(static_cast<int>(j - s.first_column) + 1, dosages);
}

}  // namespace colflow::preprocess
