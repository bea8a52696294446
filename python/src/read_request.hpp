// What a read of a store asks for, shared by Store.read_into and BlockStream: the rows, and
// when standardising over a subset of them, the statistics of that subset.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "colflow/codec/genotype_codec.hpp"
#include "colflow/kernels/genotype_kernels.hpp"
#include "colflow/store/store.hpp"
#include "colflow/store/store_writer.hpp"

namespace colflow::python {

// Resolved once before the columns are decoded in parallel.
struct read_request {
  std::span<const std::int64_t> rows, cols;
  bool standardize = false;
  bool rows_identity = false;  // rows are 0, 1, ..., n-1: columns decode in place
  // Standardise over the distinct selected rows, not every row (docs/DESIGN.md §2 statistics
  // of a subset, as the analyses compute them after --keep/--remove).
  bool subset_stats = false;
  std::vector<std::uint8_t> kept;  // per store row, 1 if selected (subset_stats only)
  std::vector<std::uint8_t> mask;  // make_sample_mask(kept), genotype stores
  std::uint64_t kept_count = 0;
};

// Sets what follows from `r.rows` and `r.standardize` for store `s`: whether the rows are every
// row in order, and whether standardising takes the statistics of the selected rows (each row
// once). Every row selected (a permutation, repeats): the index's statistics are the subset's.
inline void resolve_rows(read_request& r, const store& s) {
  const std::size_t n = s.num_rows();
  r.rows_identity = r.rows.size() == n;
  for (std::size_t i = 0; r.rows_identity && i < n; ++i)
    r.rows_identity = static_cast<std::uint64_t>(r.rows[i]) == i;
  if (!r.standardize || r.rows_identity || r.rows.empty()) return;
  r.kept.assign(n, 0);
  for (std::int64_t i : r.rows) r.kept[static_cast<std::size_t>(i)] = 1;
  r.kept_count = static_cast<std::uint64_t>(std::count(r.kept.begin(), r.kept.end(), 1));
  r.subset_stats = r.kept_count != n;
  if (r.subset_stats && s.type() == value_type::genotype) r.mask = make_sample_mask(r.kept);
}

// A genotype column's packed codes decoded standardised with the counts of the selected
// samples, as selected_stats takes them, through the store's own lookup-table decode.
template <typename T>
void decode_subset_standardized(std::span<const std::uint8_t> codes, const read_request& r,
                                std::span<T> out) {
  const column_stats st =
      genotype_stats(count_genotypes(codes, out.size(), r.mask, r.kept_count), r.kept_count);
  if constexpr (std::is_same_v<T, float>)
    decode_genotypes(codes, standardized_lut_f32(st), out);
  else
    decode_genotypes(codes, standardized_lut(st), out);
}

// Dense and dosage values standardised with the statistics of the selected stored values
// (dense_stats, as the analyses take them): each value in binary64, then rounded to Out; 0 for
// a missing value and for every value of a constant column.
template <typename In, typename Out>
void standardize_subset(std::span<const In> values, const read_request& r, std::span<Out> out) {
  const std::size_t n = out.size();
  std::vector<double> selected;
  selected.reserve(r.kept_count);
  for (std::size_t i = 0; i < n; ++i)
    if (r.kept[i]) selected.push_back(static_cast<double>(values[i]));
  const column_stats st = dense_stats(selected);
  const bool constant = !(st.sd > 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(values[i]);
    out[i] = constant || std::isnan(x) ? Out(0) : static_cast<Out>((x - st.mean) / st.sd);
  }
}

}  // namespace colflow::python
