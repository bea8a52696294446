// The sample columns of a VCF text line for vcf_source: their syntax, checked as htslib checks
// it, and the calls and dosages of one column parsed from them.
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "vcf_reader.hpp"

namespace colflow::preprocess::detail {
namespace {

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

// ---- The syntax of the sample columns ----------------------------------------------------
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

// An allele number of a GT as hts_str2uint reads it with the 506 bits htslib asks for: 152
// digits unchecked (wrapping modulo 2^64), then checked against 2^64 - 1 (`overflow` set, and
// the digits skipped, beyond it). Advances p past it.
std::uint64_t gt_allele_number(const char*& p, bool& overflow) {
  if (*p == '+') ++p;
  std::uint64_t n = 0;
  unsigned fast = 153;
  while (--fast && is_digit(*p)) n = n * 10 + static_cast<std::uint64_t>(*p++ - '0');
  if (fast != 0) return n;
  constexpr std::uint64_t limit = ~std::uint64_t{0}, d10 = limit / 10, m10 = limit - 10 * d10;
  while (is_digit(*p)) {
    const auto d = static_cast<std::uint64_t>(*p - '0');
    if (n < d10 || (n == d10 && d <= m10)) {
      n = n * 10 + d;
      ++p;
    } else {
      while (is_digit(*++p)) {
      }
      overflow = true;
      return limit;
    }
  }
  return n;
}

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
        const char* start = p;
        const std::uint64_t n = gt_allele_number(p, overflow);
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

// A single-digit allele of a GT such as "0/1", "1", "./." (the quick paths): its number, 10
// for '.', -1 for any other character.
int allele_index(char c) {
  if (is_digit(c)) return c - '0';
  return c == '.' ? 10 : -1;
}

// The dosage of a call, for a sample without a DS value (the quick path); above 0xffff for a
// call that is neither good nor missing.
std::uint32_t gt_dosage(const call& c) {
  if (c.status == call_status::ok) return static_cast<std::uint32_t>(c.alt_copies * dosage_one);
  return c.status == call_status::missing ? dosage_missing : 0x10000;
}

}  // namespace

// ---- The sample columns of a line, decoded ----------------------------------------------
//
// The problems a line can have rank as they did when htslib parsed the whole line first:
// (0) a sample with more fields than FORMAT has keys, or a wrong number of sample columns,
// then (1) a field htslib cannot read (GT, Integer and Float fields), in sample order, then
// (2) a dosage value that is not a number, then (3) what the values mean (a half-call, a DS
// outside 0..2, ...). The first problem of the best rank is reported.
//
// text_columns reads a line in three phases: a quick path for the common FORMATs (GT; DS or
// GT:DS) codes the leading samples whose fields are simple, the general path reads the others
// field by field, and the end of the line is checked and the problem found thrown.

// The position in one line's sample columns and the problem of the best rank found so far.
class column_decoder::text_samples {
 public:
  text_samples(const column_decoder& d, bool dosages)
      : d_(d),
        f_(*d.r_.layout),
        p_(d.r_.text.s.s + d.r_.samples_at),
        end_(d.r_.text.s.s + d.r_.text.s.l),
        n_(d.samples_.size()),
        keys_(f_.syntax.size()),
        has_gt_(f_.gt >= 0),
        gt_key_(static_cast<std::size_t>(f_.gt)),
        value_key_(dosages && f_.value >= 0 ? static_cast<std::size_t>(f_.value) : keys_),
        values_(sample_values()) {
    for (int a = 0; a < 10; ++a) digit_class_[static_cast<std::size_t>(a)] = d.class_of(a);
    digit_class_[10] = dot_class;
  }

  std::size_t quick_genotypes(std::span<std::uint8_t> codes);
  std::size_t quick_dosages(std::span<std::uint16_t> out);
  template <bool Dosages>
  void read_sample(std::size_t i, std::span<std::uint8_t> codes, std::span<std::uint16_t> out);
  void finish(bool dosages) const;

 private:
  using syntax = format_layout::syntax_t;

  // What the general path has read of one sample's fields.
  struct sample_state {
    call c;  // the sample's call, when GT was read
    bool gt_read = false;
    const char* value_at = nullptr;  // the dosage field, when not read yet
    bool value_read = false;
  };

  const column_decoder& d_;
  const format_layout& f_;
  const char* p_;
  const char* const end_;
  const std::size_t n_, keys_;
  const bool has_gt_;
  const std::size_t gt_key_, value_key_;
  std::vector<double>& values_;  // a sample's values of the dosage field
  // The classes of the single-digit alleles (allele_index), 10 for '.'.
  std::array<std::uint8_t, 11> digit_class_{};
  int rank_ = 4;  // of problem_; 4: none
  std::optional<error> problem_;

