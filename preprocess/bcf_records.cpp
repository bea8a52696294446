// BCF records for vcf_source: the counting pass over a BCF file, the FORMAT arrays GT and the
// dosage field as stored, and the columns decoded from them.
#include <htslib/hts_endian.h>

#include <cmath>
#include <cstring>

#include "vcf_reader.hpp"

namespace colflow::preprocess::detail {
namespace {

// The call of a sample's `width` GT values, ended early by bcf_int32_vector_end.
call read_call(const std::int32_t* g, int width, int n_allele, int alt, half_call half) {
  int ploidy = 0;
  while (ploidy < width && g[ploidy] != bcf_int32_vector_end) ++ploidy;
  return call_of(ploidy, ploidy > 0 ? g[0] : 0, ploidy > 1 ? g[1] : 0, n_allele, alt, half);
}

}  // namespace

// ---- The counting pass: the fixed fields of each record, no genotypes decoded.

record_count count_bcf_records(htsFile* file, bcf_hdr_t* header, const vcf_options& options,
                               int samples) {
  const std::filesystem::path& path = options.path;
  const dosage_field field = options.dosage;
  record_count count{options};
  record_ptr rec(bcf_init());
  int ret;
  while ((ret = bcf_read(file, header, rec.get())) == 0) {
    ++count.records;
    bcf_unpack(rec.get(), BCF_UN_STR);
    const auto where = [&] {
      return "record " + std::to_string(count.records) + " (" +
             bcf_seqname_safe(header, rec.get()) + ":" + std::to_string(rec->pos + 1) + " " +
             rec->d.id + ")";
    };
    if (rec->errcode & fatal_record_errors)
      bad(path, where() + ": htslib cannot read it (" + record_error_text(rec->errcode) + ")");
    if (rec->n_sample != static_cast<std::uint32_t>(samples))
      bad(path, where() + ": " + std::to_string(rec->n_sample) + " samples, the header names " +
                    std::to_string(samples));
    std::string alts;
    for (int a = 1; a < rec->n_allele && rec->n_allele > 2; ++a) {
      if (a > 1) alts += ',';
      alts += rec->d.allele[a];
    }
    const bool has_gt = bcf_get_fmt(header, rec.get(), "GT") != nullptr;
    const bool has_dosage =
        field != dosage_field::none && bcf_get_fmt(header, rec.get(), field_name(field)) != nullptr;
    count.add(where, static_cast<std::uint64_t>(std::max(rec->n_allele - 1, 0)), has_gt, has_dosage,
              alts);
  }
  if (ret < -1)
    bad(path, "record " + std::to_string(count.records + 1) +
                  ": htslib cannot read it (the BCF file is corrupt or truncated)");
  return count;
}

// ---- The FORMAT fields as stored.

bool stored_field::assign(const bcf_fmt_t* f, std::size_t samples) {
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

int stored_field::integers(std::size_t i, std::int32_t* g) const {
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

void stored_field::reals(std::size_t i, std::vector<double>& out) const {
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

bool stored_field::integers_at(const std::uint8_t* p, int k, std::int32_t& g) const {
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

void record_stream::fetch_stored_fields(fetched_record& f) const {
  // Found here (with the header), read in decode, as bcf_get_genotypes and
  // bcf_get_format_float read them.
  f.site = site_text();
  const auto n = static_cast<std::size_t>(samples);
  const auto field = [&](const char* key) -> const bcf_fmt_t* {
    const int id = bcf_hdr_id2int(header.get(), BCF_DT_ID, key);
    if (!bcf_hdr_idinfo_exists(header.get(), BCF_HL_FMT, id)) return nullptr;
    // GT is read when the header declares it Type=String (htslib's rule), the dosage field
    // is Type=Float (the constructor checked).
    if (std::strcmp(key, "GT") == 0 && bcf_hdr_id2type(header.get(), BCF_HL_FMT, id) != BCF_HT_STR)
      return nullptr;
    return bcf_get_fmt_id(record.get(), id);
  };
  if (!f.gt.assign(field("GT"), n))
    fail(where() + ": htslib cannot read its FORMAT field GT (stored as BCF type " +
         std::to_string(field("GT")->type) + ")");
  if (options->dosage == dosage_field::none && f.gt.width == 0)
    fail(where() + ": no GT field in FORMAT (did the file change?)");
  if (options->dosage != dosage_field::none) {
    const char* key = field_name(options->dosage);
    if (!f.dosage.assign(field(key), n))
      fail(where() + ": htslib cannot read its FORMAT field " + key);
  }
}

// ---- The columns decoded from the stored arrays.

// Sample i's call; its GT values in g (gt.width of them) when not the quick path's.
call column_decoder::bcf_call(std::size_t i, std::vector<std::int32_t>& g) const {
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

// GT stored as two 8-bit values a sample: the codes of the leading samples whose values are
// both there and make a good call, by the classes of the values; returns the first other
// sample, from which bcf_genotypes goes on.
std::size_t column_decoder::bcf_diploid_int8_codes(std::span<std::uint8_t> codes) const {
  std::array<std::uint8_t, 256> class_of_byte;
  for (int v = -128; v < 128; ++v)
    class_of_byte[static_cast<std::uint8_t>(v)] =
        v == bcf_int8_vector_end ? 4
                                 : class_of_value(v == bcf_int8_missing ? bcf_int32_missing : v);
  std::array<std::uint8_t, 16> code;
  for (std::size_t k = 0; k < 16; ++k) {
    const call& c = diploid_[k];
    code[k] = c.status == call_status::ok        ? code_of[static_cast<std::size_t>(c.alt_copies)]
              : c.status == call_status::missing ? 0b01
                                                 : 0xff;
  }
  const std::uint8_t* p = r_.gt.bytes.data();
  std::size_t i = 0;
  for (; i < samples_.size(); ++i) {
    const std::uint8_t a = class_of_byte[p[2 * i]], b = class_of_byte[p[2 * i + 1]];
    if ((a | b) > 3) break;  // a vector's end: haploid, or no GT
    const std::uint8_t c = code[a * 4u + b];
    if (c == 0xff) break;
    codes[i / 4] |= static_cast<std::uint8_t>(c << (2 * (i % 4)));
  }
  return i;
}

void column_decoder::bcf_genotypes(std::span<std::uint8_t> codes) const {
  static thread_local std::vector<std::int32_t> g;
  std::size_t i = 0;
  if (r_.gt.width == 2 && r_.gt.type == BCF_BT_INT8) i = bcf_diploid_int8_codes(codes);
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

void column_decoder::bcf_dosages(std::span<std::uint16_t> out) const {
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

// The error of sample i's bad GT call c.
error column_decoder::bad_gt_call(std::size_t i, const call& c) const {
  std::vector<std::int32_t> g(static_cast<std::size_t>(r_.gt.width));
  r_.gt.integers(i, g.data());
  return bad_call(i, c, g.data(), r_.gt.width);
}

}  // namespace colflow::preprocess::detail
