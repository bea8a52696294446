// Dot products of packed genotype columns with dense vectors, without decoding the column.
//
// A byte holds four samples, so a 256-entry table maps each byte to the four dosages it
// stands for (a missing call counts 0). One aligned 4-double load replaces the decode, and
// that load is shared by every vector the column is multiplied with.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "colflow/codec/genotype_codec.hpp"
#include "colflow/kernels/genotype_kernels.hpp"
#include "kernels/byte_values_internal.hpp"
#include "simd/cpu_dispatch_internal.hpp"

namespace colflow {
namespace {

using namespace detail::byte_tables;

// The same four dosages twice, for the AVX-512 kernel's pairs of vectors: one aligned load.
struct byte_dosages_twice {
  alignas(64) double eight[256][8];
  constexpr byte_dosages_twice() noexcept : eight{} {
    for (unsigned b = 0; b < 256; ++b)
      for (unsigned k = 0; k < 8; ++k) eight[b][k] = code_dosage((b >> (2 * (k % 4))) & 3u);
  }
};
constexpr byte_dosages_twice table_twice{};

// A byte of codes with the samples a mask byte drops turned into missing calls (0b01), so
// that the tables give them neither a dosage nor a call.
constexpr std::uint8_t masked_byte(std::uint8_t codes, std::uint8_t mask) noexcept {
  const auto keep = static_cast<std::uint8_t>(mask | (mask << 1));  // 0b01 pairs -> 0b11
  return static_cast<std::uint8_t>((codes & keep) | (0x55u & ~keep));
}

// Samples [first, n) one by one, added to out[c * m + v].
void dots_tail(const std::uint8_t* const* columns, std::size_t count, std::size_t first,
               std::size_t n, const double* w, std::size_t stride, std::size_t m,
               double* out) noexcept {
  for (std::size_t c = 0; c < count; ++c)
    for (std::size_t i = first; i < n; ++i) {
      const double x = code_dosage((columns[c][i / 4] >> (2 * (i % 4))) & 3u);
      for (std::size_t v = 0; v < m; ++v) out[c * m + v] += x * w[i + v * stride];
    }
}

// Every pair (column, vector) accumulates its own four lanes over the bytes in order, then
// adds the lanes ((0+1)+(2+3)) and the tail: the same arithmetic whichever kernel, tile or
// thread computes it, so results never depend on how the work was split.
void dots_portable(const std::uint8_t* const* columns, std::size_t count, std::size_t n,
                   const double* w, std::size_t stride, std::size_t m, double* out) noexcept {
  const std::size_t full = n / 4;
  for (std::size_t c = 0; c < count; ++c)
    for (std::size_t v = 0; v < m; ++v) {
      const double* y = w + v * stride;
      double acc[4] = {0, 0, 0, 0};
      for (std::size_t b = 0; b < full; ++b) {
        const double* t = table.four[columns[c][b]];
        for (std::size_t k = 0; k < 4; ++k) acc[k] += t[k] * y[4 * b + k];
      }
      out[c * m + v] = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    }
  dots_tail(columns, count, 4 * full, n, w, stride, m, out);
}

#if COLFLOW_X86_DISPATCH
// The vectorised kernels walk the samples in chunks whose slice of the vectors stays in the
// core's L2 cache while every tile of columns passes over it: with many vectors (ten
// phenotypes of 100,000 samples are 8 MB) a tile would otherwise stream them all from L3, and
// the products wait on that instead of the FMA units. Each (column, vector) keeps its four
// lanes in `lanes` (c * m + v) between chunks, so every lane is still one chain of FMAs over
// the bytes in order: the chunking changes no result.
constexpr std::size_t chunk_vector_bytes = 256 << 10;

std::size_t chunk_bytes(std::size_t m) noexcept {
  return std::max<std::size_t>(chunk_vector_bytes / (4 * sizeof(double) * m), 64);
}

// (lane 0 + lane 1) + (lane 2 + lane 3) of every (column, vector), then the tail samples.
void finish_dots(const std::uint8_t* const* columns, std::size_t count, std::size_t n,
                 const double* w, std::size_t stride, std::size_t m, const double* lanes,
                 double* out) noexcept {
  for (std::size_t k = 0; k < count * m; ++k) {
    const double* l = lanes + 4 * k;
    out[k] = (l[0] + l[1]) + (l[2] + l[3]);
  }
  dots_tail(columns, count, 4 * (n / 4), n, w, stride, m, out);
}

// A tile of MC columns x MV vectors over bytes [b0, b1): per step of four samples, MC table
// loads and MV vector loads feed MC x MV independent FMA chains, enough to hide the FMA
// latency with the loads shared across the tile.
template <int MC, int MV>
__attribute__((target("avx2,fma"))) void tile_avx2(const std::uint8_t* const* columns,
                                                   std::size_t b0, std::size_t b1,
                                                   const double* const* y, double* lanes,
                                                   std::size_t m) noexcept {
  __m256d acc[MC][MV];
  for (int c = 0; c < MC; ++c)
    for (int v = 0; v < MV; ++v)
      acc[c][v] = _mm256_loadu_pd(lanes + 4 * (static_cast<std::size_t>(c) * m + v));
  for (std::size_t b = b0; b < b1; ++b) {
    __m256d yv[MV];
    for (int v = 0; v < MV; ++v) yv[v] = _mm256_loadu_pd(y[v] + 4 * b);
    for (int c = 0; c < MC; ++c) {
      const __m256d t = _mm256_load_pd(table.four[columns[c][b]]);
      for (int v = 0; v < MV; ++v) acc[c][v] = _mm256_fmadd_pd(t, yv[v], acc[c][v]);
    }
  }
  for (int c = 0; c < MC; ++c)
    for (int v = 0; v < MV; ++v)
      _mm256_storeu_pd(lanes + 4 * (static_cast<std::size_t>(c) * m + v), acc[c][v]);
}

template <int MC>
__attribute__((target("avx2,fma"))) void tile_columns(const std::uint8_t* const* columns,
                                                      std::size_t b0, std::size_t b1,
                                                      const dosage_vectors& vectors,
                                                      double* lanes) noexcept {
  const double* w = vectors.w();
  const std::size_t stride = vectors.stride(), m = vectors.size();
  std::size_t v = 0;
  for (; v + 2 <= m; v += 2) {
    const double* y[2] = {w + v * stride, w + (v + 1) * stride};
    tile_avx2<MC, 2>(columns, b0, b1, y, lanes + 4 * v, m);
  }
  if (v < m) {
    const double* y[1] = {w + v * stride};
    tile_avx2<MC, 1>(columns, b0, b1, y, lanes + 4 * v, m);
  }
}

// Where the AVX-512 tiles take their pairs of vectors from. Interleaved by dosage_vectors, a
// pair is one aligned load; built from the two vectors, it takes two half loads and a merge
// (masked broadcasts: GCC 12 warns on the undefined pass-through operand of the plain insert
// and cast intrinsics). The merges grow with the number of pairs, so from two pairs (four
// vectors) on dosage_vectors makes the interleaved copy; for a single pair the copy would cost
// more than the merges it saves, and the vectors are read where they are.
struct interleaved_pairs {
  const double* first;  // the tile's first pair
  std::size_t stride;   // from one pair to the next
  __attribute__((target("avx512f,avx2,fma"), always_inline)) __m512d load(
      int p, std::size_t b) const noexcept {
    return _mm512_load_pd(first + static_cast<std::size_t>(p) * stride + 8 * b);
  }
};

struct vector_pairs {
  const double* const* y;  // the tile's vectors, two a pair
  __attribute__((target("avx512f,avx2,fma"), always_inline)) __m512d load(
      int p, std::size_t b) const noexcept {
    const auto k = static_cast<std::size_t>(2 * p);
    return _mm512_mask_broadcast_f64x4(
        _mm512_maskz_broadcast_f64x4(0x0f, _mm256_loadu_pd(y[k] + 4 * b)), 0xf0,
        _mm256_loadu_pd(y[k + 1] + 4 * b));
  }
};

// AVX-512: the four lanes of two vectors side by side in one register; each lane is the same
// chain of FMAs as in tile_avx2, so the numbers are too, and an instruction does twice the
// work (on cores with full-width 512-bit units, twice the products per cycle).
template <int MC, int MP, class Pairs>
__attribute__((target("avx512f,avx2,fma"))) void tile_avx512(const std::uint8_t* const* columns,
                                                             std::size_t b0, std::size_t b1,
                                                             const Pairs pairs, double* lanes,
                                                             std::size_t m) noexcept {
  __m512d acc[MC][MP];
  for (int c = 0; c < MC; ++c)
    for (int p = 0; p < MP; ++p)
      acc[c][p] = _mm512_loadu_pd(
          lanes + 4 * (static_cast<std::size_t>(c) * m + 2 * static_cast<std::size_t>(p)));
  for (std::size_t b = b0; b < b1; ++b) {
    __m512d yv[MP];
    for (int p = 0; p < MP; ++p) yv[p] = pairs.load(p, b);
    for (int c = 0; c < MC; ++c) {
      const __m512d t = _mm512_load_pd(table_twice.eight[columns[c][b]]);
      for (int p = 0; p < MP; ++p) acc[c][p] = _mm512_fmadd_pd(t, yv[p], acc[c][p]);
    }
  }
  for (int c = 0; c < MC; ++c)
    for (int p = 0; p < MP; ++p)
      _mm512_storeu_pd(
          lanes + 4 * (static_cast<std::size_t>(c) * m + 2 * static_cast<std::size_t>(p)),
          acc[c][p]);
}

// A tile of `pairs` pairs of vectors (one to five), read from `from`.
template <int MC, class Pairs>
__attribute__((target("avx512f,avx2,fma"))) void tile_pairs(const std::uint8_t* const* columns,
                                                            std::size_t b0, std::size_t b1,
                                                            const Pairs from, std::size_t pairs,
                                                            double* lanes, std::size_t m) noexcept {
  switch (pairs) {
    case 5:
      return tile_avx512<MC, 5>(columns, b0, b1, from, lanes, m);
    case 4:
      return tile_avx512<MC, 4>(columns, b0, b1, from, lanes, m);
    case 3:
      return tile_avx512<MC, 3>(columns, b0, b1, from, lanes, m);
    case 2:
      return tile_avx512<MC, 2>(columns, b0, b1, from, lanes, m);
    case 1:
      return tile_avx512<MC, 1>(columns, b0, b1, from, lanes, m);
    default:
      return;
  }
}

// Pairs of vectors in groups of up to five pairs: ten phenotypes take one pass over the codes. An
// odd last vector goes through the AVX2 tile.
template <int MC>
__attribute__((target("avx512f,avx2,fma"))) void tile_columns_avx512(
    const std::uint8_t* const* columns, std::size_t b0, std::size_t b1,
    const dosage_vectors& vectors, double* lanes) noexcept {
  const std::size_t m = vectors.size(), stride = vectors.stride();
  for (std::size_t v = 0; v < m;) {
    const std::size_t pairs = std::min<std::size_t>((m - v) / 2, 5);
    if (pairs == 0) {
      const double* y[1] = {vectors.w() + v * stride};
      tile_avx2<MC, 1>(columns, b0, b1, y, lanes + 4 * v, m);
      break;
    }
    if (vectors.pairs() != nullptr) {
      const interleaved_pairs from{vectors.pairs() + v / 2 * vectors.pair_stride(),
                                   vectors.pair_stride()};
      tile_pairs<MC>(columns, b0, b1, from, pairs, lanes + 4 * v, m);
    } else {
      const double* y[10];
      for (std::size_t k = 0; k < 2 * pairs; ++k) y[k] = vectors.w() + (v + k) * stride;
      tile_pairs<MC>(columns, b0, b1, vector_pairs{y}, pairs, lanes + 4 * v, m);
    }
    v += 2 * pairs;
  }
}

// A tile kernel for `k` columns over bytes [b0, b1).
using tile_kernel = void (*)(const std::uint8_t* const* columns, std::size_t b0, std::size_t b1,
                             const dosage_vectors& vectors, double* lanes) noexcept;

// Chunks of samples outside, tiles of columns inside: tiles[k] takes k columns, up to
// `widest`, and the last tile takes the rest.
void dots_chunked(const tile_kernel* tiles, std::size_t widest, const std::uint8_t* const* columns,
                  std::size_t count, const dosage_vectors& v, double* out) noexcept {
  const std::size_t n = v.samples(), m = v.size();
  thread_local std::vector<double> lanes;
  lanes.assign(4 * count * m, 0.0);
  const std::size_t full = n / 4, chunk = chunk_bytes(m);
  for (std::size_t b0 = 0; b0 < full; b0 += chunk) {
    const std::size_t b1 = std::min(full, b0 + chunk);
    for (std::size_t c = 0; c < count; c += widest) {
      const std::size_t k = std::min(widest, count - c);
      tiles[k](columns + c, b0, b1, v, lanes.data() + 4 * c * m);
    }
  }
  finish_dots(columns, count, n, v.w(), v.stride(), m, lanes.data(), out);
}

// One vector: each column is one chain of FMAs over its bytes, and an FMA waits about four
// cycles for the one before it in its chain, so a tile of four columns could use at most half
// of the two FMA units. Eight chains cover the latency, and the loads become the limit.
template <int MC>
__attribute__((target("avx2,fma"))) void tile_one_vector(const std::uint8_t* const* columns,
                                                         std::size_t b0, std::size_t b1,
                                                         const dosage_vectors& vectors,
                                                         double* lanes) noexcept {
  const double* y[1] = {vectors.w()};
  tile_avx2<MC, 1>(columns, b0, b1, y, lanes, 1);
}

void dots_avx2(const std::uint8_t* const* columns, std::size_t count, const dosage_vectors& v,
               double* out) noexcept {
  if (v.size() == 1) {
    static constexpr tile_kernel tiles[] = {nullptr,
                                            tile_one_vector<1>,
                                            tile_one_vector<2>,
                                            tile_one_vector<3>,
                                            tile_one_vector<4>,
                                            tile_one_vector<5>,
                                            tile_one_vector<6>,
                                            tile_one_vector<7>,
                                            tile_one_vector<8>};
    return dots_chunked(tiles, 8, columns, count, v, out);
  }
  static constexpr tile_kernel tiles[] = {nullptr, tile_columns<1>, tile_columns<2>,
                                          tile_columns<3>, tile_columns<4>};
  dots_chunked(tiles, 4, columns, count, v, out);
}

// Five columns by five pairs of vectors: 25 accumulators, 5 vectors and a table row fill 31
// of the 32 registers, and each pair's load serves five columns: 25 FMAs for ten loads a step,
// the widest tile the registers hold, which keeps the two FMA units busier than four columns.
void dots_avx512(const std::uint8_t* const* columns, std::size_t count, const dosage_vectors& v,
                 double* out) noexcept {
  static constexpr tile_kernel tiles[] = {nullptr,
                                          tile_columns_avx512<1>,
                                          tile_columns_avx512<2>,
                                          tile_columns_avx512<3>,
                                          tile_columns_avx512<4>,
                                          tile_columns_avx512<5>};
  dots_chunked(tiles, 5, columns, count, v, out);
}

#endif

}  // namespace

namespace {

// The portable kernels add in the order of the AVX2 ones, lane by lane: a dosage or call
// weight (0, 1 or 2) times a double is exact, so a plain product and sum round as the fused one
// does, and every path gives the same bits (simd/vector_path.hpp).

// Bytes [0, full) into four accumulators of four lanes, byte b into accumulator b mod 4 while
// four remain and the rest into accumulator 0; the result is ((a0 + a1) + (a2 + a3)) lane by
// lane, then (lane 0 + lane 1) + (lane 2 + lane 3), as sparse_sum_avx2 adds them.
template <typename Term>
double four_by_four(std::size_t full, Term term) noexcept {
  double acc[4][4] = {};
  std::size_t b = 0;
  for (; b + 4 <= full; b += 4)
    for (std::size_t k = 0; k < 4; ++k)
      for (std::size_t l = 0; l < 4; ++l) acc[k][l] += term(b + k, l);
  for (; b < full; ++b)
    for (std::size_t l = 0; l < 4; ++l) acc[0][l] += term(b, l);
  double lane[4];
  for (std::size_t l = 0; l < 4; ++l) lane[l] = (acc[0][l] + acc[1][l]) + (acc[2][l] + acc[3][l]);
  return (lane[0] + lane[1]) + (lane[2] + lane[3]);
}

// The sum of value(code_i) * w[i] (`values` built from value) in the order of sparse_sum_avx2.
double sum_portable(const byte_values& values, const std::uint8_t* codes, std::size_t n,
                    const double* w) noexcept {
  const std::size_t full = n / 4;
  double sum = four_by_four(
      full, [&](std::size_t b, std::size_t l) { return values.four[codes[b]][l] * w[4 * b + l]; });
  for (std::size_t i = 4 * full; i < n; ++i)
    sum += values.of((codes[i / 4] >> (2 * (i % 4))) & 3u) * w[i];
  return sum;
}

// r + a·x, then + c·call, as axpy_avx2's two fused steps (both products are exact).
void axpy_portable(const std::uint8_t* codes, std::size_t n, const std::uint8_t* mask, double a,
                   double c, double* r) noexcept {
  const std::size_t full = n / 4;
  for (std::size_t b = 0; b < full; ++b) {
    const std::uint8_t byte = mask ? masked_byte(codes[b], mask[b]) : codes[b];
    for (std::size_t k = 0; k < 4; ++k)
      r[4 * b + k] = (r[4 * b + k] + a * table.four[byte][k]) + c * calls.four[byte][k];
  }
  for (std::size_t i = 4 * full; i < n; ++i) {
    const std::uint8_t byte = mask ? masked_byte(codes[i / 4], mask[i / 4]) : codes[i / 4];
    const unsigned code = (byte >> (2 * (i % 4))) & 3u;
    if (code != 1u) r[i] = (r[i] + a * code_dosage(code)) + c;
  }
}

#if COLFLOW_X86_DISPATCH
// The bytes a sparse sum must add: those holding a sample whose value is not 0.
enum class live { first_allele, second_allele, missing, first_or_missing, second_or_missing };

// 0xff in each byte of `v` without a live sample, 0 in the others. A byte is live when it holds:
// - first_allele: a sample of dosage above 0, whose code has its low bit clear (0b00, 0b10);
// - second_allele: a code with its high bit set (0b10, 0b11);
// - missing: a code 0b01, low bit set and high bit clear;
// - first_or_missing: a code other than 0b11, a byte other than 0xff;
// - second_or_missing: a code other than 0b00, a byte other than 0x00.
template <live L>
__attribute__((target("avx2"), always_inline)) inline __m256i dead_bytes(__m256i v) noexcept {
  const __m256i low = _mm256_set1_epi8(0x55), zero = _mm256_setzero_si256();
  if constexpr (L == live::first_allele)
    return _mm256_cmpeq_epi8(_mm256_and_si256(v, low), low);
  else if constexpr (L == live::second_allele)
    return _mm256_cmpeq_epi8(_mm256_andnot_si256(low, v), zero);
  else if constexpr (L == live::first_or_missing)
    return _mm256_cmpeq_epi8(v, _mm256_set1_epi8(static_cast<char>(0xff)));
  else if constexpr (L == live::second_or_missing)
    return _mm256_cmpeq_epi8(v, zero);
  else  // a low bit whose high bit (shifted down to it) is clear
    return _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_andnot_si256(_mm256_srli_epi16(v, 1), v), low),
                             zero);
}

