// colflow pca: top principal components by randomised SVD over streaming passes.
#include <algorithm>
#include <cstdio>
#include <string>

#include "analysis_setup.hpp"
#include "colflow/analysis/pca.hpp"
#include "commands.hpp"
#include "processes.hpp"
#include "validators.hpp"

namespace colflow::cli {

// The components whose residual does not certify their eigenvalue to 1% (those of a randomised
// SVD in the bulk of the spectrum, where eigenvalues crowd, converge slowly), named on one line
// with what lowers it; nothing when all are within. The residual bounds the error, often far
// above it: a component with a residual of 1.5% was 0.04% off on HapMap3.
void warn_unconverged(analysis_run& run, const pca_result& r) {
  constexpr double within = 1e-2;
  std::string off;
  double largest = 0;
  for (Eigen::Index i = 0; i < r.residuals.size(); ++i)
    if (r.residuals[i] > within) {
      off += (off.empty() ? "PC" : ", PC") + std::to_string(i + 1);
      largest = std::max(largest, r.residuals[i]);
    }
  if (off.empty()) return;
  char percent[32];
  std::snprintf(percent, sizeof percent, "%.2g%%", 100 * largest);
  run.log("note: " + off + " not certified to 1%: the residual |ZZ'u - lambda u| is up to " +
          percent + " of lambda (an eigenvalue lies that close); raise --iterations (e.g. 20) " +
          "or --oversampling for them");
}

command add_pca(CLI::App& app) {
  struct options {
    analysis_flags common;
    pca_options pca;
    std::string out, scale = "standardized";
  };
  auto o = std::make_shared<options>();
  add_analysis_flags(app, o->common);
  app.add_option("--k", o->pca.components, "Number of components (default 10)")
      ->check(integer_range(1, 10000));
  app.add_option("--out", o->out,
                 "Output prefix: PREFIX.eigenval, PREFIX.eigenvec (and PREFIX.loadings.tsv)")
      ->check(output_path())
      ->required();
  app.add_option("--oversampling", o->pca.oversampling,
                 "Random directions beyond k in the sketch (default 10)")
      ->check(non_negative_integer());
  app.add_option("--iterations", o->pca.power_iterations,
                 "Power iterations, one pass each (default 4); more for closer eigenvalues")
      ->check(integer_range(0, 100));
  app.add_option(
         "--scale", o->scale,
         "standardized (docs/DESIGN.md §2: mean and SD of the selected samples, default) or hwe\n"
         "(x - 2p) / sqrt(2p(1-p)), as PLINK 2 --pca")
      ->check(one_of({"standardized", "hwe"}));
  app.add_option("--seed", o->pca.seed, "Seed of the random sketch (default 1)")
      ->check(non_negative_integer());
  app.add_flag(
      "--loadings", o->pca.loadings,
      "Also write PREFIX.loadings.tsv: #CHR ID A1 A2 PC1..PCk (unit right singular vectors)");
  app.footer(
      "Eigenvalues are those of the relationship matrix Z Z' / M (Z: selected samples x\n"
      "standardised columns, M: columns that are not constant), as PLINK 2 --pca reports them.\n"
      "PREFIX.eigenvec: #FID IID PC1..PCk, unit-length eigenvectors, each signed so that its\n"
      "largest entry is positive. Passes: 2 + iterations.");
  return [o] {
    analysis_run run("pca", o->common);
    const store& s = run.source();
    o->pca.scaling = o->scale == "hwe" ? pca_scaling::hwe : pca_scaling::standardized;
    const pca_result r = principal_components(s, run.selected(), o->pca, run.options());
    if (!is_writer()) return 0;  // rank 0 writes the result every rank holds
    const pca_files files = write_pca(s, run.selected(), r, o->out, o->common.digits);
    run.log(std::to_string(r.eigenvalues.size()) + " components from " +
            std::to_string(r.columns_used) + " non-constant columns in " +
            std::to_string(r.passes) + " passes; wrote " + files.eigenval.string() + ", " +
            files.eigenvec.string() +
            (files.loadings.empty() ? "" : ", " + files.loadings.string()));
    warn_unconverged(run, r);
    return 0;
  };
}

}  // namespace colflow::cli
