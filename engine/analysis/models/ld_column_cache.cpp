// The LD columns an SBayesR chain keeps between iterations (ld_column_cache_internal.hpp).
#include <cmath>
#include <span>

#include "analysis/models/ld_column_cache_internal.hpp"

namespace colflow::detail {
namespace {

// Every value is q · 2⁻¹⁴ for a 16-bit q (NaN is not).
bool fits_16_bits(std::span<const float> values) {
  for (const float v : values) {
    const float q = v * 16384.0f;  // exact: a power of two
    if (!(q >= -32768.0f && q <= 32767.0f) || q != std::nearbyint(q)) return false;
  }
  return true;
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
  const bool fixed = fits_16_bits(c.values);
  const std::size_t bytes = c.values.size() * (fixed ? sizeof(std::int16_t) : sizeof(float));
  if (bytes_ + bytes > budget_) return;
  kept.first = c.first;
  if (fixed) {
    kept.fixed.resize(c.values.size());
    for (std::size_t i = 0; i < c.values.size(); ++i)
      kept.fixed[i] = static_cast<std::int16_t>(c.values[i] * 16384.0f);
  } else {
    kept.values.assign(c.values.begin(), c.values.end());
  }
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
