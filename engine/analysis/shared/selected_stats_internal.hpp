// A streamed column's statistics over a subset of the samples: docs/DESIGN.md §2 computed for the
// samples an analysis uses (after --keep/--remove, or those with a phenotype), on the packed
// codes through a sample mask for genotype stores, on the gathered values for dense ones.
// Shared by stats, pca and the penalised regressions.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "colflow/store/store.hpp"
#include "colflow/stream/column_stream.hpp"

namespace colflow::detail {

class selected_stats {
 public:
  // `kept`: one flag per store row.
  selected_stats(const store& s, std::span<const std::uint8_t> kept);

  // The column's statistics over the kept samples. With every sample kept a genotype or dosage
  // column is answered from its index entry (a dosage column needs decoded values otherwise). For a
  // dense column the kept values are left in kept_values(), in row order.
  column_stats operator()(const column_view<double>& v);

  std::span<const double> kept_values() const noexcept { return values_; }
  const std::vector<std::size_t>& rows() const noexcept { return rows_; }
  // The kept samples as a packed genotype mask; empty when every sample is kept, where a
  // kernel given no mask does the same work with one load less per byte.
  const std::vector<std::uint8_t>& mask() const noexcept { return mask_; }

 private:
  bool genotype_, dosage_;
  std::size_t store_rows_;
  std::vector<std::size_t> rows_;
  std::vector<std::uint8_t> mask_;
  std::vector<double> values_;
};

}  // namespace colflow::detail
