// Dot products of packed genotype columns with dense vectors, without decoding the column.
//
// A byte holds four samples, so a 256-entry table maps each byte to the four dosages it
// stands for (a missing call counts 0). One aligned 4-double load replaces the decode, and
// that load is shared by every vector the column is multiplied with.
#include <algorithm>
#include <array>
#include <cstring>

#include "colflow/genotype.hpp"

#ifndef COLFLOW_GENOTYPE_AVX2
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define COLFLOW_GENOTYPE_AVX2 1
#else
#define COLFLOW_GENOTYPE_AVX2 0
#endif
#endif
#if COLFLOW_GENOTYPE_AVX2
#include <immintrin.h>
#endif

namespace colflow {
namespace {

constexpr double code_dosage(unsigned code) noexcept {
  return code == 0 ? 2.0 : code == 2 ? 1.0 : 0.0;  // 0b01 (missing) and 0b11 count 0
}

struct byte_dosages {
  alignas(32) double four[256][4];
  constexpr byte_dosages() noexcept : four{} {
    for (unsigned b = 0; b < 256; ++b)
      for (unsigned k = 0; k < 4; ++k) four[b][k] = code_dosage((b >> (2 * k)) & 3u);
  }
};
constexpr byte_dosages table{};

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

#if COLFLOW_GENOTYPE_AVX2
__attribute__((target("avx2,fma"))) inline double sum4(__m256d v) noexcept {
  const __m128d lo = _mm256_castpd256_pd128(v), hi = _mm256_extractf128_pd(v, 1);
  // (lane0 + lane1) + (lane2 + lane3), as the portable kernel adds them.
  const double a = _mm_cvtsd_f64(_mm_add_sd(lo, _mm_unpackhi_pd(lo, lo)));
  const double b = _mm_cvtsd_f64(_mm_add_sd(hi, _mm_unpackhi_pd(hi, hi)));
  return a + b;
}

// A tile of MC columns x MV vectors: per step of four samples, MC table loads and MV vector
// loads feed MC x MV independent FMA chains, enough to hide the FMA latency with the loads
// shared across the tile.
template <int MC, int MV>
__attribute__((target("avx2,fma"))) void tile_avx2(const std::uint8_t* const* columns,
                                                   std::size_t full, const double* const* y,
                                                   double* out, std::size_t m) noexcept {
  __m256d acc[MC][MV];
  for (int c = 0; c < MC; ++c)
    for (int v = 0; v < MV; ++v) acc[c][v] = _mm256_setzero_pd();
  for (std::size_t b = 0; b < full; ++b) {
    __m256d yv[MV];
    for (int v = 0; v < MV; ++v) yv[v] = _mm256_loadu_pd(y[v] + 4 * b);
    for (int c = 0; c < MC; ++c) {
      const __m256d t = _mm256_load_pd(table.four[columns[c][b]]);
      for (int v = 0; v < MV; ++v) acc[c][v] = _mm256_fmadd_pd(t, yv[v], acc[c][v]);
    }
  }
  for (int c = 0; c < MC; ++c)
    for (int v = 0; v < MV; ++v) out[static_cast<std::size_t>(c) * m + static_cast<std::size_t>(v)] = sum4(acc[c][v]);
}

template <int MC>
__attribute__((target("avx2,fma"))) void tile_columns(const std::uint8_t* const* columns,
                                                      std::size_t full, const double* w,
                                                      std::size_t stride, std::size_t m,
                                                      double* out) noexcept {
  std::size_t v = 0;
  for (; v + 2 <= m; v += 2) {
    const double* y[2] = {w + v * stride, w + (v + 1) * stride};
    tile_avx2<MC, 2>(columns, full, y, out + v, m);
  }
  if (v < m) {
    const double* y[1] = {w + v * stride};
    tile_avx2<MC, 1>(columns, full, y, out + v, m);
  }
}

__attribute__((target("avx2,fma"))) void dots_avx2(const std::uint8_t* const* columns,
                                                   std::size_t count, std::size_t n,
                                                   const double* w, std::size_t stride,
                                                   std::size_t m, double* out) noexcept {
  const std::size_t full = n / 4;
  std::size_t c = 0;
  for (; c + 4 <= count; c += 4) tile_columns<4>(columns + c, full, w, stride, m, out + c * m);
  switch (count - c) {
    case 3: tile_columns<3>(columns + c, full, w, stride, m, out + c * m); break;
    case 2: tile_columns<2>(columns + c, full, w, stride, m, out + c * m); break;
    case 1: tile_columns<1>(columns + c, full, w, stride, m, out + c * m); break;
    default: break;
  }
  dots_tail(columns, count, 4 * full, n, w, stride, m, out);
}

bool cpu_has_avx2_fma() noexcept {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0;
  }();
  return has;
}
#endif

}  // namespace

void dosage_dots(const std::uint8_t* const* columns, std::size_t count, std::size_t n,
                 const double* w, std::size_t stride, std::size_t m, double* out) noexcept {
  if (m == 0 || count == 0) return;
#if COLFLOW_GENOTYPE_AVX2
  if (cpu_has_avx2_fma()) return dots_avx2(columns, count, n, w, stride, m, out);
#endif
  dots_portable(columns, count, n, w, stride, m, out);
}

void dosage_dots(std::span<const std::uint8_t> codes, std::size_t n, const double* w,
                 std::size_t stride, std::size_t m, double* out) noexcept {
  const std::uint8_t* column = codes.data();
  dosage_dots(&column, 1, n, w, stride, m, out);
}

}  // namespace colflow
