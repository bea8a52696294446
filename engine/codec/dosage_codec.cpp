// The dosage value type (colflow/codec/dosage_codec.hpp): fixed-point conversions, statistics
// and the decoder.
#include "colflow/codec/dosage_codec.hpp"

#include <cmath>
#include <limits>

namespace colflow {
namespace {

__extension__ typedef unsigned __int128 u128;

template <typename T>
void decode(std::span<const std::uint16_t> values, const column_stats& stats, bool standardized,
            std::span<T> out) noexcept {
  const std::size_t n = std::min(values.size(), out.size());
  if (!standardized) {
    for (std::size_t i = 0; i < n; ++i)
      out[i] = values[i] == dosage_missing
                   ? std::numeric_limits<T>::quiet_NaN()
                   : static_cast<T>(static_cast<double>(values[i]) / dosage_one);
    return;
  }
  if (!(stats.sd > 0)) {
    for (std::size_t i = 0; i < n; ++i) out[i] = T(0);
    return;
  }
  // In double, from the exact dosage, as the genotype tables are built: the same value at any
  // width of the output.
  const double mean = stats.mean, sd = stats.sd;
  for (std::size_t i = 0; i < n; ++i)
    out[i] = values[i] == dosage_missing
                 ? T(0)
                 : static_cast<T>((static_cast<double>(values[i]) / dosage_one - mean) / sd);
}

}  // namespace

std::uint16_t dosage_to_fixed(double dosage) noexcept {
  if (std::isnan(dosage)) return dosage_missing;
  if (!(dosage > 0)) return 0;
  if (dosage >= 2) return dosage_max;
  return static_cast<std::uint16_t>(std::floor(dosage * dosage_one + 0.5));
}

std::size_t first_invalid_dosage(std::span<const std::uint16_t> values) noexcept {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i] > dosage_max && values[i] != dosage_missing) return i;
  return values.size();
}

column_stats dosage_stats(std::span<const std::uint16_t> values) noexcept {
  column_stats s;
  std::uint64_t sum = 0;
  u128 sum_sq = 0;
  for (std::uint16_t v : values) {
    if (v == dosage_missing) continue;
    ++s.observed;
    sum += v;
    sum_sq += static_cast<std::uint64_t>(v) * v;
  }
  if (s.observed == 0) {
    s.mean = s.a1_freq = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  const double obs = static_cast<double>(s.observed);
  const double scale = dosage_one;
  s.mean = static_cast<double>(sum) / obs / scale;
  s.a1_freq = s.mean / 2.0;
  if (values.size() >= 2) {
    // obs·Σx² − (Σx)² is exact in 128 bits; one rounding, then the divisions.
    const u128 ss = sum_sq * s.observed - static_cast<u128>(sum) * sum;
    s.sd = std::sqrt(static_cast<double>(ss) / obs / (scale * scale) /
                     static_cast<double>(values.size() - 1));
  }
  return s;
}

void decode_dosages(std::span<const std::uint16_t> values, const column_stats& stats,
                    bool standardized, std::span<double> out) noexcept {
  decode(values, stats, standardized, out);
}
void decode_dosages(std::span<const std::uint16_t> values, const column_stats& stats,
                    bool standardized, std::span<float> out) noexcept {
  decode(values, stats, standardized, out);
}

void dosages_to_hard_calls(std::span<const std::uint16_t> values, double threshold,
                           std::span<std::uint8_t> codes) noexcept {
  // The largest distance from a whole call, in fixed point, that still makes that call.
  const double limit = threshold * dosage_one;
  constexpr std::uint8_t code_of_count[3] = {0b11, 0b10, 0b00};  // A1 copies -> PLINK code
  const std::size_t bytes = genotype_column_bytes(values.size());
  for (std::size_t b = 0; b < bytes && b < codes.size(); ++b) codes[b] = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::uint8_t code = 0b01;
    const std::uint16_t v = values[i];
    if (v <= dosage_max) {
      const unsigned nearest = (v + dosage_one / 2) / dosage_one;  // 0, 1 or 2
      const double distance =
          std::abs(static_cast<double>(v) - static_cast<double>(nearest) * dosage_one);
      if (distance <= limit) code = code_of_count[nearest];
    }
    codes[i / 4] |= static_cast<std::uint8_t>(code << (2 * (i % 4)));
  }
}

}  // namespace colflow
