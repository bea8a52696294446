// The 3 × 3 table of a pair's calls from nine population counts of its planes
// (kernels/genotype_products_internal.hpp), in portable, POPCNT, AVX2 and AVX-512 code, all
// giving the same integers.
#include <algorithm>
#include <iterator>

#include "kernels/genotype_products_internal.hpp"
#include "simd/cpu_dispatch_internal.hpp"
#include "simd/popcount_internal.hpp"

namespace colflow {
namespace {

// The nine counts of a pair: n = |Ca∧Cb|, then |Oa∧Cb|, |Ta∧Cb|, |Ca∧Ob|, |Ca∧Tb|, |Oa∧Ob|,
// |Oa∧Tb|, |Ta∧Ob|, |Ta∧Tb|; the same body built with and without POPCNT.
struct pair_cells {
  std::uint64_t n = 0, oc = 0, tc = 0, co = 0, ct = 0, oo = 0, ot = 0, to = 0, tt = 0;
};

#define COLFLOW_PAIR_CELLS(pa, pb, from, words, c)                                              \
  for (std::size_t w_ = (from); w_ < (words); ++w_) {                                           \
    const std::uint64_t ca_ = (pa)[w_], oa_ = (pa)[(words) + w_], ta_ = (pa)[2 * (words) + w_]; \
    const std::uint64_t cb_ = (pb)[w_], ob_ = (pb)[(words) + w_], tb_ = (pb)[2 * (words) + w_]; \
    (c).n += static_cast<std::uint64_t>(__builtin_popcountll(ca_ & cb_));                       \
    (c).oc += static_cast<std::uint64_t>(__builtin_popcountll(oa_ & cb_));                      \
    (c).tc += static_cast<std::uint64_t>(__builtin_popcountll(ta_ & cb_));                      \
    (c).co += static_cast<std::uint64_t>(__builtin_popcountll(ca_ & ob_));                      \
    (c).ct += static_cast<std::uint64_t>(__builtin_popcountll(ca_ & tb_));                      \
    (c).oo += static_cast<std::uint64_t>(__builtin_popcountll(oa_ & ob_));                      \
    (c).ot += static_cast<std::uint64_t>(__builtin_popcountll(oa_ & tb_));                      \
    (c).to += static_cast<std::uint64_t>(__builtin_popcountll(ta_ & ob_));                      \
    (c).tt += static_cast<std::uint64_t>(__builtin_popcountll(ta_ & tb_));                      \
  }

void pair_cells_portable(const std::uint64_t* a, const std::uint64_t* b, std::size_t words,
                         pair_cells& c) noexcept {
  COLFLOW_PAIR_CELLS(a, b, std::size_t{0}, words, c);
}

#if COLFLOW_X86_DISPATCH
__attribute__((target("popcnt"))) void pair_cells_popcnt(const std::uint64_t* a,
                                                         const std::uint64_t* b, std::size_t from,
                                                         std::size_t words,
                                                         pair_cells& c) noexcept {
  COLFLOW_PAIR_CELLS(a, b, from, words, c);
}

// The cells in the order of the vector kernels' accumulators.
std::uint64_t* cell(pair_cells& c, int k) noexcept {
  std::uint64_t* const cells[9] = {&c.n, &c.oc, &c.tc, &c.co, &c.ct, &c.oo, &c.ot, &c.to, &c.tt};
  return cells[k];
}

// Four words a step with nibble-table byte counts, added in bytes over 31 steps (at most 8 a
// step) before they are summed into 64-bit lanes: what `clump` counts for every pair of an
// index variant and a variant of its window.
__attribute__((target("avx2,popcnt"))) void pair_cells_avx2(const std::uint64_t* a,
                                                            const std::uint64_t* b,
                                                            std::size_t words,
                                                            pair_cells& c) noexcept {
  const std::size_t vector_words = words - words % 4;
  const __m256i zero = _mm256_setzero_si256();
  for (std::size_t w = 0; w < vector_words;) {
    __m256i bytes[9];
    std::fill(std::begin(bytes), std::end(bytes), zero);
    for (std::size_t step = 0; step < 31 && w < vector_words; ++step, w += 4) {
      const __m256i ca = detail::load_words(a + w), oa = detail::load_words(a + words + w),
                    ta = detail::load_words(a + 2 * words + w);
      const __m256i cb = detail::load_words(b + w), ob = detail::load_words(b + words + w),
                    tb = detail::load_words(b + 2 * words + w);
      const __m256i ands[9] = {
          _mm256_and_si256(ca, cb), _mm256_and_si256(oa, cb), _mm256_and_si256(ta, cb),
          _mm256_and_si256(ca, ob), _mm256_and_si256(ca, tb), _mm256_and_si256(oa, ob),
          _mm256_and_si256(oa, tb), _mm256_and_si256(ta, ob), _mm256_and_si256(ta, tb)};
      for (int k = 0; k < 9; ++k)
        bytes[k] = _mm256_add_epi8(bytes[k], detail::byte_counts(ands[k]));
    }
    for (int k = 0; k < 9; ++k) *cell(c, k) += detail::lanes_total(_mm256_sad_epu8(bytes[k], zero));
  }
  pair_cells_popcnt(a, b, vector_words, words, c);
}

// Eight words a step with the 64-bit lanes' own population count.
__attribute__((target("avx512f,avx512vpopcntdq,popcnt"))) void pair_cells_avx512(
    const std::uint64_t* a, const std::uint64_t* b, std::size_t words, pair_cells& c) noexcept {
  const std::size_t vector_words = words - words % 8;
  __m512i sums[9];
  std::fill(std::begin(sums), std::end(sums), _mm512_setzero_si512());
  for (std::size_t w = 0; w < vector_words; w += 8) {
    const __m512i ca = _mm512_loadu_si512(a + w), oa = _mm512_loadu_si512(a + words + w),
                  ta = _mm512_loadu_si512(a + 2 * words + w);
    const __m512i cb = _mm512_loadu_si512(b + w), ob = _mm512_loadu_si512(b + words + w),
                  tb = _mm512_loadu_si512(b + 2 * words + w);
    const __m512i ands[9] = {
        _mm512_and_si512(ca, cb), _mm512_and_si512(oa, cb), _mm512_and_si512(ta, cb),
        _mm512_and_si512(ca, ob), _mm512_and_si512(ca, tb), _mm512_and_si512(oa, ob),
        _mm512_and_si512(oa, tb), _mm512_and_si512(ta, ob), _mm512_and_si512(ta, tb)};
    for (int k = 0; k < 9; ++k) sums[k] = _mm512_add_epi64(sums[k], _mm512_popcnt_epi64(ands[k]));
  }
  for (int k = 0; k < 9; ++k) *cell(c, k) += detail::lanes_total(sums[k]);
  pair_cells_popcnt(a, b, vector_words, words, c);
}
#endif

#undef COLFLOW_PAIR_CELLS

// Dosage 2 is T, 1 is O∧¬T, 0 is C∧¬O (T ⊆ O ⊆ C), so each cell is a difference of counts.
genotype_pair_table table_of(const pair_cells& c) noexcept {
  genotype_pair_table t;
  auto& k = t.count;
  k[2][2] = c.tt;
  k[2][1] = c.to - c.tt;
  k[2][0] = c.tc - c.to;
  k[1][2] = c.ot - c.tt;
  k[1][1] = c.oo - c.ot - c.to + c.tt;
  k[1][0] = (c.oc - c.tc) - (c.oo - c.to);
  k[0][2] = c.ct - c.ot;
  k[0][1] = (c.co - c.ct) - (c.oo - c.ot);
  k[0][0] = c.n - c.oc - c.co + c.oo;
  return t;
}

}  // namespace

namespace detail {
genotype_pair_table genotype_pair_counts_portable(const std::uint64_t* a, const std::uint64_t* b,
                                                  std::size_t words) noexcept {
  pair_cells c;
  pair_cells_portable(a, b, words, c);
  return table_of(c);
}
}  // namespace detail

genotype_pair_table genotype_pair_counts(const std::uint64_t* a, const std::uint64_t* b,
                                         std::size_t words) noexcept {
  pair_cells c;
#if COLFLOW_X86_DISPATCH
  if (detail::cpu_has_avx512_popcnt()) {
    pair_cells_avx512(a, b, words, c);
    return table_of(c);
  }
  if (detail::cpu_has_avx2()) {
    pair_cells_avx2(a, b, words, c);
    return table_of(c);
  }
  if (detail::cpu_has_popcnt()) {
    pair_cells_popcnt(a, b, 0, words, c);
    return table_of(c);
  }
#endif
  pair_cells_portable(a, b, words, c);
  return table_of(c);
}

}  // namespace colflow
