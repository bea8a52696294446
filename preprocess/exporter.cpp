// Writing a store back out (colflow/preprocess/exporter.hpp).
#include "colflow/preprocess/exporter.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <span>
#include <vector>

#include "colflow/cancellation.hpp"
#include "colflow/error.hpp"
#include "colflow/io/staged_output.hpp"
#include "colflow/stream/column_stream.hpp"
#include "pgen_reader.hpp"

namespace colflow::preprocess {
namespace {

// An output file written through a stream into a staged_output: it gets its final name on
// commit(), and its temporary is removed if it never does.
class staged_file {
 public:
  staged_file(const std::filesystem::path& target, bool overwrite)
      : staged_(refuse_existing(target, overwrite)) {
    out_.open(staged_.path(), std::ios::binary | std::ios::trunc);
    if (!out_) throw error(errc::io_error, "cannot open " + staged_.path().string());
  }
  std::ofstream& out() { return out_; }
  void write(const void* data, std::size_t n) {
    out_.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
    if (!out_) throw error(errc::io_error, "cannot write " + staged_.path().string());
  }
  // Flushes and closes the stream, then publishes the file (fsync, rename, directory fsync).
  void commit() {
    const std::string temp = staged_.path().string();
    out_.flush();
    if (!out_) throw error(errc::io_error, "cannot write " + temp);
    out_.close();
    if (!out_) throw error(errc::io_error, "cannot close " + temp);
    staged_.commit();
  }

 private:
  static std::filesystem::path refuse_existing(const std::filesystem::path& target,
                                               bool overwrite) {
    std::error_code ec;
    if (!overwrite && std::filesystem::exists(target, ec))
      throw error(errc::already_exists, target.string() + " already exists (use --force)");
    return target;
  }

  staged_output staged_;  // declared first: destroyed after the stream is closed
  std::ofstream out_;
};

// A pass stops early at a stop request (the kernel returns false); the export then throws
// errc::cancelled before committing anything, and its staged files remove themselves.
class stop_check {
 public:
  // True when the pass should go on.
  bool next_column() {
    if (stop_requested()) stopped_ = true;
    return !stopped_;
  }
  void throw_if_stopped() const {
    if (stopped_) throw error(errc::cancelled, "stopped on request");
  }

