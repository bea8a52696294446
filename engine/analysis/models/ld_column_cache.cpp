// The LD columns an SBayesR chain keeps between iterations (ld_column_cache_internal.hpp).
#include <span>

#include "analysis/models/ld_column_cache_internal.hpp"
#include "colflow/codec/codec.hpp"

namespace colflow::detail {
namespace {

// The values as 16-bit multiples of 2⁻¹⁴ (fixed16_of, codec.hpp), in one pass; empty when one is
// not such a multiple.
std::vector<std::int16_t> as_fixed16(std::span<const float> values) {
  std::vector<std::int16_t> q(values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!fixed16_of(values[i], q[i])) return {};
  return q;
}

}  // namespace

ld_column_cache::ld_column_cache(ld_columns& ld, std::size_t positions, std::size_t budget)
    : ld_(ld), budget_(budget), kept_(positions) {}

held_column ld_column_cache::view(const kept_column& kept) {
  if (!kept.fixed.empty()) return {nullptr, kept.fixed.data(), kept.first, kept.fixed.size()};
  return {kept.values.data(), nullptr, kept.first, kept.values.size()};
}

held_column ld_column_cache::get(std::size_t position, std::size_t index,
                                 std::vector<float>& spare) {
  kept_column& kept = kept_[position];
  if (!kept.values.empty() || !kept.fixed.empty()) return view(kept);
  const ld_column c = ld_.column(index);
  if (ld_.resident()) return {c.values.data(), nullptr, c.first, c.values.size()};
  keep(position, c);
  if (!kept.values.empty() || !kept.fixed.empty()) return view(kept);
  spare.assign(c.values.begin(), c.values.end());
  return {spare.data(), nullptr, c.first, spare.size()};
}

void ld_column_cache::keep(std::size_t position, const ld_column& c) {
  kept_column& kept = kept_[position];
  std::vector<std::int16_t> fixed = as_fixed16(c.values);
  const bool is_fixed = !c.values.empty() && !fixed.empty();
  const std::size_t bytes = c.values.size() * (is_fixed ? sizeof(std::int16_t) : sizeof(float));
  if (bytes_ + bytes > budget_) return;
  kept.first = c.first;
  if (is_fixed)
    kept.fixed = std::move(fixed);
  else
    kept.values.assign(c.values.begin(), c.values.end());
  bytes_ += bytes;
}

void ld_column_cache::let_go(std::size_t position) {
  kept_column& kept = kept_[position];
  if (bytes_ <= budget_ / 2) return;
  bytes_ -= kept.values.size() * sizeof(float) + kept.fixed.size() * sizeof(std::int16_t);
  // Move-assigned empty vectors free the memory (= {} would keep the capacity).
  kept.values = std::vector<float>();
  kept.fixed = std::vector<std::int16_t>();
}

}  // namespace colflow::detail
