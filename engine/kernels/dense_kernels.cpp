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
template <typename T>
struct matrix_b {
  const T* data;
  std::size_t row_stride;  // from B(k, c) to B(k + 1, c)
  std::size_t col_stride;  // from B(k, c) to B(k, c + 1)

  T operator()(std::size_t k, std::size_t c) const noexcept {
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
template <typename T>
__attribute__((always_inline)) inline void multiply_add_rows(const T* z, std::size_t ldz,
                                                             std::size_t from, std::size_t n,
                                                             std::size_t b, matrix_b<T> bmat,
                                                             std::size_t l, T* y,
                                                             std::size_t ldy) noexcept {
  for (std::size_t c = 0; c < l; ++c)
    for (std::size_t k = 0; k < b; ++k) {
      const T f = bmat(k, c);
      const T* zk = z + k * ldz;
      T* yc = y + c * ldy;
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

// The AVX2 registers of T: load, store, broadcast and fused multiply-add, lane by lane.
template <typename T>
struct avx2_vector;
template <>
struct avx2_vector<double> {
  using type = __m256d;
  static constexpr std::size_t lanes = 4;
  COLFLOW_AVX2 static type load(const double* p) noexcept { return _mm256_loadu_pd(p); }
  COLFLOW_AVX2 static void store(double* p, type v) noexcept { _mm256_storeu_pd(p, v); }
  COLFLOW_AVX2 static type broadcast(double x) noexcept { return _mm256_set1_pd(x); }
  COLFLOW_AVX2 static type fmadd(type a, type b, type c) noexcept {
    return _mm256_fmadd_pd(a, b, c);
  }
};
template <>
struct avx2_vector<float> {
  using type = __m256;
  static constexpr std::size_t lanes = 8;
  COLFLOW_AVX2 static type load(const float* p) noexcept { return _mm256_loadu_ps(p); }
  COLFLOW_AVX2 static void store(float* p, type v) noexcept { _mm256_storeu_ps(p, v); }
  COLFLOW_AVX2 static type broadcast(float x) noexcept { return _mm256_set1_ps(x); }
  COLFLOW_AVX2 static type fmadd(type a, type b, type c) noexcept {
    return _mm256_fmadd_ps(a, b, c);
  }
};

// Rows [i, i + 2·lanes) x NC columns of Y += Z·B: 2·NC accumulators, fed by two loads of Z
// and NC broadcasts of B per step of k; each lane runs its entry's chain over k in order.
template <typename T, int NC>
COLFLOW_AVX2 void multiply_add_tile_avx2(const T* z, std::size_t ldz, std::size_t i, std::size_t b,
                                         matrix_b<T> bmat, T* y, std::size_t ldy) noexcept {
  using V = avx2_vector<T>;
  constexpr std::size_t w = V::lanes;
  typename V::type lo[NC], hi[NC];
  for (int c = 0; c < NC; ++c) {
    lo[c] = V::load(y + c * ldy + i);
    hi[c] = V::load(y + c * ldy + i + w);
  }
  for (std::size_t k = 0; k < b; ++k) {
    const auto z0 = V::load(z + k * ldz + i), z1 = V::load(z + k * ldz + i + w);
    for (int c = 0; c < NC; ++c) {
      const auto f = V::broadcast(bmat(k, static_cast<std::size_t>(c)));
      lo[c] = V::fmadd(z0, f, lo[c]);
      hi[c] = V::fmadd(z1, f, hi[c]);
    }
  }
  for (int c = 0; c < NC; ++c) {
    V::store(y + c * ldy + i, lo[c]);
    V::store(y + c * ldy + i + w, hi[c]);
  }
}

// The `width` (at most NC) columns left after the wide tiles, as one tile of that width.
template <typename T, int NC>
COLFLOW_AVX2 void multiply_add_rest_avx2(const T* z, std::size_t ldz, std::size_t i, std::size_t b,
                                         matrix_b<T> bmat, std::size_t width, T* y,
                                         std::size_t ldy) noexcept {
  if constexpr (NC > 0) {
    if (width == static_cast<std::size_t>(NC))
      return multiply_add_tile_avx2<T, NC>(z, ldz, i, b, bmat, y, ldy);
    multiply_add_rest_avx2<T, NC - 1>(z, ldz, i, b, bmat, width, y, ldy);
  }
}

// What the AVX2 path does with the columns of a block of rows that a tile of Wide leaves:
// one narrower tile (multiply_add, whose l is the SVD's few k + oversampling), or one column
// at a time (multiply_add_transposed).
enum class rest_columns { one_tile, one_by_one };

// Y += Z·B: blocks of 2·lanes rows in tiles of Wide columns, then the rest as Rest says, then
// the last rows by multiply_add_rows. Tiles only change which entries share registers, not
// any entry's chain.
template <typename T, int Wide, rest_columns Rest>
COLFLOW_AVX2 void multiply_add_avx2(const T* z, std::size_t ldz, std::size_t n, std::size_t b,
                                    matrix_b<T> bmat, std::size_t l, T* y,
                                    std::size_t ldy) noexcept {
  constexpr std::size_t rows = 2 * avx2_vector<T>::lanes;
  std::size_t i = 0;
  for (; i + rows <= n; i += rows) {
    std::size_t c = 0;
    for (; c + Wide <= l; c += Wide)
      multiply_add_tile_avx2<T, Wide>(z, ldz, i, b, bmat.from_column(c), y + c * ldy, ldy);
    if constexpr (Rest == rest_columns::one_tile)
      multiply_add_rest_avx2<T, Wide - 1>(z, ldz, i, b, bmat.from_column(c), l - c, y + c * ldy,
                                          ldy);
    else
      for (; c < l; ++c)
        multiply_add_tile_avx2<T, 1>(z, ldz, i, b, bmat.from_column(c), y + c * ldy, ldy);
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

// The AVX-512 registers of T, as avx2_vector.
template <typename T>
struct avx512_vector;
template <>
struct avx512_vector<double> {
  using type = __m512d;
  static constexpr std::size_t lanes = 8;
  COLFLOW_AVX512 static type load(const double* p) noexcept { return _mm512_loadu_pd(p); }
  COLFLOW_AVX512 static void store(double* p, type v) noexcept { _mm512_storeu_pd(p, v); }
  COLFLOW_AVX512 static type broadcast(double x) noexcept { return _mm512_set1_pd(x); }
  COLFLOW_AVX512 static type fmadd(type a, type b, type c) noexcept {
    return _mm512_fmadd_pd(a, b, c);
  }
};
template <>
struct avx512_vector<float> {
  using type = __m512;
  static constexpr std::size_t lanes = 16;
  COLFLOW_AVX512 static type load(const float* p) noexcept { return _mm512_loadu_ps(p); }
  COLFLOW_AVX512 static void store(float* p, type v) noexcept { _mm512_storeu_ps(p, v); }
  COLFLOW_AVX512 static type broadcast(float x) noexcept { return _mm512_set1_ps(x); }
  COLFLOW_AVX512 static type fmadd(type a, type b, type c) noexcept {
    return _mm512_fmadd_ps(a, b, c);
  }
};

// Rows [i, i + 2·lanes) x NC columns of Y += Z·B: 2·NC accumulators, the lanes running the
// same chains as the AVX2 tile's.
template <typename T, int NC>
COLFLOW_AVX512 void multiply_add_tile_avx512(const T* z, std::size_t ldz, std::size_t i,
                                             std::size_t b, matrix_b<T> bmat, T* y,
                                             std::size_t ldy) noexcept {
  using V = avx512_vector<T>;
  constexpr std::size_t w = V::lanes;
  typename V::type lo[NC], hi[NC];
  for (int c = 0; c < NC; ++c) {
    lo[c] = V::load(y + c * ldy + i);
    hi[c] = V::load(y + c * ldy + i + w);
  }
  for (std::size_t k = 0; k < b; ++k) {
    const auto z0 = V::load(z + k * ldz + i), z1 = V::load(z + k * ldz + i + w);
    for (int c = 0; c < NC; ++c) {
      const auto f = V::broadcast(bmat(k, static_cast<std::size_t>(c)));
      lo[c] = V::fmadd(z0, f, lo[c]);
      hi[c] = V::fmadd(z1, f, hi[c]);
    }
  }
  for (int c = 0; c < NC; ++c) {
    V::store(y + c * ldy + i, lo[c]);
    V::store(y + c * ldy + i + w, hi[c]);
  }
}

// Y += Z·B: blocks of 2·lanes rows in tiles of 8 columns, then one column at a time, then the
// last rows by the AVX2 path (its blocks are half as tall) and multiply_add_rows. Taken by
// multiply_add_transposed only.
template <typename T>
COLFLOW_AVX512 void multiply_add_avx512(const T* z, std::size_t ldz, std::size_t n, std::size_t b,
                                        matrix_b<T> bmat, std::size_t l, T* y,
                                        std::size_t ldy) noexcept {
  constexpr std::size_t rows = 2 * avx512_vector<T>::lanes;
  std::size_t i = 0;
  for (; i + rows <= n; i += rows) {
    std::size_t c = 0;
    for (; c + 8 <= l; c += 8)
      multiply_add_tile_avx512<T, 8>(z, ldz, i, b, bmat.from_column(c), y + c * ldy, ldy);
    for (; c < l; ++c)
      multiply_add_tile_avx512<T, 1>(z, ldz, i, b, bmat.from_column(c), y + c * ldy, ldy);
  }
  multiply_add_avx2<T, 6, rest_columns::one_by_one>(z + i, ldz, n - i, b, bmat, l, y + i, ldy);
}

#endif

}  // namespace

namespace {

template <typename T>
void multiply_add_transposed_any(const T* a, std::size_t lda, std::size_t n, std::size_t b,
                                 const T* bt, std::size_t ldb, std::size_t l, T* y,
                                 std::size_t ldy) noexcept {
  const matrix_b<T> bmat{bt, ldb, 1};  // B(k, c) = bt[c + k · ldb]
#if COLFLOW_X86_DISPATCH
  if (cpu_has_avx512f()) return multiply_add_avx512(a, lda, n, b, bmat, l, y, ldy);
  if (cpu_has_avx2_fma())
    return multiply_add_avx2<T, 6, rest_columns::one_by_one>(a, lda, n, b, bmat, l, y, ldy);
#endif
  multiply_add_rows(a, lda, 0, n, b, bmat, l, y, ldy);
}

}  // namespace

void multiply_add_transposed(const double* a, std::size_t lda, std::size_t n, std::size_t b,
                             const double* bt, std::size_t ldb, std::size_t l, double* y,
                             std::size_t ldy) noexcept {
  multiply_add_transposed_any(a, lda, n, b, bt, ldb, l, y, ldy);
}

void multiply_add_transposed(const float* a, std::size_t lda, std::size_t n, std::size_t b,
                             const float* bt, std::size_t ldb, std::size_t l, float* y,
                             std::size_t ldy) noexcept {
  multiply_add_transposed_any(a, lda, n, b, bt, ldb, l, y, ldy);
}

void multiply_add(const double* z, std::size_t ldz, std::size_t n, std::size_t b, const double* bm,
                  std::size_t ldb, std::size_t l, double* y, std::size_t ldy) noexcept {
  const matrix_b<double> bmat{bm, 1, ldb};  // B(k, c) = bm[k + c · ldb]
#if COLFLOW_X86_DISPATCH
  if (cpu_has_avx2_fma())
    return multiply_add_avx2<double, 4, rest_columns::one_tile>(z, ldz, n, b, bmat, l, y, ldy);
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
