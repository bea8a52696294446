// Exact products of packed genotype columns from population counts of their bit planes
// (kernels/genotype_products_internal.hpp): the planes of a column, and the column × column tile in
// portable, POPCNT, AVX2 and AVX-512 code, all giving the same integers.
#include <algorithm>
#include <bit>
#include <cstring>

#include "codec/genotype_words_internal.hpp"
#include "colflow/codec/genotype_codec.hpp"
#include "kernels/genotype_products_internal.hpp"
#include "simd/cpu_dispatch_internal.hpp"
#include "simd/popcount_internal.hpp"

namespace colflow {

using detail::low_bits;
#if COLFLOW_X86_DISPATCH
using detail::byte_counts;
using detail::lanes_total;
#endif

namespace {

// The even bits of `x` (one per sample pair, bit 2k), packed into its low 32 bits (bit k).
constexpr std::uint64_t even_bits(std::uint64_t x) noexcept {
  x &= low_bits;
  x = (x | (x >> 1)) & 0x3333333333333333ULL;
  x = (x | (x >> 2)) & 0x0f0f0f0f0f0f0f0fULL;
  x = (x | (x >> 4)) & 0x00ff00ff00ff00ffULL;
  x = (x | (x >> 8)) & 0x0000ffff0000ffffULL;
  x = (x | (x >> 16)) & 0x00000000ffffffffULL;
  return x;
}

// The 64-bit word w of `bytes` bytes, zero-filled past the end.
std::uint64_t load_word(const std::uint8_t* p, std::size_t bytes, std::size_t w) noexcept {
  std::uint64_t word = 0;
  if (8 * w < bytes) std::memcpy(&word, p + 8 * w, std::min<std::size_t>(8, bytes - 8 * w));
  return word;
}

// Partial counts of a pair; the sums follow from them (finish).
struct pair_counts {
  std::uint64_t n = 0, a1 = 0, a2 = 0, b1 = 0, b2 = 0, ab = 0;
};

genotype_pair_sums finish(const pair_counts& c) noexcept {
  return {c.n, c.a1 + c.a2, c.b1 + c.b2, c.a1 + 3 * c.a2, c.b1 + 3 * c.b2, c.ab};
}

// Words [from, words) of a pair; the same body built with and without POPCNT.
#define COLFLOW_PAIR_WORDS(pa, pb, from, words, c)                                              \
  for (std::size_t w_ = (from); w_ < (words); ++w_) {                                           \
    const std::uint64_t ca_ = (pa)[w_], oa_ = (pa)[(words) + w_], ta_ = (pa)[2 * (words) + w_]; \
    const std::uint64_t cb_ = (pb)[w_], ob_ = (pb)[(words) + w_], tb_ = (pb)[2 * (words) + w_]; \
    (c).n += static_cast<std::uint64_t>(__builtin_popcountll(ca_ & cb_));                       \
    (c).a1 += static_cast<std::uint64_t>(__builtin_popcountll(oa_ & cb_));                      \
    (c).a2 += static_cast<std::uint64_t>(__builtin_popcountll(ta_ & cb_));                      \
    (c).b1 += static_cast<std::uint64_t>(__builtin_popcountll(ob_ & ca_));                      \
    (c).b2 += static_cast<std::uint64_t>(__builtin_popcountll(tb_ & ca_));                      \
    (c).ab += static_cast<std::uint64_t>(                                                       \
        __builtin_popcountll(oa_ & ob_) + __builtin_popcountll(oa_ & tb_) +                     \
        __builtin_popcountll(ta_ & ob_) + __builtin_popcountll(ta_ & tb_));                     \
  }

void pair_tile_portable(const std::uint64_t* const* a, std::size_t count_a,
                        const std::uint64_t* const* b, std::size_t count_b, std::size_t words,
                        genotype_pair_sums* out) noexcept {
  for (std::size_t i = 0; i < count_a; ++i)
    for (std::size_t j = 0; j < count_b; ++j) {
      pair_counts c;
      COLFLOW_PAIR_WORDS(a[i], b[j], std::size_t{0}, words, c);
      out[i * count_b + j] = finish(c);
    }
}

#if COLFLOW_X86_DISPATCH
__attribute__((target("popcnt"))) void pair_words_popcnt(const std::uint64_t* pa,
                                                         const std::uint64_t* pb, std::size_t from,
                                                         std::size_t words,
                                                         pair_counts& c) noexcept {
  COLFLOW_PAIR_WORDS(pa, pb, from, words, c);
}

__attribute__((target("popcnt"))) void pair_tile_popcnt(const std::uint64_t* const* a,
                                                        std::size_t count_a,
                                                        const std::uint64_t* const* b,
                                                        std::size_t count_b, std::size_t words,
                                                        genotype_pair_sums* out) noexcept {
  for (std::size_t i = 0; i < count_a; ++i)
    for (std::size_t j = 0; j < count_b; ++j) {
      pair_counts c;
      pair_words_popcnt(a[i], b[j], 0, words, c);
      out[i * count_b + j] = finish(c);
    }
}

// Σxa·xb = |Oa∧Ob| + |Oa∧Tb| + |Ta∧Ob| + |Ta∧Tb|, and with T ⊆ O the last is the AND of the
// two before it: Σxa·xb = |Oa∧Ob| + |(Oa∧Tb) ⊕ (Ta∧Ob)| + 3|Ta∧Tb|, three counts of four.
// Byte counts of one step (at most 8 a byte, 40 for the product) are added in bytes across
// `steps_per_sum` steps before they are summed into 64-bit lanes (vpsadbw).
struct byte_sums {
  __m256i n, a1, a2, b1, b2, ab;
};

constexpr std::size_t steps_per_sum = 6;  // 6 × 40 < 256

__attribute__((target("avx2"))) inline void add_step(const std::uint64_t* pa,
                                                     const std::uint64_t* pb, std::size_t words,
                                                     std::size_t w, byte_sums& s) noexcept {
  const __m256i ca = detail::load_words(pa + w), oa = detail::load_words(pa + words + w),
                ta = detail::load_words(pa + 2 * words + w);
  const __m256i cb = detail::load_words(pb + w), ob = detail::load_words(pb + words + w),
                tb = detail::load_words(pb + 2 * words + w);
  s.n = _mm256_add_epi8(s.n, byte_counts(_mm256_and_si256(ca, cb)));
  s.a1 = _mm256_add_epi8(s.a1, byte_counts(_mm256_and_si256(oa, cb)));
  s.a2 = _mm256_add_epi8(s.a2, byte_counts(_mm256_and_si256(ta, cb)));
  s.b1 = _mm256_add_epi8(s.b1, byte_counts(_mm256_and_si256(ob, ca)));
  s.b2 = _mm256_add_epi8(s.b2, byte_counts(_mm256_and_si256(tb, ca)));
  const __m256i both_two = byte_counts(_mm256_and_si256(ta, tb));
  const __m256i one_two =
      byte_counts(_mm256_xor_si256(_mm256_and_si256(oa, tb), _mm256_and_si256(ta, ob)));
  s.ab = _mm256_add_epi8(
      s.ab, _mm256_add_epi8(_mm256_add_epi8(byte_counts(_mm256_and_si256(oa, ob)), one_two),
                            _mm256_add_epi8(both_two, _mm256_add_epi8(both_two, both_two))));
}

__attribute__((target("avx2"))) inline __m256i lane_sums(__m256i bytes) noexcept {
  return _mm256_sad_epu8(bytes, _mm256_setzero_si256());
}

// Four words a step; needs T ⊆ O in every column's planes, as make_genotype_planes makes them.
__attribute__((target("avx2,popcnt"))) void pair_tile_avx2(const std::uint64_t* const* a,
                                                           std::size_t count_a,
                                                           const std::uint64_t* const* b,
                                                           std::size_t count_b, std::size_t words,
                                                           genotype_pair_sums* out) noexcept {
  const std::size_t vector_words = words - words % 4;
  const __m256i zero = _mm256_setzero_si256();
  for (std::size_t i = 0; i < count_a; ++i)
    for (std::size_t j = 0; j < count_b; ++j) {
      const std::uint64_t *pa = a[i], *pb = b[j];
      byte_sums lanes{zero, zero, zero, zero, zero, zero};
      for (std::size_t w = 0; w < vector_words;) {
        byte_sums bytes{zero, zero, zero, zero, zero, zero};
        for (std::size_t step = 0; step < steps_per_sum && w < vector_words; ++step, w += 4)
          add_step(pa, pb, words, w, bytes);
        lanes.n = _mm256_add_epi64(lanes.n, lane_sums(bytes.n));
        lanes.a1 = _mm256_add_epi64(lanes.a1, lane_sums(bytes.a1));
        lanes.a2 = _mm256_add_epi64(lanes.a2, lane_sums(bytes.a2));
        lanes.b1 = _mm256_add_epi64(lanes.b1, lane_sums(bytes.b1));
        lanes.b2 = _mm256_add_epi64(lanes.b2, lane_sums(bytes.b2));
        lanes.ab = _mm256_add_epi64(lanes.ab, lane_sums(bytes.ab));
      }
      pair_counts c{lanes_total(lanes.n),  lanes_total(lanes.a1), lanes_total(lanes.a2),
                    lanes_total(lanes.b1), lanes_total(lanes.b2), lanes_total(lanes.ab)};
      pair_words_popcnt(pa, pb, vector_words, words, c);
      out[i * count_b + j] = finish(c);
    }
}

// Eight words at a time with the 64-bit lanes' own population count.
__attribute__((target("avx512f,avx512vpopcntdq,popcnt"))) void pair_tile_avx512(
    const std::uint64_t* const* a, std::size_t count_a, const std::uint64_t* const* b,
    std::size_t count_b, std::size_t words, genotype_pair_sums* out) noexcept {
  const std::size_t vector_words = words - words % 8;
  for (std::size_t i = 0; i < count_a; ++i)
    for (std::size_t j = 0; j < count_b; ++j) {
      const std::uint64_t *pa = a[i], *pb = b[j];
      __m512i n = _mm512_setzero_si512(), a1 = n, a2 = n, b1 = n, b2 = n, ab = n;
      for (std::size_t w = 0; w < vector_words; w += 8) {
        const __m512i ca = _mm512_loadu_si512(pa + w), oa = _mm512_loadu_si512(pa + words + w),
                      ta = _mm512_loadu_si512(pa + 2 * words + w);
        const __m512i cb = _mm512_loadu_si512(pb + w), ob = _mm512_loadu_si512(pb + words + w),
                      tb = _mm512_loadu_si512(pb + 2 * words + w);
        n = _mm512_add_epi64(n, _mm512_popcnt_epi64(_mm512_and_si512(ca, cb)));
        a1 = _mm512_add_epi64(a1, _mm512_popcnt_epi64(_mm512_and_si512(oa, cb)));
        a2 = _mm512_add_epi64(a2, _mm512_popcnt_epi64(_mm512_and_si512(ta, cb)));
        b1 = _mm512_add_epi64(b1, _mm512_popcnt_epi64(_mm512_and_si512(ob, ca)));
        b2 = _mm512_add_epi64(b2, _mm512_popcnt_epi64(_mm512_and_si512(tb, ca)));
        ab = _mm512_add_epi64(ab, _mm512_popcnt_epi64(_mm512_and_si512(oa, ob)));
        ab = _mm512_add_epi64(ab, _mm512_popcnt_epi64(_mm512_and_si512(oa, tb)));
        ab = _mm512_add_epi64(ab, _mm512_popcnt_epi64(_mm512_and_si512(ta, ob)));
        ab = _mm512_add_epi64(ab, _mm512_popcnt_epi64(_mm512_and_si512(ta, tb)));
      }
      pair_counts c{lanes_total(n),  lanes_total(a1), lanes_total(a2),
                    lanes_total(b1), lanes_total(b2), lanes_total(ab)};
      pair_words_popcnt(pa, pb, vector_words, words, c);
      out[i * count_b + j] = finish(c);
    }
}
#endif

}  // namespace

namespace {

// The three planes' bits of 32 samples from one word of codes and its word of valid samples
// (the mask's, cut at the column's end).
struct plane_bits {
  std::uint64_t called, one, two;
};

__attribute__((always_inline)) inline plane_bits planes_of(std::uint64_t word,
                                                           std::uint64_t valid) noexcept {
  const std::uint64_t lo = word & low_bits, hi = (word >> 1) & low_bits;
  // Codes 00 → 2, 10 → 1, 11 → 0, 01 → missing.
  return {even_bits((hi | (~lo & low_bits)) & valid), even_bits(~lo & low_bits & valid),
          even_bits(~lo & ~hi & low_bits & valid)};
}

// Plane words [0, full): 64 samples each, all in the column, read without bounds checks; a
// loop of shifts and masks that the compiler vectorises for the target it is inlined into.
__attribute__((always_inline)) inline void interior_planes(const std::uint8_t* codes,
                                                           const std::uint8_t* mask,
                                                           std::size_t full, std::uint64_t* called,
                                                           std::uint64_t* one,
                                                           std::uint64_t* two) noexcept {
  for (std::size_t p = 0; p < full; ++p) {
    std::uint64_t word[2], valid[2] = {low_bits, low_bits};
    std::memcpy(word, codes + 16 * p, sizeof word);
    if (mask) std::memcpy(valid, mask + 16 * p, sizeof valid);
    const plane_bits a = planes_of(word[0], valid[0]), b = planes_of(word[1], valid[1]);
    called[p] = a.called | b.called << 32;
    one[p] = a.one | b.one << 32;
    two[p] = a.two | b.two << 32;
  }
}

void interior_planes_portable(const std::uint8_t* codes, const std::uint8_t* mask, std::size_t full,
                              std::uint64_t* called, std::uint64_t* one,
                              std::uint64_t* two) noexcept {
  interior_planes(codes, mask, full, called, one, two);
}

#if COLFLOW_X86_DISPATCH
// One plane's 4 bits a byte of codes (its samples 4j..4j+3 in bits 0-3), from two lookups of
// the nibbles: `low` gives the two samples of a low nibble in bits 0-1, `high` those of a
// high nibble in bits 2-3.
__attribute__((target("avx2"))) inline __m256i plane_nibbles(__m256i low_nibbles,
                                                             __m256i high_nibbles, __m256i low,
                                                             __m256i high) noexcept {
  return _mm256_or_si256(_mm256_shuffle_epi8(low, low_nibbles),
                         _mm256_shuffle_epi8(high, high_nibbles));
}

// 256 samples of one plane from their 64 bytes of codes (two halves of nibbles): each pair of
// bytes' nibbles made one byte (maddubs by 1 and 16), the halves packed to bytes and their
// 128-bit lanes put back in order.
__attribute__((target("avx2"))) inline void store_plane(__m256i first, __m256i second,
                                                        std::uint64_t* out) noexcept {
  const __m256i by_16 = _mm256_set1_epi16(0x1001);
  const __m256i packed =
      _mm256_packus_epi16(_mm256_maddubs_epi16(first, by_16), _mm256_maddubs_epi16(second, by_16));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_permute4x64_epi64(packed, 0xd8));
}

// Samples not kept by the mask become missing calls (0b01), which are 0 in every plane.
__attribute__((target("avx2"))) inline __m256i masked_codes(const std::uint8_t* codes,
                                                            const std::uint8_t* mask) noexcept {
  const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes));
  if (!mask) return c;
  const __m256i m = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(mask));
  const __m256i pairs = _mm256_or_si256(m, _mm256_slli_epi64(m, 1));
  return _mm256_or_si256(_mm256_and_si256(c, pairs),
                         _mm256_andnot_si256(pairs, _mm256_set1_epi8(0x55)));
}