// The 32 bytes at `codes` regrouped by the accumulator they add to (byte b to accumulator
// b mod 4): bytes 8k to 8k + 7 of the result are bytes k, k + 4, ..., k + 28. A shuffle gathers
// each 128-bit half's bytes by accumulator, a permute pairs the halves' groups. Tests of single
// bytes (dead_bytes) commute with it.
__attribute__((target("avx2"), always_inline)) inline __m256i by_accumulator(
    const std::uint8_t* codes) noexcept {
  const __m256i by_residue = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,
                                              0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  const __m256i halves_paired = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes));
  return _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v, by_residue), halves_paired);
}

// Bit j of byte k set when byte 4j + k of the 32 regrouped in `grouped` (by_accumulator) is
// live: each byte of the result lists one accumulator's live bytes in increasing order.
template <live L>
__attribute__((target("avx2"), always_inline)) inline std::uint32_t live_by_accumulator(
    __m256i grouped) noexcept {
  return ~static_cast<std::uint32_t>(_mm256_movemask_epi8(dead_bytes<L>(grouped)));
}

// Bit j set when byte j of the 64 at `codes` is live (see dead_bytes).
template <live L>
__attribute__((target("avx512f,avx512bw"), always_inline)) inline std::uint64_t live_bytes_64(
    const std::uint8_t* codes) noexcept {
  const __m512i low = _mm512_set1_epi8(0x55);
  const __m512i v = _mm512_loadu_si512(codes);
  if constexpr (L == live::first_allele)
    return _mm512_cmpneq_epi8_mask(_mm512_and_si512(v, low), low);
  else if constexpr (L == live::second_allele)
    return _mm512_test_epi8_mask(v, _mm512_set1_epi8(static_cast<char>(0xaa)));
  else if constexpr (L == live::first_or_missing)
    return _mm512_cmpneq_epi8_mask(v, _mm512_set1_epi8(static_cast<char>(0xff)));
  else if constexpr (L == live::second_or_missing)
    return _mm512_test_epi8_mask(v, v);
  else  // v & ~(v >> 1) & 0x55 in one ternary logic op (0x20: a & ~b & c)
    return _mm512_test_epi8_mask(_mm512_ternarylogic_epi32(v, _mm512_srli_epi16(v, 1), low, 0x20),
                                 low);
}

