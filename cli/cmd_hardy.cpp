// colflow hardy: the exact test of Hardy-Weinberg equilibrium per column, as plink2 --hardy.
#include <string>

#include "analysis_setup.hpp"
#include "colflow/analysis/hardy.hpp"
#include "commands.hpp"
#include "processes.hpp"
#include "validators.hpp"

namespace colflow::cli {

command add_hardy(CLI::App& app) {
  struct options {
    analysis_flags common;
    std::string out, sex;
    hardy_options hardy;
  };
  auto o = std::make_shared<options>();
  add_analysis_flags(app, o->common);
  app.add_flag("--midp", o->hardy.midp,
               "Report the mid-p value (column MIDP) in place of P, as plink2 --hardy midp");
  app.add_option("--sex", o->sex,
                 "Samples' sexes for X, as plink2 --update-sex reads them: FID IID SEX lines, or\n"
                 "a header #FID IID ... SEX ... / #IID ... SEX ...; SEX 1/M male, 2/F female,\n"
                 "0/NA unknown. Samples absent keep the store's sex (the .fam's)");
  app.add_option("--hard-call-threshold", o->hardy.hard_call_threshold,
                 "Dosage stores: a dosage this close to 0, 1 or 2 is that call, others missing\n"
                 "(default 0.1, plink2's)")
      ->check(number_range(0, 0.5));
  app.add_option("--out", o->out, "Output prefix: PREFIX.hardy and PREFIX.hardy.x")
      ->check(output_path())
      ->required();
  app.footer(
      "As plink2 --hardy [midp] --nonfounders: per variant, the genotype counts of the selected\n"
      "samples and the exact test of Hardy-Weinberg equilibrium (Wigginton et al. 2005).\n"
      "PREFIX.hardy: #CHROM ID A1 AX HOM_A1_CT HET_A1_CT TWO_AX_CT O(HET_A1) E(HET_A1) P for\n"
      "every chromosome but X, Y and MT (XY and other codes included).\n"
      "PREFIX.hardy.x: chromosome X, tested as plink2 does (Graffelman & Weir 2016) over the\n"
      "females' genotypes and the males' alleles: #CHROM ID A1 AX FEMALE_HOM_A1_CT\n"
      "FEMALE_HET_A1_CT FEMALE_TWO_AX_CT MALE_A1_CT MALE_AX_CT O(FEMALE_HET_A1)\n"
      "E(FEMALE_HET_A1) FEMALE_A1_FREQ MALE_A1_FREQ P. A male's heterozygous call is missing;\n"
      "samples of unknown sex are left out, but count as females when no male is selected,\n"
      "and X is not tested when no selected sample has a known sex (as plink2 does). Sexes\n"
      "come from the store (the .fam's), or --sex.\n"
      "Y and MT are not tested. A table is written only when it has a line.\n"
      "As in plink2's tables, A1 is the .bim's 6th column (plink2's REF; colflow's A2\n"
      "elsewhere) and AX the 5th. Every selected sample counts, founder or not.\n"
      "Dosage stores: the hard calls of the dosages. Dense stores are refused.");
  return [o] {
    o->common.qc.hard_call_threshold = o->hardy.hard_call_threshold;  // the filters' calls too
    analysis_run run("hardy", o->common);
    run.map_store_pages();
    if (is_writer()) run.parse_columns_ahead();  // the pass needs the chromosomes alone
    const store& s = run.source();
    const std::vector<sample_sex> sexes =
        o->sex.empty() ? sexes_of(s.samples()) : run.read_sexes(o->sex);
    const auto results = hardy(s, run.selected(), sexes, o->hardy, run.options());
    if (!is_writer()) return 0;  // rank 0 writes the results of every rank
    run.release_store_pages();
    const auto files = write_hardy(s, run.selected(), results, o->out, o->hardy, o->common.digits);
    std::size_t skipped = 0;
    for (const hardy_result& r : results)
      skipped += r.kind == chromosome_kind::y || r.kind == chromosome_kind::mt;
    run.log(std::to_string(results.size() - skipped) + " variants tested" +
            (skipped ? ", " + std::to_string(skipped) + " on Y or MT not" : std::string()));
    for (const auto& f : files) run.log("wrote " + f.string());
    if (files.empty()) run.log("no variant to test: nothing written");
    return 0;
  };
}

}  // namespace colflow::cli