// Four plane words a step by table lookups of the codes' nibbles (where the portable loop
// gathers the even bits of each word by shifts); the same bits. Codes 00 → 2, 10 → 1,
// 11 → 0, 01 → missing: called is every code but 01, one 00 and 10, two 00.
__attribute__((target("avx2"))) void interior_planes_avx2(const std::uint8_t* codes,
                                                          const std::uint8_t* mask,
                                                          std::size_t full, std::uint64_t* called,
                                                          std::uint64_t* one,
                                                          std::uint64_t* two) noexcept {
  // By nibble n, two codes (n & 3, n >> 2): the plane's bit of each, in bits 0 and 1.
  const __m256i called_low = _mm256_setr_epi8(3, 2, 3, 3, 1, 0, 1, 1, 3, 2, 3, 3, 3, 2, 3, 3, 3, 2,
                                              3, 3, 1, 0, 1, 1, 3, 2, 3, 3, 3, 2, 3, 3);
  const __m256i one_low = _mm256_setr_epi8(3, 2, 3, 2, 1, 0, 1, 0, 3, 2, 3, 2, 1, 0, 1, 0, 3, 2, 3,
                                           2, 1, 0, 1, 0, 3, 2, 3, 2, 1, 0, 1, 0);
  const __m256i two_low = _mm256_setr_epi8(3, 2, 2, 2, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 3, 2, 2,
                                           2, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0);
  const __m256i called_high = _mm256_slli_epi16(called_low, 2),
                one_high = _mm256_slli_epi16(one_low, 2), two_high = _mm256_slli_epi16(two_low, 2);
  const __m256i nibble = _mm256_set1_epi8(0x0f);
  const std::size_t steps = full / 4;
  for (std::size_t step = 0; step < steps; ++step) {
    __m256i lo[2], hi[2];
    for (int half = 0; half < 2; ++half) {
      const std::size_t at = 64 * step + 32 * static_cast<std::size_t>(half);
      const __m256i c = masked_codes(codes + at, mask ? mask + at : nullptr);
      lo[half] = _mm256_and_si256(c, nibble);
      hi[half] = _mm256_and_si256(_mm256_srli_epi16(c, 4), nibble);
    }
    store_plane(plane_nibbles(lo[0], hi[0], called_low, called_high),
                plane_nibbles(lo[1], hi[1], called_low, called_high), called + 4 * step);
    store_plane(plane_nibbles(lo[0], hi[0], one_low, one_high),
                plane_nibbles(lo[1], hi[1], one_low, one_high), one + 4 * step);
    store_plane(plane_nibbles(lo[0], hi[0], two_low, two_high),
                plane_nibbles(lo[1], hi[1], two_low, two_high), two + 4 * step);
  }
  const std::size_t done = 4 * steps;
  interior_planes(codes + 16 * done, mask ? mask + 16 * done : nullptr, full - done, called + done,
                  one + done, two + done);
}
#endif

}  // namespace