  static std::vector<double>& sample_values() {
    static thread_local std::vector<double> values;
    return values;
  }
  bool ends_field(const char* q) const { return q == end_ || *q == ':' || *q == '\t'; }
  void report(int rank, error&& e) {
    if (rank < rank_) {
      rank_ = rank;
      problem_ = std::move(e);
    }
  }
  [[noreturn]] void too_many_fields(std::size_t i, std::size_t fields) const;
  void count_rest(std::size_t i, std::size_t k);

  bool simple_gt(const char*& q, call& c) const;
  bool simple_ds(const char* q, const call& c, std::uint16_t& out);
  bool skips_sample(std::size_t i);
  void read_fields(std::size_t i, sample_state& s);
  bool genotype_field(std::size_t k, std::size_t i, sample_state& s);
  bool real_field(std::size_t k, std::size_t i, sample_state& s);
  bool quick_values();
  bool integer_field(std::size_t k, std::size_t i);
  bool text_values(const char* s, std::size_t i);
  void judge_genotype(const char* sample, std::size_t i, const call& c,
                      std::span<std::uint8_t> codes);
  void judge_dosage(const char* sample, std::size_t i, const call& c, std::span<std::uint16_t> out);
};

template <bool Dosages>
void column_decoder::text_columns(std::span<std::uint8_t> codes,
                                  std::span<std::uint16_t> out) const {
  text_samples line(*this, Dosages);
  std::size_t i = 0;
  if constexpr (Dosages)
    i = line.quick_dosages(out);
  else
    i = line.quick_genotypes(codes);
  for (; i < samples_.size(); ++i) line.read_sample<Dosages>(i, codes, out);
  line.finish(Dosages);
}

void column_decoder::text_genotypes(std::span<std::uint8_t> codes) const {
  text_columns<false>(codes, {});
}

void column_decoder::text_dosages(std::span<std::uint16_t> out) const {
  text_columns<true>({}, out);
}

// A sample with more fields than FORMAT has keys (rank 0): thrown at once, nothing outranks
// the first.
void column_decoder::text_samples::too_many_fields(std::size_t i, std::size_t fields) const {
  throw d_.unparsable("wrong number of columns", i,
                      std::to_string(fields) + " ':'-separated fields, FORMAT " + shown(f_.format) +
                          " has " + std::to_string(keys_));
}

// The rest of sample i, from p_, whose field k it is: only its fields are counted.
void column_decoder::text_samples::count_rest(std::size_t i, std::size_t k) {
  std::size_t fields = k + 1;
  for (; p_ < end_ && *p_ != '\t'; ++p_) fields += *p_ == ':';
  if (fields > keys_) too_many_fields(i, fields);
}

// ---- Phase 1: the quick paths.

// FORMAT GT: the samples whose GT is "a/b", "a|b" or "a" of single-digit alleles or '.' and a
// good call are coded here; returns the first other sample, from which the general path goes
// on.
std::size_t column_decoder::text_samples::quick_genotypes(std::span<std::uint8_t> codes) {
  if (keys_ != 1 || !has_gt_) return 0;
  std::array<std::uint8_t, 11 * 11> diploid_code;
  std::array<std::uint8_t, 11> haploid_code;
  const auto code_of_call = [](const call& c) -> std::uint8_t {
    if (c.status == call_status::ok) return code_of[static_cast<std::size_t>(c.alt_copies)];
    return c.status == call_status::missing ? 0b01 : 0xff;
  };
  for (std::size_t a = 0; a < 11; ++a) {
    haploid_code[a] = code_of_call(d_.haploid_[digit_class_[a]]);
    for (std::size_t b = 0; b < 11; ++b)
      diploid_code[a * 11 + b] = code_of_call(d_.diploid_[digit_class_[a] * 4u + digit_class_[b]]);
  }
  std::size_t i = 0;
  for (; i < n_ && p_ < end_; ++i) {
    const int a = allele_index(p_[0]);
    if (a < 0) break;
    std::uint8_t code;
    if (p_[1] == '/' || p_[1] == '|') {
      const int b = allele_index(p_[2]);
      if (b < 0 || !(p_[3] == '\t' || p_ + 3 == end_)) break;
      code = diploid_code[static_cast<std::size_t>(a * 11 + b)];
      if (code == 0xff) break;
      p_ += 4;
    } else {
      if (!(p_[1] == '\t' || p_ + 1 == end_)) break;
      code = haploid_code[static_cast<std::size_t>(a)];
      if (code == 0xff) break;
      p_ += 2;
    }
    codes[i / 4] |= static_cast<std::uint8_t>(code << (2 * (i % 4)));
  }
  return i;
}

// FORMAT DS or GT:DS: the samples whose GT (when there) is as in quick_genotypes, and whose DS
// is '.', a plain decimal within range or absent, are read here; returns the first other sample,
// from which the general path goes on.
std::size_t column_decoder::text_samples::quick_dosages(std::span<std::uint16_t> out) {
  const bool ds_only = keys_ == 1 && f_.value == 0;
  const bool gt_ds = keys_ == 2 && f_.gt == 0 && f_.value == 1;
  const vcf_options& o = d_.options_;
  if (!(o.dosage == dosage_field::ds && !o.split_multiallelic && (ds_only || gt_ds))) return 0;
  std::size_t i = 0;
  for (; i < n_ && p_ < end_; ++i) {
    const char* q = p_;
    call c;  // none without GT (diploid)
    if (gt_ds) {
      if (!simple_gt(q, c)) break;
      if (q == end_ || *q == '\t') {  // no DS: the call's dosage
        const std::uint32_t d = gt_dosage(c);
        if (d > 0xffff) break;
        out[i] = static_cast<std::uint16_t>(d);
        p_ = q + 1;
        continue;
      }
      if (*q != ':') break;
      ++q;
    }
    if (!simple_ds(q, c, out[i])) break;
  }
  return i;
}

// A GT at q of a single-digit allele or '.', or two separated by '/' or '|': its call into c,
// q moved past it; false for any other GT.
bool column_decoder::text_samples::simple_gt(const char*& q, call& c) const {
  const int a = allele_index(q[0]);
  if (a < 0) return false;
  if (q[1] == '/' || q[1] == '|') {
    const int b = allele_index(q[2]);
    if (b < 0) return false;
    c = d_.diploid_[digit_class_[static_cast<std::size_t>(a)] * 4u +
                    digit_class_[static_cast<std::size_t>(b)]];
    q += 3;
  } else {
    c = d_.haploid_[digit_class_[static_cast<std::size_t>(a)]];
    q += 1;
  }
  return true;
}

// A DS at q, the last field of the sample, of call c: '.' (the call's dosage) or a plain
// decimal within range, into `out`, p_ moved past the sample; false for anything else.
bool column_decoder::text_samples::simple_ds(const char* q, const call& c, std::uint16_t& out) {
  if (q[0] == '.' && (q + 1 == end_ || q[1] == '\t')) {
    // A missing DS: the call's dosage.
    const std::uint32_t d = gt_dosage(c);
    if (d > 0xffff) return false;
    out = static_cast<std::uint16_t>(d);
    p_ = q + 2;
    return true;
  }
  double x = 0;
  const char* stop = plain_number(q, x);
  if (stop == nullptr || !(stop == end_ || *stop == '\t')) return false;
  // PLINK 2: a haploid DS doubled, then refused outside 0..2 (as ds_dosage).
  const double y = c.ploidy == 1 ? 2 * x : x;
  if (!(y <= 2)) return false;
  out = fixed_point(y);
  p_ = stop + 1;
  return true;
}

// ---- Phase 2: the general path, field by field.

// Sample i, from p_, and p_ past it: its problems reported, its code or dosage written.
template <bool Dosages>
void column_decoder::text_samples::read_sample(std::size_t i, std::span<std::uint8_t> codes,
                                               std::span<std::uint16_t> out) {
  const char* const sample = p_;
  if (skips_sample(i)) return;
  sample_state s;
  if constexpr (Dosages) values_.clear();
  read_fields(i, s);
  ++p_;  // past the tab (or the line's end)
  if (rank_ <= 1) return;

  // The dosage field's values, as they were parsed from the line (rank 2: not a number).
  if constexpr (Dosages) {
    if (!s.value_read && s.value_at != nullptr && rank_ > 2 && !text_values(s.value_at, i)) return;
  }
  if (rank_ <= 3) return;

  // What the values mean (rank 3). A GT that a sample lacks is '.', as htslib fills it in
  // (haploid, missing).
  if (has_gt_ && !s.gt_read)
    s.c = call_of(1, bcf_int32_missing, 0, d_.r_.n_allele, d_.alt_, d_.options_.half);
  if constexpr (Dosages)
    judge_dosage(sample, i, s.c, out);
  else
    judge_genotype(sample, i, s.c, codes);
}

// Whether sample i is passed over, p_ moved past it: a line ending in a tab, or a line whose
// problem found only a sample with too many fields can outrank. Throws when the line has too
// few sample columns.
bool column_decoder::text_samples::skips_sample(std::size_t i) {
  if (p_ > end_)
    throw d_.unparsable(
        "wrong number of columns", i,
        "missing: the line has " + std::to_string(i) + " sample columns (did the file change?)");
  if (p_ == end_ && i + 1 == n_) {
    // A line ending in a tab: htslib counts one sample too few (and complains after
    // reading the others).
    report(1, d_.unparsable("wrong number of columns", i, "empty, the line ends with a tab"));
    ++p_;
    return true;
  }
  if (rank_ <= 1) {
    count_rest(i, 0);
    ++p_;
    return true;
  }
  return false;
}

// The fields of sample i, from p_ up to the tab or the line's end that ends it, each read by
// the syntax of its key.
void column_decoder::text_samples::read_fields(std::size_t i, sample_state& s) {
  for (std::size_t k = 0;;) {
    const char* const start = p_;
    bool good = true;
    switch (f_.syntax[k]) {
      case syntax::genotype:
        good = genotype_field(k, i, s);
        break;
      case syntax::real:
        good = real_field(k, i, s);
        break;
      case syntax::integer:
        good = integer_field(k, i);
        break;
      case syntax::text:
        p_ = field_end(p_);
        break;
    }
    if (!good) {
      p_ = start;  // the field holds no ':'
      count_rest(i, k);
      return;
    }
    if (p_ == end_ || *p_ == '\t') return;
    if (*p_ == ':') {
      ++p_;
      if (++k == keys_) count_rest(i, k);  // throws: one field more than the keys
      // A ':' that ends the line ends the sample: htslib reads no empty field after it.
      if (p_ == end_) return;
      continue;
    }
    // A character where the field should end (a NUL byte among them).
    const char* stop = *p_ == '\0' ? p_ + 1 : field_end(p_);
    report(1, d_.unparsable("an invalid character", i,
                            (f_.keys[k].empty() ? std::string("a field") : f_.keys[k]) + " " +
                                shown(std::string_view(start, stop))));
    count_rest(i, k);
    return;
  }
}

// A genotype field (key k) of sample i, its call kept when it is the GT key; false, with the
// problem reported, when htslib cannot read it.
bool column_decoder::text_samples::genotype_field(std::size_t k, std::size_t i, sample_state& s) {
  const char* const start = p_;
  if (k == gt_key_) {
    // The quick path: "a/b", "a|b" or "a" of single-digit alleles or '.'.
    const char* q = p_;
    call c;
    if (simple_gt(q, c) && ends_field(q)) {
      s.c = c;
      s.gt_read = true;
      p_ = q;
      return true;
    }
  }
  gt_field g;
  p_ = parse_gt(p_, g);
  if (g.unreadable || g.too_large) {
    report(1, d_.unparsable(nullptr, i,
                            "GT " + shown(std::string_view(start, field_end(start))) +
                                (g.too_large ? " has an allele number beyond htslib's limit"
                                             : " is not alleles ('.' or a number) "
                                               "separated by / or |")));
    return false;
  }
  if (k == gt_key_) {
    s.c = call_of(g.ploidy, g.g[0], g.g[1], d_.r_.n_allele, d_.alt_, d_.options_.half);
    s.gt_read = true;
  }
  return true;
}

// A Float field (key k) of sample i: the dosage field's values read at once when they are
// simple, else where they start kept for text_values; false, with the problem reported, when
// htslib cannot read it.
bool column_decoder::text_samples::real_field(std::size_t k, std::size_t i, sample_state& s) {
  const char* const start = p_;
  if (k == value_key_ && rank_ > 2 && quick_values()) {
    s.value_read = true;
    return true;
  }
  p_ = field_end(p_);
  if (!items_ok(start, p_, real_item_ok)) {
    report(1, d_.unparsable("an invalid character", i,
                            f_.keys[k] + " " + shown(std::string_view(start, p_))));
    return false;
  }
  if (k == value_key_) s.value_at = start;
  return true;
}

// The quick path of the dosage field: "." or plain decimals, read and checked at once into
// values_, p_ moved past them; false, values_ and p_ as they were, for anything else.
bool column_decoder::text_samples::quick_values() {
  const std::size_t before = values_.size();
  const char* q = p_;
  if (*q == '.' && ends_field(q + 1)) {
    // PLINK 2 reads a '.' field as missing; split, each ALT allele's value stands
    // alone, as in the records bcftools norm -m- writes.
    if (d_.r_.n_allele > 2) values_.push_back(std::nan(""));
    ++q;
  } else {
    double x = 0;
    while ((q = plain_number(q, x)) != nullptr) {
      values_.push_back(x);
      if (*q != ',') break;
      ++q;
    }
  }
  if (q != nullptr && ends_field(q)) {
    p_ = q;
    return true;
  }
  values_.resize(before);
  return false;
}

// An Integer field (key k) of sample i; false, with the problem reported, when htslib cannot
// read it.
bool column_decoder::text_samples::integer_field(std::size_t k, std::size_t i) {
  const char* const start = p_;
  p_ = field_end(p_);
  if (items_ok(start, p_, integer_item_ok)) return true;
  report(1, d_.unparsable("an invalid character", i,
                          f_.keys[k] + " " + shown(std::string_view(start, p_))));
  return false;
}

// The values of the dosage field at `s`, sample i's, parsed as PLINK 2 reads them into
// values_: false, with a problem reported, when one is not a number.
bool column_decoder::text_samples::text_values(const char* s, std::size_t i) {
  const char* const e = field_end(s);
  // PLINK 2 reads '?' or a '.' not followed by a digit as a missing field. Split, each ALT
  // allele's value stands alone, as in the records bcftools norm -m- writes.
  if (s == e || *s == '?' || (*s == '.' && (e - s == 1 || !is_digit(s[1])) && d_.r_.n_allele <= 2))
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
          report(2, bad_input(d_.options_.path, d_.where_sample(i) +
                                                    field_name(d_.options_.dosage) + " value '" +
                                                    std::string(item, stop) + "' is not a number"));
          return false;
        }
      }
    }
    values_.push_back(x);
    if (stop == e) return true;
    s = stop + 1;
  }
}

