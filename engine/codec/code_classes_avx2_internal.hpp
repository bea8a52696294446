// The classes of 2-bit codes counted with AVX2, two table lookups a byte: what every count of
// a genotype column (count_genotypes, with or without a sample mask) runs on AVX2 machines.
//
// AVX2 has no vector population count; counting the low bits, the high bits and their AND
// with Muła's nibble table took three lookups, an add and a 64-bit sum a class, every 32
// bytes. Here each nibble (two codes) is looked up in two tables of class counts: one gives
// missing + 16 · hom A2, the other het. The first table's two fields take three steps before
// they are split into byte counters, the byte counters 63 steps before they are summed into
// 64-bit lanes. Exact integers, the same counts as the scalar popcounts.
#pragma once

#include <cstddef>
#include <cstdint>

#include "simd/cpu_dispatch_internal.hpp"

#if COLFLOW_X86_DISPATCH
namespace colflow::detail {

struct code_class_totals {
  std::uint64_t missing = 0, het = 0, hom_a2 = 0;
};

// The classes of the codes in `vectors` runs of 32 bytes; with Masked, of the pairs whose
// mask pair is 0b01 (the others count as none).
template <bool Masked>
__attribute__((target("avx2"), always_inline)) inline code_class_totals count_code_classes_avx2(
    const std::uint8_t* codes, const std::uint8_t* mask, std::size_t vectors) noexcept {
  // By nibble, two codes: bits 0-1 the first, 2-3 the second; 01 missing, 10 het, 11 hom A2.
  const __m256i missing_hom2 =
      _mm256_setr_epi8(0, 1, 0, 16, 1, 2, 1, 17, 0, 1, 0, 16, 16, 17, 16, 32, 0, 1, 0, 16, 1, 2, 1,
                       17, 0, 1, 0, 16, 16, 17, 16, 32);
  const __m256i het = _mm256_setr_epi8(0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 2, 1, 0, 0, 1, 0, 0, 0, 1, 0,
                                       0, 0, 1, 0, 1, 1, 2, 1, 0, 0, 1, 0);
  const __m256i nibble = _mm256_set1_epi8(0x0f), zero = _mm256_setzero_si256();
  __m256i missing_n = zero, het_n = zero, hom2_n = zero;
  std::size_t v = 0;
  while (v < vectors) {
    // Byte counters: at most 4 a step for each class, 63 steps.
    __m256i missing_b = zero, het_b = zero, hom2_b = zero;
    const std::size_t block_end = v + 63 < vectors ? v + 63 : vectors;
    while (v < block_end) {
      // missing + 16 · hom A2 a byte: at most 4 + 16 · 4 a step, three steps.
      __m256i fields = zero;
      const std::size_t run_end = v + 3 < block_end ? v + 3 : block_end;
      for (; v < run_end; ++v) {
        __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + 32 * v));
        if constexpr (Masked) {
          const __m256i m = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(mask + 32 * v));
          x = _mm256_and_si256(x, _mm256_or_si256(m, _mm256_slli_epi64(m, 1)));
        }
        const __m256i lo = _mm256_and_si256(x, nibble);
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), nibble);
        fields = _mm256_add_epi8(fields, _mm256_add_epi8(_mm256_shuffle_epi8(missing_hom2, lo),
                                                         _mm256_shuffle_epi8(missing_hom2, hi)));
        het_b = _mm256_add_epi8(
            het_b, _mm256_add_epi8(_mm256_shuffle_epi8(het, lo), _mm256_shuffle_epi8(het, hi)));
      }
      missing_b = _mm256_add_epi8(missing_b, _mm256_and_si256(fields, nibble));
      hom2_b = _mm256_add_epi8(hom2_b, _mm256_and_si256(_mm256_srli_epi16(fields, 4), nibble));
    }
    missing_n = _mm256_add_epi64(missing_n, _mm256_sad_epu8(missing_b, zero));
    het_n = _mm256_add_epi64(het_n, _mm256_sad_epu8(het_b, zero));
    hom2_n = _mm256_add_epi64(hom2_n, _mm256_sad_epu8(hom2_b, zero));
  }
  alignas(32) std::uint64_t lanes[3][4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes[0]), missing_n);
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes[1]), het_n);
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes[2]), hom2_n);
  code_class_totals t;
  for (int l = 0; l < 4; ++l) {
    t.missing += lanes[0][l];
    t.het += lanes[1][l];
    t.hom_a2 += lanes[2][l];
  }
  return t;
}

}  // namespace colflow::detail
#endif
