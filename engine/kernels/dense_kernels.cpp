// Dense matrix products on column-major blocks: the randomised SVD's passes and the
// relationship matrix's tiles (dense_kernels_internal.hpp).
#include <cmath>

#include "kernels/dense_kernels_internal.hpp"
#include "simd/cpu_dispatch_internal.hpp"

namespace colflow::detail {
namespace {

// B's entry (k, c) lies at data[k · row_stride + c · col_stride]: multiply_add's B is
// column-major ({1, ldb}); multiply_add_transposed's B is the transpose of its l x b block bt,
// read in place ({ldb, 1}). The two products differ in nothing else.
struct matrix_b {
  const double* data;
  std::size_t row_stride;  // from B(k, c) to B(k + 1, c)
  std::size_t col_stride;  // from B(k, c) to B(k, c + 1)

  double operator()(std::size_t k, std::size_t c) const noexcept {
    return data[k * row_stride + c * col_stride];
  }
  // B's columns from c on.
  matrix_b from_column(std::size_t c) const noexcept {
    return {data + c * col_stride, row_stride, col_stride};
  }
};

// Rows [from, n) of Y (n x l) += Z (n x b) · B, Y overlapping neither Z nor B. Each entry is
// one chain y(i, c) = fma(z(i, k), B(k, c), y(i, c)) for k = 0 … b − 1 in order, the chain every
// vector tile below runs in its lanes; std::fma is one instruction where the CPU has FMA, a
// correctly rounded library routine where it does not, so every path gives the same bits
// (simd/vector_path.hpp). The portable path (from = 0) and the vector paths' last rows, inlined
// there so that std::fma is the FMA instruction of their target.
__attribute__((always_inline)) inline void multiply_add_rows(const double* z, std::size_t ldz,
                                                             std::size_t from, std::size_t n,
                                                             std::size_t b, matrix_b bmat,
                                                             std::size_t l, double* y,
                                                             std::size_t ldy) noexcept {
  for (std::size_t c = 0; c < l; ++c)
    for (std::size_t k = 0; k < b; ++k) {
      const double f = bmat(k, c);
      const double* zk = z + k * ldz;
      double* yc = y + c * ldy;
      for (std::size_t i = from; i < n; ++i) yc[i] = std::fma(zk[i], f, yc[i]);
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

// Rows [i, i+8) x NC columns of Y += Z·B: 2·NC accumulators, fed by two loads of Z and NC
// broadcasts of B per step of k; each lane runs its entry's chain over k in order.
template <int NC>
COLFLOW_AVX2 void multiply_add_tile_avx2(const double* z, std::size_t ldz, std::size_t i,
                                         std::size_t b, matrix_b bmat, double* y,
                                         std::size_t ldy) noexcept {
  __m256d lo[NC], hi[NC];
  for (int c = 0; c < NC; ++c) {
    lo[c] = _mm256_loadu_pd(y + c * ldy + i);
    hi[c] = _mm256_loadu_pd(y + c * ldy + i + 4);
  }
  for (std::size_t k = 0; k < b; ++k) {
    const __m256d z0 = _mm256_loadu_pd(z + k * ldz + i), z1 = _mm256_loadu_pd(z + k * ldz + i + 4);
    for (int c = 0; c < NC; ++c) {
      const __m256d f = _mm256_set1_pd(bmat(k, static_cast<std::size_t>(c)));
      lo[c] = _mm256_fmadd_pd(z0, f, lo[c]);
      hi[c] = _mm256_fmadd_pd(z1, f, hi[c]);
    }
  }
  for (int c = 0; c < NC; ++c) {
    _mm256_storeu_pd(y + c * ldy + i, lo[c]);
    _mm256_storeu_pd(y + c * ldy + i + 4, hi[c]);
  }
}

// The `width` (at most NC) columns left after the wide tiles, as one tile of that width.
template <int NC>
COLFLOW_AVX2 void multiply_add_rest_avx2(const double* z, std::size_t ldz, std::size_t i,
                                         std::size_t b, matrix_b bmat, std::size_t width, double* y,
                                         std::size_t ldy) noexcept {
  if constexpr (NC > 0) {
    if (width == static_cast<std::size_t>(NC))
      return multiply_add_tile_avx2<NC>(z, ldz, i, b, bmat, y, ldy);
    multiply_add_rest_avx2<NC - 1>(z, ldz, i, b, bmat, width, y, ldy);
  }
}

// What the AVX2 path does with the columns of a block of 8 rows that a tile of Wide leaves:
// one narrower tile (multiply_add, whose l is the SVD's few k + oversampling), or one column
// at a time (multiply_add_transposed).
enum class rest_columns { one_tile, one_by_one };

// Y += Z·B: blocks of 8 rows in tiles of Wide columns, then the rest as Rest says, then the
// last rows by multiply_add_rows. Tiles only change which entries share registers, not any
// entry's chain.
template <int Wide, rest_columns Rest>
COLFLOW_AVX2 void multiply_add_avx2(const double* z, std::size_t ldz, std::size_t n, std::size_t b,
                                    matrix_b bmat, std::size_t l, double* y,
                                    std::size_t ldy) noexcept {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::size_t c = 0;
    for (; c + Wide <= l; c += Wide)
      multiply_add_tile_avx2<Wide>(z, ldz, i, b, bmat.from_column(c), y + c * ldy, ldy);
    if constexpr (Rest == rest_columns::one_tile)
      multiply_add_rest_avx2<Wide - 1>(z, ldz, i, b, bmat.from_column(c), l - c, y + c * ldy, ldy);
    else
      for (; c < l; ++c)
        multiply_add_tile_avx2<1>(z, ldz, i, b, bmat.from_column(c), y + c * ldy, ldy);
  }
  multiply_add_rows(z, ldz, i, n, b, bmat, l, y, ldy);
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

#define COLFLOW_AVX512 __attribute__((target("avx512f,avx2,fma")))

// Rows [i, i+16) x NC columns of Y += Z·B: 2·NC accumulators of 8 doubles, the lanes running
// the same chains as the AVX2 tile's.
template <int NC>
COLFLOW_AVX512 void multiply_add_tile_avx512(const double* z, std::size_t ldz, std::size_t i,
                                             std::size_t b, matrix_b bmat, double* y,
                                             std::size_t ldy) noexcept {
  __m512d lo[NC], hi[NC];
  for (int c = 0; c < NC; ++c) {
    lo[c] = _mm512_loadu_pd(y + c * ldy + i);
    hi[c] = _mm512_loadu_pd(y + c * ldy + i + 8);
  }
  for (std::size_t k = 0; k < b; ++k) {
    const __m512d z0 = _mm512_loadu_pd(z + k * ldz + i), z1 = _mm512_loadu_pd(z + k * ldz + i + 8);
    for (int c = 0; c < NC; ++c) {
      const __m512d f = _mm512_set1_pd(bmat(k, static_cast<std::size_t>(c)));
      lo[c] = _mm512_fmadd_pd(z0, f, lo[c]);
      hi[c] = _mm512_fmadd_pd(z1, f, hi[c]);
    }
  }
  for (int c = 0; c < NC; ++c) {
    _mm512_storeu_pd(y + c * ldy + i, lo[c]);
    _mm512_storeu_pd(y + c * ldy + i + 8, hi[c]);
  }
}

// Y += Z·B: blocks of 16 rows in tiles of 8 columns, then one column at a time, then the last
// rows by multiply_add_rows. Taken by multiply_add_transposed only.
COLFLOW_AVX512 void multiply_add_avx512(const double* z, std::size_t ldz, std::size_t n,
                                        std::size_t b, matrix_b bmat, std::size_t l, double* y,
                                        std::size_t ldy) noexcept {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    std::size_t c = 0;
    for (; c + 8 <= l; c += 8)
      multiply_add_tile_avx512<8>(z, ldz, i, b, bmat.from_column(c), y + c * ldy, ldy);
    for (; c < l; ++c)
      multiply_add_tile_avx512<1>(z, ldz, i, b, bmat.from_column(c), y + c * ldy, ldy);
  }
  multiply_add_rows(z, ldz, i, n, b, bmat, l, y, ldy);
}

#endif

}  // namespace

void multiply_add_transposed(const double* a, std::size_t lda, std::size_t n, std::size_t b,
                             const double* bt, std::size_t ldb, std::size_t l, double* y,
                             std::size_t ldy) noexcept {
  const matrix_b bmat{bt, ldb, 1};  // B(k, c) = bt[c + k · ldb]
#if COLFLOW_X86_DISPATCH
  if (cpu_has_avx512f()) return multiply_add_avx512(a, lda, n, b, bmat, l, y, ldy);
  if (cpu_has_avx2_fma())
    return multiply_add_avx2<6, rest_columns::one_by_one>(a, lda, n, b, bmat, l, y, ldy);
#endif
  multiply_add_rows(a, lda, 0, n, b, bmat, l, y, ldy);
}

void multiply_add(const double* z, std::size_t ldz, std::size_t n, std::size_t b, const double* bm,
                  std::size_t ldb, std::size_t l, double* y, std::size_t ldy) noexcept {
  const matrix_b bmat{bm, 1, ldb};  // B(k, c) = bm[k + c · ldb]
#if COLFLOW_X86_DISPATCH
  if (cpu_has_avx2_fma())
    return multiply_add_avx2<4, rest_columns::one_tile>(z, ldz, n, b, bmat, l, y, ldy);
#endif
  multiply_add_rows(z, ldz, 0, n, b, bmat, l, y, ldy);
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
