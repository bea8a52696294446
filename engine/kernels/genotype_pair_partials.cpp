// Three of a pair's sums for a column against several (kernels/genotype_products_internal.hpp):
// five of the nine population counts a word that genotype_pair_products takes, or the three
// of Σxa·xb alone, in portable, POPCNT, AVX2 and AVX-512 code, all giving the same integers.
#include "kernels/genotype_products_internal.hpp"
#include "simd/cpu_dispatch_internal.hpp"
#include "simd/popcount_internal.hpp"

namespace colflow {
namespace {

// Missing calls are 0 in every plane, so the product over all samples is the product over
// those called in both. With T ⊆ O, Σxa·xb = |Oa∧Ob| + |(Oa∧Tb) ⊕ (Ta∧Ob)| + 3|Ta∧Tb|: a
// sample with both calls 2 is 1 + 0 + 3. With Ones, |Oa∧Cb| and |Ob∧Ca| too. The same body
// built with and without POPCNT.
template <bool Ones>
__attribute__((always_inline)) inline void add_words(const std::uint64_t* pa,
                                                     const std::uint64_t* pb, std::size_t from,
                                                     std::size_t words,
                                                     genotype_pair_partials& s) noexcept {
  for (std::size_t w = from; w < words; ++w) {
    const std::uint64_t oa = pa[words + w], ta = pa[2 * words + w];
    const std::uint64_t ob = pb[words + w], tb = pb[2 * words + w];
    s.sum_ab += static_cast<std::uint64_t>(__builtin_popcountll(oa & ob) +
                                           __builtin_popcountll((oa & tb) ^ (ta & ob)) +
                                           3 * __builtin_popcountll(ta & tb));
    if constexpr (Ones) {
      s.one_a += static_cast<std::uint64_t>(__builtin_popcountll(oa & pb[w]));
      s.one_b += static_cast<std::uint64_t>(__builtin_popcountll(ob & pa[w]));
    }
  }
}

// Column a with each of b[0..count_b), through `Words` (one of the word loops).
template <void (*Words)(const std::uint64_t*, const std::uint64_t*, std::size_t, std::size_t,
                        genotype_pair_partials&) noexcept>
void each_pair(const std::uint64_t* a, const std::uint64_t* const* b, std::size_t count_b,
               std::size_t words, genotype_pair_partials* out) noexcept {
  for (std::size_t j = 0; j < count_b; ++j) {
    genotype_pair_partials s;
    Words(a, b[j], 0, words, s);
    out[j] = s;
  }
}

#if COLFLOW_X86_DISPATCH
template <bool Ones>
__attribute__((target("popcnt"))) void pair_partial_words_popcnt(
    const std::uint64_t* pa, const std::uint64_t* pb, std::size_t from, std::size_t words,
    genotype_pair_partials& s) noexcept {
  add_words<Ones>(pa, pb, from, words, s);
}

// Four words a step; a step's byte counts (at most 8 + 8 + 3 · 8 = 40 a byte for the
// product) are added in bytes over six steps before they are summed into 64-bit lanes.
template <bool Ones>
__attribute__((target("avx2,popcnt"))) void pair_partials_avx2(
    const std::uint64_t* a, const std::uint64_t* const* b, std::size_t count_b, std::size_t words,
    genotype_pair_partials* out) noexcept {
  constexpr std::size_t steps_per_sum = 6;
  const std::size_t vector_words = words - words % 4;
  const __m256i zero = _mm256_setzero_si256();
  for (std::size_t j = 0; j < count_b; ++j) {
    const std::uint64_t* pb = b[j];
    __m256i ab = zero, one_a = zero, one_b = zero;
    for (std::size_t w = 0; w < vector_words;) {
      __m256i ab_bytes = zero, one_a_bytes = zero, one_b_bytes = zero;
      for (std::size_t step = 0; step < steps_per_sum && w < vector_words; ++step, w += 4) {
        const __m256i oa = detail::load_words(a + words + w),
                      ta = detail::load_words(a + 2 * words + w);
        const __m256i ob = detail::load_words(pb + words + w),
                      tb = detail::load_words(pb + 2 * words + w);
        const __m256i both_two = detail::byte_counts(_mm256_and_si256(ta, tb));
        ab_bytes = _mm256_add_epi8(
            ab_bytes, _mm256_add_epi8(
                          _mm256_add_epi8(detail::byte_counts(_mm256_and_si256(oa, ob)),
                                          detail::byte_counts(_mm256_xor_si256(
                                              _mm256_and_si256(oa, tb), _mm256_and_si256(ta, ob)))),
                          _mm256_add_epi8(both_two, _mm256_add_epi8(both_two, both_two))));
        if constexpr (Ones) {
          const __m256i ca = detail::load_words(a + w), cb = detail::load_words(pb + w);
          one_a_bytes = _mm256_add_epi8(one_a_bytes, detail::byte_counts(_mm256_and_si256(oa, cb)));
          one_b_bytes = _mm256_add_epi8(one_b_bytes, detail::byte_counts(_mm256_and_si256(ob, ca)));
        }
      }
      ab = _mm256_add_epi64(ab, _mm256_sad_epu8(ab_bytes, zero));
      if constexpr (Ones) {
        one_a = _mm256_add_epi64(one_a, _mm256_sad_epu8(one_a_bytes, zero));
        one_b = _mm256_add_epi64(one_b, _mm256_sad_epu8(one_b_bytes, zero));
      }
    }
    genotype_pair_partials s{detail::lanes_total(ab), detail::lanes_total(one_a),
                             detail::lanes_total(one_b)};
    pair_partial_words_popcnt<Ones>(a, pb, vector_words, words, s);
    out[j] = s;
  }
}

// Eight words at a time with the 64-bit lanes' own population count.
template <bool Ones>
__attribute__((target("avx512f,avx512vpopcntdq,popcnt"))) void pair_partials_avx512(
    const std::uint64_t* a, const std::uint64_t* const* b, std::size_t count_b, std::size_t words,
    genotype_pair_partials* out) noexcept {
  const std::size_t vector_words = words - words % 8;
  for (std::size_t j = 0; j < count_b; ++j) {
    const std::uint64_t* pb = b[j];
    __m512i ab = _mm512_setzero_si512(), one_a = ab, one_b = ab;
    for (std::size_t w = 0; w < vector_words; w += 8) {
      const __m512i oa = _mm512_loadu_si512(a + words + w),
                    ta = _mm512_loadu_si512(a + 2 * words + w);
      const __m512i ob = _mm512_loadu_si512(pb + words + w),
                    tb = _mm512_loadu_si512(pb + 2 * words + w);
      ab = _mm512_add_epi64(ab, _mm512_popcnt_epi64(_mm512_and_si512(oa, ob)));
      ab = _mm512_add_epi64(ab, _mm512_popcnt_epi64(_mm512_xor_si512(_mm512_and_si512(oa, tb),
                                                                     _mm512_and_si512(ta, ob))));
      const __m512i both_two = _mm512_popcnt_epi64(_mm512_and_si512(ta, tb));
      ab = _mm512_add_epi64(ab, _mm512_add_epi64(_mm512_add_epi64(both_two, both_two), both_two));
      if constexpr (Ones) {
        const __m512i ca = _mm512_loadu_si512(a + w), cb = _mm512_loadu_si512(pb + w);
        one_a = _mm512_add_epi64(one_a, _mm512_popcnt_epi64(_mm512_and_si512(oa, cb)));
        one_b = _mm512_add_epi64(one_b, _mm512_popcnt_epi64(_mm512_and_si512(ob, ca)));
      }
    }
    genotype_pair_partials s{detail::lanes_total(ab), detail::lanes_total(one_a),
                             detail::lanes_total(one_b)};
    pair_partial_words_popcnt<Ones>(a, pb, vector_words, words, s);
    out[j] = s;
  }
}
#endif

template <bool Ones>
void pair_partials(const std::uint64_t* a, const std::uint64_t* const* b, std::size_t count_b,
                   std::size_t words, genotype_pair_partials* out) noexcept {
#if COLFLOW_X86_DISPATCH
  if (detail::cpu_has_avx512_popcnt()) return pair_partials_avx512<Ones>(a, b, count_b, words, out);
  if (detail::cpu_has_avx2()) return pair_partials_avx2<Ones>(a, b, count_b, words, out);
  if (detail::cpu_has_popcnt())
    return each_pair<pair_partial_words_popcnt<Ones>>(a, b, count_b, words, out);
#endif
  each_pair<add_words<Ones>>(a, b, count_b, words, out);
}

}  // namespace

namespace detail {
void genotype_pair_partial_sums_portable(const std::uint64_t* a, const std::uint64_t* const* b,
                                         std::size_t count_b, std::size_t words,
                                         genotype_pair_partials* out) noexcept {
  each_pair<add_words<true>>(a, b, count_b, words, out);
}
void genotype_pair_dots_portable(const std::uint64_t* a, const std::uint64_t* const* b,
                                 std::size_t count_b, std::size_t words,
                                 genotype_pair_partials* out) noexcept {
  each_pair<add_words<false>>(a, b, count_b, words, out);
}
}  // namespace detail

void genotype_pair_partial_sums(const std::uint64_t* a, const std::uint64_t* const* b,
                                std::size_t count_b, std::size_t words,
                                genotype_pair_partials* out) noexcept {
  pair_partials<true>(a, b, count_b, words, out);
}

void genotype_pair_dots(const std::uint64_t* a, const std::uint64_t* const* b, std::size_t count_b,
                        std::size_t words, genotype_pair_partials* out) noexcept {
  pair_partials<false>(a, b, count_b, words, out);
}

}  // namespace colflow