// The offsets of a byte's set bits, in increasing order, as 16-bit lanes (the rest 0).
struct set_bit_offsets {
  alignas(16) std::uint16_t at[256][8];
  constexpr set_bit_offsets() noexcept : at{} {
    for (unsigned b = 0; b < 256; ++b)
      for (unsigned bit = 0, k = 0; bit < 8; ++bit)
        if (b >> bit & 1u) at[b][k++] = static_cast<std::uint16_t>(bit);
  }
};
constexpr set_bit_offsets set_bits{};

// Live bytes are listed a window of this many bytes at a time (a multiple of 64).
constexpr std::size_t live_window = 1024;

// Counts the live bytes among bytes [0, bytes) of `codes` (a multiple of 64) and, when there
// are at most `most`, writes their offsets to `out` in increasing order; returns the count.
// `out` must have room for `bytes` + 32 entries.
using live_lister = std::size_t (*)(const std::uint8_t* codes, std::size_t bytes, std::size_t most,
                                    std::uint16_t* out) noexcept;

// 64 bytes a test, their offsets compressed to the front of a vector.
template <live L>
__attribute__((target("avx512f,avx512bw,avx512vbmi2,popcnt"))) std::size_t list_live_avx512(
    const std::uint8_t* codes, std::size_t bytes, std::size_t most, std::uint16_t* out) noexcept {
  std::size_t count = 0;
  for (std::size_t c = 0; c < bytes; c += 64)
    count += static_cast<std::size_t>(std::popcount(live_bytes_64<L>(codes + c)));
  if (count > most) return count;
  __m512i offsets = _mm512_set_epi16(31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16,
                                     15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  const __m512i step = _mm512_set1_epi16(32);
  count = 0;
  for (std::size_t c = 0; c < bytes; c += 64) {
    const std::uint64_t live = live_bytes_64<L>(codes + c);
    for (int half = 0; half < 2; ++half) {
      const auto mask = static_cast<__mmask32>(live >> (32 * half));
      _mm512_storeu_si512(out + count, _mm512_maskz_compress_epi16(mask, offsets));
      count += static_cast<std::size_t>(std::popcount(static_cast<std::uint32_t>(mask)));
      offsets = _mm512_add_epi16(offsets, step);
    }
  }
  return count;
}

// Bytes [0, windowed) of `codes` (a multiple of 64) into four accumulators kept in `acc`
// between windows of live_window bytes. A byte that is not live adds +0 to every lane of its
// accumulator, which leaves it as it is (w finite; an accumulator starts at +0 and never turns
// −0). A window where a third of the bytes or fewer are live is thus summed over a list of
// those bytes alone (Sums::listed), with the bits of the full sum, and the others streamed whole
// (Sums::streamed): one call per window, so this loop needs no vector unit of its own.
template <class Sums>
void window_sums(const std::uint8_t* codes, std::size_t windowed, const double* w, live_lister list,
                 double* acc) noexcept {
  alignas(64) std::uint16_t live[live_window + 32];
  for (std::size_t b = 0; b < windowed;) {
    const std::size_t end = std::min(b + live_window, windowed);
    const std::size_t count = list(codes + b, end - b, (end - b) / 3, live);
    if (3 * count > end - b)
      Sums::streamed(codes, w, b, end, acc);
    else
      Sums::listed(codes, w, b, live, count, acc);
    b = end;
  }
}

// One sum of `values` on AVX2: four accumulators of four lanes, byte b into accumulator b mod 4
// (acc holds them as [4][4]).
template <const byte_values& values>
struct avx2_sum {
  [[gnu::target("avx2,fma"), gnu::always_inline]] static __m256d step(const std::uint8_t* codes,
                                                                      const double* w,
                                                                      std::size_t b,
                                                                      __m256d acc) noexcept {
    return _mm256_fmadd_pd(_mm256_load_pd(values.four[codes[b]]), _mm256_loadu_pd(w + 4 * b), acc);
  }
  [[gnu::target("avx2,fma")]] static void streamed(const std::uint8_t* codes, const double* w,
                                                   std::size_t b, std::size_t end,
                                                   double* acc) noexcept {
    __m256d d[4];
    for (int k = 0; k < 4; ++k) d[k] = _mm256_load_pd(acc + 4 * k);
    for (; b < end; b += 4)
      for (int k = 0; k < 4; ++k) d[k] = step(codes, w, b + static_cast<std::size_t>(k), d[k]);
    for (int k = 0; k < 4; ++k) _mm256_store_pd(acc + 4 * k, d[k]);
  }
  // b is a multiple of 4: byte `at` is of accumulator at mod 4.
  [[gnu::target("avx2,fma")]] static void listed(const std::uint8_t* codes, const double* w,
                                                 std::size_t b, const std::uint16_t* live,
                                                 std::size_t count, double* acc) noexcept {
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t at = b + live[i];
      double* a = acc + 4 * (at % 4);
      _mm256_store_pd(a, step(codes, w, at, _mm256_load_pd(a)));
    }
  }
};

