// analysis_outputs: the analyses of the colflow command run through the library, writing the
// same result files. With the command's defaults (6 significant digits, every sample and
// column), each file is byte for byte what the command writes:
//
//   PREFIX.stats.tsv                 colflow stats  STORE --out PREFIX.stats.tsv
//   PREFIX.<phenotype>.assoc.tsv     colflow assoc  STORE --pheno PHENO --out PREFIX
//   PREFIX.pca.eigenval, .eigenvec   colflow pca    STORE --k 5 --out PREFIX.pca
//   PREFIX.lasso.coef.tsv, .path.tsv colflow lasso  STORE --pheno PHENO --nlambda 10 --out
//   PREFIX.lasso PREFIX.bayesr.trace.tsv, ...     colflow bayesr STORE --pheno PHENO --iterations
//   30 --burnin 10
//                                                   --out PREFIX.bayesr
//
// and it prints what the command logs, from the results' own figures.
#include <colflow/colflow.hpp>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: analysis_outputs STORE PHENO PREFIX\n");
    return 2;
  }
  const std::string prefix = argv[3];
  try {
    const colflow::store s = colflow::store::open(argv[1]);
    const colflow::selection all = colflow::selection::all(s);
    const colflow::phenotype_table pheno = colflow::read_phenotypes(argv[2], s.samples());
    // The first phenotype, one value per store row (NaN where missing), for the model fits.
    const std::vector<double> y(pheno.values.col(0).data(),
                                pheno.values.col(0).data() + pheno.values.rows());

    // stats: per-column statistics, then their table.
    const auto summaries = colflow::column_summaries(s, all);
    colflow::write_stats(s, all, summaries, prefix + ".stats.tsv");
    std::printf("stats: %zu columns\n", summaries.size());

    // assoc: the tables are filled while the scan runs, one per phenotype.
    colflow::assoc_writer tables(s, pheno.names, prefix);
    const colflow::assoc_summary scan =
        colflow::linear_association(s, all, pheno, nullptr, tables.sink());
    const auto& assoc_files = tables.commit();
    for (std::size_t p = 0; p < assoc_files.size(); ++p)
      std::printf("assoc %s: %zu samples used, wrote %s\n", pheno.names[p].c_str(),
                  scan.samples_used[p], assoc_files[p].c_str());

    // pca: 5 components.
    colflow::pca_options pca;
    pca.components = 5;
    const colflow::pca_result components = colflow::principal_components(s, all, pca);
    const colflow::pca_files pca_files = colflow::write_pca(s, all, components, prefix + ".pca");
    std::printf("pca: eigenvalue 1 %.4f, wrote %s\n", components.eigenvalues[0],
                pca_files.eigenvec.c_str());

    // lasso: a path of 10 λ values; the original-scale coefficients come from the result.
    colflow::penalized_options lasso;
    lasso.alpha = 1.0;
    lasso.n_lambda = 10;
    const colflow::penalized_result fit = colflow::penalized_regression(s, all, y, lasso);
    colflow::write_penalized(s, all, fit, prefix + ".lasso");
    const auto& last = fit.coefficients.back();
    std::printf("lasso: %zu non-zero at the smallest lambda, %zu unconverged lambda(s)\n",
                last.size(), colflow::unconverged_lambdas(fit));
    if (!last.empty())
      std::printf("lasso: %s per A1 allele %.4g\n",
                  s.columns()[all.columns[last[0].first]].id.c_str(),
                  colflow::per_unit_coefficient(fit, last[0].first, last[0].second));

    // bayesr: the command's settings for 30 iterations (its checkpoint included).
    colflow::bayesr_options chain;
    chain.iterations = 30;
    chain.burnin = 10;
    chain.checkpoint_every = 100;
    chain.checkpoint = prefix + ".bayesr.checkpoint";
    const colflow::bayesr_result r = colflow::bayesr(s, all, y, chain);
    colflow::write_bayesr(s, all, r, prefix + ".bayesr");
    const colflow::bayesr_summary h2 = colflow::summarize(r);
    std::printf(
        "bayesr: posterior mean h2 %.4f (sd %.4f), %.1f non-zero effects, over %zu kept "
        "iterations\n",
        h2.h2.mean, h2.h2.sd, h2.nonzero.mean, h2.kept);
  } catch (const colflow::error& e) {
    std::fprintf(stderr, "analysis_outputs: %s\n", e.message().c_str());
    return 1;
  }
  return 0;
}
