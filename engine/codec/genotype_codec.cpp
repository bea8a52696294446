// The genotype codec (colflow/codec/genotype_codec.hpp): counts, statistics and decoders.
#include "colflow/codec/genotype_codec.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "codec/code_classes_avx2_internal.hpp"
#include "codec/genotype_words_internal.hpp"
#include "simd/cpu_dispatch_internal.hpp"
#include "simd/popcount_internal.hpp"

namespace colflow {
namespace {

using detail::low_bits;
__extension__ typedef unsigned __int128 u128;

void count_full_words(const std::uint8_t* codes, std::size_t words, genotype_counts& c) noexcept {
  for (std::size_t w = 0; w < words; ++w) {
    std::uint64_t word;
    std::memcpy(&word, codes + 8 * w, 8);
    COLFLOW_COUNT_WORD(word, low_bits, c);
  }
}

#if COLFLOW_X86_DISPATCH
// Plain x86-64 has no POPCNT, and GCC emits a library call instead, once per word of every
// column the preprocessor counts; every x86-64 CPU since 2008 has the instruction, chosen at
// run time.
__attribute__((target("popcnt"))) void count_full_words_popcnt(const std::uint8_t* codes,
                                                               std::size_t words,
                                                               genotype_counts& c) noexcept {
  for (std::size_t w = 0; w < words; ++w) {
    std::uint64_t word;
    std::memcpy(&word, codes + 8 * w, 8);
    COLFLOW_COUNT_WORD(word, low_bits, c);
  }
}

// The same counts eight words at a time: what every pass over a genotype store pays once per
// column (hardy, the preprocessor's statistics).
__attribute__((target("avx512f,avx512vpopcntdq"))) void count_full_words_avx512(
    const std::uint8_t* codes, std::size_t words, genotype_counts& c) noexcept {
  const __m512i low = _mm512_set1_epi64(static_cast<long long>(low_bits));
  __m512i lo_n = _mm512_setzero_si512(), hi_n = lo_n, both_n = lo_n;
  std::size_t w = 0;
  for (; w + 8 <= words; w += 8) {
    const __m512i word = _mm512_loadu_si512(codes + 8 * w);
    const __m512i lo = _mm512_and_si512(word, low);
    const __m512i hi = _mm512_and_si512(_mm512_maskz_srli_epi64(0xff, word, 1), low);
    lo_n = _mm512_add_epi64(lo_n, _mm512_popcnt_epi64(lo));
    hi_n = _mm512_add_epi64(hi_n, _mm512_popcnt_epi64(hi));
    both_n = _mm512_add_epi64(both_n, _mm512_popcnt_epi64(_mm512_and_si512(lo, hi)));
  }
  detail::add_code_classes(c, detail::lanes_total(lo_n), detail::lanes_total(hi_n),
                           detail::lanes_total(both_n));
  count_full_words_popcnt(codes + 8 * w, words - w, c);
}

// 32 bytes at a time, two table lookups a byte (codec/code_classes_avx2_internal.hpp).
__attribute__((target("avx2,popcnt"))) void count_full_words_avx2(const std::uint8_t* codes,
                                                                  std::size_t words,
                                                                  genotype_counts& c) noexcept {
  const std::size_t vectors = words / 4;
  const detail::code_class_totals t =
      detail::count_code_classes_avx2<false>(codes, nullptr, vectors);
  c.missing += t.missing;
  c.het += t.het;
  c.hom_a2 += t.hom_a2;
  count_full_words_popcnt(codes + 32 * vectors, words - 4 * vectors, c);
}
#endif

// Portable decoder: pairs of values for each 4-bit nibble (two samples), one 2-value copy per
// nibble. Fixed-size memcpy compiles to one vector move each.
template <typename T>
struct nibble_table {
  alignas(16) T pair[16][2];
  explicit nibble_table(const genotype_lut<T>& lut) noexcept {
    for (unsigned k = 0; k < 16; ++k) {
      pair[k][0] = lut[k & 3u];
      pair[k][1] = lut[k >> 2];
    }
  }
};

// Samples [first, n) one by one: the tail the vector loops leave. Padding bits are never read
// into a value because only samples below n are decoded.
template <typename T>
void decode_tail(const std::uint8_t* in, const genotype_lut<T>& lut, T* dst, std::size_t first,
                 std::size_t n) noexcept {
  for (std::size_t s = first; s < n; ++s) dst[s] = lut[(in[s / 4] >> (2 * (s % 4))) & 3u];
}

template <typename T>
void decode_portable(const std::uint8_t* in, const genotype_lut<T>& lut, T* dst,
                     std::size_t n) noexcept {
  const nibble_table<T> table(lut);
  const std::size_t full_bytes = n / 4;
  for (std::size_t i = 0; i < full_bytes; ++i) {
    const unsigned b = in[i];
    std::memcpy(dst + 4 * i, table.pair[b & 15u], 2 * sizeof(T));
    std::memcpy(dst + 4 * i + 2, table.pair[b >> 4], 2 * sizeof(T));
  }
  decode_tail(in, lut, dst, 4 * full_bytes, n);
}

#if COLFLOW_X86_DISPATCH
// AVX2 decoders, chosen at run time so that the build stays plain x86-64. The 4-entry table sits
// in a register and vpermps picks every output lane from it: a few register operations per
// 32-byte store and no table to build. The gain over the nibble table is largest for float32,
// whose nibble copies are only 8 bytes; float64's are already 16 (bench/codec_bench measures
// both). vpermps reads only the low 3 bits of each index.

// float32: 16 samples from 32 bits of codes. Lane j shifts its code to bits 0-1; bit 2 is the
// next code's low bit, harmless because the table is repeated in both halves of the register.
__attribute__((target("avx2"))) void decode_avx2(const std::uint8_t* in,
                                                 const genotype_lut<float>& lut, float* dst,
                                                 std::size_t n) noexcept {
  const __m128 lut4 = _mm_loadu_ps(lut.data());
  const __m256 table = _mm256_set_m128(lut4, lut4);
  const __m256i shift_lo = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
  const __m256i shift_hi = _mm256_setr_epi32(16, 18, 20, 22, 24, 26, 28, 30);
  std::size_t s = 0;
  for (; s + 16 <= n; s += 16) {
    std::uint32_t w;
    std::memcpy(&w, in + s / 4, 4);
    const __m256i codes = _mm256_set1_epi32(static_cast<int>(w));
    _mm256_storeu_ps(dst + s, _mm256_permutevar8x32_ps(table, _mm256_srlv_epi32(codes, shift_lo)));
    _mm256_storeu_ps(dst + s + 8,
                     _mm256_permutevar8x32_ps(table, _mm256_srlv_epi32(codes, shift_hi)));
  }
  decode_tail(in, lut, dst, s, n);
}

// float64: the table is 8 dwords, and sample k needs dwords 2c and 2c+1 in its two lanes. With
// the codes shifted left by one, lane pair k shifts right by 2k to put c in bits 1-2, masks
// with 6 and ors in the lane's parity. 16 bits of codes at a time, so the shift left loses
// nothing.
__attribute__((target("avx2"))) void decode_avx2(const std::uint8_t* in,
                                                 const genotype_lut<double>& lut, double* dst,
                                                 std::size_t n) noexcept {
  const __m256 table = _mm256_castpd_ps(_mm256_loadu_pd(lut.data()));
  const __m256i shift_lo = _mm256_setr_epi32(0, 0, 2, 2, 4, 4, 6, 6);
  const __m256i shift_hi = _mm256_setr_epi32(8, 8, 10, 10, 12, 12, 14, 14);
  const __m256i code_bits = _mm256_set1_epi32(6);
  const __m256i parity = _mm256_setr_epi32(0, 1, 0, 1, 0, 1, 0, 1);
  std::size_t s = 0;
  for (; s + 8 <= n; s += 8) {
    std::uint16_t w;
    std::memcpy(&w, in + s / 4, 2);
    const __m256i codes = _mm256_set1_epi32(static_cast<int>(static_cast<unsigned>(w) << 1));
    const __m256i lo =
        _mm256_or_si256(_mm256_and_si256(_mm256_srlv_epi32(codes, shift_lo), code_bits), parity);
    const __m256i hi =
        _mm256_or_si256(_mm256_and_si256(_mm256_srlv_epi32(codes, shift_hi), code_bits), parity);
    _mm256_storeu_pd(dst + s, _mm256_castps_pd(_mm256_permutevar8x32_ps(table, lo)));
    _mm256_storeu_pd(dst + s + 4, _mm256_castps_pd(_mm256_permutevar8x32_ps(table, hi)));
  }
  decode_tail(in, lut, dst, s, n);
}

#endif

template <typename T>
void decode_impl(std::span<const std::uint8_t> codes, const genotype_lut<T>& lut,
                 std::span<T> out) noexcept {
#if COLFLOW_X86_DISPATCH
  if (detail::cpu_has_avx2()) return decode_avx2(codes.data(), lut, out.data(), out.size());
#endif
  decode_portable(codes.data(), lut, out.data(), out.size());
}

template <typename T>
genotype_lut<T> standardized(const column_stats& s) noexcept {
  if (!(s.sd > 0) || !std::isfinite(s.mean)) return {T(0), T(0), T(0), T(0)};
  // Each entry is (dosage - mean) / sd computed in double, exactly as a float64 store made
  // from the same genotypes computes each value, so both decode to the same bits.
  return {static_cast<T>((2.0 - s.mean) / s.sd), T(0), static_cast<T>((1.0 - s.mean) / s.sd),
          static_cast<T>((0.0 - s.mean) / s.sd)};
}

}  // namespace

genotype_counts count_genotypes(std::span<const std::uint8_t> codes, std::size_t n) noexcept {
  genotype_counts c;
  const std::size_t full_words = n / 32;
#if COLFLOW_X86_DISPATCH
  if (detail::cpu_has_avx512_popcnt()) {
    count_full_words_avx512(codes.data(), full_words, c);
  } else if (detail::cpu_has_avx2()) {
    count_full_words_avx2(codes.data(), full_words, c);
  } else if (detail::cpu_has_popcnt()) {
    count_full_words_popcnt(codes.data(), full_words, c);
  } else {
    count_full_words(codes.data(), full_words, c);
  }
#else
  count_full_words(codes.data(), full_words, c);
#endif
  const std::size_t rest = n - 32 * full_words;  // samples in the partial last word
  if (rest > 0) {
    std::uint64_t word = 0;
    std::memcpy(&word, codes.data() + 8 * full_words, (rest + 3) / 4);
    const std::uint64_t valid = low_bits & ((std::uint64_t{1} << (2 * rest)) - 1);
    COLFLOW_COUNT_WORD(word, valid, c);
  }
  c.hom_a1 = n - c.hom_a2 - c.missing - c.het;
  return c;
}

column_stats genotype_stats(const genotype_counts& c, std::size_t n) noexcept {
  column_stats s;
  s.observed = n - c.missing;
  if (s.observed == 0) {
    s.mean = s.a1_freq = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  // Sums are integers; the sum of squared deviations is (obs·Σx² − (Σx)²) / obs, exact in
  // integers up to the final division.
  const std::uint64_t sum = 2 * c.hom_a1 + c.het, sum_sq = 4 * c.hom_a1 + c.het;
  const double obs = static_cast<double>(s.observed);
  s.mean = static_cast<double>(sum) / obs;
  s.a1_freq = s.mean / 2.0;
  if (n >= 2) {
    const double ss =
        static_cast<double>(static_cast<u128>(sum_sq) * s.observed - static_cast<u128>(sum) * sum) /
        obs;
    s.sd = std::sqrt(ss / static_cast<double>(n - 1));
  }
  return s;
}

genotype_lut<double> standardized_lut(const column_stats& s) noexcept {
  return standardized<double>(s);
}
genotype_lut<float> standardized_lut_f32(const column_stats& s) noexcept {
  return standardized<float>(s);
}

genotype_lut<double> dosage_lut() noexcept {
  return {2.0, std::numeric_limits<double>::quiet_NaN(), 1.0, 0.0};
}
genotype_lut<float> dosage_lut_f32() noexcept {
  return {2.0f, std::numeric_limits<float>::quiet_NaN(), 1.0f, 0.0f};
}

void decode_genotypes(std::span<const std::uint8_t> codes, const genotype_lut<double>& lut,
                      std::span<double> out) noexcept {
  decode_impl(codes, lut, out);
}
void decode_genotypes(std::span<const std::uint8_t> codes, const genotype_lut<float>& lut,
                      std::span<float> out) noexcept {
  decode_impl(codes, lut, out);
}

}  // namespace colflow
