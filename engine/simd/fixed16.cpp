// float32 values to and from 16-bit multiples of 2⁻¹⁴ (simd/fixed16_internal.hpp).
#include <cstring>

#include "simd/fixed16_internal.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace colflow::detail {
namespace {

constexpr float step = 1.0f / 16384.0f;  // fixed16_step
constexpr float scale = 16384.0f;

}  // namespace

void fixed16_bytes_to_float(const std::uint8_t* low, const std::uint8_t* high, std::size_t n,
                            std::byte* out) noexcept {
  std::size_t i = 0;
#if defined(__SSE2__)
  const __m128 by = _mm_set1_ps(step);
  // Sixteen values: their 16-bit words from the two byte runs, sign-extended to 32 bits (the
  // word in the high half, shifted back down), converted and scaled exactly.
  const auto store = [&](__m128i words, std::byte* to) {
    const __m128i lo32 = _mm_srai_epi32(_mm_unpacklo_epi16(words, words), 16);
    const __m128i hi32 = _mm_srai_epi32(_mm_unpackhi_epi16(words, words), 16);
    _mm_storeu_ps(reinterpret_cast<float*>(to), _mm_mul_ps(_mm_cvtepi32_ps(lo32), by));
    _mm_storeu_ps(reinterpret_cast<float*>(to + 16), _mm_mul_ps(_mm_cvtepi32_ps(hi32), by));
  };
  for (; i + 16 <= n; i += 16) {
    const __m128i l = _mm_loadu_si128(reinterpret_cast<const __m128i*>(low + i));
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(high + i));
    store(_mm_unpacklo_epi8(l, h), out + 4 * i);
    store(_mm_unpackhi_epi8(l, h), out + 4 * i + 32);
  }
#endif
  for (; i < n; ++i) {
    const auto u = static_cast<std::uint16_t>(low[i] | high[i] << 8);
    const float v = static_cast<float>(static_cast<std::int16_t>(u)) * step;
    std::memcpy(out + 4 * i, &v, 4);
  }
}

bool float_to_fixed16(const float* values, std::size_t n, std::int16_t* out) noexcept {
  std::size_t i = 0;
#if defined(__SSE2__)
  const __m128 by = _mm_set1_ps(scale), lowest = _mm_set1_ps(-32768.0f),
               highest = _mm_set1_ps(32767.0f);
  // Four values: scaled (exactly, a power of two), in range (false for NaN), truncated as the
  // scalar cast truncates, and equal to their truncation; out of range converted as 0.
  const auto convert = [&](const float* from, int& fits) {
    const __m128 scaled = _mm_mul_ps(_mm_loadu_ps(from), by);
    const __m128 in_range = _mm_and_ps(_mm_cmpge_ps(scaled, lowest), _mm_cmple_ps(scaled, highest));
    const __m128i whole = _mm_cvttps_epi32(_mm_and_ps(scaled, in_range));
    fits &= _mm_movemask_ps(_mm_and_ps(in_range, _mm_cmpeq_ps(_mm_cvtepi32_ps(whole), scaled)));
    return whole;
  };
  int fits = 0xf;
  for (; i + 8 <= n; i += 8) {
    const __m128i a = convert(values + i, fits), b = convert(values + i + 4, fits);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm_packs_epi32(a, b));
  }
  if (fits != 0xf) return false;
#endif
  for (; i < n; ++i) {
    const float scaled = values[i] * scale;
    if (!(scaled >= -32768.0f && scaled <= 32767.0f)) return false;
    out[i] = static_cast<std::int16_t>(scaled);
    if (static_cast<float>(out[i]) != scaled) return false;
  }
  return true;
}

}  // namespace colflow::detail
