// The LD columns an SBayesR chain keeps between iterations (ld_column_cache_internal.hpp).
#include <span>

#include "analysis/models/ld_column_cache_internal.hpp"
#include "colflow/codec/codec.hpp"
#include "simd/fixed16_internal.hpp"

namespace colflow::detail {
namespace {

// The values as 16-bit multiples of 2⁻¹⁴ (fixed16_of, codec.hpp); empty when one is not such a
// multiple.
std::vector<std::int16_t> as_fixed16(std::span<const float> values) {
  std::vector<std::int16_t> q(values.size());
  if (!detail::float_to_fixed16(values.data(), values.size(), q.data())) return {};
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
  if (kept.held()) {
    kept.let_go_at = 0;  // in use again: not free to leave
    return view(kept);
  }
  const ld_column c = ld_.column(index);
  if (ld_.resident()) return {c.values.data(), nullptr, c.first, c.values.size()};
  keep(position, c);
  if (kept.held()) return view(kept);
  spare.assign(c.values.begin(), c.values.end());
  return {spare.data(), nullptr, c.first, spare.size()};
}

void ld_column_cache::keep(std::size_t position, const ld_column& c) {
  if (c.values.empty()) return;
  // Not even in 16 bits: nothing to convert.
  if (!make_room(c.values.size() * sizeof(std::int16_t))) return;
  std::vector<std::int16_t> fixed = as_fixed16(c.values);
  const std::size_t bytes =
      c.values.size() * (fixed.empty() ? sizeof(float) : sizeof(std::int16_t));
  if (!make_room(bytes)) return;
  kept_column& kept = kept_[position];
  kept.first = c.first;
  if (!fixed.empty())
    kept.fixed = std::move(fixed);
  else
    kept.values.assign(c.values.begin(), c.values.end());
  kept.let_go_at = 0;
  bytes_ += bytes;
}

bool ld_column_cache::make_room(std::size_t bytes) {
  while (bytes_ + bytes > budget_ && !let_go_order_.empty()) {
    const auto [at, position] = let_go_order_.front();
    let_go_order_.pop_front();
    if (kept_[position].let_go_at == at) drop(kept_[position]);
  }
  return bytes_ + bytes <= budget_;
}

void ld_column_cache::drop(kept_column& kept) {
  bytes_ -= kept.values.size() * sizeof(float) + kept.fixed.size() * sizeof(std::int16_t);
  // Move-assigned empty vectors free the memory (= {} would keep the capacity).
  kept.values = std::vector<float>();
  kept.fixed = std::vector<std::int16_t>();
  kept.let_go_at = 0;
}

void ld_column_cache::let_go(std::size_t position) {
  kept_column& kept = kept_[position];
  if (!kept.held()) return;
  kept.let_go_at = ++let_gos_;
  let_go_order_.emplace_back(kept.let_go_at, position);
  // Entries that no longer match are dropped when they outnumber the columns, so that a chain
  // that never runs short of room does not grow the order without bound.
  if (let_go_order_.size() > 2 * kept_.size() + 64) {
    std::erase_if(let_go_order_, [&](const std::pair<std::uint64_t, std::size_t>& e) {
      return kept_[e.second].let_go_at != e.first;
    });
  }
}

}  // namespace colflow::detail
