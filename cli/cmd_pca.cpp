// colflow pca: top principal components by randomised SVD over streaming passes.
#include "analysis_setup.hpp"
#include "colflow/analysis/pca.hpp"
#include "commands.hpp"
#include "colflow/io/tsv_writer.hpp"

namespace colflow::cli {

command add_pca(CLI::App& app) {
  struct options {
    analysis_flags common;
    pca_options pca;
    std::string out, scale = "standardized";
  };
  auto o = std::make_shared<options>();
  add_analysis_flags(app, o->common);
  app.add_option("--k", o->pca.components, "Number of components (default 10)")
      ->check(CLI::Range(1, 10000));
  app.add_option("--out", o->out,
                 "Output prefix: PREFIX.eigenval, PREFIX.eigenvec (and PREFIX.loadings.tsv)")
      ->required();
  app.add_option("--oversampling", o->pca.oversampling,
                 "Random directions beyond k in the sketch (default 10)");
  app.add_option("--iterations", o->pca.power_iterations,
                 "Power iterations, one pass each (default 4); more for closer eigenvalues")
      ->check(CLI::Range(0, 100));
  app.add_option("--scale", o->scale,
                 "standardized (DESIGN: mean and SD of the selected samples, default) or hwe\n"
                 "(x - 2p) / sqrt(2p(1-p)), as PLINK 2 --pca")
      ->check(CLI::IsMember({"standardized", "hwe"}));
  app.add_option("--seed", o->pca.seed, "Seed of the random sketch (default 1)");
  app.add_flag("--loadings", o->pca.loadings,
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
    const auto k = r.eigenvalues.size();
    {
      tsv_writer out(o->out + ".eigenval", o->common.digits);
      for (Eigen::Index i = 0; i < k; ++i) {
        out.number(r.eigenvalues[i]);
        out.end_line();
      }
      out.commit();
    }
    {
      tsv_writer out(o->out + ".eigenvec", o->common.digits);
      out.text("#FID").text("IID");
      for (Eigen::Index i = 0; i < k; ++i) out.text("PC" + std::to_string(i + 1));
      out.end_line();
      const auto& samples = s.samples();
      const auto& rows = run.selected().rows;
      for (std::size_t i = 0; i < rows.size(); ++i) {
        out.text(samples[rows[i]].fid).text(samples[rows[i]].iid);
        for (Eigen::Index c = 0; c < k; ++c)
          out.number(r.eigenvectors(static_cast<Eigen::Index>(i), c));
        out.end_line();
      }
      out.commit();
    }
    if (o->pca.loadings) {
      tsv_writer out(o->out + ".loadings.tsv", o->common.digits);
      for (const char* h : {"#CHR", "ID", "A1", "A2"}) out.text(h);
      for (Eigen::Index i = 0; i < k; ++i) out.text("PC" + std::to_string(i + 1));
      out.end_line();
      const auto& columns = s.columns();
      const auto& cols = run.selected().columns;
      for (std::size_t j = 0; j < cols.size(); ++j) {
        const column_info& c = columns[cols[j]];
        out.text(c.chrom).text(c.id).text(c.a1).text(c.a2);
        for (Eigen::Index i = 0; i < k; ++i)
          out.number(r.loadings(static_cast<Eigen::Index>(j), i));
        out.end_line();
      }
      out.commit();
    }
    run.log(std::to_string(k) + " components from " + std::to_string(r.columns_used) +
            " non-constant columns in " + std::to_string(r.passes) + " passes; wrote " + o->out +
            ".eigenval, " + o->out + ".eigenvec" + (o->pca.loadings ? ", " + o->out + ".loadings.tsv" : ""));
    return 0;
  };
}

}  // namespace colflow::cli