// Bytes [windowed, n / 4) and the last samples added to the accumulators `acc` ([4][4]) as the
// windows would, then their sum in the order of four_by_four.
template <const byte_values& values>
__attribute__((target("avx2,fma"))) double finish_sum_avx2(const std::uint8_t* codes, std::size_t n,
                                                           const double* w, std::size_t windowed,
                                                           const double* acc) noexcept {
  using kernel = avx2_sum<values>;
  const std::size_t full = n / 4, grouped = full & ~std::size_t{3};
  __m256d d[4];
  for (int k = 0; k < 4; ++k) d[k] = _mm256_load_pd(acc + 4 * k);
  std::size_t b = windowed;
  for (; b < grouped; b += 4)
    for (int k = 0; k < 4; ++k)
      d[k] = kernel::step(codes, w, b + static_cast<std::size_t>(k), d[k]);
  for (; b < full; ++b) d[0] = kernel::step(codes, w, b, d[0]);
  double sum =
      detail::lanes_sum(_mm256_add_pd(_mm256_add_pd(d[0], d[1]), _mm256_add_pd(d[2], d[3])));
  for (std::size_t i = 4 * full; i < n; ++i)
    sum = std::fma(values.of((codes[i / 4] >> (2 * (i % 4))) & 3u), w[i], sum);
  return sum;
}