 private:
  bool stopped_ = false;
};

// The .fam and .bim of export_bed: the store's sample and variant tables as they are.
void write_text_tables(const store& s, const std::string& prefix, bool overwrite) {
  staged_file fam(prefix + ".fam", overwrite), bim(prefix + ".bim", overwrite);
  for (const sample_info& x : s.samples())
    fam.out() << x.fid << ' ' << x.iid << ' ' << x.father << ' ' << x.mother << ' ' << x.sex << ' '
              << x.phenotype << '\n';
  for (const column_info& c : s.columns())
    bim.out() << c.chrom << '\t' << c.id << '\t' << c.cm << '\t' << c.pos << '\t' << c.a1 << '\t'
              << c.a2 << '\n';
  fam.commit();
  bim.commit();
}

// The .psam and .pvar of export_pfile: the same tables in PLINK 2's layout, the optional
// columns (FID, PAT and MAT, PHENO1, CM) only where some entry is not the value a reader
// assumes without them ("0", "-9"), as plink2 --make-pgen leaves them out. ALT is A1 and REF
// A2, the order the .pgen reader maps back (pgen_source.hpp), so the same allele is counted.
void write_plink2_tables(const store& s, const std::string& prefix, bool overwrite) {
  staged_file psam(prefix + ".psam", overwrite), pvar(prefix + ".pvar", overwrite);
  const std::vector<sample_info>& samples = s.samples();
  const auto any = [&](auto field, const char* absent) {
    return std::any_of(samples.begin(), samples.end(),
                       [&](const sample_info& x) { return x.*field != absent; });
  };
  const bool fid = any(&sample_info::fid, "0");
  const bool parents = any(&sample_info::father, "0") || any(&sample_info::mother, "0");
  const bool pheno = any(&sample_info::phenotype, "-9");
  psam.out() << (fid ? "#FID\tIID" : "#IID") << (parents ? "\tPAT\tMAT" : "") << "\tSEX"
             << (pheno ? "\tPHENO1" : "") << '\n';
  for (const sample_info& x : samples) {
    if (fid) psam.out() << x.fid << '\t';
    psam.out() << x.iid;
    if (parents) psam.out() << '\t' << x.father << '\t' << x.mother;
    psam.out() << '\t' << x.sex;
    if (pheno) psam.out() << '\t' << x.phenotype;
    psam.out() << '\n';
  }
  const std::vector<column_info>& columns = s.columns();
  const bool cm =
      std::any_of(columns.begin(), columns.end(), [](const column_info& c) { return c.cm != "0"; });
  pvar.out() << "#CHROM\tPOS\tID\tREF\tALT" << (cm ? "\tCM" : "") << '\n';
  for (const column_info& c : columns) {
    pvar.out() << c.chrom << '\t' << c.pos << '\t' << c.id << '\t' << c.a2 << '\t' << c.a1;
    if (cm) pvar.out() << '\t' << c.cm;
    pvar.out() << '\n';
  }
  psam.commit();
  pvar.commit();
}

// What an export of calls (export_bed, export_pfile) checks before it writes anything.
void check_calls_exportable(const store& s, const std::string& option, double hard_call_threshold) {
  if (s.type() == value_type::dosage && !(hard_call_threshold >= 0 && hard_call_threshold <= 0.5)) {
    std::string m = "export " + option;
    m.append(": the hard-call threshold must be within 0..0.5, got ");
    m.append(std::to_string(hard_call_threshold));
    throw error(errc::invalid_argument, m);
  }
  if (s.type() != value_type::genotype)
    for (std::size_t j = 0; j < s.num_columns(); ++j)
      if (s.entry(j).flags & column_flag::standardized) {
        std::string m = "export " + option;
        m.append(": column ").append(std::to_string(j));
        m.append(
            " holds standardised values, which cannot be turned back into calls exactly; export "
            "a genotype store or a float store of dosages");
        throw error(errc::invalid_argument, m);
      }
}

// One column as an export of calls sees it: its hard calls as PLINK 1 codes (padding bits
// zero) and, for a dosage store, its dosages in 1/16384 (dosage_missing for a missing one;
// empty otherwise).
using calls_sink =
    std::function<void(std::span<const std::uint8_t> codes, std::span<const std::uint16_t> fixed)>;

// Streams the columns of `s` in store order into `sink`: a genotype store's codes as they
// are, a dosage store's hard calls by `hard_call_threshold`, a float store's values 0, 1, 2
// or NaN as calls (another value is an invalid_argument naming `option`). Throws
// errc::cancelled after a stop request, before the caller commits anything.
void stream_calls(const store& s, const std::string& option, double hard_call_threshold,
                  const export_progress& progress, const calls_sink& sink) {
  const std::uint64_t n = s.num_rows(), bytes = genotype_column_bytes(n);
  const bool dosages = s.type() == value_type::dosage;
  std::vector<std::uint8_t> codes(bytes);
  std::vector<std::uint16_t> fixed(dosages ? n : 0);
  stream_options o;
  o.values = decode_as::stored;
  o.decode_values = s.type() != value_type::genotype;
  column_stream<double> stream(s, o);
  if (progress) stream.on_progress(progress);
  stop_check stop;
  stream.run(all_columns(s.num_columns()), [&](const column_view<double>& v) {
    if (!stop.next_column()) return false;
    if (!v.codes.empty()) {
      sink(std::span(v.codes.data(), bytes), {});
      return true;
    }
    if (dosages) {
      // The stored dosages are exact multiples of 1/16384: back to fixed point without loss.
      for (std::uint64_t i = 0; i < n; ++i)
        fixed[i] = dosage_to_fixed(v.values[static_cast<Eigen::Index>(i)]);
      dosages_to_hard_calls(fixed, hard_call_threshold, codes);
      sink(codes, fixed);
      return true;
    }
    std::fill(codes.begin(), codes.end(), std::uint8_t{0});
    for (std::uint64_t i = 0; i < n; ++i) {
      const double x = v.values[static_cast<Eigen::Index>(i)];
      unsigned code;
      if (std::isnan(x))
        code = 1;
      else if (x == 2)
        code = 0;
      else if (x == 1)
        code = 2;
      else if (x == 0)
        code = 3;
      else {
        std::string m = "export " + option;
        m.append(": row ").append(std::to_string(i)).append(" holds ").append(std::to_string(x));
        m.append(", not a dosage 0, 1, 2 or missing");
        throw error(errc::invalid_argument, m);
      }
      codes[i / 4] = static_cast<std::uint8_t>(codes[i / 4] | (code << (2 * (i % 4))));
    }
    sink(codes, {});
    return true;
  });
  stop.throw_if_stopped();
}

void put_le(std::vector<std::uint8_t>& out, std::uint64_t v, unsigned bytes) {
  for (unsigned b = 0; b < bytes; ++b) out.push_back(static_cast<std::uint8_t>(v >> (8 * b)));
}

}  // namespace

void export_bed(const store& s, const std::string& prefix, bool overwrite,
                const export_progress& progress, double hard_call_threshold) {
  check_calls_exportable(s, "--bed", hard_call_threshold);
  staged_file bed(prefix + ".bed", overwrite);
  const unsigned char magic[3] = {0x6c, 0x1b, 0x01};
  bed.write(magic, 3);
  stream_calls(s, "--bed", hard_call_threshold, progress,
               [&](std::span<const std::uint8_t> codes, std::span<const std::uint16_t>) {
                 bed.write(codes.data(), codes.size());
               });
  write_text_tables(s, prefix, overwrite);
  bed.commit();
}

void export_pfile(const store& s, const std::string& prefix, bool overwrite,
                  const export_progress& progress, double hard_call_threshold) {
  check_calls_exportable(s, "--pfile", hard_call_threshold);
  namespace pgen = detail::pgen;
  const std::uint64_t n = s.num_rows(), m = s.num_columns();
  // plink2's limits on the header's counts (pgen_spec: 32-bit fields; plink2 refuses more than
  // 2^31 - 3 variants and 2^31 - 2 samples).
  if (m == 0 || m > 0x7ffffffd || n == 0 || n > 0x7ffffffe) {
    std::string message =
        "export --pfile: a .pgen holds 1 to 2147483645 variants of 1 to 2147483646 samples; the "
        "store has ";
    message.append(std::to_string(m)).append(" columns of ").append(std::to_string(n));
    throw error(errc::invalid_argument, message.append(" rows"));
  }
  const bool dosages = s.type() == value_type::dosage;
  // pgen_spec's header: magic, storage mode, variant and sample counts, then a byte whose top
  // bits 2 mark every REF allele provisional, as plink2 marks a .bed's: a store does not record
  // whether its A2 is the reference (0 would tell plink2 to look for flags in the .pvar).
  //
  // Hard calls alone: mode 0x02, fixed-width records of type 0. With dosages: mode 0x10, every
  // record of type 0x40 (the plain 2-bit track, then every sample's dosage in two bytes, 65535
  // for a missing one) and of the same length. Not the fixed-width mode 0x03, which holds the
  // same records: plink2 2.00a3.5 reads such a file on one thread but fails on two ("Failed to
  // unpack variant #150" of 300).
  const std::uint64_t record_bytes = genotype_column_bytes(n) + (dosages ? 2 * n : 0);
  unsigned length_bytes = 1;
  while (length_bytes < 4 && (record_bytes >> (8 * length_bytes)) != 0) ++length_bytes;
  if (record_bytes >> 32) {
    std::string message = "export --pfile: a variant's record of ";
    message.append(std::to_string(n)).append(" samples' dosages exceeds 4 GiB");
    throw error(errc::invalid_argument, message);
  }
  staged_file pgen_file(prefix + ".pgen", overwrite);
  std::vector<std::uint8_t> record = {0x6c, 0x1b, dosages ? pgen::mode_variable : pgen::mode_fixed};
  put_le(record, m, 4);
  put_le(record, n, 4);
  // Mode 0x10's header byte: bit 2 for 8-bit record types (dosages present), bits 0-1 the
  // bytes of each record's length minus 1.
  record.push_back(static_cast<std::uint8_t>(0x80 | (dosages ? 0x04 | (length_bytes - 1) : 0)));
  if (dosages) {
    // The offset of each block of 2^16 records, then each block's types and lengths; the
    // records follow them.
    const std::uint64_t blocks = (m + pgen::block_variants - 1) / pgen::block_variants;
    const std::uint64_t first = 12 + 8 * blocks + m * (1 + length_bytes);
    for (std::uint64_t b = 0; b < blocks; ++b)
      put_le(record, first + b * pgen::block_variants * record_bytes, 8);
    pgen_file.write(record.data(), record.size());
    for (std::uint64_t b = 0; b < blocks; ++b) {
      const std::uint64_t k = std::min(pgen::block_variants, m - b * pgen::block_variants);
      record.assign(k, pgen::type_dosage_all);
      for (std::uint64_t i = 0; i < k; ++i) put_le(record, record_bytes, length_bytes);
      pgen_file.write(record.data(), record.size());
    }
  } else {
    pgen_file.write(record.data(), record.size());
  }
  stream_calls(s, "--pfile", hard_call_threshold, progress,
               [&](std::span<const std::uint8_t> codes, std::span<const std::uint16_t> fixed) {
                 record.assign(codes.begin(), codes.end());
                 pgen::bed_codes_to_categories(record, n);
                 // A missing dosage is 65535 in the format as in the store (dosage_missing).
                 for (const std::uint16_t d : fixed) put_le(record, d, 2);
                 pgen_file.write(record.data(), record.size());
               });
  write_plink2_tables(s, prefix, overwrite);
  pgen_file.commit();
}

void export_npy(const store& s, const std::filesystem::path& file, bool float32, bool overwrite,
                const export_progress& progress) {
  staged_file npy(file, overwrite);
  std::string header = "{'descr': '" + std::string(float32 ? "<f4" : "<f8") +
                       "', 'fortran_order': True, 'shape': (" + std::to_string(s.num_rows()) +
                       ", " + std::to_string(s.num_columns()) + "), }";
  // Version 1.0: magic, version, 2-byte header length; the header is padded with spaces and
  // ends with a newline so that the data starts at a multiple of 64 bytes.
  const std::size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header += '\n';
  if (header.size() > 65535) throw error(errc::invalid_argument, "npy header too long");
  const unsigned char prelude[10] = {0x93,
                                     'N',
                                     'U',
                                     'M',
                                     'P',
                                     'Y',
                                     1,
                                     0,
                                     static_cast<unsigned char>(header.size() & 0xff),
                                     static_cast<unsigned char>(header.size() >> 8)};
  npy.write(prelude, 10);
  npy.write(header.data(), header.size());
  stream_options o;
  o.values = s.type() == value_type::genotype ? decode_as::standardized : decode_as::stored;
  stop_check stop;
  if (float32) {
    column_stream<float> stream(s, o);
    if (progress) stream.on_progress(progress);
    stream.run(all_columns(s.num_columns()), [&](const column_view<float>& v) {
      if (!stop.next_column()) return false;
      npy.write(v.values.data(), static_cast<std::size_t>(v.values.size()) * 4);
      return true;
    });
  } else {
    column_stream<double> stream(s, o);
    if (progress) stream.on_progress(progress);
    stream.run(all_columns(s.num_columns()), [&](const column_view<double>& v) {
      if (!stop.next_column()) return false;
      npy.write(v.values.data(), static_cast<std::size_t>(v.values.size()) * 8);
      return true;
    });
  }
  stop.throw_if_stopped();
  npy.commit();
}

}  // namespace colflow::preprocess
