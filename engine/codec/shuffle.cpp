// Byte shuffle and unshuffle of float payloads around a codec (colflow/codec/codec.hpp).
#include <cstring>

#include "colflow/codec/codec.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace colflow {
namespace {

// Element-major loops with the element size known at compile time: each output element is
// assembled from E sequential input streams (unshuffle) or spread into them (shuffle), so every
// stream is read or written front to back, instead of a generic byte-plane loop striding
// through memory, so the shuffle stays well below any codec's cost.
template <std::size_t E>
void shuffle_fixed(const std::byte* src, std::size_t n, std::byte* dst) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    std::byte element[E];
    std::memcpy(element, src + i * E, E);
    for (std::size_t b = 0; b < E; ++b) dst[b * n + i] = element[b];
  }
}

template <std::size_t E>
void unshuffle_fixed(const std::byte* src, std::size_t n, std::byte* dst) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    std::byte element[E];
    for (std::size_t b = 0; b < E; ++b) element[b] = src[b * n + i];
    std::memcpy(dst + i * E, element, E);
  }
}

#if defined(__SSE2__)
// Unshuffle as a byte transpose in SSE2 registers (SSE2 is part of x86-64: no run-time check).
// Sixteen elements at a time: one 16-byte load from each byte plane, then interleaving steps
// (bytes, then 16-bit, then 32-bit pairs) until each register holds whole elements: 8 loads,
// 24 unpacks and 8 stores for 16 float64, where the scalar loop above assembles one element per
// iteration from E scattered loads. With a fast codec (lz4) the unshuffle is a visible share
// of a decode pass, so this is worth its size.
//
// Both return how many elements they did (a multiple of 16); unshuffle_tail does the rest.
struct byte_planes {
  const std::byte* src;
  std::size_t n;  // elements, the length of each plane
  __m128i load(std::size_t plane, std::size_t i) const noexcept {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + plane * n + i));
  }
};

inline void store16(std::byte* dst, __m128i v) noexcept {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), v);
}

std::size_t unshuffle8_sse2(const std::byte* src, std::size_t n, std::byte* dst) noexcept {
  const byte_planes p{src, n};
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i a0 = p.load(0, i), a1 = p.load(1, i), a2 = p.load(2, i), a3 = p.load(3, i);
    const __m128i a4 = p.load(4, i), a5 = p.load(5, i), a6 = p.load(6, i), a7 = p.load(7, i);
    // Byte pairs (0,1), (2,3), (4,5), (6,7) of elements i..i+7 (lo) and i+8..i+15 (hi).
    const __m128i b0 = _mm_unpacklo_epi8(a0, a1), b1 = _mm_unpackhi_epi8(a0, a1);
    const __m128i b2 = _mm_unpacklo_epi8(a2, a3), b3 = _mm_unpackhi_epi8(a2, a3);
    const __m128i b4 = _mm_unpacklo_epi8(a4, a5), b5 = _mm_unpackhi_epi8(a4, a5);
    const __m128i b6 = _mm_unpacklo_epi8(a6, a7), b7 = _mm_unpackhi_epi8(a6, a7);
    // Bytes 0-3 (c0..c3) and 4-7 (c4..c7) of elements i..i+3, i+4..i+7, i+8..i+11, i+12..i+15.
    const __m128i c0 = _mm_unpacklo_epi16(b0, b2), c1 = _mm_unpackhi_epi16(b0, b2);
    const __m128i c2 = _mm_unpacklo_epi16(b1, b3), c3 = _mm_unpackhi_epi16(b1, b3);
    const __m128i c4 = _mm_unpacklo_epi16(b4, b6), c5 = _mm_unpackhi_epi16(b4, b6);
    const __m128i c6 = _mm_unpacklo_epi16(b5, b7), c7 = _mm_unpackhi_epi16(b5, b7);
    // Whole elements, two per register, in order.
    const __m128i out[8] = {_mm_unpacklo_epi32(c0, c4), _mm_unpackhi_epi32(c0, c4),
                            _mm_unpacklo_epi32(c1, c5), _mm_unpackhi_epi32(c1, c5),
                            _mm_unpacklo_epi32(c2, c6), _mm_unpackhi_epi32(c2, c6),
                            _mm_unpacklo_epi32(c3, c7), _mm_unpackhi_epi32(c3, c7)};
    for (std::size_t k = 0; k < 8; ++k) store16(dst + (i + 2 * k) * 8, out[k]);
  }
  return i;
}

std::size_t unshuffle4_sse2(const std::byte* src, std::size_t n, std::byte* dst) noexcept {
  const byte_planes p{src, n};
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i a0 = p.load(0, i), a1 = p.load(1, i), a2 = p.load(2, i), a3 = p.load(3, i);
    const __m128i b0 = _mm_unpacklo_epi8(a0, a1), b1 = _mm_unpackhi_epi8(a0, a1);
    const __m128i b2 = _mm_unpacklo_epi8(a2, a3), b3 = _mm_unpackhi_epi8(a2, a3);
    const __m128i out[4] = {_mm_unpacklo_epi16(b0, b2), _mm_unpackhi_epi16(b0, b2),
                            _mm_unpacklo_epi16(b1, b3), _mm_unpackhi_epi16(b1, b3)};
    for (std::size_t k = 0; k < 4; ++k) store16(dst + (i + 4 * k) * 4, out[k]);
  }
  return i;
}
#endif

// The elements from `first` on, one at a time (the tail the vector loop leaves).
template <std::size_t E>
void unshuffle_tail(const std::byte* src, std::size_t n, std::size_t first,
                    std::byte* dst) noexcept {
  for (std::size_t i = first; i < n; ++i)
    for (std::size_t b = 0; b < E; ++b) dst[i * E + b] = src[b * n + i];
}

}  // namespace

void shuffle_bytes(std::span<const std::byte> src, std::size_t element_size,
                   std::span<std::byte> dst) noexcept {
  const std::size_t n = src.size() / element_size;
  if (element_size == 8) return shuffle_fixed<8>(src.data(), n, dst.data());
  if (element_size == 4) return shuffle_fixed<4>(src.data(), n, dst.data());
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t b = 0; b < element_size; ++b) dst[b * n + i] = src[i * element_size + b];
}

void unshuffle_bytes(std::span<const std::byte> src, std::size_t element_size,
                     std::span<std::byte> dst) noexcept {
  const std::size_t n = src.size() / element_size;
#if defined(__SSE2__)
  if (element_size == 8)
    return unshuffle_tail<8>(src.data(), n, unshuffle8_sse2(src.data(), n, dst.data()), dst.data());
  if (element_size == 4)
    return unshuffle_tail<4>(src.data(), n, unshuffle4_sse2(src.data(), n, dst.data()), dst.data());
#else
  if (element_size == 8) return unshuffle_fixed<8>(src.data(), n, dst.data());
  if (element_size == 4) return unshuffle_fixed<4>(src.data(), n, dst.data());
#endif
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t b = 0; b < element_size; ++b) dst[i * element_size + b] = src[b * n + i];
}

}  // namespace colflow
