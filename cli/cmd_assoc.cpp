// colflow assoc: least-squares association scan of one or more phenotypes, one pass.
#include <tbb/parallel_for.h>

#include <algorithm>

#include "analysis_setup.hpp"
#include "colflow/analysis/assoc.hpp"
#include "colflow/error.hpp"
#include "colflow/analysis/phenotype.hpp"
#include "commands.hpp"
#include "colflow/io/tsv_writer.hpp"

namespace colflow::cli {

command add_assoc(CLI::App& app) {
  struct options {
    analysis_flags common;
    std::string pheno, covar, out;
    std::vector<std::string> pheno_names, covar_names;
  };
  auto o = std::make_shared<options>();
  add_analysis_flags(app, o->common);
  app.add_option("--pheno", o->pheno,
                 "Phenotype file: FID IID v1 v2 ... (optional #FID/FID header; NA and -9 missing)")
      ->required();
  app.add_option("--pheno-name", o->pheno_names,
                 "Phenotype columns to test, by header name (default: all)");
  app.add_option("--covar", o->covar, "Covariate file, same format");
  app.add_option("--covar-name", o->covar_names, "Covariate columns to use (default: all)");
  app.add_option("--out", o->out, "Output prefix: writes PREFIX.<phenotype>.assoc.tsv")->required();
  app.footer(
      "Per column and phenotype, ordinary least squares of the phenotype on an intercept, the\n"
      "column (the A1 dosage for genotypes) and the covariates, as PLINK 2 --glm does for a\n"
      "quantitative trait ('allow-no-covars' without --covar, 'hide-covar' with it).\n"
      "Output columns: #CHR POS ID A1 A2 N_OBS BETA SE T_STAT P NOTE. BETA is per A1 allele;\n"
      "P is two-sided from t with N_OBS - 2 - covariates degrees of freedom. Samples without\n"
      "the phenotype or a covariate are left out, and per column those with a missing call.\n"
      "A test without an estimate has NA values and a NOTE: CONST_COLUMN, TOO_FEW_SAMPLES or\n"
      "COLLINEAR (with the covariates); NOTE is '.' otherwise.");
  return [o] {
    analysis_run run("assoc", o->common);
    const store& s = run.source();
    const phenotype_table pheno = read_phenotypes(o->pheno, s.samples(), o->pheno_names, "PHENO");
    run.log(o->pheno + ": " + std::to_string(pheno.matched_samples) + " of " +
            std::to_string(pheno.file_samples) + " samples in the store, " +
            std::to_string(pheno.names.size()) + " phenotype(s)");
    phenotype_table covar;
    if (!o->covar.empty()) {
      covar = read_phenotypes(o->covar, s.samples(), o->covar_names, "COVAR");
      run.log(o->covar + ": " + std::to_string(covar.matched_samples) + " of " +
              std::to_string(covar.file_samples) + " samples in the store, " +
              std::to_string(covar.names.size()) + " covariate(s)");
    } else if (!o->covar_names.empty()) {
      throw error(errc::invalid_argument, "--covar-name needs --covar");
    }

    std::vector<std::unique_ptr<tsv_writer>> outs;
    for (const std::string& name : pheno.names) {
      std::string file_name = name;
      std::replace(file_name.begin(), file_name.end(), '/', '_');
      outs.push_back(std::make_unique<tsv_writer>(o->out + "." + file_name + ".assoc.tsv",
                                                  o->common.digits));
      for (const char* h : {"#CHR", "POS", "ID", "A1", "A2", "N_OBS", "BETA", "SE", "T_STAT", "P",
                            "NOTE"})
        outs.back()->text(h);
      outs.back()->end_line();
    }
    // Results are formatted in batches, one task per phenotype's file, so that many
    // phenotypes do not serialise the scan on number formatting.
    const auto& columns = s.columns();
    const std::size_t np = pheno.names.size(), batch = 2048;
    std::vector<assoc_result> pending;
    std::vector<std::size_t> pending_columns;
    const auto write_pending = [&] {
      tbb::parallel_for(std::size_t{0}, np, [&](std::size_t p) {
        tsv_writer& out = *outs[p];
        for (std::size_t k = 0; k < pending_columns.size(); ++k) {
          const column_info& c = columns[pending_columns[k]];
          const assoc_result& r = pending[k * np + p];
          out.text(c.chrom).text(c.pos).text(c.id).text(c.a1).text(c.a2).integer(r.n_obs);
          out.number(r.beta).number(r.se).number(r.t_stat).number(r.p);
          out.text(assoc_status_name(r.status));
          out.end_line();
        }
      });
      pending.clear();
      pending_columns.clear();
    };
    const assoc_summary summary = linear_association(
        s, run.selected(), pheno, o->covar.empty() ? nullptr : &covar,
        [&](std::size_t, std::size_t column, std::span<const assoc_result> results) {
          pending.insert(pending.end(), results.begin(), results.end());
          pending_columns.push_back(column);
          if (pending_columns.size() == batch) write_pending();
        },
        run.options());
    write_pending();
    for (std::size_t p = 0; p < outs.size(); ++p) {
      outs[p]->commit();
      run.log(pheno.names[p] + ": " + std::to_string(summary.samples_used[p]) +
              " samples used, wrote " + outs[p]->path().string());
    }
    return 0;
  };
}

}  // namespace colflow::cli
