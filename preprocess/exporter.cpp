// Writing a store back out (colflow/preprocess/exporter.hpp).
#include "colflow/preprocess/exporter.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <vector>

#include "colflow/cancellation.hpp"
#include "colflow/error.hpp"
#include "colflow/io/staged_output.hpp"
#include "colflow/stream/column_stream.hpp"

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

}  // namespace

void export_bed(const store& s, const std::string& prefix, bool overwrite,
                const export_progress& progress, double hard_call_threshold) {
  const std::uint64_t n = s.num_rows(), bytes = genotype_column_bytes(n);
  const bool dosages = s.type() == value_type::dosage;
  if (dosages && !(hard_call_threshold >= 0 && hard_call_threshold <= 0.5))
    throw error(errc::invalid_argument,
                "export --bed: the hard-call threshold must be within "
                "0..0.5, got " +
                    std::to_string(hard_call_threshold));
  if (s.type() != value_type::genotype)
    for (std::size_t j = 0; j < s.num_columns(); ++j)
      if (s.entry(j).flags & column_flag::standardized)
        throw error(errc::invalid_argument,
                    "export --bed: column " + std::to_string(j) +
                        " holds standardised values, which cannot be turned back into calls "
                        "exactly; export a genotype store or a float store of dosages");
  staged_file bed(prefix + ".bed", overwrite);
  const unsigned char magic[3] = {0x6c, 0x1b, 0x01};
  bed.write(magic, 3);
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
      bed.write(v.codes.data(), bytes);
      return true;
    }
    if (dosages) {
      // The stored dosages are exact multiples of 1/16384: back to fixed point without loss.
      for (std::uint64_t i = 0; i < n; ++i)
        fixed[i] = dosage_to_fixed(v.values[static_cast<Eigen::Index>(i)]);
      dosages_to_hard_calls(fixed, hard_call_threshold, codes);
      bed.write(codes.data(), bytes);
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
      else
        throw error(errc::invalid_argument, "export --bed: row " + std::to_string(i) + " holds " +
                                                std::to_string(x) +
                                                ", not a dosage 0, 1, 2 or missing");
      codes[i / 4] = static_cast<std::uint8_t>(codes[i / 4] | (code << (2 * (i % 4))));
    }
    bed.write(codes.data(), bytes);
    return true;
  });
  stop.throw_if_stopped();
  write_text_tables(s, prefix, overwrite);
  bed.commit();
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
