// Dense matrix products on column-major blocks: the randomised SVD's passes and the
// relationship matrix's tiles (dense_kernels_internal.hpp).
#include <cmath>

#include "kernels/dense_kernels_internal.hpp"
#include "simd/cpu_dispatch_internal.hpp"

namespace colflow::detail {
namespace {

// The portable loops take the vector kernels' fused multiply-adds in the same order (std::fma:
// one instruction where the CPU has FMA, a correctly rounded library routine where it does
// not), so every path gives the same bits (simd/vector_path.hpp).

void multiply_add_portable(const double* z, std::size_t ldz, std::size_t n, std::size_t b,
                           const double* bm, std::size_t ldb, std::size_t l, double* y,
                           std::size_t ldy) noexcept {
  for (std::size_t c = 0; c < l; ++c)
    for (std::size_t k = 0; k < b; ++k) {
      const double f = bm[k + c * ldb];
      const double* zk = z + k * ldz;
      double* yc = y + c * ldy;
      for (std::size_t i = 0; i < n; ++i) yc[i] = std::fma(zk[i], f, yc[i]);
    }
}

// Entry (i, c): its fused multiply-adds over k in order, as every vector path does them.
void multiply_add_transposed_rows(const double* a, std::size_t lda, std::size_t from, std::size_t n,
                                  std::size_t b, const double* bt, std::size_t ldb, std::size_t l,
                                  double* y, std::size_t ldy) noexcept {
  for (std::size_t c = 0; c < l; ++c)
    for (std::size_t i = from; i < n; ++i) {
      double acc = y[i + c * ldy];
      for (std::size_t k = 0; k < b; ++k) acc = std::fma(a[i + k * lda], bt[c + k * ldb], acc);
      y[i + c * ldy] = acc;
    }
}

// Four lanes over the rows (row i into lane i mod 4), added (0 + 1) + (2 + 3), then the last
// rows: transpose_tile's order.
void transpose_multiply_portable(const double* z, std::size_t ldz, std::size_t n, std::size_t b,
                                 const double* q, std::size_t ldq, std::size_t l, double* c,
                                 std::size_t ldc) noexcept {
  const std::size_t full = n / 4 * 4;
  for (std::size_t k = 0; k < b; ++k)
    for (std::size_t j = 0; j < l; ++j) {
      const double* zk = z + k * ldz;
      const double* qj = q + j * ldq;
      double lane[4] = {0, 0, 0, 0};
      for (std::size_t i = 0; i < full; i += 4)
        for (std::size_t r = 0; r < 4; ++r) lane[r] = std::fma(zk[i + r], qj[i + r], lane[r]);
      double s = (lane[0] + lane[1]) + (lane[2] + lane[3]);
      for (std::size_t i = full; i < n; ++i) s = std::fma(zk[i], qj[i], s);
      c[k + j * ldc] = s;
    }
}

#if COLFLOW_X86_DISPATCH
#define COLFLOW_AVX2 __attribute__((target("avx2,fma")))

// Rows [i, i+8) x NC columns of Y: 2·NC accumulators, fed by two loads of Z and NC
// broadcasts of B per step of k.
template <int NC>
COLFLOW_AVX2 void multiply_add_tile(const double* z, std::size_t ldz, std::size_t i, std::size_t b,
                                    const double* bm, std::size_t ldb, double* y,
                                    std::size_t ldy) noexcept {
  __m256d lo[NC], hi[NC];
  for (int c = 0; c < NC; ++c) {
    lo[c] = _mm256_loadu_pd(y + c * ldy + i);
    hi[c] = _mm256_loadu_pd(y + c * ldy + i + 4);
  }
  for (std::size_t k = 0; k < b; ++k) {
    const __m256d z0 = _mm256_loadu_pd(z + k * ldz + i), z1 = _mm256_loadu_pd(z + k * ldz + i + 4);
    for (int c = 0; c < NC; ++c) {
      const __m256d f = _mm256_broadcast_sd(bm + k + c * ldb);
      lo[c] = _mm256_fmadd_pd(z0, f, lo[c]);
      hi[c] = _mm256_fmadd_pd(z1, f, hi[c]);
    }
  }
  for (int c = 0; c < NC; ++c) {
    _mm256_storeu_pd(y + c * ldy + i, lo[c]);
    _mm256_storeu_pd(y + c * ldy + i + 4, hi[c]);
  }
}

COLFLOW_AVX2 void multiply_add_avx2(const double* z, std::size_t ldz, std::size_t n, std::size_t b,
                                    const double* bm, std::size_t ldb, std::size_t l, double* y,
                                    std::size_t ldy) noexcept {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::size_t c = 0;
    for (; c + 4 <= l; c += 4)
      multiply_add_tile<4>(z, ldz, i, b, bm + c * ldb, ldb, y + c * ldy, ldy);
    switch (l - c) {
      case 3:
        multiply_add_tile<3>(z, ldz, i, b, bm + c * ldb, ldb, y + c * ldy, ldy);
        break;
      case 2:
        multiply_add_tile<2>(z, ldz, i, b, bm + c * ldb, ldb, y + c * ldy, ldy);
        break;
      case 1:
        multiply_add_tile<1>(z, ldz, i, b, bm + c * ldb, ldb, y + c * ldy, ldy);
        break;
      default:
        break;
    }
  }
  // The last rows one by one, with the same fused multiply-adds in the same order.
  for (; i < n; ++i)
    for (std::size_t c = 0; c < l; ++c) {
      double acc = y[i + c * ldy];
      for (std::size_t k = 0; k < b; ++k) acc = std::fma(z[i + k * ldz], bm[k + c * ldb], acc);
      y[i + c * ldy] = acc;
    }
}

// NK columns of Z against NQ columns of Q: NK·NQ accumulators over the rows, 4 at a time.
template <int NK, int NQ>
COLFLOW_AVX2 void transpose_tile(const double* z, std::size_t ldz, std::size_t n, const double* q,
                                 std::size_t ldq, double* c, std::size_t ldc) noexcept {
  __m256d acc[NK][NQ];
  for (int a = 0; a < NK; ++a)
    for (int j = 0; j < NQ; ++j) acc[a][j] = _mm256_setzero_pd();
  const std::size_t full = n / 4 * 4;
  for (std::size_t i = 0; i < full; i += 4) {
    __m256d qv[NQ];
    for (int j = 0; j < NQ; ++j) qv[j] = _mm256_loadu_pd(q + j * ldq + i);
    for (int a = 0; a < NK; ++a) {
      const __m256d zv = _mm256_loadu_pd(z + a * ldz + i);
      for (int j = 0; j < NQ; ++j) acc[a][j] = _mm256_fmadd_pd(zv, qv[j], acc[a][j]);
    }
  }
  for (int a = 0; a < NK; ++a)
    for (int j = 0; j < NQ; ++j) {
      double s = lanes_sum(acc[a][j]);
      for (std::size_t i = full; i < n; ++i) s = std::fma(z[a * ldz + i], q[j * ldq + i], s);
      c[a + j * ldc] = s;
    }
}

template <int NK>
COLFLOW_AVX2 void transpose_columns(const double* z, std::size_t ldz, std::size_t n,
                                    const double* q, std::size_t ldq, std::size_t l, double* c,
                                    std::size_t ldc) noexcept {
  std::size_t j = 0;
  for (; j + 4 <= l; j += 4) transpose_tile<NK, 4>(z, ldz, n, q + j * ldq, ldq, c + j * ldc, ldc);
  switch (l - j) {
    case 3:
      transpose_tile<NK, 3>(z, ldz, n, q + j * ldq, ldq, c + j * ldc, ldc);
      break;
    case 2:
      transpose_tile<NK, 2>(z, ldz, n, q + j * ldq, ldq, c + j * ldc, ldc);
      break;
    case 1:
      transpose_tile<NK, 1>(z, ldz, n, q + j * ldq, ldq, c + j * ldc, ldc);
      break;
    default:
      break;
  }
}

COLFLOW_AVX2 void transpose_multiply_avx2(const double* z, std::size_t ldz, std::size_t n,
                                          std::size_t b, const double* q, std::size_t ldq,
                                          std::size_t l, double* c, std::size_t ldc) noexcept {
  std::size_t k = 0;
  for (; k + 2 <= b; k += 2) transpose_columns<2>(z + k * ldz, ldz, n, q, ldq, l, c + k, ldc);
  if (k < b) transpose_columns<1>(z + k * ldz, ldz, n, q, ldq, l, c + k, ldc);
}

// Rows [i, i+8) x NC columns of Y += A Bᵀ: 2·NC accumulators, fed by two loads of A and NC
// broadcasts of B per step of k.
template <int NC>
COLFLOW_AVX2 void transposed_tile_avx2(const double* a, std::size_t lda, std::size_t i,
                                       std::size_t b, const double* bt, std::size_t ldb, double* y,
                                       std::size_t ldy) noexcept {
  __m256d lo[NC], hi[NC];
  for (int c = 0; c < NC; ++c) {
    lo[c] = _mm256_loadu_pd(y + c * ldy + i);
    hi[c] = _mm256_loadu_pd(y + c * ldy + i + 4);
  }
  for (std::size_t k = 0; k < b; ++k) {
    const __m256d a0 = _mm256_loadu_pd(a + k * lda + i), a1 = _mm256_loadu_pd(a + k * lda + i + 4);
    for (int c = 0; c < NC; ++c) {
      const __m256d f = _mm256_broadcast_sd(bt + c + k * ldb);
      lo[c] = _mm256_fmadd_pd(a0, f, lo[c]);
      hi[c] = _mm256_fmadd_pd(a1, f, hi[c]);
    }
  }
  for (int c = 0; c < NC; ++c) {
    _mm256_storeu_pd(y + c * ldy + i, lo[c]);
    _mm256_storeu_pd(y + c * ldy + i + 4, hi[c]);
  }
}

COLFLOW_AVX2 void multiply_add_transposed_avx2(const double* a, std::size_t lda, std::size_t n,
                                               std::size_t b, const double* bt, std::size_t ldb,
                                               std::size_t l, double* y, std::size_t ldy) noexcept {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::size_t c = 0;
    for (; c + 6 <= l; c += 6) transposed_tile_avx2<6>(a, lda, i, b, bt + c, ldb, y + c * ldy, ldy);
    for (; c < l; ++c) transposed_tile_avx2<1>(a, lda, i, b, bt + c, ldb, y + c * ldy, ldy);
  }
  multiply_add_transposed_rows(a, lda, i, n, b, bt, ldb, l, y, ldy);
}

