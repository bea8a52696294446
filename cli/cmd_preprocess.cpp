#include <iostream>
#include <memory>

#include "colflow/colflow.hpp"
#include "colflow/preprocess/bed_source.hpp"
#include "colflow/preprocess/converter.hpp"
#include "colflow/preprocess/csv_source.hpp"
#include "colflow/preprocess/npy_source.hpp"
#include "commands.hpp"
#include "progress.hpp"

namespace colflow::cli {

command add_preprocess(CLI::App& app) {
  struct options {
    std::string bed_prefix, bed_file, bim_file, fam_file, npy, csv, out;
    std::string csv_header = "auto", csv_ids = "auto";
    std::string codec, dtype = "f64";
    std::optional<int> level;
    bool shuffle = false, no_standardize = false, standardize = false, force = false, quiet = false;
    unsigned threads = 0;
  };
  auto o = std::make_shared<options>();
  auto* bed = app.add_option("--bed", o->bed_prefix,
                             "PLINK 1 binary input PREFIX (PREFIX.bed, PREFIX.bim, PREFIX.fam)");
  auto* bed_file = app.add_option("--bed-file", o->bed_file, "Explicit .bed path");
  auto* bim_file = app.add_option("--bim", o->bim_file, "Explicit .bim path (with --bed-file)");
  auto* fam_file = app.add_option("--fam", o->fam_file, "Explicit .fam path (with --bed-file)");
  bed_file->needs(bim_file)->needs(fam_file)->excludes(bed);
  bim_file->needs(bed_file);
  fam_file->needs(bed_file);
  auto* npy =
      app.add_option("--npy", o->npy,
                     "Dense input: a NumPy .npy file (v1-v3, float32/float64, C or Fortran\n"
                     "order, samples in rows); memory-mapped");
  auto* csv =
      app.add_option("--csv", o->csv,
                     "Dense input: comma- or tab-separated text, samples in rows, optional\n"
                     "header row and sample-ID column; held in memory as float64");
  app.add_option("--csv-header", o->csv_header, "CSV header row: auto (default), yes, no")
      ->check(CLI::IsMember({"auto", "yes", "no"}));
  app.add_option("--csv-ids", o->csv_ids, "CSV first column of sample IDs: auto (default), yes, no")
      ->check(CLI::IsMember({"auto", "yes", "no"}));
  npy->excludes(bed)->excludes(bed_file)->excludes(csv);
  csv->excludes(bed)->excludes(bed_file);
  app.add_option("--out", o->out, "The store directory to write")->required();
  app.add_option("--codec", o->codec,
                 "genotype (default for .bed: the 2-bit codes as they are, about the .bed's\n"
                 "size), genotype-zstd (the codes compressed with zstd), zstd, lz4, zlib or\n"
                 "none (float values: standardised genotypes or dense values), auto")
      ->check(CLI::IsMember({"genotype", "genotype-zstd", "auto", "none", "zlib", "lz4", "zstd"}));
  app.add_option("--level", o->level,
                 "Compression level: zlib 1-9 (6), lz4 1-12 (1; 3+ is LZ4 HC), zstd 1-19 (3)");
  app.add_option("--dtype", o->dtype, "Float store value type: f64 (default) or f32")
      ->check(CLI::IsMember({"f64", "f32"}));
  app.add_flag("--shuffle", o->shuffle, "Byte-shuffle float columns before compressing");
  app.add_flag("--no-standardize", o->no_standardize,
               "Float store from genotypes: store dosages (NaN for missing), not standardised\n"
               "values (genotype input is standardised by default)");
  app.add_flag("--standardize", o->standardize,
               "Dense input: store standardised values (missing -> 0, centred, z'z = N - 1);\n"
               "by default dense values are kept as they are");
  app.add_option("--threads", o->threads, "Worker threads (default: all cores)");
  app.add_flag("--force", o->force, "Replace an existing store at --out (only when done)");
  app.add_flag("--quiet", o->quiet, "No progress display and no summary");
  app.footer(
      "--codec auto: for each column, encode it with none, lz4 (level 1) and zstd (level 3)\n"
      "and keep the smallest frame. These codecs all decode at 500 MB/s or more on one core;\n"
      "zlib is slower and is never picked. For .bed input, auto works on the 2-bit codes.\n\n"
      "Genotype stores keep each column's PLINK codes and decode them through a per-column\n"
      "lookup table to standardised values (missing calls mean-imputed, z'z = N - 1).\n"
      "The store appears only when complete; an existing one is replaced only with --force.");
  return [o] {
    const auto threads = limit_threads(o->threads);
    std::unique_ptr<preprocess::column_source> source;
    if (!o->bed_prefix.empty()) {
      source = std::make_unique<preprocess::bed_source>(
          preprocess::plink_paths::from_prefix(o->bed_prefix));
    } else if (!o->bed_file.empty()) {
      source = std::make_unique<preprocess::bed_source>(
          preprocess::plink_paths{o->bed_file, o->bim_file, o->fam_file});
    } else if (!o->npy.empty()) {
      source = std::make_unique<preprocess::npy_source>(o->npy);
    } else if (!o->csv.empty()) {
      const auto presence = [](const std::string& v) {
        return v == "yes"  ? preprocess::csv_presence::present
               : v == "no" ? preprocess::csv_presence::absent
                           : preprocess::csv_presence::detect;
      };
      preprocess::csv_options copt;
      copt.header = presence(o->csv_header);
      copt.ids = presence(o->csv_ids);
      source = std::make_unique<preprocess::csv_source>(o->csv, copt);
    } else {
      throw error(errc::invalid_argument,
                  "no input: give --bed PREFIX, --bed-file/--bim/--fam, --npy FILE or --csv FILE");
    }
    const bool genotype_input = source->kind() == value_type::genotype;
    preprocess::convert_options co;
    co.out = o->out;
    const std::string codec = o->codec.empty() ? (genotype_input ? "genotype" : "zstd") : o->codec;
    co.codec = *preprocess::codec_choice_from_name(codec);
    co.level = o->level;
    co.dtype = o->dtype == "f32" ? value_type::float32 : value_type::float64;
    co.shuffle = o->shuffle;
    co.standardize = genotype_input ? !o->no_standardize : o->standardize;
    co.overwrite = o->force;

    progress_line line("preprocess", !o->quiet);
    const auto result =
        preprocess::convert(*source, co, [&](const preprocess::convert_progress& p) {
          line.update(p.columns_done, p.columns_total, "columns",
                      static_cast<double>(p.input_bytes_done), p.seconds);
        });
    line.finish();
    if (!o->quiet) {
      const double in = static_cast<double>(result.input_bytes);
      const double frames = static_cast<double>(result.frame_bytes);
      std::cout << "wrote " << o->out << ": " << result.columns << " columns x " << result.rows
                << " rows, codec " << codec << ", " << human_bytes(frames) << " of frames ("
                << (in > 0 ? frames / in : 0) << "x the input) in " << result.seconds << " s, "
                << human_bytes(result.seconds > 0 ? in / result.seconds : 0) << "/s\n";
    }
    return 0;
  };
}

}  // namespace colflow::cli
