#include <algorithm>
#include <cmath>
#include <string>

#include "analysis/standardized_columns_internal.hpp"
#include "colflow/error.hpp"
#include "colflow/kernels/genotype_kernels.hpp"

namespace colflow::detail {

phenotype_samples used_samples(const store& s, const selection& sel,
                               std::span<const double> phenotype, std::size_t minimum,
                               const std::string& what) {
  const std::size_t rows = s.num_rows();
  if (phenotype.size() != rows || sel.row_kept.size() != rows)
    throw error(errc::invalid_argument,
                s.path().string() + ": the phenotype must have one value per sample of the store");
  phenotype_samples p;
  p.used.assign(rows, 0);
  double sum = 0;
  for (std::size_t i = 0; i < rows; ++i)
    if (sel.row_kept[i] && !std::isnan(phenotype[i])) {
      p.used[i] = 1;
      sum += phenotype[i];
      ++p.count;
    }
  if (p.count < minimum)
    throw error(errc::invalid_argument, what + "fewer than " + std::to_string(minimum) +
                                            " selected samples have a phenotype value");
  p.mean = sum / static_cast<double>(p.count);
  double squares = 0;
  for (std::size_t i = 0; i < rows; ++i)
    if (p.used[i]) squares += (phenotype[i] - p.mean) * (phenotype[i] - p.mean);
  p.sd = std::sqrt(squares / static_cast<double>(p.count - 1));
  if (!(p.sd > 0))
    throw error(errc::invalid_argument, what + "the phenotype is constant among the samples used");
  return p;
}

standardized_columns::standardized_columns(const store& s, const selection& sel,
                                           std::vector<std::uint8_t> used)
    : genotype_(s.type() == value_type::genotype),
      rows_(s.num_rows()),
      used_(std::move(used)),
      used_count_(
          static_cast<std::uint64_t>(std::count(used_.begin(), used_.end(), std::uint8_t{1}))),
      statistics_(s, used_),
      stats_(sel.columns.size()),
      z_(genotype_ ? 0 : static_cast<Eigen::Index>(rows_)) {}

double standardized_columns::dot(std::size_t p, const column_view<double>& v,
                                 const std::vector<double>& r, double r_sum) {
  const column_stats& st = stats_[p];
  if (genotype_) {
    if (st.observed == used_count_)
      return (dosage_dot(v.codes, rows_, r.data()) - st.mean * r_sum) / st.sd;
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
