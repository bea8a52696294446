// What the files of vcf_source share: htslib's handles, the header checks, the counting pass,
// the GT call model, the decoder of one column and the streaming pass. Private to preprocess/
// (no public header includes it); the public interface is colflow/preprocess/vcf_source.hpp.
//
//   vcf_header.cpp        the file and its header: opening, the samples, the dosage field
//   vcf_text_records.cpp  VCF text: lines, the counting pass, the fixed fields for htslib
//   vcf_text_samples.cpp  VCF text: the sample columns of a line, parsed into a column
//   bcf_records.cpp       BCF: the counting pass, the FORMAT arrays as stored
//   vcf_calls.cpp         what a GT call and the dosage field mean, for text and BCF alike
//   vcf_source.cpp        the column_source: construction, the streaming pass, fetch, decode
#pragma once

#include <htslib/hts.h>
#include <htslib/hts_log.h>
#include <htslib/kstring.h>
#include <htslib/vcf.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "colflow/codec/dosage_codec.hpp"
#include "colflow/error.hpp"
#include "colflow/preprocess/vcf_source.hpp"

namespace colflow::preprocess::detail {

using dosage_field = vcf_options::dosage_field;
using half_call = vcf_options::half_call;

inline error bad_input(const std::filesystem::path& file, const std::string& what) {
  return input_error(file, what);
}

[[noreturn]] inline void bad(const std::filesystem::path& file, const std::string& what) {
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

inline const char* field_name(dosage_field f) { return f == dosage_field::gp ? "GP" : "DS"; }

// The fields of s between the separators `sep`, empty ones included.
std::vector<std::string_view> split(std::string_view s, char sep);

// ---- The file and its header (vcf_header.cpp) ---------------------------------------------

// Opens the file and checks that htslib sees VCF or BCF, complete when bgzip-compressed.
file_ptr open_input(const vcf_options& o);

// Reads the header of the file at `path`; bad_input, with the reason where it can be told,
// when htslib refuses it.
header_ptr read_header(htsFile* file, const std::filesystem::path& path);

// The samples the header names, as PLINK 2 makes them (FID "0", IID the name); bad_input when
// there is none or a name appears twice.
std::vector<sample_info> header_samples(const bcf_hdr_t* header, const std::filesystem::path& path);

// With a dosage field: bad_input unless the header declares it Type=Float.
void check_dosage_field(const bcf_hdr_t* header, const vcf_options& o);

// The record errors of htslib that leave the record unusable, as text ("" for none).
std::string record_error_text(int errcode);
inline constexpr int fatal_record_errors =
    BCF_ERR_NCOLS | BCF_ERR_LIMITS | BCF_ERR_CHAR | BCF_ERR_CTG_INVALID | BCF_ERR_TAG_INVALID;

// ---- The counting pass (vcf_text_records.cpp, bcf_records.cpp) ----------------------------

// The records and columns the counting pass found, and its checks of each record.
struct record_count {
  const vcf_options& options;
  std::uint64_t records = 0, columns = 0;

  // Checks a record of `alts` ALT alleles (written `alt_text`) and counts its columns. `where`
  // names the record for a message; it is called only when there is one to write.
  template <typename Where>
  void add(const Where& where, std::uint64_t alts, bool has_gt, bool has_dosage,
           std::string_view alt_text) {
    const std::filesystem::path& path = options.path;
    const dosage_field field = options.dosage;
    if (alts > 1 && !options.split_multiallelic)
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
    columns += options.split_multiallelic ? std::max<std::uint64_t>(alts, 1) : 1;
  }
};

// The counting pass over the records of VCF text (after the header), of `samples` samples.
record_count count_text_records(htsFile* file, const vcf_options& options, int samples);

// The counting pass over the records of a BCF file (after the header).
record_count count_bcf_records(htsFile* file, bcf_hdr_t* header, const vcf_options& options,
                               int samples);

// Reads a line into s as hts_getline does (without its '\n', nor a '\r' before it; counted in
// f->lineno): its length, -1 at the end of the file, < -1 on a read error.
int read_line(htsFile* f, kstring_t* s);

// ---- What a GT call means (vcf_calls.cpp) -------------------------------------------------

// PLINK 2's fixed point: floor(16384 x + 1/2), x within 0..2.
inline std::uint16_t fixed_point(double x) {
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
call call_of(int ploidy, std::int32_t g0, std::int32_t g1, int n_allele, int alt, half_call half);

// ---- A record on its way from fetch to decode ---------------------------------------------

// A BCF record's FORMAT field as stored: `width` values a sample, of BCF type `type`. Read as
// bcf_get_format_values reads it, without its conversion of the whole array in the serial
// fetch. The functions are in bcf_records.cpp.
struct stored_field {
  std::vector<std::uint8_t> bytes;
  int type = 0;
  int width = 0;  // 0: the record has no such field

  // The field of a record, a copy (false, for a message, when htslib would not read its type).
  bool assign(const bcf_fmt_t* f, std::size_t samples);

  // Sample i's values as integers, as bcf_get_format_values gives them to an int32 array
  // (bcf_int32_missing, and bcf_int32_vector_end from the first end of the vector on), into g
  // (width values); the number of values before the vector's end.
  int integers(std::size_t i, std::int32_t* g) const;

  // Sample i's values as bcf_get_format_values gives them to a float array, as doubles, NaN
  // for a missing one, up to the vector's end, into `out`.
  void reals(std::size_t i, std::vector<double>& out) const;

 private:
  std::size_t bcf_type_size() const {
    return type == BCF_BT_INT8 ? 1 : type == BCF_BT_INT16 ? 2 : 4;
  }
  // Value k of an integer vector at p: true at its end.
  bool integers_at(const std::uint8_t* p, int k, std::int32_t& g) const;
};

// A FORMAT column, analysed once (with the header) for the records that share it.
struct format_layout {
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
struct fetched_record {
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

// ---- The decoding of one column -----------------------------------------------------------

// Turns a fetched record into a column. Reads only the record and the source's constant
// facts (options, samples): decodes run on several threads at once. Its shared part (the calls,
// the dosages, the messages) is in vcf_calls.cpp, the reading of BCF arrays in bcf_records.cpp,
// the parsing of a text line's sample columns in vcf_text_samples.cpp.
class column_decoder {
 public:
  column_decoder(const vcf_options& options, const std::vector<sample_info>& samples, bool is_bcf,
                 const fetched_record& record, int alt);

  void genotypes(std::span<std::uint8_t> codes) const;
  void dosages(std::span<std::uint16_t> out) const;

 private:
  class text_samples;  // the sample columns of one VCF text line, as text_columns parses them

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

  // ---- vcf_calls.cpp: the messages, and the dosage of a sample.
  [[noreturn]] void fail(const std::string& what) const;
  std::string where() const;
  std::string where_sample(std::size_t i) const;
  error bad_call(std::size_t i, const call& c, const std::int32_t* g, int width) const;
  std::optional<std::uint16_t> dosage(std::size_t i, const call& c, const double* v,
                                      std::size_t n) const;
  std::uint16_t ds_dosage(std::size_t i, double ds, bool haploid) const;
  std::uint16_t gp_dosage(std::size_t i, const double* v, std::size_t n, bool haploid) const;

  // ---- bcf_records.cpp: the FORMAT arrays as stored.
  call bcf_call(std::size_t i, std::vector<std::int32_t>& g) const;
  std::size_t bcf_diploid_int8_codes(std::span<std::uint8_t> codes) const;
  void bcf_genotypes(std::span<std::uint8_t> codes) const;
  void bcf_dosages(std::span<std::uint16_t> out) const;
  error bad_gt_call(std::size_t i, const call& c) const;

  // ---- vcf_text_samples.cpp: the sample columns parsed from the line.
  void text_genotypes(std::span<std::uint8_t> codes) const;
  void text_dosages(std::span<std::uint16_t> out) const;
  template <bool Dosages>
  void text_columns(std::span<std::uint8_t> codes, std::span<std::uint16_t> out) const;
  error unparsable(const char* why, std::size_t i, const std::string& what) const;
  error call_error(const char* sample, std::size_t i, const call& c) const;
};

// ---- The second, streaming pass -----------------------------------------------------------

// The open file and the current record. seek, advance and fetch are in vcf_source.cpp,
// parse_site and make_layout in vcf_text_records.cpp, fetch_stored_fields in bcf_records.cpp.
struct record_stream {
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

  // "CHROM:POS ID" of the current record, as htslib read it.
  std::string site_text() const;
  // "line 12 (record 3, 1:1000 rs1)" for VCF text, "record 3 (1:1000 rs1)" for BCF.
  std::string where() const;

  // Makes the record holding column j current. The columns are those the counting pass found;
  // a file that changed since is an error rather than a wrong column.
  void seek(std::uint64_t j);
  // Reads the next record and checks it against the counting pass.
  void advance();

  // VCF text: hands CHROM..INFO to vcf_parse (with FORMAT and a '.' for every sample when the
  // FORMAT is new: htslib checks it, defines its undeclared keys, and the layout is made), and
  // finds the sample columns. Returns vcf_parse's result.
  int parse_site();
  std::shared_ptr<const format_layout> make_layout(std::string_view format) const;

  // The current record as decode needs it, made once for all its columns.
  const std::shared_ptr<const fetched_record>& fetch();
  // BCF: GT and the dosage field of the current record, as stored, into f.
  void fetch_stored_fields(fetched_record& f) const;
};

}  // namespace colflow::preprocess::detail
