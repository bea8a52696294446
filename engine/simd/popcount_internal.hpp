// Population counts in vector registers, for the code that counts bits of planes and codes
// (genotype counts, genotype products, KING pair counts): with AVX2, Muła's nibble table, a
// count per byte, summed into 64-bit lanes; the sums of the lanes, AVX2's and AVX-512's.
#pragma once

#include <cstdint>

#include "simd/cpu_dispatch_internal.hpp"

#if COLFLOW_X86_DISPATCH
namespace colflow::detail {

// Population counts of the 32 bytes of v, a byte each (the nibble table of Muła's method).
__attribute__((target("avx2"))) inline __m256i byte_counts(__m256i v) noexcept {
  const __m256i table = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2,
                                         1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
  const __m256i nibble = _mm256_set1_epi8(0x0f);
  return _mm256_add_epi8(
      _mm256_shuffle_epi8(table, _mm256_and_si256(v, nibble)),
      _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble)));
}

// Four words from p, unaligned.
__attribute__((target("avx2"))) inline __m256i load_words(const std::uint64_t* p) noexcept {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// The sum of the four 64-bit lanes.
__attribute__((target("avx2"))) inline std::uint64_t lanes_total(__m256i v) noexcept {
  alignas(32) std::uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), v);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

// Adds the population count of v to the four 64-bit lanes of `total`.
__attribute__((target("avx2"))) inline __m256i add_popcount(__m256i total, __m256i v) noexcept {
  return _mm256_add_epi64(total, _mm256_sad_epu8(byte_counts(v), _mm256_setzero_si256()));
}

// The sum of the eight 64-bit lanes (through memory: GCC 12's reduction intrinsic warns of an
// uninitialised value under -Werror).
__attribute__((target("avx512f"))) inline std::uint64_t lanes_total(__m512i v) noexcept {
  alignas(64) std::uint64_t lanes[8];
  _mm512_store_si512(lanes, v);
  std::uint64_t sum = 0;
  for (std::uint64_t x : lanes) sum += x;
  return sum;
}

}  // namespace colflow::detail
#endif
