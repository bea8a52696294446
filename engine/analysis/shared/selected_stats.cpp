// A streamed column's statistics over the samples an analysis uses.
#include "analysis/shared/selected_stats_internal.hpp"
#include "colflow/kernels/genotype_kernels.hpp"
#include "colflow/store/store_writer.hpp"

namespace colflow::detail {

selected_stats::selected_stats(const store& s, std::span<const std::uint8_t> kept)
    : genotype_(s.type() == value_type::genotype),
      dosage_(s.type() == value_type::dosage),
      store_rows_(s.num_rows()) {
  for (std::size_t i = 0; i < kept.size(); ++i)
    if (kept[i]) rows_.push_back(i);
  if (genotype_) {
    if (rows_.size() != store_rows_) mask_ = make_sample_mask(kept);
  } else {
    values_.resize(rows_.size());
  }
}

column_stats selected_stats::operator()(const column_view<double>& v) {
  const std::size_t n = rows_.size();
  if (genotype_) {
    if (n == store_rows_) return v.stats;
    return genotype_stats(count_genotypes(v.codes, store_rows_, mask_, n), n);
  }
  for (std::size_t k = 0; k < n; ++k) values_[k] = v.values[static_cast<Eigen::Index>(rows_[k])];
  if (dosage_ && n == store_rows_) return v.stats;  // exact, from the index
  column_stats st = dense_stats(values_);
  if (dosage_) st.a1_freq = st.mean / 2;
  return st;
}

}  // namespace colflow::detail
