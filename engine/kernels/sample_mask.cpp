// Sample masks and counts over a subset of samples, on packed codes.
#include <algorithm>
#include <bit>
#include <cstring>

#include "codec/code_classes_avx2_internal.hpp"
#include "codec/genotype_words_internal.hpp"
#include "colflow/kernels/genotype_kernels.hpp"
#include "simd/cpu_dispatch_internal.hpp"
#include "simd/popcount_internal.hpp"

namespace colflow {

using detail::low_bits;

std::vector<std::uint8_t> make_sample_mask(std::span<const std::uint8_t> keep) {
  std::vector<std::uint8_t> mask(genotype_column_bytes(keep.size()), 0);
  for (std::size_t i = 0; i < keep.size(); ++i)
    if (keep[i]) mask[i / 4] = static_cast<std::uint8_t>(mask[i / 4] | (1u << (2 * (i % 4))));
  return mask;
}

namespace {

// The 64-bit word w of a column of `bytes` bytes, zero-filled past the end.
std::uint64_t load_word(const std::uint8_t* p, std::size_t bytes, std::size_t w) noexcept {
  std::uint64_t word = 0;
  std::memcpy(&word, p + 8 * w, std::min<std::size_t>(8, bytes - 8 * w));
  return word;
}

// Full 64-bit words of a masked count; the same body built with and without POPCNT.
#define COLFLOW_COUNT_MASKED_WORDS(codes, mask, words, c) \
  for (std::size_t w_ = 0; w_ < (words); ++w_) {          \
    std::uint64_t word_, valid_;                          \
    std::memcpy(&word_, (codes) + 8 * w_, 8);             \
    std::memcpy(&valid_, (mask) + 8 * w_, 8);             \
    COLFLOW_COUNT_WORD(word_, valid_, c);                 \
  }

void count_masked_words(const std::uint8_t* codes, const std::uint8_t* mask, std::size_t words,
                        genotype_counts& c) noexcept {
  COLFLOW_COUNT_MASKED_WORDS(codes, mask, words, c);
}
#if COLFLOW_X86_DISPATCH
__attribute__((target("popcnt"))) void count_masked_words_popcnt(const std::uint8_t* codes,
                                                                 const std::uint8_t* mask,
                                                                 std::size_t words,
                                                                 genotype_counts& c) noexcept {
  COLFLOW_COUNT_MASKED_WORDS(codes, mask, words, c);
}

__attribute__((target("popcnt"))) std::size_t mask_count_popcnt(const std::uint8_t* mask,
                                                                std::size_t bytes) noexcept {
  std::size_t kept = 0, b = 0;
  for (; b + 8 <= bytes; b += 8) {
    std::uint64_t word;
    std::memcpy(&word, mask + b, 8);
    kept += static_cast<std::size_t>(__builtin_popcountll(word));
  }
  for (; b < bytes; ++b) kept += static_cast<std::size_t>(__builtin_popcount(mask[b]));
  return kept;
}

// Eight words at a time. Per word the scalar body counts three classes with three population
// counts; here lo, hi and lo & hi give the same three classes (missing = lo − both, het =
// hi − both), and the lanes' counts are added once at the end. Every analysis pays a count
// once per column and per group of samples, so it is worth the wider kernel.
__attribute__((target("avx512f,avx512vpopcntdq"))) void count_masked_words_avx512(
    const std::uint8_t* codes, const std::uint8_t* mask, std::size_t words,
    genotype_counts& c) noexcept {
  __m512i lo_n = _mm512_setzero_si512(), hi_n = lo_n, both_n = lo_n;
  std::size_t w = 0;
  for (; w + 8 <= words; w += 8) {
    const __m512i word = _mm512_loadu_si512(codes + 8 * w);
    const __m512i valid = _mm512_loadu_si512(mask + 8 * w);
    const __m512i lo = _mm512_and_si512(word, valid);
    const __m512i hi = _mm512_and_si512(_mm512_maskz_srli_epi64(0xff, word, 1), valid);
    lo_n = _mm512_add_epi64(lo_n, _mm512_popcnt_epi64(lo));
    hi_n = _mm512_add_epi64(hi_n, _mm512_popcnt_epi64(hi));
    both_n = _mm512_add_epi64(both_n, _mm512_popcnt_epi64(_mm512_and_si512(lo, hi)));
  }
  detail::add_code_classes(c, detail::lanes_total(lo_n), detail::lanes_total(hi_n),
                           detail::lanes_total(both_n));
  count_masked_words_popcnt(codes + 8 * w, mask + 8 * w, words - w, c);
}

// 32 bytes at a time, two table lookups a byte (codec/code_classes_avx2_internal.hpp): the
// four population counts a word of the scalar loop were most of `qc`'s pass on AVX2.
__attribute__((target("avx2,popcnt"))) void count_masked_words_avx2(const std::uint8_t* codes,
                                                                    const std::uint8_t* mask,
                                                                    std::size_t words,
                                                                    genotype_counts& c) noexcept {
  const std::size_t vectors = words / 4;
  const detail::code_class_totals t = detail::count_code_classes_avx2<true>(codes, mask, vectors);
  c.missing += t.missing;
  c.het += t.het;
  c.hom_a2 += t.hom_a2;
  count_masked_words_popcnt(codes + 32 * vectors, mask + 32 * vectors, words - 4 * vectors, c);
}
#endif

}  // namespace

std::size_t mask_count(std::span<const std::uint8_t> mask) noexcept {
#if COLFLOW_X86_DISPATCH
  if (detail::cpu_has_popcnt()) return mask_count_popcnt(mask.data(), mask.size());
#endif
  std::size_t kept = 0;
  for (std::uint8_t b : mask) kept += static_cast<std::size_t>(std::popcount(b));
  return kept;
}

genotype_counts count_genotypes(std::span<const std::uint8_t> codes, std::size_t n,
                                std::span<const std::uint8_t> mask) noexcept {
  return count_genotypes(codes, n, mask, mask_count(mask));
}

genotype_counts count_genotypes(std::span<const std::uint8_t> codes, std::size_t n,
                                std::span<const std::uint8_t> mask, std::size_t kept) noexcept {
  genotype_counts c;
  const std::size_t bytes = genotype_column_bytes(n), full_words = bytes / 8;
#if COLFLOW_X86_DISPATCH
  if (detail::cpu_has_avx512_popcnt()) {
    count_masked_words_avx512(codes.data(), mask.data(), full_words, c);
  } else if (detail::cpu_has_avx2()) {
    count_masked_words_avx2(codes.data(), mask.data(), full_words, c);
  } else if (detail::cpu_has_popcnt()) {
    count_masked_words_popcnt(codes.data(), mask.data(), full_words, c);
  } else {
    count_masked_words(codes.data(), mask.data(), full_words, c);
  }
#else
  count_masked_words(codes.data(), mask.data(), full_words, c);
#endif
  if (bytes % 8 != 0) {
    // The mask is zero past the n-th sample, so padding pairs never count.
    const std::uint64_t word = load_word(codes.data(), bytes, full_words);
    const std::uint64_t valid = load_word(mask.data(), bytes, full_words);
    COLFLOW_COUNT_WORD(word, valid, c);
  }
  c.hom_a1 = kept - c.hom_a2 - c.missing - c.het;
  return c;
}

void missing_rows(std::span<const std::uint8_t> codes, std::size_t n,
                  std::span<const std::uint8_t> mask, std::vector<std::size_t>& rows) {
  const std::size_t bytes = genotype_column_bytes(n), words = (bytes + 7) / 8;
  const auto add = [&](std::size_t w, std::uint64_t word, std::uint64_t valid) {
    std::uint64_t miss = word & ~(word >> 1) & valid;  // low bit set, high bit clear: 0b01
    while (miss != 0) {
      rows.push_back(32 * w + static_cast<std::size_t>(std::countr_zero(miss)) / 2);
      miss &= miss - 1;
    }
  };
  const std::size_t full = n / 32;  // words whose 32 pairs are all samples
  for (std::size_t w = 0; w < full; ++w) {
    std::uint64_t word, valid = low_bits;
    std::memcpy(&word, codes.data() + 8 * w, 8);
    if (!mask.empty()) std::memcpy(&valid, mask.data() + 8 * w, 8);
    add(w, word, valid);
  }
  for (std::size_t w = full; w < words; ++w) {
    const std::uint64_t word = load_word(codes.data(), bytes, w);
    std::uint64_t valid = mask.empty() ? low_bits : load_word(mask.data(), bytes, w);
    valid &= (std::uint64_t{1} << (2 * (n - 32 * w))) - 1;  // padding pairs
    add(w, word, valid);
  }
}

}  // namespace colflow
