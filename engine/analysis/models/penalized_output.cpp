// The files of `colflow ridge`, `lasso` and `enet` (and --predict), written from a
// penalized_result, and the figures of a fit the command reports besides them.
#include <cstdio>
#include <string>

#include "analysis/shared/result_table_internal.hpp"
#include "colflow/analysis/penalized.hpp"
#include "colflow/error.hpp"
#include "io/tsv_writer_internal.hpp"

namespace colflow {

double per_unit_coefficient(const penalized_result& fit, std::size_t position, double b) {
  if (position >= fit.columns.size())
    throw error(errc::invalid_argument, "per_unit_coefficient: position " +
                                            std::to_string(position) + " past the fit's " +
                                            std::to_string(fit.columns.size()) + " columns");
  const double sd = fit.columns[position].sd;
  return sd > 0 ? b / sd : 0.0;
}

std::size_t unconverged_lambdas(const penalized_result& fit) noexcept {
  std::size_t n = 0;
  for (const penalized_step& st : fit.path) n += !st.converged;
  return n;
}

penalized_files penalized_output_files(const std::filesystem::path& prefix) {
  return {detail::prefixed(prefix, ".coef.tsv"), detail::prefixed(prefix, ".path.tsv")};
}

penalized_files write_penalized(const store& s, const selection& sel, const penalized_result& fit,
                                const std::filesystem::path& prefix, coefficient_rows rows,
                                int digits) {
  detail::check_digits(digits);
  const auto& selected = sel.columns;
  if (fit.columns.size() != selected.size() || fit.coefficients.size() != fit.path.size())
    throw error(errc::invalid_argument, "write_penalized: the fit is not of this selection");
  const penalized_files files = penalized_output_files(prefix);
  const auto& columns = s.columns();
  tsv_writer coef(files.coefficients, digits);
  detail::write_header(coef, {"LAMBDA", "ID", "A1", "BETA", "BETA_PER_UNIT"});
  std::vector<double> all;
  for (std::size_t k = 0; k < fit.path.size(); ++k) {
    const auto write = [&](std::size_t p, double b) {
      const column_info& c = columns[selected[p]];
      coef.number(fit.path[k].lambda).text(c.id).text(c.a1).number(b);
      coef.number(per_unit_coefficient(fit, p, b));
      coef.end_line();
    };
    if (rows == coefficient_rows::all) {
      all.assign(selected.size(), 0.0);
      for (const auto& [p, b] : fit.coefficients[k]) all.at(p) = b;
      for (std::size_t p = 0; p < all.size(); ++p) write(p, all[p]);
    } else {
      for (const auto& [p, b] : fit.coefficients[k]) write(p, b);
    }
  }
  coef.commit();
  tsv_writer path(files.path, digits);
  detail::write_header(
      path, {"LAMBDA", "NONZERO", "R2", "OBJECTIVE", "SWEEPS", "FULL_PASSES", "CONVERGED"});
  for (const penalized_step& st : fit.path) {
    path.number(st.lambda).integer(st.nonzero).number(st.r_squared).number(st.objective);
    path.integer(st.sweeps).integer(st.full_passes).text(st.converged ? "1" : "0");
    path.end_line();
  }
  path.commit();
  return files;
}

std::filesystem::path predictions_file(const std::filesystem::path& prefix) {
  return detail::prefixed(prefix, ".pred.tsv");
}

std::filesystem::path write_predictions(const store& target, const penalized_result& fit,
                                        const Eigen::MatrixXd& pred,
                                        const std::filesystem::path& prefix, int digits) {
  detail::check_digits(digits);
  if (static_cast<std::uint64_t>(pred.rows()) != target.num_rows() ||
      static_cast<std::size_t>(pred.cols()) != fit.path.size())
    throw error(errc::invalid_argument,
                "write_predictions: the predictions are not of this store and fit");
  const std::filesystem::path file = predictions_file(prefix);
  tsv_writer out(file, digits);
  out.text("#FID").text("IID");
  for (const penalized_step& st : fit.path) {
    // The column names carry λ at the table's precision, so they match the LAMBDA column of
    // the coefficient and path tables.
    char name[48];
    std::snprintf(name, sizeof name, "LAMBDA=%.*g", digits, st.lambda);
    out.text(name);
  }
  out.end_line();
  const auto& samples = target.samples();
  for (Eigen::Index i = 0; i < pred.rows(); ++i) {
    const sample_info& sample = samples[static_cast<std::size_t>(i)];
    out.text(sample.fid).text(sample.iid);
    for (Eigen::Index k = 0; k < pred.cols(); ++k) out.number(pred(i, k));
    out.end_line();
  }
  out.commit();
  return file;
}

}  // namespace colflow
