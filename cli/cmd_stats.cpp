// colflow stats: per-column statistics of the selected samples.
#include "analysis_setup.hpp"
#include "colflow/analysis/sex_chromosomes.hpp"
#include "colflow/analysis/stats.hpp"
#include "commands.hpp"
#include "processes.hpp"
#include "validators.hpp"

namespace colflow::cli {

command add_stats(CLI::App& app) {
  struct options {
    analysis_flags common;
    std::string out, sex;
  };
  auto o = std::make_shared<options>();
  add_analysis_flags(app, o->common);
  app.add_option("--out", o->out, "The TSV file to write")->check(output_path())->required();
  app.add_option("--sex", o->sex,
                 "Samples' sexes for X, Y and MT, as plink2 --update-sex reads them: FID IID\n"
                 "SEX lines, or a header #FID IID ... SEX ... / #IID ... SEX ...; SEX 1/M male,\n"
                 "2/F female, 0/NA unknown. Samples absent keep the store's sex (the .fam's)");
  app.footer(
      "Genotype stores: #CHR ID POS A1 A2 OBS_CT MISSING_CT F_MISS A1_FREQ MEAN SD per column.\n"
      "OBS_CT counts the selected samples with a call (PLINK 2 --freq's OBS_CT counts alleles,\n"
      "twice as many on autosomes; --missing's counts samples, OBS_CT + MISSING_CT here).\n"
      "A1_FREQ is the frequency of A1 (the .bim's 5th column, PLINK 2's ALT for a .bed) among\n"
      "observed alleles, MEAN the mean dosage, SD the standard deviation standardisation\n"
      "divides by: sqrt(sum (x - mean)^2 / (N - 1)) over the N selected samples, missing calls\n"
      "imputed with the mean.\n"
      "Sex chromosomes, as PLINK 2 counts them: on X a male's call is one allele (a\n"
      "heterozygous one half an A1), females' and unknown-sex samples' two; on Y only males\n"
      "are counted (OBS_CT, MISSING_CT, F_MISS and A1_FREQ), one allele each; on MT everyone\n"
      "has one allele; XY is diploid. MEAN and SD stay those of the stored dosages (0-2) of\n"
      "every selected sample. Sexes come from the store (the .fam's), or --sex.\n"
      "Dense stores: ID OBS_CT MISSING_CT MEAN SD MIN MAX.\n"
      "All samples are counted, founders or not (PLINK 2 --freq counts founders unless\n"
      "--nonfounders). With every sample selected, the figures of columns not on X, Y or MT\n"
      "come from the store's index without reading the data.");
  return [o] {
    analysis_run run("stats", o->common);
    const store& s = run.source();
    const std::vector<sample_sex> sexes =
        o->sex.empty() ? std::vector<sample_sex>{} : run.read_sexes(o->sex);
    const auto summaries = sexes.empty()
                               ? column_summaries(s, run.selected(), run.options())
                               : column_summaries(s, run.selected(), sexes, run.options());
    if (!is_writer()) return 0;  // rank 0 writes the results of every rank
    write_stats(s, run.selected(), summaries, o->out, o->common.digits);
    run.log("wrote " + o->out);
    return 0;
  };
}

}  // namespace colflow::cli
