// The KING-robust pair counts of a block from bit planes of samples over variants
// (kernels/king_counts_internal.hpp): the planes and calls of a sample, the transposed rows of
// a tile, and hethet and ibs0 of a sample against others in portable, POPCNT, AVX2 and AVX-512
// code, all giving the same integers.
#include <algorithm>
#include <bit>

#include "kernels/bit_columns_internal.hpp"
#include "kernels/king_counts_internal.hpp"
#include "simd/cpu_dispatch_internal.hpp"
#include "simd/popcount_internal.hpp"

namespace colflow {

king_sample_calls make_king_planes(const std::uint8_t* const* columns, std::size_t count,
                                   std::size_t row, std::uint64_t* planes,
                                   std::size_t words) noexcept {
  std::fill_n(planes, king_planes * words, std::uint64_t{0});
  const std::size_t byte = row >> 2;
  const unsigned shift = 2 * static_cast<unsigned>(row & 3);
  king_sample_calls calls;
  // Codes: 00 two copies of A1, 01 missing, 10 heterozygous, 11 no copy of A1. With lo and hi
  // the code's bits: homozygous when they are equal, heterozygous hi & ~lo, no A1 hi & lo,
  // missing lo & ~hi. Branch-free, a word of 64 variants at a time.
  for (std::size_t w = 0; w * 64 < count; ++w) {
    const std::size_t n = std::min<std::size_t>(64, count - w * 64);
    const std::uint8_t* const* block = columns + w * 64;
    std::uint64_t hom_w = 0, het_w = 0, two_w = 0, missing_w = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint64_t code = (block[k][byte] >> shift) & 3u;
      const std::uint64_t lo = code & 1u, hi = code >> 1;
      hom_w |= (~(lo ^ hi) & 1u) << k;
      het_w |= (hi & ~lo & 1u) << k;
      two_w |= (hi & lo) << k;
      missing_w |= (lo & ~hi & 1u) << k;
    }
    planes[hom_plane * words + w] = hom_w;
    planes[het_plane * words + w] = het_w;
    planes[two_plane * words + w] = two_w;
    planes[missing_plane * words + w] = missing_w;
    calls.het += static_cast<std::uint32_t>(std::popcount(het_w));
    calls.missing += static_cast<std::uint32_t>(std::popcount(missing_w));
  }
  return calls;
}

void king_tile_rows(const std::uint64_t* const* planes, std::size_t samples, std::size_t words,
                    std::uint64_t* het_rows, std::uint64_t* missing_rows) noexcept {
  for (std::size_t w = 0; w < words; ++w) {
    std::uint64_t* het = het_rows + w * 64;
    std::uint64_t* missing = missing_rows + w * 64;
    for (std::size_t s = 0; s < 64; ++s) {
      het[s] = s < samples ? planes[s][het_plane * words + w] : 0;
      missing[s] = s < samples ? planes[s][missing_plane * words + w] : 0;
    }
    transpose_bits_64(het);
    transpose_bits_64(missing);
  }
}

