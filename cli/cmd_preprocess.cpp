// colflow preprocess: PLINK, BGEN, VCF/BCF or dense inputs converted into a store.
#include <iostream>
#include <memory>

#include "colflow/colflow.hpp"
#include "colflow/preprocess/converter.hpp"
#include "colflow/preprocess/inputs.hpp"
#include "commands.hpp"
#include "input_sources.hpp"
#include "progress.hpp"
#include "validators.hpp"

namespace colflow::cli {

command add_preprocess(CLI::App& app) {
  struct options {
    input_options input;
    std::string out, codec, dtype = "f64", sex;
    std::optional<int> level;
    std::optional<double> hard_call_threshold;
    bool shuffle = false, no_shuffle = false, no_split = false, no_standardize = false,
         standardize = false, force = false, quiet = false;
  };
  auto o = std::make_shared<options>();
  add_input_options(app, o->input);
  app.add_option("--out", o->out, "The store directory to write")->check(output_path())->required();
  app.add_option("--codec", o->codec,
                 "genotype (default for .bed: the 2-bit codes as they are, about the .bed's\n"
                 "size; for dosage input, its hard calls), genotype-zstd (the codes compressed\n"
                 "with zstd), zstd (default for dosage and dense input), lz4, zlib or none\n"
                 "(16-bit dosages for dosage input, float values otherwise), auto")
      ->check(CLI::IsMember({"genotype", "genotype-zstd", "auto", "none", "zlib", "lz4", "zstd"}));
  app.add_option("--level", o->level,
                 "Compression level: zlib 1-9 (6), lz4 1-12 (1; 3+ is LZ4 HC), zstd 1-19 (3)");
  auto* dtype =
      app.add_option("--dtype", o->dtype,
                     "Float store value type: f64 (default) or f32; for genotype or\n"
                     "dosage input, a float store instead of the genotype or dosage store")
          ->check(CLI::IsMember({"f64", "f32"}));
  app.add_option("--hard-call-threshold", o->hard_call_threshold,
                 "Dosage input: store hard calls (genotype codec), a dosage within this\n"
                 "distance of 0, 1 or 2 becoming that call, others missing (PLINK 2's\n"
                 "rule; 0.1 with --codec genotype when not given)")
      ->check(number_range(0.0, 0.5));
  auto* shuffle = app.add_flag("--shuffle", o->shuffle,
                               "Byte-shuffle float columns before compressing (dosage stores\n"
                               "with --no-split are shuffled by default)");
  app.add_flag("--no-shuffle", o->no_shuffle,
               "Dosage stores not in the split layout: do not byte-shuffle")
      ->excludes(shuffle);
  app.add_flag("--no-split", o->no_split,
               "Dosage stores with zstd: compress the 16-bit values (byte-shuffled unless\n"
               "--no-shuffle) instead of the split layout (codec dosage-zstd: whole copies\n"
               "as 2-bit codes, the other values apart), which is smaller");
  auto* no_standardize =
      app.add_flag("--no-standardize", o->no_standardize,
                   "Float store from genotypes or dosages: store dosages (NaN for missing), not\n"
                   "standardised values (standardised by default)");
  app.add_flag("--standardize", o->standardize,
               "Dense input: store standardised values (missing -> 0, centred, z'z = N - 1);\n"
               "by default dense values are kept as they are")
      ->excludes(no_standardize);
  app.add_option("--sex", o->sex,
                 "Set the samples' sex in the store (for X, Y and MT in stats), from a file\n"
                 "as plink2 --update-sex reads it: FID IID SEX lines, or a header #FID IID ...\n"
                 "SEX ... / #IID ... SEX ...; SEX 1/M male, 2/F female, 0/NA unknown. Samples\n"
                 "absent keep the input's sex (the .fam's; unknown for VCF, BGEN without one)");
  app.add_option("--threads", o->input.threads, "Worker threads (default: all cores)");
  app.add_flag("--force", o->force, "Replace an existing store at --out (only when done)");
  app.add_flag("--quiet", o->quiet, "No progress display and no summary");
  app.footer(
      "--codec auto: for each column, encode it with none, lz4 (level 1) and zstd (level 3)\n"
      "and keep the smallest frame. These codecs all decode at 500 MB/s or more on one core;\n"
      "zlib is slower and is never picked. For .bed input, auto works on the 2-bit codes.\n\n"
      "Genotype stores keep each column's PLINK codes and decode them through a per-column\n"
      "lookup table to standardised values (missing calls mean-imputed, z'z = N - 1).\n"
      "Dosage stores (BGEN, .pgen with dosages, VCF with --dosage) keep each dosage at\n"
      "PLINK 2's precision, 1/16384 of an allele; with zstd (the default) in the split\n"
      "layout (codec dosage-zstd): a 2-bit code per sample for 0, 1 or 2 whole copies,\n"
      "then the missing and fractional ones apart.\n"
      "Several inputs of one format (per-chromosome files of the same samples) make one\n"
      "store, their columns in the order given; chromosome codes are stored as PLINK 2\n"
      "writes them (chr1 -> 1, 23 -> X, 24 -> Y, 25 -> XY, 26 -> MT).\n"
      "The store appears only when complete; an existing one is replaced only with --force.");
  return [o, dtype] {
    const auto threads = limit_threads(o->input.threads);
    std::unique_ptr<preprocess::column_source> source = open_inputs(o->input);
    // The options given; the library fills in the command's defaults for the input's kind.
    preprocess::conversion_choices choices;
    if (!o->codec.empty()) choices.codec = preprocess::codec_choice_from_name(o->codec);
    choices.level = o->level;
    if (dtype->count() > 0)
      choices.dtype = o->dtype == "f32" ? value_type::float32 : value_type::float64;
    choices.hard_call_threshold = o->hard_call_threshold;
    if (o->shuffle || o->no_shuffle) choices.shuffle = o->shuffle;
    if (o->standardize || o->no_standardize) choices.standardize = o->standardize;
    choices.split_dosages = !o->no_split;
    choices.sex_file = o->sex;
    choices.overwrite = o->force;
    const preprocess::convert_options co =
        preprocess::make_convert_options(source->kind(), choices, o->out);
    const std::string codec = preprocess::codec_choice_name(co.codec);

    progress_line line("preprocess", !o->quiet);
    const auto result =
        preprocess::convert(*source, co, [&](const preprocess::convert_progress& p) {
          line.update(p.columns_done, p.columns_total, "columns",
                      static_cast<double>(p.input_bytes_done), p.seconds);
        });
    line.finish();
    if (!o->quiet)
      for (const std::string& note : source->notes()) std::cerr << "note: " << note << "\n";
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
