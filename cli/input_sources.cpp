// The input options of `colflow preprocess`, and the column source they name.
#include "input_sources.hpp"

#include "colflow/preprocess/inputs.hpp"

namespace colflow::cli {

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
  auto* pfile =
      app.add_option("--pfile", o.pfile_prefixes,
                     "PLINK 2 input PREFIX (PREFIX.pgen, .pvar or .pvar.zst, .psam): hard calls,\n"
                     "or ALT dosages when the .pgen holds dosages; A1 = ALT as plink2 --make-bed\n"
                     "writes it; phase dropped; several prefixes make one store")
          ->expected(1, -1);
  auto* pgen_file =
      app.add_option("--pgen", o.pgen_file, "Explicit .pgen path (with --pvar, --psam)");
  auto* pvar_file = app.add_option("--pvar", o.pvar_file, "Explicit .pvar or .pvar.zst path");
  auto* psam_file = app.add_option("--psam", o.psam_file, "Explicit .psam path (or a .fam)");
  pgen_file->needs(pvar_file)->needs(psam_file);
  pvar_file->needs(pgen_file);
  psam_file->needs(pgen_file);
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
                                "prefixes, .pgen, .bgen or .vcf/.vcf.gz/.bcf files (one format)");
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
  const std::vector<CLI::Option*> formats = {bed, bed_file, pfile, pgen_file, bgen,
                                             vcf, inputs,   npy,   csv};
  for (std::size_t a = 0; a < formats.size(); ++a)
    for (std::size_t b = a + 1; b < formats.size(); ++b)
      if (!(formats[a] == bed && formats[b] == bed_file)) formats[a]->excludes(formats[b]);
}

std::unique_ptr<preprocess::column_source> open_inputs(const input_options& o) {
  // The options' values are checked by CLI11 (IsMember), so every name is known here.
  preprocess::input_options in;
  in.bed.assign(o.bed_prefixes.begin(), o.bed_prefixes.end());
  if (!o.bed_file.empty())
    in.bed_files = preprocess::plink_paths{o.bed_file, o.bim_file, o.fam_file};
  in.pfile.assign(o.pfile_prefixes.begin(), o.pfile_prefixes.end());
  if (!o.pgen_file.empty())
    in.pgen_files = preprocess::pgen_paths{o.pgen_file, o.pvar_file, o.psam_file};
  in.bgen.assign(o.bgen_files.begin(), o.bgen_files.end());
  in.sample = o.sample_file;
  in.ref_first = o.ref_first;
  in.vcf.assign(o.vcf_files.begin(), o.vcf_files.end());
  if (!o.dosage_field.empty()) in.dosage = *preprocess::dosage_field_from_name(o.dosage_field);
  in.split_multiallelic = o.split_multiallelic;
  in.half_call = *preprocess::half_call_from_name(o.half_call);
  in.inputs_list = o.inputs_list;
  in.npy = o.npy;
  in.csv = o.csv;
  in.csv_format.header = *preprocess::csv_presence_from_name(o.csv_header);
  in.csv_format.ids = *preprocess::csv_presence_from_name(o.csv_ids);
  in.threads = o.threads;
  return preprocess::open_inputs(in);
}

}  // namespace colflow::cli
