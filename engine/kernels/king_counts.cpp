// The KING-robust pair counts from bit planes of samples over variants
// (kernels/king_counts_internal.hpp): the planes of a sample, and the sample × sample tile in
// portable, POPCNT and AVX2 code, all giving the same integers.
#include <algorithm>

#include "kernels/king_counts_internal.hpp"
#include "kernels/popcount_avx2_internal.hpp"
#include "simd/cpu_dispatch_internal.hpp"

namespace colflow {

void make_king_planes(const std::uint8_t* const* columns, std::size_t count, std::size_t row,
                      std::uint64_t* planes, std::size_t words) noexcept {
  std::uint64_t* hom = planes;
  std::uint64_t* het = planes + words;
  std::uint64_t* two = planes + 2 * words;
  std::fill_n(planes, 3 * words, std::uint64_t{0});
  const std::size_t byte = row >> 2;
  const unsigned shift = 2 * static_cast<unsigned>(row & 3);
  for (std::size_t k = 0; k < count; ++k) {
    // Codes: 00 two copies of A1, 01 missing, 10 heterozygous, 11 no copy of A1.
    const unsigned code = (columns[k][byte] >> shift) & 3u;
    const std::uint64_t bit = std::uint64_t{1} << (k % 64);
    const std::size_t w = k / 64;
    if (code == 0 || code == 3) hom[w] |= bit;
    if (code == 2) het[w] |= bit;
    if (code == 3) two[w] |= bit;
  }
}

namespace {

// Words [from, words) of a pair added to c; the same body built with and without POPCNT.
#define COLFLOW_KING_WORDS(pa, pb, from, words, c)                                          \
  for (std::size_t w_ = (from); w_ < (words); ++w_) {                                       \
    const std::uint64_t hom_a = (pa)[w_], het_a = (pa)[(words) + w_],                       \
                        two_a = (pa)[2 * (words) + w_];                                     \
    const std::uint64_t hom_b = (pb)[w_], het_b = (pb)[(words) + w_],                       \
                        two_b = (pb)[2 * (words) + w_];                                     \
    const std::uint64_t homhom = hom_a & hom_b;                                             \
    (c).hethet += static_cast<std::uint32_t>(__builtin_popcountll(het_a & het_b));          \
    (c).het_hom += static_cast<std::uint32_t>(__builtin_popcountll(het_a & hom_b));         \
    (c).hom_het += static_cast<std::uint32_t>(__builtin_popcountll(hom_a & het_b));         \
    (c).homhom += static_cast<std::uint32_t>(__builtin_popcountll(homhom));                 \
    (c).ibs0 += static_cast<std::uint32_t>(__builtin_popcountll(homhom & (two_a ^ two_b))); \
  }

void add_counts(king_pair_counts& to, const king_pair_counts& c) noexcept {
  to.hethet += c.hethet;
  to.ibs0 += c.ibs0;
  to.het_hom += c.het_hom;
  to.hom_het += c.hom_het;
  to.homhom += c.homhom;
}

void king_tile_portable(const std::uint64_t* const* a, std::size_t count_a,
                        const std::uint64_t* const* b, std::size_t count_b, std::size_t words,
                        king_pair_counts* out, std::size_t ld) noexcept {
  for (std::size_t i = 0; i < count_a; ++i)
    for (std::size_t j = 0; j < count_b; ++j) {
      king_pair_counts c;
      COLFLOW_KING_WORDS(a[i], b[j], std::size_t{0}, words, c);
      add_counts(out[i * ld + j], c);
    }
}

#if COLFLOW_X86_DISPATCH
__attribute__((target("popcnt"))) void king_words_popcnt(const std::uint64_t* pa,
                                                         const std::uint64_t* pb, std::size_t from,
                                                         std::size_t words,
                                                         king_pair_counts& c) noexcept {
  COLFLOW_KING_WORDS(pa, pb, from, words, c);
}

__attribute__((target("popcnt"))) void king_tile_popcnt(
    const std::uint64_t* const* a, std::size_t count_a, const std::uint64_t* const* b,
    std::size_t count_b, std::size_t words, king_pair_counts* out, std::size_t ld) noexcept {
  for (std::size_t i = 0; i < count_a; ++i)
    for (std::size_t j = 0; j < count_b; ++j) {
      king_pair_counts c;
      king_words_popcnt(a[i], b[j], 0, words, c);
      add_counts(out[i * ld + j], c);
    }
}

// Four words at a time, each count's bytes summed into 64-bit lanes every step; the words
// past the last multiple of four by the POPCNT loop.
__attribute__((target("avx2,popcnt"))) void king_tile_avx2(
    const std::uint64_t* const* a, std::size_t count_a, const std::uint64_t* const* b,
    std::size_t count_b, std::size_t words, king_pair_counts* out, std::size_t ld) noexcept {
  using detail::add_popcount;
  using detail::lanes_total;
  using detail::load_words;
  const std::size_t vector_words = words - words % 4;
  for (std::size_t i = 0; i < count_a; ++i)
    for (std::size_t j = 0; j < count_b; ++j) {
      const std::uint64_t *pa = a[i], *pb = b[j];
      __m256i hethet = _mm256_setzero_si256(), het_hom = hethet, hom_het = hethet, homhom = hethet,
              ibs0 = hethet;
      for (std::size_t w = 0; w < vector_words; w += 4) {
        const __m256i hom_a = load_words(pa + w), het_a = load_words(pa + words + w),
                      two_a = load_words(pa + 2 * words + w);
        const __m256i hom_b = load_words(pb + w), het_b = load_words(pb + words + w),
                      two_b = load_words(pb + 2 * words + w);
        const __m256i both = _mm256_and_si256(hom_a, hom_b);
        hethet = add_popcount(hethet, _mm256_and_si256(het_a, het_b));
        het_hom = add_popcount(het_hom, _mm256_and_si256(het_a, hom_b));
        hom_het = add_popcount(hom_het, _mm256_and_si256(hom_a, het_b));
        homhom = add_popcount(homhom, both);
        ibs0 = add_popcount(ibs0, _mm256_and_si256(both, _mm256_xor_si256(two_a, two_b)));
      }
      king_pair_counts c;
      c.hethet = static_cast<std::uint32_t>(lanes_total(hethet));
      c.het_hom = static_cast<std::uint32_t>(lanes_total(het_hom));
      c.hom_het = static_cast<std::uint32_t>(lanes_total(hom_het));
      c.homhom = static_cast<std::uint32_t>(lanes_total(homhom));
      c.ibs0 = static_cast<std::uint32_t>(lanes_total(ibs0));
      king_words_popcnt(pa, pb, vector_words, words, c);
      add_counts(out[i * ld + j], c);
    }
}
#endif

}  // namespace

namespace detail {
void king_pair_tile_portable(const std::uint64_t* const* a, std::size_t count_a,
                             const std::uint64_t* const* b, std::size_t count_b, std::size_t words,
                             king_pair_counts* out, std::size_t ld) noexcept {
  king_tile_portable(a, count_a, b, count_b, words, out, ld);
}
}  // namespace detail

void king_pair_tile(const std::uint64_t* const* a, std::size_t count_a,
                    const std::uint64_t* const* b, std::size_t count_b, std::size_t words,
                    king_pair_counts* out, std::size_t ld) noexcept {
#if COLFLOW_X86_DISPATCH
  if (detail::cpu_has_avx2()) return king_tile_avx2(a, count_a, b, count_b, words, out, ld);
  if (detail::cpu_has_popcnt()) return king_tile_popcnt(a, count_a, b, count_b, words, out, ld);
#endif
  king_tile_portable(a, count_a, b, count_b, words, out, ld);
}

const char* king_pair_tile_path() noexcept {
#if COLFLOW_X86_DISPATCH
  if (detail::cpu_has_avx2()) return "avx2";
  if (detail::cpu_has_popcnt()) return "popcnt";
#endif
  return "portable";
}

}  // namespace colflow