// Bytes [0, n / 4 rounded down to whole windows).
constexpr std::size_t windowed_bytes(std::size_t n) noexcept {
  return (n / 4) & ~std::size_t{3} & ~std::size_t{63};
}

// The sum of value(code_i) * w[i] over the samples, `values` built from value, where a byte
// whose samples all have value 0 is live to no lister: four accumulators of four lanes, as
// four_by_four adds. The AVX-512 lister lists a window's live bytes with compress instructions;
// the sums are AVX2's.
template <const byte_values& values>
__attribute__((target("avx2,fma"))) double listed_sum_avx512(const std::uint8_t* codes,
                                                             std::size_t n, const double* w,
                                                             live_lister list) noexcept {
  alignas(32) double acc[4][4] = {};
  const std::size_t windowed = windowed_bytes(n);
  window_sums<avx2_sum<values>>(codes, windowed, w, list, acc[0]);
  return finish_sum_avx2<values>(codes, n, w, windowed, acc[0]);
}

// Whether a window of `bytes` bytes, `live` of them live, costs less streamed whole than
// listed: a listed byte costs about as much as a streamed one (the four accumulators' chains
// run side by side in registers), and its list costs a little more.
constexpr bool worth_streaming(std::size_t live, std::size_t bytes) noexcept {
  return 3 * live > 2 * bytes;
}

// A window's live bytes listed apart by the accumulator they add to, each list in increasing
// order, as offsets from the window's first byte.
struct accumulator_lists {
  alignas(16) std::uint16_t at[4][live_window / 4 + 8];
  std::size_t count[4];
};

