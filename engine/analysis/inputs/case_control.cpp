// Case/control phenotypes in PLINK's codes: which traits are binary, and their 1/0 indicators.
#include "colflow/analysis/case_control.hpp"

#include <cmath>
#include <cstdio>

#include "colflow/error.hpp"

namespace colflow {
namespace {

// 1 for a case, 0 for a control, NaN for missing; -1 for a value that is no code.
double coded(double v, case_control_codes codes) {
  if (std::isnan(v)) return v;
  if (codes == case_control_codes::zero_one) return v == 0 ? 0.0 : v == 1 ? 1.0 : -1.0;
  if (v == 0) return std::nan("");
  return v == 1 ? 0.0 : v == 2 ? 1.0 : -1.0;
}

std::string shortest(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", v);
  return text;
}

}  // namespace

bool is_case_control(const phenotype_table& t, std::size_t c,
                     std::span<const std::uint8_t> rows_used, case_control_codes codes) {
  bool any = false;
  for (std::size_t i = 0; i < rows_used.size(); ++i) {
    if (!rows_used[i]) continue;
    const double v =
        coded(t.values(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(c)), codes);
    if (v == -1.0) return false;
    any = any || !std::isnan(v);
  }
  return any;
}

phenotype_table select_phenotypes(const phenotype_table& t, std::span<const std::size_t> which) {
  phenotype_table out;
  out.file_samples = t.file_samples;
  out.matched_samples = t.matched_samples;
  out.file = t.file;
  out.values.resize(t.values.rows(), static_cast<Eigen::Index>(which.size()));
  for (std::size_t k = 0; k < which.size(); ++k) {
    out.names.push_back(t.names.at(which[k]));
    out.values.col(static_cast<Eigen::Index>(k)) =
        t.values.col(static_cast<Eigen::Index>(which[k]));
  }
  return out;
}

void code_case_control(phenotype_table& t, case_control_codes codes) {
  for (Eigen::Index c = 0; c < t.values.cols(); ++c)
    for (Eigen::Index i = 0; i < t.values.rows(); ++i) {
      const double v = coded(t.values(i, c), codes);
      if (v == -1.0)
        throw error(errc::invalid_argument,
                    "phenotype " + t.names[static_cast<std::size_t>(c)] +
                        " is taken as case/control but has the value " + shortest(t.values(i, c)) +
                        (codes == case_control_codes::one_two
                             ? " (codes: 1 control, 2 case, 0/-9/NA missing; --1 for 0/1)"
                             : " (codes with --1: 0 control, 1 case, -9/NA missing)"));
      t.values(i, c) = v;
    }
}

}  // namespace colflow