void make_genotype_planes(std::span<const std::uint8_t> codes, std::size_t n,
                          std::span<const std::uint8_t> mask, std::uint64_t* planes) noexcept {
  const std::size_t bytes = genotype_column_bytes(n), words = genotype_plane_words(n);
  std::uint64_t* called = planes;
  std::uint64_t* one = planes + words;
  std::uint64_t* two = planes + 2 * words;
  const std::uint8_t* mask_bytes = mask.empty() ? nullptr : mask.data();
  // Bit logic only: every path gives the same words.
  const std::size_t full = n / 64;
#if COLFLOW_X86_DISPATCH
  if (detail::cpu_has_avx2())
    interior_planes_avx2(codes.data(), mask_bytes, full, called, one, two);
  else
#endif
    interior_planes_portable(codes.data(), mask_bytes, full, called, one, two);
  // The last word: samples past the column's end are not valid.
  for (std::size_t p = full; p < words; ++p) {
    std::uint64_t c = 0, o = 0, t = 0;
    for (std::size_t half = 0; half < 2; ++half) {
      const std::size_t w = 2 * p + half;  // 32 samples from sample 32w
      if (32 * w >= n) break;
      const std::uint64_t word = load_word(codes.data(), bytes, w);
      std::uint64_t valid = mask.empty() ? low_bits : load_word(mask.data(), bytes, w);
      if (n - 32 * w < 32) valid &= (std::uint64_t{1} << (2 * (n - 32 * w))) - 1;
      const plane_bits b = planes_of(word, valid);
      const unsigned shift = static_cast<unsigned>(32 * half);
      c |= b.called << shift;
      o |= b.one << shift;
      t |= b.two << shift;
    }
    called[p] = c;
    one[p] = o;
    two[p] = t;
  }
}