// The lists of the bytes set in `masks` (live_by_accumulator's, one per 32 bytes of the
// window), eight bytes of an accumulator at a time through the table of set bits' offsets.
[[gnu::target("avx2,popcnt")]] void list_by_accumulator(const std::uint32_t* masks,
                                                        std::size_t chunks,
                                                        accumulator_lists& lists) noexcept {
  std::fill(std::begin(lists.count), std::end(lists.count), std::size_t{0});
  for (std::size_t c = 0; c < chunks; ++c)
    for (unsigned k = 0; k < 4; ++k) {
      const unsigned bits = masks[c] >> (8 * k) & 0xffu;
      const __m128i j = _mm_load_si128(reinterpret_cast<const __m128i*>(set_bits.at[bits]));
      const __m128i offsets =
          _mm_add_epi16(_mm_slli_epi16(j, 2), _mm_set1_epi16(static_cast<short>(32 * c + k)));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(lists.at[k] + lists.count[k]), offsets);
      lists.count[k] += static_cast<std::size_t>(std::popcount(bits));
    }
}

// Byte `at`'s S sums added to their accumulators (one per sum) in `d`.
template <std::size_t S, std::size_t Stride>
[[gnu::target("avx2,fma"), gnu::always_inline]] inline void add_listed(const double* rows,
                                                                       const std::uint8_t* codes,
                                                                       const double* w,
                                                                       std::size_t at,
                                                                       __m256d* d) noexcept {
  const __m256d weights = _mm256_loadu_pd(w + 4 * at);
  const double* row = rows + Stride * codes[at];
  for (std::size_t s = 0; s < S; ++s)
    d[s] = _mm256_fmadd_pd(_mm256_load_pd(row + 4 * s), weights, d[s]);
}

// S sums over the listed bytes of the window at byte b: sum s of a byte takes the four values
// at rows + Stride * byte + 4 * s, and its four accumulators (acc + 16 * s, [4][4]) stay in
// registers. Each accumulator adds its own bytes in increasing order, as the streamed sum does,
// so the bits are the same; the four chains run side by side instead of one after another
// through memory.
template <std::size_t S, std::size_t Stride>
[[gnu::target("avx2,fma")]] void listed_by_accumulator(const double* rows,
                                                       const std::uint8_t* codes, const double* w,
                                                       std::size_t b,
                                                       const accumulator_lists& lists,
                                                       double* acc) noexcept {
  __m256d d[4][S];
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t k = 0; k < 4; ++k) d[k][s] = _mm256_load_pd(acc + 16 * s + 4 * k);
  const std::size_t common = *std::min_element(std::begin(lists.count), std::end(lists.count));
  for (std::size_t i = 0; i < common; ++i)
#pragma GCC unroll 4
    for (std::size_t k = 0; k < 4; ++k)
      add_listed<S, Stride>(rows, codes, w, b + lists.at[k][i], d[k]);
#pragma GCC unroll 4
  for (std::size_t k = 0; k < 4; ++k)
    for (std::size_t i = common; i < lists.count[k]; ++i)
      add_listed<S, Stride>(rows, codes, w, b + lists.at[k][i], d[k]);
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t k = 0; k < 4; ++k) _mm256_store_pd(acc + 16 * s + 4 * k, d[k][s]);
}

// sparse_sum_avx2 of `values` (live L) and of the missing calls, with one pass over a window
// to find both sums' live bytes. Where the allele's bytes are many, its sum streams them and
// the missing calls' sum lists its own (nearly always few): neither adds the bytes the other
// needs. Where they are few, one list of the bytes live to either serves both sums (`paired`
// holds both sums' values of a byte). A byte live to one sum alone adds +0 to the other's
// lanes, so each sum has the bits it has alone.
template <const byte_values& values, live L, const byte_values_and_missing& paired>
__attribute__((target("avx2,fma,popcnt"))) std::array<double, 2> split_sums_avx2(
    const std::uint8_t* codes, std::size_t n, const double* w) noexcept {
  alignas(32) double acc[2][4][4] = {};
  accumulator_lists lists;
  std::uint32_t allele_masks[live_window / 32], missing_masks[live_window / 32];
  const std::size_t windowed = windowed_bytes(n);
  for (std::size_t b = 0; b < windowed;) {
    const std::size_t end = std::min(b + live_window, windowed), bytes = end - b;
    const std::size_t chunks = bytes / 32;
    std::size_t allele = 0, missing = 0;
    for (std::size_t c = 0; c < chunks; ++c) {
      const __m256i grouped = by_accumulator(codes + b + 32 * c);
      allele_masks[c] = live_by_accumulator<L>(grouped);
      missing_masks[c] = live_by_accumulator<live::missing>(grouped);
      allele += static_cast<std::size_t>(std::popcount(allele_masks[c]));
      missing += static_cast<std::size_t>(std::popcount(missing_masks[c]));
    }
    if (worth_streaming(allele, bytes)) {
      avx2_sum<values>::streamed(codes, w, b, end, acc[0][0]);
      if (worth_streaming(missing, bytes)) {
        avx2_sum<missing_table>::streamed(codes, w, b, end, acc[1][0]);
      } else {
        list_by_accumulator(missing_masks, chunks, lists);
        listed_by_accumulator<1, 4>(missing_table.four[0], codes, w, b, lists, acc[1][0]);
      }
    } else {
      for (std::size_t c = 0; c < chunks; ++c) allele_masks[c] |= missing_masks[c];
      list_by_accumulator(allele_masks, chunks, lists);
      listed_by_accumulator<2, 8>(paired.eight[0], codes, w, b, lists, acc[0][0]);
    }
    b = end;
  }
  return {finish_sum_avx2<values>(codes, n, w, windowed, acc[0][0]),
          finish_sum_avx2<missing_table>(codes, n, w, windowed, acc[1][0])};
}

