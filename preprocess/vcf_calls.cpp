// What a VCF or BCF sample's GT call and dosage field mean, as PLINK 2 reads them: the part of
// column_decoder that VCF text and BCF share, and the messages naming a record and a sample.
#include <charconv>
#include <cmath>

#include "vcf_reader.hpp"

namespace colflow::preprocess::detail {
namespace {

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

column_decoder::column_decoder(const vcf_options& options, const std::vector<sample_info>& samples,
                               bool is_bcf, const fetched_record& record, int alt)
    : options_(options), samples_(samples), is_bcf_(is_bcf), r_(record), alt_(alt) {
  // The calls of the GTs of one or two alleles, by the class of each allele.
  const std::array<std::int32_t, 4> example{2, (alt_ + 1) << 1, 0, (r_.n_allele + 1) << 1};
  for (std::size_t a = 0; a < 4; ++a) {
    haploid_[a] = call_of(1, example[a], 0, r_.n_allele, alt_, options_.half);
    for (std::size_t b = 0; b < 4; ++b)
      diploid_[a * 4 + b] = call_of(2, example[a], example[b], r_.n_allele, alt_, options_.half);
  }
}

void column_decoder::genotypes(std::span<std::uint8_t> codes) const {
  std::fill(codes.begin(), codes.end(), std::uint8_t{0});
  if (is_bcf_)
    bcf_genotypes(codes);
  else
    text_genotypes(codes);
}

void column_decoder::dosages(std::span<std::uint16_t> out) const {
  if (is_bcf_)
    bcf_dosages(out);
  else
    text_dosages(out);
}

void column_decoder::fail(const std::string& what) const { bad(options_.path, what); }

// "line 12 (record 3, 1:1000 rs1)" for VCF text, "record 3 (1:1000 rs1)" for BCF.
std::string column_decoder::where() const {
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

std::string column_decoder::where_sample(std::size_t i) const {
  return where() + ", sample " + std::to_string(i + 1) + " '" + samples_[i].iid + "': ";
}

// The error of sample i's GT call c, whose `width` values are g.
error column_decoder::bad_call(std::size_t i, const call& c, const std::int32_t* g,
                               int width) const {
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
std::optional<std::uint16_t> column_decoder::dosage(std::size_t i, const call& c, const double* v,
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
std::uint16_t column_decoder::ds_dosage(std::size_t i, double ds, bool haploid) const {
  const double x = haploid ? 2 * ds : ds;
  if (!(ds >= 0) || !(x <= 2))
    fail(where_sample(i) + "DS " + number_text(ds) + " is outside 0.." +
         (haploid ? "1 (a haploid call)" : "2"));
  return fixed_point(x);
}

std::uint16_t column_decoder::gp_dosage(std::size_t i, const double* v, std::size_t n,
                                        bool haploid) const {
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
         std::to_string(n_allele) + " alleles has " + std::to_string(n_allele) + " (haploid) or " +
         std::to_string(n_allele * (n_allele + 1) / 2) + " (diploid)");
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

}  // namespace colflow::preprocess::detail
