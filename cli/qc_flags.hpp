// The quality-control filter flags every analysis command takes, as plink2 spells them:
// --mind [F], --geno [F], --hwe P [midp] [keep-fewhet], --maf [F], --max-maf F, --mac N,
// --max-mac N and --nonfounders (colflow/analysis/qc_filters.hpp).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "colflow/analysis/qc_filters.hpp"

namespace colflow::cli {

struct qc_flags {
  std::vector<std::string> mind, geno, hwe, maf, max_maf, mac, max_mac;
  bool nonfounders = false;
  // Dosage stores: the hard-call threshold of the filters' calls; a command with its own
  // --hard-call-threshold sets it before the run.
  double hard_call_threshold = 0.1;
  // The options, to tell a flag given without a value from one not given.
  std::vector<std::pair<CLI::Option*, std::vector<std::string>*>> given;
};

// Registers the filter flags on `app` (in an option group of their own in --help).
void add_qc_flags(CLI::App& app, qc_flags& flags);

// The filters the flags ask for. Throws colflow::error invalid_argument naming the option for a
// value that is not a number, an unknown --hwe modifier, or a threshold out of range
// (check_qc_filter_options).
qc_filter_options qc_filter_options_of(const qc_flags& flags);

}  // namespace colflow::cli