#define COLFLOW_AVX512 __attribute__((target("avx512f,avx2,fma")))

// Rows [i, i+16) x NC columns: 2·NC accumulators of 8 doubles.
template <int NC>
COLFLOW_AVX512 void transposed_tile_avx512(const double* a, std::size_t lda, std::size_t i,
                                           std::size_t b, const double* bt, std::size_t ldb,
                                           double* y, std::size_t ldy) noexcept {
  __m512d lo[NC], hi[NC];
  for (int c = 0; c < NC; ++c) {
    lo[c] = _mm512_loadu_pd(y + c * ldy + i);
    hi[c] = _mm512_loadu_pd(y + c * ldy + i + 8);
  }
  for (std::size_t k = 0; k < b; ++k) {
    const __m512d a0 = _mm512_loadu_pd(a + k * lda + i), a1 = _mm512_loadu_pd(a + k * lda + i + 8);
    for (int c = 0; c < NC; ++c) {
      const __m512d f = _mm512_set1_pd(bt[c + k * ldb]);
      lo[c] = _mm512_fmadd_pd(a0, f, lo[c]);
      hi[c] = _mm512_fmadd_pd(a1, f, hi[c]);
    }
  }
  for (int c = 0; c < NC; ++c) {
    _mm512_storeu_pd(y + c * ldy + i, lo[c]);
    _mm512_storeu_pd(y + c * ldy + i + 8, hi[c]);
  }
}

