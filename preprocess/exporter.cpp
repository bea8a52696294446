#include "exporter.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>

#include "colflow/error.hpp"
#include "colflow/stream/column_stream.hpp"

namespace colflow::preprocess {
namespace {

// A file written under "NAME.tmp" and renamed over NAME by commit(); removed if abandoned.
class staged_file {
 public:
  staged_file(std::filesystem::path target, bool overwrite)
      : target_(std::move(target)), temp_(target_.string() + ".tmp") {
    std::error_code ec;
    if (!overwrite && std::filesystem::exists(target_, ec))
      throw error(errc::already_exists, target_.string() + " already exists (use --force)");
    out_.open(temp_, std::ios::binary | std::ios::trunc);
    if (!out_) throw error(errc::io_error, "cannot create " + temp_.string());
  }
  ~staged_file() {
    if (!committed_) {
      out_.close();
      std::error_code ec;
      std::filesystem::remove(temp_, ec);
    }
  }
  std::ofstream& out() { return out_; }
  void write(const void* data, std::size_t n) {
    out_.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
    if (!out_) throw error(errc::io_error, "cannot write " + temp_.string());
  }
  void commit() {
    out_.flush();
    if (!out_) throw error(errc::io_error, "cannot write " + temp_.string());
    out_.close();
    std::filesystem::rename(temp_, target_);
    committed_ = true;
  }

 private:
  std::filesystem::path target_, temp_;
  std::ofstream out_;
  bool committed_ = false;
};

void write_text_tables(const store& s, const std::string& prefix, bool overwrite) {
  staged_file fam(prefix + ".fam", overwrite), bim(prefix + ".bim", overwrite);
  for (const sample_info& x : s.samples())
    fam.out() << x.fid << ' ' << x.iid << ' ' << x.father << ' ' << x.mother << ' ' << x.sex
              << ' ' << x.phenotype << '\n';
  for (const column_info& c : s.columns())
    bim.out() << c.chrom << '\t' << c.id << '\t' << c.cm << '\t' << c.pos << '\t' << c.a1 << '\t'
              << c.a2 << '\n';
  fam.commit();
  bim.commit();
}

}  // namespace

void export_bed(const store& s, const std::string& prefix, bool overwrite,
                const export_progress& progress) {
  const std::uint64_t n = s.num_rows(), bytes = genotype_column_bytes(n);
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
  stream_options o;
  o.values = decode_as::stored;
  o.decode_values = s.type() != value_type::genotype;
  column_stream<double> stream(s, o);
  if (progress) stream.on_progress(progress);
  stream.run(all_columns(s.num_columns()), [&](const column_view<double>& v) {
    if (!v.codes.empty()) {
      bed.write(v.codes.data(), bytes);
      return true;
    }
    std::fill(codes.begin(), codes.end(), std::uint8_t{0});
    for (std::uint64_t i = 0; i < n; ++i) {
      const double x = v.values[static_cast<Eigen::Index>(i)];
      unsigned code;
      if (std::isnan(x)) code = 1;
      else if (x == 2) code = 0;
      else if (x == 1) code = 2;
      else if (x == 0) code = 3;
      else
        throw error(errc::invalid_argument, "export --bed: row " + std::to_string(i) +
                                                " holds " + std::to_string(x) +
                                                ", not a dosage 0, 1, 2 or missing");
      codes[i / 4] = static_cast<std::uint8_t>(codes[i / 4] | (code << (2 * (i % 4))));
    }
    bed.write(codes.data(), bytes);
    return true;
  });
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
  const unsigned char prelude[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                                     static_cast<unsigned char>(header.size() & 0xff),
                                     static_cast<unsigned char>(header.size() >> 8)};
  npy.write(prelude, 10);
  npy.write(header.data(), header.size());
  stream_options o;
  o.values = s.type() == value_type::genotype ? decode_as::standardized : decode_as::stored;
  if (float32) {
    column_stream<float> stream(s, o);
    if (progress) stream.on_progress(progress);
    stream.run(all_columns(s.num_columns()), [&](const column_view<float>& v) {
      npy.write(v.values.data(), static_cast<std::size_t>(v.values.size()) * 4);
      return true;
    });
  } else {
    column_stream<double> stream(s, o);
    if (progress) stream.on_progress(progress);
    stream.run(all_columns(s.num_columns()), [&](const column_view<double>& v) {
      npy.write(v.values.data(), static_cast<std::size_t>(v.values.size()) * 8);
      return true;
    });
  }
  npy.commit();
}

}  // namespace colflow::preprocess
