// The named inputs of `colflow preprocess` opened as one column_source, with its defaults.
#include "colflow/preprocess/inputs.hpp"

#include <fstream>
#include <thread>
#include <utility>

#include "colflow/error.hpp"
#include "colflow/preprocess/bgen_source.hpp"
#include "colflow/preprocess/concatenated_source.hpp"
#include "colflow/preprocess/npy_source.hpp"
#include "colflow/preprocess/pgen_source.hpp"

namespace colflow::preprocess {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The lines of a list file: one input per line, blank lines and # comments skipped, relative
// paths taken from the list's folder.
std::vector<std::filesystem::path> read_list(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw error(errc::not_found, "cannot open the list of inputs " + file.string());
  const std::filesystem::path base = file.parent_path();
  std::vector<std::filesystem::path> out;
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.pop_back();
    const std::size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    const std::filesystem::path p = line.substr(start);
    out.push_back(p.is_absolute() ? p : base / p);
  }
  if (out.empty()) throw error(errc::bad_input, file.string() + ": the list of inputs is empty");
  return out;
}

std::unique_ptr<column_source> one_or_concatenated(
    std::vector<std::unique_ptr<column_source>> parts) {
  if (parts.size() == 1) return std::move(parts.front());
  return std::make_unique<concatenated_source>(std::move(parts));
}

}  // namespace

input_format input_format_of(const std::filesystem::path& path) {
  const std::string p = path.string();
  if (ends_with(p, ".pgen")) return input_format::pgen;
  if (ends_with(p, ".bgen")) return input_format::bgen;
  if (ends_with(p, ".vcf") || ends_with(p, ".vcf.gz") || ends_with(p, ".vcf.bgz") ||
      ends_with(p, ".bcf"))
    return input_format::vcf;
  if (ends_with(p, ".npy")) return input_format::npy;
  if (ends_with(p, ".csv") || ends_with(p, ".tsv")) return input_format::csv;
  return input_format::plink;
}

const char* input_format_name(input_format f) {
  switch (f) {
    case input_format::plink:
      return "plink";
    case input_format::pgen:
      return "pgen";
    case input_format::bgen:
      return "bgen";
    case input_format::vcf:
      return "vcf";
    case input_format::npy:
      return "npy";
    case input_format::csv:
      return "csv";
  }
  return "?";
}

std::optional<vcf_options::dosage_field> dosage_field_from_name(const std::string& name) {
  if (name == "DS") return vcf_options::dosage_field::ds;
  if (name == "GP") return vcf_options::dosage_field::gp;
  return std::nullopt;
}

std::optional<vcf_options::half_call> half_call_from_name(const std::string& name) {
  using half = vcf_options::half_call;
  if (name == "error") return half::error;
  if (name == "missing") return half::missing;
  if (name == "haploid") return half::haploid;
  if (name == "reference") return half::reference;
  return std::nullopt;
}

std::optional<csv_presence> csv_presence_from_name(const std::string& name) {
  if (name == "auto") return csv_presence::detect;
  if (name == "yes") return csv_presence::present;
  if (name == "no") return csv_presence::absent;
  return std::nullopt;
}

