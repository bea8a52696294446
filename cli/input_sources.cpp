#include "input_sources.hpp"

#include <fstream>
#include <thread>

#include "colflow/error.hpp"
#include "colflow/preprocess/bed_source.hpp"
#include "colflow/preprocess/bgen_source.hpp"
#include "colflow/preprocess/concatenated_source.hpp"
#include "colflow/preprocess/csv_source.hpp"
#include "colflow/preprocess/npy_source.hpp"
#include "colflow/preprocess/vcf_source.hpp"

namespace colflow::cli {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The lines of a list file: one input per line, blank lines and # comments skipped, relative
// paths taken from the list's folder.
std::vector<std::string> read_list(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw error(errc::not_found, "cannot open the list of inputs " + file);
  const std::filesystem::path base = std::filesystem::path(file).parent_path();
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.pop_back();
    const std::size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    const std::filesystem::path p = line.substr(start);
    out.push_back((p.is_absolute() ? p : base / p).string());
  }
  if (out.empty()) throw error(errc::bad_input, file + ": the list of inputs is empty");
  return out;
}

std::unique_ptr<preprocess::column_source> one_or_concatenated(
    std::vector<std::unique_ptr<preprocess::column_source>> parts) {
  if (parts.size() == 1) return std::move(parts.front());
  return std::make_unique<preprocess::concatenated_source>(std::move(parts));
}

}  // namespace

void add_input_options(CLI::App& app, input_options& o) {
  auto* bed =
      app.add_option("--bed", o.bed_prefixes,
                     "PLINK 1 binary input PREFIX (PREFIX.bed, .bim, .fam); several\n"
                     "prefixes (per-chromosome filesets of the same samples) make one store")
          ->expected(1, -1);
  auto* bed_file = app.add_option("--bed-file", o.bed_file, "Explicit .bed path");
  auto* bim_file = app.add_option("--bim", o.bim_file, "Explicit .bim path (with --bed-file)");
  auto* fam_file = app.add_option("--fam", o.fam_file, "Explicit .fam path (with --bed-file)");
  bed_file->needs(bim_file)->needs(fam_file)->excludes(bed);
  bim_file->needs(bed_file);
  fam_file->needs(bed_file);
  auto* bgen = app.add_option("--bgen", o.bgen_files,
                              "BGEN input (v1.1, 1.2, 1.3): dosages of the first allele; several\n"
                              "files of the same samples make one store")
                   ->expected(1, -1);
  app.add_option("--sample", o.sample_file,
                 "BGEN: Oxford .sample file of the samples (default: the IDs in the .bgen)")
      ->needs(bgen);
  app.add_flag("--ref-first", o.ref_first,
               "BGEN: the first allele is the reference, count the second (UK Biobank files;\n"
               "PLINK 2's ref-first). Default: count the first (ref-last, as plink2 exports)")
      ->needs(bgen);
  auto* vcf = app.add_option("--vcf", o.vcf_files,
                             "VCF or BCF input (plain, bgzipped or .bcf): GT hard calls, or the\n"
                             "dosages of --dosage; ALT is the counted allele; several files of\n"
                             "the same samples make one store")
                  ->expected(1, -1);
  app.add_option("--dosage", o.dosage_field,
                 "VCF: read dosages from FORMAT field DS (ALT dosage) or GP (genotype\n"
                 "probabilities) into a dosage store, as plink2 --vcf ... dosage=DS|GP")
      ->check(CLI::IsMember({"DS", "GP"}));
  app.add_flag("--split-multiallelic", o.split_multiallelic,
               "VCF: read a record with several ALT alleles as one column per ALT allele (as\n"
               "bcftools norm -m- splits it); by default such a record is an error");
  app.add_option("--vcf-half-call", o.half_call,
                 "VCF: a GT with one allele missing (./1): error (default, as plink2), missing,\n"
                 "haploid (the known allele, homozygous) or reference (the missing allele = REF)")
      ->check(CLI::IsMember({"error", "missing", "haploid", "reference"}));
  auto* inputs = app.add_option("--inputs", o.inputs_list,
                                "A file listing the inputs of one store, one per line: PLINK\n"
                                "prefixes, .bgen files or .vcf/.vcf.gz/.bcf files (one format)");
  auto* npy =
      app.add_option("--npy", o.npy,
                     "Dense input: a NumPy .npy file (v1-v3, float32/float64, C or Fortran\n"
                     "order, samples in rows); memory-mapped");
  auto* csv =
      app.add_option("--csv", o.csv,
                     "Dense input: comma- or tab-separated text, samples in rows, optional\n"
                     "header row and sample-ID column; held in memory as float64");
  app.add_option("--csv-header", o.csv_header, "CSV header row: auto (default), yes, no")
      ->check(CLI::IsMember({"auto", "yes", "no"}));
  app.add_option("--csv-ids", o.csv_ids, "CSV first column of sample IDs: auto (default), yes, no")
      ->check(CLI::IsMember({"auto", "yes", "no"}));
  // One input format per store.
  const std::vector<CLI::Option*> formats = {bed, bed_file, bgen, vcf, inputs, npy, csv};
  for (std::size_t a = 0; a < formats.size(); ++a)
    for (std::size_t b = a + 1; b < formats.size(); ++b)
      if (!(formats[a] == bed && formats[b] == bed_file)) formats[a]->excludes(formats[b]);
}

