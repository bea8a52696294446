// colflow stats: per-column statistics of the selected samples.
#include "analysis_setup.hpp"
#include "colflow/analysis/stats.hpp"
#include "commands.hpp"
#include "processes.hpp"

namespace colflow::cli {

command add_stats(CLI::App& app) {
  struct options {
    analysis_flags common;
    std::string out;
  };
  auto o = std::make_shared<options>();
  add_analysis_flags(app, o->common);
  app.add_option("--out", o->out, "The TSV file to write")->required();
  app.footer(
      "Genotype stores: #CHR ID POS A1 A2 OBS_CT MISSING_CT F_MISS A1_FREQ MEAN SD per column.\n"
      "OBS_CT counts the selected samples with a call (PLINK 2 --freq's OBS_CT counts alleles,\n"
      "twice as many; --missing's counts every sample, OBS_CT + MISSING_CT here). A1_FREQ is\n"
      "the frequency of A1 (the .bim's 5th column, PLINK 2's ALT for a .bed) among observed\n"
      "alleles, MEAN the mean dosage, SD the standard\n"
      "deviation standardisation divides by: sqrt(sum (x - mean)^2 / (N - 1)) over the N\n"
      "selected samples, missing calls imputed with the mean.\n"
      "Dense stores: ID OBS_CT MISSING_CT MEAN SD MIN MAX.\n"
      "All samples are counted, founders or not (PLINK 2 --freq counts founders unless\n"
      "--nonfounders). With every sample selected, the figures come from the store's index\n"
      "without reading the data.");
  return [o] {
    analysis_run run("stats", o->common);
    const auto summaries = column_summaries(run.source(), run.selected(), run.options());
    if (!is_writer()) return 0;  // rank 0 writes the results of every rank
    write_stats(run.source(), run.selected(), summaries, o->out, o->common.digits);
    run.log("wrote " + o->out);
    return 0;
  };
}

}  // namespace colflow::cli