std::unique_ptr<column_source> open_inputs(const input_options& o) {
  std::vector<std::filesystem::path> beds = o.bed, pfiles = o.pfile, bgens = o.bgen, vcfs = o.vcf;
  if (!o.inputs_list.empty())
    for (const std::filesystem::path& p : read_list(o.inputs_list)) {
      switch (input_format_of(p)) {
        case input_format::pgen:
          pfiles.push_back(p);
          break;
        case input_format::bgen:
          bgens.push_back(p);
          break;
        case input_format::vcf:
          vcfs.push_back(p);
          break;
        case input_format::plink:
          beds.push_back(p);
          break;
        case input_format::npy:
        case input_format::csv:
          throw error(errc::invalid_argument,
                      o.inputs_list.string() + " lists " + p.string() +
                          ": a list of inputs names PLINK prefixes, .pgen, BGEN or VCF/BCF files");
      }
    }
  const int formats = (!beds.empty()) + o.bed_files.has_value() + (!pfiles.empty()) +
                      o.pgen_files.has_value() + (!bgens.empty()) + (!vcfs.empty()) +
                      (!o.npy.empty()) + (!o.csv.empty());
  if (formats > 1)
    throw error(
        errc::invalid_argument,
        "the inputs of one store must be of one format (PLINK, PLINK 2, BGEN, VCF, .npy or CSV)" +
            std::string(o.inputs_list.empty() ? "" : " (" + o.inputs_list.string() + ")"));
  if (vcfs.empty() && (o.dosage != vcf_options::dosage_field::none || o.split_multiallelic ||
                       o.half_call != vcf_options::half_call::error))
    throw error(errc::invalid_argument,
                "--dosage, --split-multiallelic and --vcf-half-call apply to VCF input (--vcf)");
  if (bgens.empty() && (!o.sample.empty() || o.ref_first))
    throw error(errc::invalid_argument, "--sample and --ref-first apply to BGEN input (--bgen)");
  if (o.csv.empty() &&
      (o.csv_format.delimiter != '\0' || o.csv_format.header != csv_presence::detect ||
       o.csv_format.ids != csv_presence::detect))
    throw error(errc::invalid_argument, "--csv-header and --csv-ids apply to CSV input (--csv)");

  std::vector<std::unique_ptr<column_source>> parts;
  if (!beds.empty()) {
    for (const std::filesystem::path& prefix : beds)
      parts.push_back(std::make_unique<bed_source>(plink_paths::from_prefix(prefix.string())));
    return one_or_concatenated(std::move(parts));
  }
  if (o.bed_files) return std::make_unique<bed_source>(*o.bed_files);
  if (!pfiles.empty()) {
    for (const std::filesystem::path& prefix : pfiles)
      parts.push_back(std::make_unique<pgen_source>(pgen_paths::from_prefix(prefix.string())));
    return one_or_concatenated(std::move(parts));
  }
  if (o.pgen_files) return std::make_unique<pgen_source>(*o.pgen_files);
  if (!bgens.empty()) {
    for (const std::filesystem::path& file : bgens) {
      bgen_options b;
      b.bgen = file;
      b.sample = o.sample;
      b.ref_first = o.ref_first;
      parts.push_back(std::make_unique<bgen_source>(b));
    }
    return one_or_concatenated(std::move(parts));
  }
  if (!vcfs.empty()) {
    for (const std::filesystem::path& file : vcfs) {
      vcf_options v;
      v.path = file;
      v.dosage = o.dosage;
      v.split_multiallelic = o.split_multiallelic;
      v.half = o.half_call;
      v.threads = o.threads ? o.threads : std::thread::hardware_concurrency();
      parts.push_back(std::make_unique<vcf_source>(v));
    }
    return one_or_concatenated(std::move(parts));
  }
  if (!o.npy.empty()) return std::make_unique<npy_source>(o.npy);
  if (!o.csv.empty()) return std::make_unique<csv_source>(o.csv, o.csv_format);
  throw error(errc::invalid_argument,
              "no input: give --bed PREFIX..., --bed-file/--bim/--fam, --pfile PREFIX..., "
              "--pgen/--pvar/--psam, --bgen FILE..., --vcf "
              "FILE..., --inputs LIST, --npy FILE or --csv FILE");
}

convert_options make_convert_options(value_type kind, const conversion_choices& choices,
                                     const std::filesystem::path& out) {
  const bool genotype_input = kind == value_type::genotype;
  const bool dosage_input = kind == value_type::dosage;
  convert_options co;
  co.out = out;
  // Genotype input: a genotype store unless a float store (a dtype) is asked for. Dosage input:
  // a dosage store unless hard calls (a genotype codec or a threshold) or a float store are.
  co.codec = choices.codec.value_or((genotype_input && !choices.dtype) ||
                                            (dosage_input && choices.hard_call_threshold)
                                        ? codec_choice::genotype
                                        : codec_choice::zstd);
  co.level = choices.level;
  co.dtype = choices.dtype.value_or(value_type::float64);
  co.keep_dosages = !choices.dtype;
  // Dosages are split for zstd unless asked otherwise; 16-bit dosages (without the split)
  // compress better shuffled; floats are left as they are unless asked.
  co.split_dosages = choices.split_dosages;
  co.shuffle = choices.shuffle.value_or(dosage_input && co.keep_dosages);
  co.standardize = choices.standardize.value_or(genotype_input || dosage_input);
  if (choices.hard_call_threshold) co.hard_call_threshold = *choices.hard_call_threshold;
  co.source_hard_calls = !choices.hard_call_threshold;
  co.sex_file = choices.sex_file;
  co.overwrite = choices.overwrite;
  return co;
}

}  // namespace colflow::preprocess
