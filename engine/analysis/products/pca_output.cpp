// The files of `colflow pca`, written from a pca_result.
#include <string>

#include "analysis/shared/result_table_internal.hpp"
#include "colflow/analysis/pca.hpp"
#include "colflow/error.hpp"
#include "io/tsv_writer_internal.hpp"

namespace colflow {

pca_files pca_output_files(const std::filesystem::path& prefix) {
  return {detail::prefixed(prefix, ".eigenval"), detail::prefixed(prefix, ".eigenvec"),
          detail::prefixed(prefix, ".loadings.tsv")};
}

pca_files write_pca(const store& s, const selection& sel, const pca_result& r,
                    const std::filesystem::path& prefix, int digits) {
  detail::check_digits(digits);
  const Eigen::Index k = r.eigenvalues.size();
  const bool loadings = r.loadings.size() > 0;
  if (static_cast<std::size_t>(r.eigenvectors.rows()) != sel.rows.size() ||
      r.eigenvectors.cols() != k ||
      (loadings && (static_cast<std::size_t>(r.loadings.rows()) != sel.columns.size() ||
                    r.loadings.cols() != k)))
    throw error(errc::invalid_argument, "write_pca: the result is not of this selection");
  pca_files files = pca_output_files(prefix);
  {
    tsv_writer out(files.eigenval, digits);
    for (Eigen::Index i = 0; i < k; ++i) {
      out.number(r.eigenvalues[i]);
      out.end_line();
    }
    out.commit();
  }
  {
    tsv_writer out(files.eigenvec, digits);
    out.text("#FID").text("IID");
    for (Eigen::Index i = 0; i < k; ++i) out.text("PC" + std::to_string(i + 1));
    out.end_line();
    const auto& samples = s.samples();
    for (std::size_t i = 0; i < sel.rows.size(); ++i) {
      out.text(samples[sel.rows[i]].fid).text(samples[sel.rows[i]].iid);
      for (Eigen::Index c = 0; c < k; ++c)
        out.number(r.eigenvectors(static_cast<Eigen::Index>(i), c));
      out.end_line();
    }
    out.commit();
  }
  if (!loadings) {
    files.loadings.clear();
    return files;
  }
  tsv_writer out(files.loadings, digits);
  for (const char* h : {"#CHR", "ID", "A1", "A2"}) out.text(h);
  for (Eigen::Index i = 0; i < k; ++i) out.text("PC" + std::to_string(i + 1));
  out.end_line();
  const auto& columns = s.columns();
  for (std::size_t j = 0; j < sel.columns.size(); ++j) {
    const column_info& c = columns[sel.columns[j]];
    out.text(c.chrom).text(c.id).text(c.a1).text(c.a2);
    for (Eigen::Index i = 0; i < k; ++i) out.number(r.loadings(static_cast<Eigen::Index>(j), i));
    out.end_line();
  }
  out.commit();
  return files;
}

}  // namespace colflow