// The sum of value(code_i) * w[i] over the samples (a byte live L has a sample of value other
// than 0), as four_by_four adds: each window streamed whole or summed over lists of its live
// bytes, whichever costs less.
template <const byte_values& values, live L>
__attribute__((target("avx2,fma,popcnt"))) double sparse_sum_avx2(const std::uint8_t* codes,
                                                                  std::size_t n,
                                                                  const double* w) noexcept {
  alignas(32) double acc[4][4] = {};
  accumulator_lists lists;
  std::uint32_t masks[live_window / 32];
  const std::size_t windowed = windowed_bytes(n);
  for (std::size_t b = 0; b < windowed;) {
    const std::size_t end = std::min(b + live_window, windowed), bytes = end - b;
    const std::size_t chunks = bytes / 32;
    std::size_t count = 0;
    for (std::size_t c = 0; c < chunks; ++c) {
      masks[c] = live_by_accumulator<L>(by_accumulator(codes + b + 32 * c));
      count += static_cast<std::size_t>(std::popcount(masks[c]));
    }
    if (worth_streaming(count, bytes)) {
      avx2_sum<values>::streamed(codes, w, b, end, acc[0]);
    } else {
      list_by_accumulator(masks, chunks, lists);
      listed_by_accumulator<1, 4>(values.four[0], codes, w, b, lists, acc[0]);
    }
    b = end;
  }
  return finish_sum_avx2<values>(codes, n, w, windowed, acc[0]);
}

// A sum of `values` and the missing calls' sum on AVX-512, each accumulator pair the two halves
// of one 512-bit vector (acc holds them as [4][8]), the byte's weights broadcast to both: the
// lanes and chains of avx2_sum for each sum.
template <const byte_values_and_missing& values>
struct avx512_pair_sum {
  [[gnu::target("avx512f"), gnu::always_inline]] static __m512d step(const std::uint8_t* codes,
                                                                     const double* w, std::size_t b,
                                                                     __m512d acc) noexcept {
    const __m512d weights = _mm512_maskz_broadcast_f64x4(0xff, _mm256_loadu_pd(w + 4 * b));
    return _mm512_fmadd_pd(_mm512_load_pd(values.eight[codes[b]]), weights, acc);
  }
  [[gnu::target("avx512f")]] static void streamed(const std::uint8_t* codes, const double* w,
                                                  std::size_t b, std::size_t end,
                                                  double* acc) noexcept {
    __m512d d[4];
    for (int k = 0; k < 4; ++k) d[k] = _mm512_load_pd(acc + 8 * k);
    for (; b < end; b += 4)
      for (int k = 0; k < 4; ++k) d[k] = step(codes, w, b + static_cast<std::size_t>(k), d[k]);
    for (int k = 0; k < 4; ++k) _mm512_store_pd(acc + 8 * k, d[k]);
  }
  [[gnu::target("avx512f")]] static void listed(const std::uint8_t* codes, const double* w,
                                                std::size_t b, const std::uint16_t* live,
                                                std::size_t count, double* acc) noexcept {
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t at = b + live[i];
      double* a = acc + 8 * (at % 4);
      _mm512_store_pd(a, step(codes, w, at, _mm512_load_pd(a)));
    }
  }
};

// sparse_sum_avx2 of `values` and of the missing calls together, over one list of the bytes
// live to either sum: the same lanes, chains and additions as the two sums apart, so the same
// bits. A byte live to one sum alone adds +0 to the other's lanes.
template <const byte_values_and_missing& values>
__attribute__((target("avx512f,avx512bw,avx512vbmi2,popcnt"))) std::array<double, 2>
sparse_pair_sum_avx512(const std::uint8_t* codes, std::size_t n, const double* w,
                       live_lister list) noexcept {
  using kernel = avx512_pair_sum<values>;
  const std::size_t full = n / 4, grouped = full & ~std::size_t{3};
  const std::size_t windowed = grouped & ~std::size_t{63};
  alignas(64) double acc[4][8] = {};
  window_sums<kernel>(codes, windowed, w, list, acc[0]);
  __m512d d[4];
  for (int k = 0; k < 4; ++k) d[k] = _mm512_load_pd(acc[k]);
  std::size_t b = windowed;
  for (; b < grouped; b += 4)
    for (int k = 0; k < 4; ++k)
      d[k] = kernel::step(codes, w, b + static_cast<std::size_t>(k), d[k]);
  for (; b < full; ++b) d[0] = kernel::step(codes, w, b, d[0]);
  const __m512d sum = _mm512_add_pd(_mm512_add_pd(d[0], d[1]), _mm512_add_pd(d[2], d[3]));
  std::array<double, 2> sums = {detail::lanes_sum(_mm512_maskz_extractf64x4_pd(0xf, sum, 0)),
                                detail::lanes_sum(_mm512_maskz_extractf64x4_pd(0xf, sum, 1))};
  for (std::size_t i = 4 * full; i < n; ++i) {
    const unsigned code = (codes[i / 4] >> (2 * (i % 4))) & 3u;
    sums[0] = std::fma(values.eight[code][0], w[i], sums[0]);
    sums[1] = std::fma(values.eight[code][4], w[i], sums[1]);
  }
  return sums;
}

__attribute__((target("avx2,fma"))) void axpy_avx2(const std::uint8_t* codes, std::size_t n,
                                                   const std::uint8_t* mask, double a, double c,
                                                   double* r) noexcept {
  const std::size_t full = n / 4;
  const __m256d av = _mm256_set1_pd(a), cv = _mm256_set1_pd(c);
  for (std::size_t b = 0; b < full; ++b) {
    const std::uint8_t byte = mask ? masked_byte(codes[b], mask[b]) : codes[b];
    __m256d rv = _mm256_loadu_pd(r + 4 * b);
    rv = _mm256_fmadd_pd(av, _mm256_load_pd(table.four[byte]), rv);
    rv = _mm256_fmadd_pd(cv, _mm256_load_pd(calls.four[byte]), rv);
    _mm256_storeu_pd(r + 4 * b, rv);
  }
  for (std::size_t i = 4 * full; i < n; ++i) {
    const std::uint8_t byte = mask ? masked_byte(codes[i / 4], mask[i / 4]) : codes[i / 4];
    const unsigned code = (byte >> (2 * (i % 4))) & 3u;
    if (code != 1u) r[i] = std::fma(c, 1.0, std::fma(a, code_dosage(code), r[i]));
  }
}
#endif

}  // namespace

