// The KING-robust pair counts from bit planes of samples over variants
// (kernels/king_counts_internal.hpp): the planes of a sample, and the sample × sample tile in
// portable, POPCNT and AVX2 code, all giving the same integers.
#include <algorithm>

#include "kernels/king_counts_internal.hpp"
#include "simd/cpu_dispatch_internal.hpp"
#include "simd/popcount_internal.hpp"

namespace colflow {

void make_king_planes(const std::uint8_t* const* columns, std::size_t count, std::size_t row,
                      std::uint64_t* planes, std::size_t words) noexcept {
  std::uint64_t* hom = planes;
  std::uint64_t* het = planes + words;
  std::uint64_t* two = planes + 2 * words;
  std::fill_n(planes, 3 * words, std::uint64_t{0});
  const std::size_t byte = row >> 2;
  const unsigned shift = 2 * static_cast<unsigned>(row & 3);
  // Codes: 00 two copies of A1, 01 missing, 10 heterozygous, 11 no copy of A1. With lo and hi
  // the code's bits: homozygous when they are equal, heterozygous hi & ~lo, no A1 hi & lo; a
  // missing call (lo & ~hi) sets no plane. Branch-free, a word of 64 variants at a time.
  for (std::size_t w = 0; w * 64 < count; ++w) {
    const std::size_t n = std::min<std::size_t>(64, count - w * 64);
    const std::uint8_t* const* block = columns + w * 64;
    std::uint64_t hom_w = 0, het_w = 0, two_w = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint64_t code = (block[k][byte] >> shift) & 3u;
      const std::uint64_t lo = code & 1u, hi = code >> 1;
      hom_w |= (~(lo ^ hi) & 1u) << k;
      het_w |= (hi & ~lo & 1u) << k;
      two_w |= (hi & lo) << k;
    }
    hom[w] = hom_w;
    het[w] = het_w;
    two[w] = two_w;
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

// The five counts of a pair in AVX2 registers: per-byte counts of up to `byte_steps` steps of
// four words (each step adds at most 8 to a byte), then summed into 64-bit lanes.
struct king_lanes {
  static constexpr std::size_t byte_steps = 31;  // 31 x 8 = 248 fits a byte
  __m256i hethet, het_hom, hom_het, homhom, ibs0;
};

__attribute__((target("avx2"))) inline void clear(king_lanes& l) noexcept {
  l.hethet = l.het_hom = l.hom_het = l.homhom = l.ibs0 = _mm256_setzero_si256();
}

// Adds the byte counts of four words of planes a and b to `bytes`.
__attribute__((target("avx2"))) inline void add_word_counts(king_lanes& bytes,
                                                            const std::uint64_t* pa,
                                                            const std::uint64_t* pb,
                                                            std::size_t words,
                                                            std::size_t w) noexcept {
  using detail::byte_counts;
  using detail::load_words;
  const __m256i hom_a = load_words(pa + w), het_a = load_words(pa + words + w),
                two_a = load_words(pa + 2 * words + w);
  const __m256i hom_b = load_words(pb + w), het_b = load_words(pb + words + w),
                two_b = load_words(pb + 2 * words + w);
  const __m256i both = _mm256_and_si256(hom_a, hom_b);
  bytes.hethet = _mm256_add_epi8(bytes.hethet, byte_counts(_mm256_and_si256(het_a, het_b)));
  bytes.het_hom = _mm256_add_epi8(bytes.het_hom, byte_counts(_mm256_and_si256(het_a, hom_b)));
  bytes.hom_het = _mm256_add_epi8(bytes.hom_het, byte_counts(_mm256_and_si256(hom_a, het_b)));
  bytes.homhom = _mm256_add_epi8(bytes.homhom, byte_counts(both));
  bytes.ibs0 = _mm256_add_epi8(bytes.ibs0,
                               byte_counts(_mm256_and_si256(both, _mm256_xor_si256(two_a, two_b))));
}

// Sums the byte counts into the 64-bit lanes of `total`.
__attribute__((target("avx2"))) inline void add_bytes(king_lanes& total,
                                                      const king_lanes& bytes) noexcept {
  const __m256i zero = _mm256_setzero_si256();
  total.hethet = _mm256_add_epi64(total.hethet, _mm256_sad_epu8(bytes.hethet, zero));
  total.het_hom = _mm256_add_epi64(total.het_hom, _mm256_sad_epu8(bytes.het_hom, zero));
  total.hom_het = _mm256_add_epi64(total.hom_het, _mm256_sad_epu8(bytes.hom_het, zero));
  total.homhom = _mm256_add_epi64(total.homhom, _mm256_sad_epu8(bytes.homhom, zero));
  total.ibs0 = _mm256_add_epi64(total.ibs0, _mm256_sad_epu8(bytes.ibs0, zero));
}

// Four words at a time, counted per byte and summed into 64-bit lanes every king_lanes::
// byte_steps steps (a sum of bytes, not of each step, so fewer instructions a word); the words
// past the last multiple of four by the POPCNT loop.
__attribute__((target("avx2,popcnt"))) void king_tile_avx2(
    const std::uint64_t* const* a, std::size_t count_a, const std::uint64_t* const* b,
    std::size_t count_b, std::size_t words, king_pair_counts* out, std::size_t ld) noexcept {
  using detail::lanes_total;
  const std::size_t vector_words = words - words % 4;
  for (std::size_t i = 0; i < count_a; ++i)
    for (std::size_t j = 0; j < count_b; ++j) {
      const std::uint64_t *pa = a[i], *pb = b[j];
      king_lanes total, bytes;
      clear(total);
      for (std::size_t w = 0; w < vector_words;) {
        clear(bytes);
        const std::size_t end = std::min(vector_words, w + 4 * king_lanes::byte_steps);
        for (; w < end; w += 4) add_word_counts(bytes, pa, pb, words, w);
        add_bytes(total, bytes);
      }
      king_pair_counts c;
      c.hethet = static_cast<std::uint32_t>(lanes_total(total.hethet));
      c.het_hom = static_cast<std::uint32_t>(lanes_total(total.het_hom));
      c.hom_het = static_cast<std::uint32_t>(lanes_total(total.hom_het));
      c.homhom = static_cast<std::uint32_t>(lanes_total(total.homhom));
      c.ibs0 = static_cast<std::uint32_t>(lanes_total(total.ibs0));
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
