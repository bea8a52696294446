// The dosage value type (colflow/codec/dosage_codec.hpp): fixed-point conversions, statistics
// and the decoder.
#include "colflow/codec/dosage_codec.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "colflow/error.hpp"

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
  // Blocks checked without branches (vectorised), then the first bad block searched.
  constexpr std::size_t block = 256;
  std::size_t first = 0;
  for (; first + block <= values.size(); first += block) {
    unsigned bad = 0;
    for (std::size_t i = first; i < first + block; ++i)
      bad |= static_cast<unsigned>(values[i] > dosage_max && values[i] != dosage_missing);
    if (bad) break;
  }
  for (std::size_t i = first; i < values.size(); ++i)
    if (values[i] > dosage_max && values[i] != dosage_missing) return i;
  return values.size();
}

column_stats dosage_stats(std::span<const std::uint16_t> values) noexcept {
  column_stats s;
  std::uint64_t sum = 0;
  u128 sum_sq = 0;
  // A square is below 2^31, so 2^32 of them fit 64 bits: 128-bit additions once per 2^32 values.
  constexpr std::size_t run = std::size_t{1} << 32;
  for (std::size_t first = 0; first < values.size(); first += run) {
    const std::size_t last = std::min(values.size(), first + run);
    std::uint64_t squares = 0;
    // Without a branch on missing values (a sixth of imputed dosages, at random: a branch
    // would mispredict), so that the loop vectorises.
    std::uint64_t observed = 0;
    for (std::size_t i = first; i < last; ++i) {
      const std::uint32_t v = values[i];
      const std::uint32_t kept = static_cast<std::uint32_t>(v != dosage_missing);
      const std::uint32_t x = v & (0u - kept);  // 0 for a missing value
      observed += kept;
      sum += x;
      squares += static_cast<std::uint64_t>(x) * x;
    }
    s.observed += observed;
    sum_sq += squares;
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

namespace {

constexpr std::uint8_t other_code = 3;  // a split code: neither 0, 1 nor 2 whole copies

// Rows of a code byte whose code is 3 (both bits set), as a mask of their low bits.
constexpr unsigned others_in(unsigned byte) noexcept { return byte & (byte >> 1) & 0x55u; }

// The four values of a code byte without a code 3.
struct whole_byte_values {
  std::array<std::array<std::uint16_t, 4>, 256> four{};
  constexpr whole_byte_values() noexcept {
    for (unsigned b = 0; b < 256; ++b)
      for (unsigned k = 0; k < 4; ++k)
        four[b][k] = static_cast<std::uint16_t>(((b >> (2 * k)) & 3u) * dosage_one);
  }
};
constexpr whole_byte_values whole_values{};

std::uint64_t code_bytes(std::uint64_t rows) noexcept { return (rows + 3) / 4; }

}  // namespace

std::uint64_t split_dosage_min_bytes(std::uint64_t rows) noexcept { return code_bytes(rows); }

std::uint64_t split_dosage_max_bytes(std::uint64_t rows) noexcept {
  return code_bytes(rows) + (rows + 7) / 8 + 2 * rows;
}

void split_dosages(std::span<const std::uint16_t> values, std::vector<std::byte>& payload) {
  const std::size_t n = values.size(), cb = code_bytes(n);
  // One pass without branches on the values (a quarter of imputed dosages are fractional, at
  // random: branches would mispredict), with each code byte and 64 kind bits built in a
  // register, into scratch with room for the unconditional writes; then the parts are copied
  // into place.
  thread_local std::vector<std::uint8_t> scratch;
  scratch.resize(cb + (n / 64 + 1) * 8 + 2 * (n + 1));
  std::uint8_t* const codes = scratch.data();
  std::uint8_t* const kinds = codes + cb;
  std::uint8_t* const low = kinds + (n / 64 + 1) * 8;
  std::uint8_t* const high = low + n + 1;
  const std::uint16_t* const v = values.data();
  std::size_t other = 0, fraction = 0;
  std::uint64_t kind_bits = 0;  // kinds of the others since the last multiple of 64
  for (std::size_t b = 0; b < cb; ++b) {
    unsigned byte = 0;
    const std::size_t first = 4 * b, count = std::min<std::size_t>(4, n - first);
    for (std::size_t k = 0; k < count; ++k) {
      const unsigned x = v[first + k];
      const bool is_whole = (x <= dosage_max) & (x % dosage_one == 0);
      const bool is_missing = x == dosage_missing;
      const unsigned code = is_whole ? x / dosage_one : other_code;
      byte |= code << (2 * k);
      kind_bits |= static_cast<std::uint64_t>(is_missing) << (other % 64);
      low[fraction] = static_cast<std::uint8_t>(x & 0xFFu);
      high[fraction] = static_cast<std::uint8_t>(x >> 8);
      other += !is_whole;
      fraction += !is_whole & !is_missing;
      if (other % 64 == 0 && !is_whole) {  // 64 kinds complete: out they go
        std::memcpy(kinds + (other / 64 - 1) * 8, &kind_bits, 8);
        kind_bits = 0;
      }
    }
    codes[b] = static_cast<std::uint8_t>(byte);
  }
  if (other % 64 != 0) std::memcpy(kinds + (other / 64) * 8, &kind_bits, 8);
  const std::size_t kind_bytes = (other + 7) / 8;
  payload.resize(cb + kind_bytes + 2 * fraction);
  std::byte* p = payload.data();
  std::memcpy(p, codes, cb);
  std::memcpy(p + cb, kinds, kind_bytes);
  std::memcpy(p + cb + kind_bytes, low, fraction);
  std::memcpy(p + cb + kind_bytes + fraction, high, fraction);
}

void join_dosages(std::span<const std::byte> payload, std::span<std::uint16_t> values) {
  const std::size_t n = values.size(), cb = code_bytes(n);
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(payload.data());
  const auto corrupt = [&](const std::string& what) {
    throw error(errc::corrupt_frame,
                "split dosage payload of " + std::to_string(payload.size()) + " bytes: " + what);
  };
  if (payload.size() < cb) corrupt("shorter than its " + std::to_string(cb) + " bytes of codes");
  // The codes of the rows past the last are padding, and count for nothing.
  std::size_t others = 0;
  for (std::size_t b = 0; b < cb; ++b) {
    unsigned byte = bytes[b];
    if (b + 1 == cb && n % 4 != 0) byte &= (1u << (2 * (n % 4))) - 1;
    others += static_cast<std::size_t>(std::popcount(others_in(byte)));
  }
  const std::size_t kind_bytes = (others + 7) / 8;
  if (payload.size() < cb + kind_bytes)
    corrupt(std::to_string(others) + " rows are neither 0, 1 nor 2 copies and need " +
            std::to_string(kind_bytes) + " bytes of kinds after the codes");
  const std::uint8_t* kinds = bytes + cb;
  std::size_t missing = 0;
  for (std::size_t k = 0; k < kind_bytes; ++k) {
    unsigned byte = kinds[k];
    if (k + 1 == kind_bytes && others % 8 != 0) byte &= (1u << (others % 8)) - 1;
    missing += static_cast<std::size_t>(std::popcount(byte));
  }
  const std::size_t fractions = others - missing;
  if (payload.size() != cb + kind_bytes + 2 * fractions)
    corrupt("its codes and kinds make " + std::to_string(cb + kind_bytes + 2 * fractions) +
            " bytes (" + std::to_string(fractions) + " fractional values)");
  const std::uint8_t* low = kinds + kind_bytes;
  const std::uint8_t* high = low + fractions;
  std::size_t other = 0, fraction = 0;
  for (std::size_t b = 0; b < cb; ++b) {
    const unsigned byte = bytes[b];
    const std::size_t first = 4 * b, count = std::min<std::size_t>(4, n - first);
    if (others_in(byte) == 0 && count == 4) {
      std::memcpy(values.data() + first, whole_values.four[byte].data(), 4 * sizeof(std::uint16_t));
      continue;
    }
    for (std::size_t k = 0; k < count; ++k) {
      const unsigned code = (byte >> (2 * k)) & 3u;
      std::uint16_t v = static_cast<std::uint16_t>(code * dosage_one);
      if (code == other_code) {
        if ((kinds[other / 8] >> (other % 8)) & 1u) {
          v = dosage_missing;
        } else {
          v = static_cast<std::uint16_t>(low[fraction] | (high[fraction] << 8));
          ++fraction;
          // Written as a code or a kind bit, never as a value: equal columns, equal frames.
          if ((v <= dosage_max && v % dosage_one == 0) || v == dosage_missing)
            corrupt("row " + std::to_string(first + k) + " holds value " + std::to_string(v) +
                    " among the fractional ones, where a whole number of copies or a missing "
                    "value is never written");
        }
        ++other;
      }
      values[first + k] = v;
    }
  }
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