namespace {

// The sum of value(code_i) * w[i] (`values` built from value), with L the bytes holding a
// sample of value above 0, on the widest path this CPU has; the same bits on every path.
template <const byte_values& values, live L>
double sparse_sum(std::span<const std::uint8_t> codes, std::size_t n, const double* w) noexcept {
#if COLFLOW_X86_DISPATCH
  if (detail::cpu_has_avx512_vbmi2())
    return listed_sum_avx512<values>(codes.data(), n, w, list_live_avx512<L>);
  if (detail::cpu_has_avx2_fma()) return sparse_sum_avx2<values, L>(codes.data(), n, w);
#endif
  return sum_portable(values, codes.data(), n, w);
}

}  // namespace

double dosage_dot(std::span<const std::uint8_t> codes, std::size_t n, const double* w) noexcept {
  return sparse_sum<table, live::first_allele>(codes, n, w);
}

double second_dosage_dot(std::span<const std::uint8_t> codes, std::size_t n,
                         const double* w) noexcept {
  return sparse_sum<second_table, live::second_allele>(codes, n, w);
}

double missing_sum(std::span<const std::uint8_t> codes, std::size_t n, const double* w) noexcept {
  return sparse_sum<missing_table, live::missing>(codes, n, w);
}

namespace {

// sparse_sum of `values` (live L) and missing_sum: in one pass over the bytes live to either
// with AVX-512, over one count of both with AVX2, or one after the other; the same bits on
// every path.
template <const byte_values& values, live L, const byte_values_and_missing& paired, live either>
std::array<double, 2> sums_with_missing(std::span<const std::uint8_t> codes, std::size_t n,
                                        const double* w) noexcept {
#if COLFLOW_X86_DISPATCH
  if (detail::cpu_has_avx512_vbmi2())
    return sparse_pair_sum_avx512<paired>(codes.data(), n, w, list_live_avx512<either>);
  if (detail::cpu_has_avx2_fma()) return split_sums_avx2<values, L, paired>(codes.data(), n, w);
#endif
  return {sparse_sum<values, L>(codes, n, w), missing_sum(codes, n, w)};
}

}  // namespace

std::array<double, 2> dosage_dot_and_missing_sum(std::span<const std::uint8_t> codes, std::size_t n,
                                                 const double* w) noexcept {
  return sums_with_missing<table, live::first_allele, table_and_missing, live::first_or_missing>(
      codes, n, w);
}

std::array<double, 2> second_dosage_dot_and_missing_sum(std::span<const std::uint8_t> codes,
                                                        std::size_t n, const double* w) noexcept {
  return sums_with_missing<second_table, live::second_allele, second_table_and_missing,
                           live::second_or_missing>(codes, n, w);
}

void genotype_axpy(std::span<const std::uint8_t> codes, std::size_t n,
                   std::span<const std::uint8_t> mask, double a, double c, double* r) noexcept {
  const std::uint8_t* m = mask.empty() ? nullptr : mask.data();
#if COLFLOW_X86_DISPATCH
  if (detail::cpu_has_avx2_fma()) return axpy_avx2(codes.data(), n, m, a, c, r);
#endif
  axpy_portable(codes.data(), n, m, a, c, r);
}

dosage_vectors::dosage_vectors(const double* w, std::size_t n, std::size_t stride, std::size_t m)
    : w_(w), n_(n), stride_(stride), m_(m) {
#if COLFLOW_X86_DISPATCH
  if (m < 4 || !detail::cpu_has_avx512f()) return;  // see interleaved_pairs
  const std::size_t full = n / 4, pairs = m / 2, ps = pair_stride();
  storage_.reset(new double[pairs * ps + 8]);
  const auto address = reinterpret_cast<std::uintptr_t>(storage_.get());
  double* to = storage_.get() + (64 - address % 64) % 64 / sizeof(double);
  pairs_ = to;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, full, 4096),
                    [&](const tbb::blocked_range<std::size_t>& r) {
                      for (std::size_t p = 0; p < pairs; ++p) {
                        const double* y0 = w + 2 * p * stride;
                        const double* y1 = y0 + stride;
                        double* pair = to + p * ps;
                        for (std::size_t b = r.begin(); b != r.end(); ++b) {
                          std::memcpy(pair + 8 * b, y0 + 4 * b, 4 * sizeof(double));
                          std::memcpy(pair + 8 * b + 4, y1 + 4 * b, 4 * sizeof(double));
                        }
                      }
                    });
#endif
}

void dosage_dots(const std::uint8_t* const* columns, std::size_t count, const dosage_vectors& v,
                 double* out) noexcept {
  if (v.size() == 0 || count == 0) return;
#if COLFLOW_X86_DISPATCH
  // A single vector has no partner to share a 512-bit register with.
  if (v.size() > 1 && detail::cpu_has_avx512f()) return dots_avx512(columns, count, v, out);
  if (detail::cpu_has_avx2_fma()) return dots_avx2(columns, count, v, out);
#endif
  dots_portable(columns, count, v.samples(), v.w(), v.stride(), v.size(), out);
}

void dosage_dots(const std::uint8_t* const* columns, std::size_t count, std::size_t n,
                 const double* w, std::size_t stride, std::size_t m, double* out) {
  if (m == 0 || count == 0) return;
  dosage_dots(columns, count, dosage_vectors(w, n, stride, m), out);
}

void dosage_dots(std::span<const std::uint8_t> codes, std::size_t n, const double* w,
                 std::size_t stride, std::size_t m, double* out) {
  const std::uint8_t* column = codes.data();
  dosage_dots(&column, 1, n, w, stride, m, out);
}

}  // namespace colflow
