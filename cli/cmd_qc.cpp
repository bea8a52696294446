// colflow qc: plink2's quality-control filters, writing what passes them as plink2's
// --write-snplist and --write-samples do.
#include <string>

#include "analysis_setup.hpp"
#include "colflow/analysis/qc_filters.hpp"
#include "colflow/error.hpp"
#include "commands.hpp"
#include "processes.hpp"
#include "validators.hpp"

namespace colflow::cli {

command add_qc(CLI::App& app) {
  struct options {
    analysis_flags common;
    std::string out;
    bool write_snplist = false, write_samples = false, no_id_header = false;
  };
  auto o = std::make_shared<options>();
  add_analysis_flags(app, o->common);
  app.add_flag("--write-snplist", o->write_snplist,
               "Write the IDs of the variants that pass to PREFIX.snplist");
  app.add_flag("--write-samples", o->write_samples,
               "Write the FID and IID of the samples that pass to PREFIX.id");
  app.add_flag("--no-id-header", o->no_id_header, "PREFIX.id without its header line (#FID IID)");
  app.add_option("--hard-call-threshold", o->common.qc.hard_call_threshold,
                 "Dosage stores: a dosage this close to 0, 1 or 2 is that call, others missing\n"
                 "(default 0.1, plink2's)")
      ->check(number_range(0, 0.5));
  app.add_option("--out", o->out, "Output prefix: PREFIX.snplist and PREFIX.id")
      ->check(output_path())
      ->required();
  app.footer(
      "As plink2 --mind --geno --hwe --maf --max-maf --mac --max-mac: the samples and variants\n"
      "that pass the filters, in plink2's order: --keep/--remove/--extract/--exclude, then\n"
      "--mind over the selected variants, then --geno over the samples left, --hwe and the\n"
      "allele filters (--maf, --max-maf, --mac, --max-mac) over the founders (every sample\n"
      "with --nonfounders), each among the variants the ones before left. Males are haploid on\n"
      "X and Y, only males count on Y, everyone is haploid on MT; --hwe tests X as plink2 does\n"
      "and leaves Y and MT untested. Sexes and parents come from the store (the .fam's).\n"
      "The log lines are plink2's. Every analysis command takes the same filters.\n"
      "Dosage stores: the hard calls of the dosages. Dense stores are refused.");
  return [o] {
    if (!o->write_snplist && !o->write_samples)
      throw error(errc::invalid_argument,
                  "qc: nothing to write; give --write-snplist and/or --write-samples");
    analysis_run run("qc", o->common);
    if (!is_writer()) return 0;  // rank 0 writes
    run.release_store_pages();   // the filters' passes are over
    const std::filesystem::path prefix = o->out;
    if (o->write_snplist) {
      const auto file = prefix.string() + ".snplist";
      write_snplist(run.source(), run.selected(), file);
      run.log("--write-snplist: variant IDs written to " + file);
    }
    if (o->write_samples) {
      const auto file = prefix.string() + ".id";
      write_sample_ids(run.source(), run.selected(), file, !o->no_id_header);
      run.log("--write-samples: sample IDs written to " + file);
    }
    return 0;
  };
}

}  // namespace colflow::cli