std::unique_ptr<preprocess::column_source> open_inputs(const input_options& o) {
  std::vector<std::string> beds = o.bed_prefixes, bgens = o.bgen_files, vcfs = o.vcf_files;
  if (!o.inputs_list.empty())
    for (const std::string& p : read_list(o.inputs_list)) {
      if (ends_with(p, ".bgen"))
        bgens.push_back(p);
      else if (ends_with(p, ".vcf") || ends_with(p, ".vcf.gz") || ends_with(p, ".vcf.bgz") ||
               ends_with(p, ".bcf"))
        vcfs.push_back(p);
      else
        beds.push_back(p);
    }
  if ((!beds.empty()) + (!bgens.empty()) + (!vcfs.empty()) > 1)
    throw error(errc::invalid_argument,
                "the inputs of one store must be of one format (PLINK, BGEN or VCF)" +
                    std::string(o.inputs_list.empty() ? "" : " (" + o.inputs_list + ")"));

  if (vcfs.empty() && (!o.dosage_field.empty() || o.split_multiallelic || o.half_call != "error"))
    throw error(errc::invalid_argument,
                "--dosage, --split-multiallelic and --vcf-half-call apply to VCF input (--vcf)");
  std::vector<std::unique_ptr<preprocess::column_source>> parts;
  if (!beds.empty()) {
    for (const std::string& prefix : beds)
      parts.push_back(
          std::make_unique<preprocess::bed_source>(preprocess::plink_paths::from_prefix(prefix)));
    return one_or_concatenated(std::move(parts));
  }
  if (!o.bed_file.empty())
    return std::make_unique<preprocess::bed_source>(
        preprocess::plink_paths{o.bed_file, o.bim_file, o.fam_file});
  if (!bgens.empty()) {
    for (const std::string& file : bgens) {
      preprocess::bgen_options b;
      b.bgen = file;
      b.sample = o.sample_file;
      b.ref_first = o.ref_first;
      parts.push_back(std::make_unique<preprocess::bgen_source>(b));
    }
    return one_or_concatenated(std::move(parts));
  }
  if (!vcfs.empty()) {
    for (const std::string& file : vcfs) {
      preprocess::vcf_options v;
      v.path = file;
      using field = preprocess::vcf_options::dosage_field;
      v.dosage = o.dosage_field == "DS"   ? field::ds
                 : o.dosage_field == "GP" ? field::gp
                                          : field::none;
      v.split_multiallelic = o.split_multiallelic;
      using half = preprocess::vcf_options::half_call;
      v.half = o.half_call == "missing"     ? half::missing
               : o.half_call == "haploid"   ? half::haploid
               : o.half_call == "reference" ? half::reference
                                            : half::error;
      v.threads = o.threads ? o.threads : std::thread::hardware_concurrency();
      parts.push_back(std::make_unique<preprocess::vcf_source>(v));
    }
    return one_or_concatenated(std::move(parts));
  }
  if (!o.npy.empty()) return std::make_unique<preprocess::npy_source>(o.npy);
  if (!o.csv.empty()) {
    const auto presence = [](const std::string& v) {
      return v == "yes"  ? preprocess::csv_presence::present
             : v == "no" ? preprocess::csv_presence::absent
                         : preprocess::csv_presence::detect;
    };
    preprocess::csv_options copt;
    copt.header = presence(o.csv_header);
    copt.ids = presence(o.csv_ids);
    return std::make_unique<preprocess::csv_source>(o.csv, copt);
  }
  throw error(errc::invalid_argument,
              "no input: give --bed PREFIX..., --bed-file/--bim/--fam, --bgen FILE..., --vcf "
              "FILE..., --inputs LIST, --npy FILE or --csv FILE");
}

}  // namespace colflow::cli
