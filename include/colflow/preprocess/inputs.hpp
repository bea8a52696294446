/// @file inputs.hpp
/// The inputs of `colflow preprocess` as one column_source, and the command's conversion
/// defaults: what a program that converts named inputs the way the command does (the command
/// itself, the Python package's colflow.preprocess) needs, in one place. Part of
/// libcolflow_preprocess (colflow::preprocess).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "colflow/preprocess/bed_source.hpp"
#include "colflow/preprocess/column_source.hpp"
#include "colflow/preprocess/converter.hpp"
#include "colflow/preprocess/csv_source.hpp"
#include "colflow/preprocess/pgen_source.hpp"
#include "colflow/preprocess/vcf_source.hpp"

namespace colflow::preprocess {

/// The input formats of the command.
enum class input_format { plink, pgen, bgen, vcf, npy, csv };

/// The format a path names by its ending: ".pgen" a PLINK 2 fileset; ".bgen" BGEN; ".vcf",
/// ".vcf.gz", ".vcf.bgz", ".bcf" VCF/BCF; ".npy" NumPy; ".csv", ".tsv" CSV text; anything else a
/// PLINK prefix (or .bed). This is how a list of inputs (input_options::inputs_list) is read.
input_format input_format_of(const std::filesystem::path& path);
/// "plink", "pgen", "bgen", "vcf", "npy", "csv".
const char* input_format_name(input_format f);

/// "DS" or "GP" (the command's --dosage), or nullopt.
std::optional<vcf_options::dosage_field> dosage_field_from_name(const std::string& name);
/// "error", "missing", "haploid", "reference" (the command's --vcf-half-call), or nullopt.
std::optional<vcf_options::half_call> half_call_from_name(const std::string& name);
/// "auto" (detect), "yes" (present), "no" (absent), as --csv-header and --csv-ids, or nullopt.
std::optional<csv_presence> csv_presence_from_name(const std::string& name);

/// The inputs of one store, as the command's options name them. Exactly one kind is given.
struct input_options {
  /// PLINK 1 filesets by prefix (--bed PREFIX...); several become one store, in this order.
  std::vector<std::filesystem::path> bed;
  /// A PLINK 1 fileset by its three paths (--bed-file, --bim, --fam).
  std::optional<plink_paths> bed_files;
  /// PLINK 2 filesets by prefix (--pfile PREFIX...: PREFIX.pgen, .pvar or .pvar.zst, .psam);
  /// several become one store, in this order.
  std::vector<std::filesystem::path> pfile;
  /// A PLINK 2 fileset by its three paths (--pgen, --pvar, --psam).
  std::optional<pgen_paths> pgen_files;
  /// BGEN files (--bgen FILE...), their Oxford .sample file (--sample; empty: the IDs in the
  /// .bgen) and PLINK 2's ref-first (--ref-first).
  std::vector<std::filesystem::path> bgen;
  std::filesystem::path sample;
  bool ref_first = false;
  /// VCF/BCF files (--vcf FILE...) and how to read them (--dosage, --split-multiallelic,
  /// --vcf-half-call; vcf_options).
  std::vector<std::filesystem::path> vcf;
  vcf_options::dosage_field dosage = vcf_options::dosage_field::none;
  bool split_multiallelic = false;
  vcf_options::half_call half_call = vcf_options::half_call::error;
  /// A file listing the inputs, one per line (--inputs): PLINK prefixes, .bgen files or VCF/BCF
  /// files or .pgen files, of one format (input_format_of); blank lines and # comments skipped,
  /// relative paths taken from the list's folder. Its inputs come after those of `bed`, `bgen` or
  /// `vcf`.
  std::filesystem::path inputs_list;
  /// A NumPy .npy file (--npy).
  std::filesystem::path npy;
  /// A CSV file (--csv) and how to read it (--csv-header, --csv-ids).
  std::filesystem::path csv;
  csv_options csv_format;
  /// htslib threads for VCF/BCF decompression; 0: every core.
  unsigned threads = 0;
};

/// Opens the inputs named by `o` as one source (validating them: see each source), several
/// inputs of one format as a concatenated_source in the order given.
///
/// Errors (colflow::error): errc::invalid_argument for no input, inputs of several formats, a
/// format's options with inputs of another (dosage, split_multiallelic or half_call without
/// VCF input, sample or ref_first without BGEN input, a csv_format other than the default
/// without CSV input), a list that names .npy or CSV files; errc::not_found for a list that
/// cannot be opened, errc::bad_input for an empty one; what the sources and concatenated_source
/// throw.
std::unique_ptr<column_source> open_inputs(const input_options& o);

/// The command's conversion options as given: what is not given takes the command's default
/// for the kind of the source (make_convert_options).
struct conversion_choices {
  /// Default: genotype for genotype input without a dtype and for dosage input with a
  /// hard_call_threshold, zstd otherwise (a dosage store for dosage input, a float store for
  /// dense input and for input given a dtype).
  std::optional<codec_choice> codec;
  std::optional<int> level;
  /// float64 or float32, for float stores; given for genotype or dosage input, it makes a float
  /// store instead of a genotype or dosage store. Default: float64.
  std::optional<value_type> dtype;
  /// Dosage input with a genotype codec (convert_options::hard_call_threshold). Default 0.1,
  /// or, for an input with hard calls of its own (a .pgen), those calls
  /// (convert_options::source_hard_calls).
  std::optional<double> hard_call_threshold;
  /// Byte-shuffle the payloads. Default: for dosage stores, not for float stores.
  std::optional<bool> shuffle;
  /// Float stores of standardised values. Default: for genotype and dosage input, not for dense.
  std::optional<bool> standardize;
  /// Dosage stores compressed with zstd: the dosage-zstd codec (convert_options::split_dosages);
  /// false: zstd on the 16-bit values.
  bool split_dosages = true;
  std::filesystem::path sex_file;  ///< convert_options::sex_file
  bool overwrite = false;          ///< convert_options::overwrite
};

/// The convert_options of `colflow preprocess` with `choices` for a source of kind `kind`
/// (column_source::kind()) written to `out`. Options that do not fit the source are left for
/// convert() to refuse.
convert_options make_convert_options(value_type kind, const conversion_choices& choices,
                                     const std::filesystem::path& out);

}  // namespace colflow::preprocess