namespace {

// Words [from, words) of a pair, planes `words` words apart, added to hethet and ibs0; the same
// body built with and without POPCNT.
#define COLFLOW_KING_WORDS(pa, pb, from, words, hethet, ibs0)                                    \
  for (std::size_t w_ = (from); w_ < (words); ++w_) {                                            \
    const std::uint64_t hom_a = (pa)[w_], het_a = (pa)[(words) + w_],                            \
                        two_a = (pa)[2 * (words) + w_];                                          \
    const std::uint64_t hom_b = (pb)[w_], het_b = (pb)[(words) + w_],                            \
                        two_b = (pb)[2 * (words) + w_];                                          \
    (hethet) += static_cast<std::uint32_t>(__builtin_popcountll(het_a & het_b));                 \
    (ibs0) += static_cast<std::uint32_t>(__builtin_popcountll(hom_a & hom_b & (two_a ^ two_b))); \
  }

void hethet_ibs0_portable(const std::uint64_t* a, const std::uint64_t* const* b,
                          std::size_t count_b, std::size_t words, std::uint32_t* hethet,
                          std::uint32_t* ibs0) noexcept {
  for (std::size_t j = 0; j < count_b; ++j) {
    hethet[j] = ibs0[j] = 0;
    COLFLOW_KING_WORDS(a, b[j], std::size_t{0}, words, hethet[j], ibs0[j]);
  }
}

#if COLFLOW_X86_DISPATCH
__attribute__((target("popcnt"))) void king_words_popcnt(const std::uint64_t* pa,
                                                         const std::uint64_t* pb, std::size_t from,
                                                         std::size_t words, std::uint32_t& hethet,
                                                         std::uint32_t& ibs0) noexcept {
  COLFLOW_KING_WORDS(pa, pb, from, words, hethet, ibs0);
}

__attribute__((target("popcnt"))) void hethet_ibs0_popcnt(const std::uint64_t* a,
                                                          const std::uint64_t* const* b,
                                                          std::size_t count_b, std::size_t words,
                                                          std::uint32_t* hethet,
                                                          std::uint32_t* ibs0) noexcept {
  for (std::size_t j = 0; j < count_b; ++j) {
    hethet[j] = ibs0[j] = 0;
    king_words_popcnt(a, b[j], 0, words, hethet[j], ibs0[j]);
  }
}

// Four words at a time, counted per byte (each step adds at most 8 to a byte, so 31 steps fit)
// and summed into 64-bit lanes every 31 steps; the words past the last multiple of four by the
// POPCNT loop.
__attribute__((target("avx2,popcnt"))) void hethet_ibs0_avx2(const std::uint64_t* a,
                                                             const std::uint64_t* const* b,
                                                             std::size_t count_b, std::size_t words,
                                                             std::uint32_t* hethet,
                                                             std::uint32_t* ibs0) noexcept {
  using detail::byte_counts;
  using detail::lanes_total;
  using detail::load_words;
  constexpr std::size_t byte_steps = 31;
  const std::size_t vector_end = words - words % 4;
  const __m256i zero = _mm256_setzero_si256();
  for (std::size_t j = 0; j < count_b; ++j) {
    const std::uint64_t* pb = b[j];
    __m256i total_hh = zero, total_i0 = zero;
    for (std::size_t w = 0; w < vector_end;) {
      __m256i hh = zero, i0 = zero;
      const std::size_t end = std::min(vector_end, w + 4 * byte_steps);
      for (; w < end; w += 4) {
        const __m256i het = _mm256_and_si256(load_words(a + words + w), load_words(pb + words + w));
        const __m256i hom = _mm256_and_si256(load_words(a + w), load_words(pb + w));
        const __m256i differ =
            _mm256_xor_si256(load_words(a + 2 * words + w), load_words(pb + 2 * words + w));
        hh = _mm256_add_epi8(hh, byte_counts(het));
        i0 = _mm256_add_epi8(i0, byte_counts(_mm256_and_si256(hom, differ)));
      }
      total_hh = _mm256_add_epi64(total_hh, _mm256_sad_epu8(hh, zero));
      total_i0 = _mm256_add_epi64(total_i0, _mm256_sad_epu8(i0, zero));
    }
    hethet[j] = static_cast<std::uint32_t>(lanes_total(total_hh));
    ibs0[j] = static_cast<std::uint32_t>(lanes_total(total_i0));
    king_words_popcnt(a, pb, vector_end, words, hethet[j], ibs0[j]);
  }
}

// Eight words at a time with the 64-bit lanes' population count; ibs0's three operations in
// one ternary-logic instruction (hom_a ∧ (two_a ⊕ two_b), then ∧ hom_b); the words past the
// last multiple of eight by the POPCNT loop.
__attribute__((target("avx512f,avx512vpopcntdq,popcnt"))) void hethet_ibs0_avx512(
    const std::uint64_t* a, const std::uint64_t* const* b, std::size_t count_b, std::size_t words,
    std::uint32_t* hethet, std::uint32_t* ibs0) noexcept {
  using detail::lanes_total;
  const std::size_t vector_end = words - words % 8;
  for (std::size_t j = 0; j < count_b; ++j) {
    const std::uint64_t* pb = b[j];
    __m512i hh = _mm512_setzero_si512(), i0 = _mm512_setzero_si512();
    for (std::size_t w = 0; w < vector_end; w += 8) {
      const __m512i het =
          _mm512_and_si512(_mm512_loadu_si512(a + words + w), _mm512_loadu_si512(pb + words + w));
      // 0x60: x ∧ (y ⊕ z) for x = hom_a, y = two_a, z = two_b (bits 0b101 and 0b110 of the
      // truth table indexed by x y z).
      const __m512i opposite =
          _mm512_and_si512(_mm512_ternarylogic_epi64(_mm512_loadu_si512(a + w),
                                                     _mm512_loadu_si512(a + 2 * words + w),
                                                     _mm512_loadu_si512(pb + 2 * words + w), 0x60),
                           _mm512_loadu_si512(pb + w));
      hh = _mm512_add_epi64(hh, _mm512_popcnt_epi64(het));
      i0 = _mm512_add_epi64(i0, _mm512_popcnt_epi64(opposite));
    }
    hethet[j] = static_cast<std::uint32_t>(lanes_total(hh));
    ibs0[j] = static_cast<std::uint32_t>(lanes_total(i0));
    king_words_popcnt(a, pb, vector_end, words, hethet[j], ibs0[j]);
  }
}
#endif

}  // namespace

namespace detail {
void king_hethet_ibs0_portable(const std::uint64_t* a, const std::uint64_t* const* b,
                               std::size_t count_b, std::size_t words, std::uint32_t* hethet,
                               std::uint32_t* ibs0) noexcept {
  hethet_ibs0_portable(a, b, count_b, words, hethet, ibs0);
}
}  // namespace detail

void king_hethet_ibs0(const std::uint64_t* a, const std::uint64_t* const* b, std::size_t count_b,
                      std::size_t words, std::uint32_t* hethet, std::uint32_t* ibs0) noexcept {
#if COLFLOW_X86_DISPATCH
  if (detail::cpu_has_avx512_popcnt())
    return hethet_ibs0_avx512(a, b, count_b, words, hethet, ibs0);
  if (detail::cpu_has_avx2()) return hethet_ibs0_avx2(a, b, count_b, words, hethet, ibs0);
  if (detail::cpu_has_popcnt()) return hethet_ibs0_popcnt(a, b, count_b, words, hethet, ibs0);
#endif
  hethet_ibs0_portable(a, b, count_b, words, hethet, ibs0);
}

const char* king_hethet_ibs0_path() noexcept {
#if COLFLOW_X86_DISPATCH
  if (detail::cpu_has_avx512_popcnt()) return "avx512";
  if (detail::cpu_has_avx2()) return "avx2";
  if (detail::cpu_has_popcnt()) return "popcnt";
#endif
  return "portable";
}

}  // namespace colflow
