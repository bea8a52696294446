// The inputs of `colflow preprocess` on the command line: PLINK 1 and 2 filesets, BGEN and VCF/BCF
// files (several of one kind become one store, concatenated in the order given), a list file
// naming them, or a dense matrix. The library opens them (preprocess/inputs.hpp).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "colflow/preprocess/column_source.hpp"

namespace colflow::cli {

struct input_options {
  std::vector<std::string> bed_prefixes, pfile_prefixes, bgen_files, vcf_files;
  std::string bed_file, bim_file, fam_file, pgen_file, pvar_file, psam_file, inputs_list, npy, csv;
  std::string csv_header = "auto", csv_ids = "auto";
  std::string sample_file;                        // BGEN
  bool ref_first = false;                         // BGEN
  std::string dosage_field, half_call = "error";  // VCF
  bool split_multiallelic = false;                // VCF
  unsigned threads = 0;
};

// Registers the input options (--bed, --bed-file/--bim/--fam, --pfile, --pgen/--pvar/--psam,
// --bgen, --sample, --ref-first,
// --vcf, --dosage, --split-multiallelic, --vcf-half-call, --inputs, --npy, --csv...).
void add_input_options(CLI::App& app, input_options& o);

// Opens the inputs named by `o` with the library's open_inputs (preprocess/inputs.hpp), which
// validates them and throws colflow::error invalid_argument when no input or inputs of
// different formats are given.
std::unique_ptr<preprocess::column_source> open_inputs(const input_options& o);

}  // namespace colflow::cli