namespace detail {
void genotype_pair_products_portable(const std::uint64_t* const* a, std::size_t count_a,
                                     const std::uint64_t* const* b, std::size_t count_b,
                                     std::size_t words, genotype_pair_sums* out) noexcept {
  pair_tile_portable(a, count_a, b, count_b, words, out);
}
}  // namespace detail

void genotype_pair_products(const std::uint64_t* const* a, std::size_t count_a,
                            const std::uint64_t* const* b, std::size_t count_b, std::size_t words,
                            genotype_pair_sums* out) noexcept {
#if COLFLOW_X86_DISPATCH
  if (detail::cpu_has_avx512_popcnt()) return pair_tile_avx512(a, count_a, b, count_b, words, out);
  if (detail::cpu_has_avx2()) return pair_tile_avx2(a, count_a, b, count_b, words, out);
  if (detail::cpu_has_popcnt()) return pair_tile_popcnt(a, count_a, b, count_b, words, out);
#endif
  pair_tile_portable(a, count_a, b, count_b, words, out);
}

namespace {

std::uint64_t set_bits_portable(const std::uint64_t* words, std::size_t count) noexcept {
  std::uint64_t n = 0;
  for (std::size_t w = 0; w < count; ++w) n += static_cast<std::uint64_t>(std::popcount(words[w]));
  return n;
}

#if COLFLOW_X86_DISPATCH
__attribute__((target("popcnt"))) std::uint64_t set_bits_popcnt(const std::uint64_t* words,
                                                                std::size_t count) noexcept {
  std::uint64_t n = 0;
  for (std::size_t w = 0; w < count; ++w)
    n += static_cast<std::uint64_t>(__builtin_popcountll(words[w]));
  return n;
}
#endif

}  // namespace

std::array<std::uint64_t, 3> genotype_plane_counts(const std::uint64_t* planes,
                                                   std::size_t words) noexcept {
  std::array<std::uint64_t, 3> c{};
  for (std::size_t plane = 0; plane < 3; ++plane) {
#if COLFLOW_X86_DISPATCH
    if (detail::cpu_has_popcnt()) {
      c[plane] = set_bits_popcnt(planes + plane * words, words);
      continue;
    }
#endif
    c[plane] = set_bits_portable(planes + plane * words, words);
  }
  return c;
}

const char* genotype_pair_products_path() noexcept {
#if COLFLOW_X86_DISPATCH
  if (detail::cpu_has_avx512_popcnt()) return "avx512";
  if (detail::cpu_has_avx2()) return "avx2";
  if (detail::cpu_has_popcnt()) return "popcnt";
#endif
  return "portable";
}

}  // namespace colflow