// Sample i's code from its call c (its columns start at `sample`); a bad call reported.
void column_decoder::text_samples::judge_genotype(const char* sample, std::size_t i, const call& c,
                                                  std::span<std::uint8_t> codes) {
  std::uint8_t code = 0b01;
  if (c.status == call_status::ok)
    code = code_of[static_cast<std::size_t>(c.alt_copies)];
  else if (c.status != call_status::missing)
    report(3, d_.call_error(sample, i, c));
  codes[i / 4] |= static_cast<std::uint8_t>(code << (2 * (i % 4)));
}

// Sample i's dosage from its call c and values_ (its columns start at `sample`); a bad call or
// value reported.
void column_decoder::text_samples::judge_dosage(const char* sample, std::size_t i, const call& c,
                                                std::span<std::uint16_t> out) {
  try {
    const std::optional<std::uint16_t> d = d_.dosage(i, c, values_.data(), values_.size());
    if (d)
      out[i] = *d;
    else
      report(3, d_.call_error(sample, i, c));
  } catch (const error& e) {
    report(3, error(e));
  }
}

// ---- Phase 3: the end of the line.

// Throws when more sample columns follow than the header names, then the problem found, then
// (genotypes) when FORMAT has no GT.
void column_decoder::text_samples::finish(bool dosages) const {
  if (p_ <= end_)
    throw d_.unparsable("wrong number of columns", n_ - 1,
                        "more sample columns follow than the header names (did the file change?)");
  if (problem_) throw *problem_;
  if (!dosages && !has_gt_) d_.fail(d_.where() + ": no GT field in FORMAT (did the file change?)");
}

// A line htslib's parser refuses, as the message of today's vcf_parse failure names it, with
// the sample and the field at fault.
error column_decoder::unparsable(const char* why, std::size_t i, const std::string& what) const {
  return bad_input(options_.path, "line " + std::to_string(r_.line) + " (record " +
                                      std::to_string(r_.record) + "): htslib cannot parse it" +
                                      (why != nullptr ? std::string(" (") + why + ")" : "") +
                                      ": sample " + std::to_string(i + 1) + " '" + samples_[i].iid +
                                      "': " + what);
}

// The error of a bad GT call of sample i, whose columns start at `sample`.
error column_decoder::call_error(const char* sample, std::size_t i, const call& c) const {
  const format_layout& f = *r_.layout;
  const char* p = sample;
  for (int k = 0; k < f.gt; ++k) p = field_end(p) + 1;
  std::vector<std::int32_t> all;
  gt_field g;
  parse_gt(p, g, &all);
  return bad_call(i, c, all.data(), static_cast<int>(all.size()));
}

}  // namespace colflow::preprocess::detail
