// Bit matrices of 64 columns (kernels/bit_columns_internal.hpp): the transposition, and the
// column sums of chosen rows in portable and AVX2 code, which give the same integers.
#include <algorithm>
#include <bit>

#include "kernels/bit_columns_internal.hpp"
#include "simd/cpu_dispatch_internal.hpp"

namespace colflow {

void transpose_bits_64(std::uint64_t* rows) noexcept {
  // Swaps the off-diagonal j × j squares of every 2j × 2j square, j = 32, 16, …, 1: the
  // upper-right square of bits (rows k, columns c + j) with the lower-left (rows k + j,
  // columns c). `low` selects the columns of the lower half of each 2j-wide group.
  std::uint64_t low = 0x00000000ffffffffULL;
  for (unsigned j = 32; j != 0; j >>= 1, low ^= low << j)
    for (unsigned k = 0; k < 64; k = ((k | j) + 1) & ~j) {
      const std::uint64_t swap = ((rows[k] >> j) ^ rows[k | j]) & low;
      rows[k] ^= swap << j;
      rows[k | j] ^= swap;
    }
}

std::size_t set_bit_positions(const std::uint64_t* bits, std::size_t words,
                              std::uint32_t* at) noexcept {
  std::size_t n = 0;
  for (std::size_t w = 0; w < words; ++w)
    for (std::uint64_t b = bits[w]; b != 0; b &= b - 1)
      at[n++] = static_cast<std::uint32_t>(64 * w + static_cast<unsigned>(std::countr_zero(b)));
  return n;
}

namespace detail {
void chosen_row_column_sums_portable(const std::uint64_t* rows, std::size_t matrices,
                                     std::size_t stride, const std::uint32_t* chosen,
                                     std::size_t count, std::uint32_t* sums) noexcept {
  std::fill_n(sums, 64 * matrices, std::uint32_t{0});
  for (std::size_t k = 0; k < count; ++k)
    for (std::size_t i = 0; i < matrices; ++i)
      for (unsigned s = 0; s < 64; ++s)
        sums[64 * i + s] += static_cast<std::uint32_t>((rows[i * stride + chosen[k]] >> s) & 1u);
}
}  // namespace detail

namespace {

#if COLFLOW_X86_DISPATCH
// The 32 bits of `half`, one a byte: 0xff where the bit is set, bit b of byte b's group of 8.
__attribute__((target("avx2"))) inline __m256i byte_mask_of(std::uint32_t half) noexcept {
  const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,  //
                                          2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
  const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ULL));
  const __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(half)), spread);
  return _mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit);
}

// Adds the 32 byte counts of `bytes` to sums[0..32), eight at a time.
__attribute__((target("avx2"))) inline void add_byte_counts(__m256i bytes,
                                                            std::uint32_t* sums) noexcept {
  const __m128i halves[2] = {_mm256_castsi256_si128(bytes), _mm256_extracti128_si256(bytes, 1)};
  for (unsigned h = 0; h < 2; ++h)
    for (unsigned q = 0; q < 2; ++q) {
      __m256i* to = reinterpret_cast<__m256i*>(sums + 16 * h + 8 * q);
      const __m256i wide = _mm256_cvtepu8_epi32(q == 0 ? halves[h] : _mm_srli_si128(halves[h], 8));
      _mm256_storeu_si256(to, _mm256_add_epi32(_mm256_loadu_si256(to), wide));
    }
}

// Byte counters for the 64 columns of each matrix, subtracting each chosen row's 0xff bytes
// (adding 1), emptied into the sums every 255 rows, before a byte could wrap.
template <std::size_t Matrices>
__attribute__((target("avx2"))) void column_sums_avx2(const std::uint64_t* rows, std::size_t stride,
                                                      const std::uint32_t* chosen,
                                                      std::size_t count,
                                                      std::uint32_t* sums) noexcept {
  std::fill_n(sums, 64 * Matrices, std::uint32_t{0});
  for (std::size_t from = 0; from < count; from += 255) {
    __m256i counts[Matrices][2];
    for (auto& c : counts) c[0] = c[1] = _mm256_setzero_si256();
    const std::size_t to = std::min(count, from + 255);
    for (std::size_t k = from; k < to; ++k)
      for (std::size_t i = 0; i < Matrices; ++i) {
        const std::uint64_t row = rows[i * stride + chosen[k]];
        counts[i][0] = _mm256_sub_epi8(counts[i][0], byte_mask_of(static_cast<std::uint32_t>(row)));
        counts[i][1] =
            _mm256_sub_epi8(counts[i][1], byte_mask_of(static_cast<std::uint32_t>(row >> 32)));
      }
    for (std::size_t i = 0; i < Matrices; ++i)
      for (unsigned h = 0; h < 2; ++h) add_byte_counts(counts[i][h], sums + 64 * i + 32 * h);
  }
}
#endif

}  // namespace

void chosen_row_column_sums(const std::uint64_t* rows, std::size_t matrices, std::size_t stride,
                            const std::uint32_t* chosen, std::size_t count,
                            std::uint32_t* sums) noexcept {
#if COLFLOW_X86_DISPATCH
  if (detail::cpu_has_avx2() && matrices == 1)
    return column_sums_avx2<1>(rows, stride, chosen, count, sums);
  if (detail::cpu_has_avx2() && matrices == 2)
    return column_sums_avx2<2>(rows, stride, chosen, count, sums);
#endif
  detail::chosen_row_column_sums_portable(rows, matrices, stride, chosen, count, sums);
}

}  // namespace colflow
