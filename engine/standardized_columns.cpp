#include "standardized_columns_internal.hpp"

#include <algorithm>
#include <cmath>

namespace colflow::detail {

standardized_columns::standardized_columns(const store& s, const selection& sel,
                                           std::vector<std::uint8_t> used)
    : genotype_(s.type() == value_type::genotype),
      rows_(s.num_rows()),
      used_(std::move(used)),
      used_count_(static_cast<std::uint64_t>(std::count(used_.begin(), used_.end(), std::uint8_t{1}))),
      statistics_(s, used_),
      stats_(sel.columns.size()),
      z_(genotype_ ? 0 : static_cast<Eigen::Index>(rows_)) {}

double standardized_columns::dot(std::size_t p, const column_view<double>& v,
                                 const std::vector<double>& r, double r_sum) {
  const column_stats& st = stats_[p];
  if (genotype_) {
    if (st.observed == used_count_) return (dosage_dot(v.codes, rows_, r.data()) - st.mean * r_sum) / st.sd;
    double d = 0, called = 0;
    dosage_and_call_sums(v.codes, rows_, r.data(), d, called);
    return (d - st.mean * called) / st.sd;
  }
  standardize(p, v, z_.data());
  return z_.dot(Eigen::Map<const Eigen::VectorXd>(r.data(), static_cast<Eigen::Index>(rows_)));
}

void standardized_columns::subtract(std::size_t p, const column_view<double>& v, double delta,
                                    std::vector<double>& r) {
  const column_stats& st = stats_[p];
  if (genotype_) {
    genotype_axpy(v.codes, rows_, statistics_.mask(), -delta / st.sd, delta * st.mean / st.sd,
                  r.data());
    return;
  }
  Eigen::Map<Eigen::VectorXd>(r.data(), static_cast<Eigen::Index>(rows_)) -= delta * z_;
}

void standardized_columns::values(std::size_t p, const column_view<double>& v, double* out) const {
  if (!genotype_) {
    standardize(p, v, out);
    return;
  }
  decode_genotypes(v.codes, standardized_lut(stats_[p]), std::span<double>(out, rows_));
  for (std::size_t i = 0; i < rows_; ++i)
    if (!used_[i]) out[i] = 0.0;
}

void standardized_columns::standardize(std::size_t p, const column_view<double>& v,
                                       double* out) const {
  const column_stats& st = stats_[p];
  for (std::size_t i = 0; i < rows_; ++i) {
    const double x = v.values[static_cast<Eigen::Index>(i)];
    out[i] = used_[i] && !std::isnan(x) ? (x - st.mean) / st.sd : 0.0;
  }
}

}  // namespace colflow::detail