COLFLOW_AVX512 void multiply_add_transposed_avx512(const double* a, std::size_t lda, std::size_t n,
                                                   std::size_t b, const double* bt, std::size_t ldb,
                                                   std::size_t l, double* y,
                                                   std::size_t ldy) noexcept {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    std::size_t c = 0;
    for (; c + 8 <= l; c += 8)
      transposed_tile_avx512<8>(a, lda, i, b, bt + c, ldb, y + c * ldy, ldy);
    for (; c < l; ++c) transposed_tile_avx512<1>(a, lda, i, b, bt + c, ldb, y + c * ldy, ldy);
  }
  multiply_add_transposed_rows(a, lda, i, n, b, bt, ldb, l, y, ldy);
}

#endif

}  // namespace

void multiply_add_transposed(const double* a, std::size_t lda, std::size_t n, std::size_t b,
                             const double* bt, std::size_t ldb, std::size_t l, double* y,
                             std::size_t ldy) noexcept {
#if COLFLOW_X86_DISPATCH
  if (cpu_has_avx512f()) return multiply_add_transposed_avx512(a, lda, n, b, bt, ldb, l, y, ldy);
  if (cpu_has_avx2_fma()) return multiply_add_transposed_avx2(a, lda, n, b, bt, ldb, l, y, ldy);
#endif
  multiply_add_transposed_rows(a, lda, 0, n, b, bt, ldb, l, y, ldy);
}

void multiply_add(const double* z, std::size_t ldz, std::size_t n, std::size_t b, const double* bm,
                  std::size_t ldb, std::size_t l, double* y, std::size_t ldy) noexcept {
#if COLFLOW_X86_DISPATCH
  if (cpu_has_avx2_fma()) return multiply_add_avx2(z, ldz, n, b, bm, ldb, l, y, ldy);
#endif
  multiply_add_portable(z, ldz, n, b, bm, ldb, l, y, ldy);
}

void transpose_multiply(const double* z, std::size_t ldz, std::size_t n, std::size_t b,
                        const double* q, std::size_t ldq, std::size_t l, double* c,
                        std::size_t ldc) noexcept {
#if COLFLOW_X86_DISPATCH
  if (cpu_has_avx2_fma()) return transpose_multiply_avx2(z, ldz, n, b, q, ldq, l, c, ldc);
#endif
  transpose_multiply_portable(z, ldz, n, b, q, ldq, l, c, ldc);
}

}  // namespace colflow::detail
