// SBayesR's residual update from an LD column (ld_update_internal.hpp), on the widest vector
// path the CPU has, for float32 and for 16-bit values. Built with -ffp-contract=off: a product
// fused into the difference would round once where the other paths round twice.
#include "kernels/ld_update_internal.hpp"
#include "simd/cpu_dispatch_internal.hpp"

namespace colflow::detail {
namespace {

template <typename T>
void subtract_portable(const T* values, double scaled, std::size_t n, double* u) noexcept {
  for (std::size_t i = 0; i < n; ++i) u[i] -= static_cast<double>(values[i]) * scaled;
}

template <typename T>
using four_columns = std::array<const T*, 4>;

template <typename T>
void subtract4_portable(const four_columns<T>& v, const std::array<double, 4>& s, std::size_t from,
                        std::size_t n, double* u) noexcept {
  for (std::size_t i = from; i < n; ++i) {
    double x = u[i];
    for (std::size_t k = 0; k < 4; ++k) x -= static_cast<double>(v[k][i]) * s[k];
    u[i] = x;
  }
}

#if COLFLOW_X86_DISPATCH
// Four values as doubles: float32 widened, 16-bit ones sign-extended then converted (exact).
__attribute__((target("avx2"), always_inline)) inline __m256d four(const float* v) noexcept {
  return _mm256_cvtps_pd(_mm_loadu_ps(v));
}
__attribute__((target("avx2"), always_inline)) inline __m256d four(const std::int16_t* v) noexcept {
  return _mm256_cvtepi32_pd(
      _mm_cvtepi16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(v))));
}

template <typename T>
__attribute__((target("avx2"))) void subtract_avx2(const T* values, double scaled, std::size_t n,
                                                   double* u) noexcept {
  const __m256d s = _mm256_set1_pd(scaled);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256d t0 = _mm256_mul_pd(four(values + i), s);
    const __m256d t1 = _mm256_mul_pd(four(values + i + 4), s);
    _mm256_storeu_pd(u + i, _mm256_sub_pd(_mm256_loadu_pd(u + i), t0));
    _mm256_storeu_pd(u + i + 4, _mm256_sub_pd(_mm256_loadu_pd(u + i + 4), t1));
  }
  subtract_portable(values + i, scaled, n - i, u + i);
}

template <typename T>
__attribute__((target("avx2"))) void subtract4_avx2(const four_columns<T>& v,
                                                    const std::array<double, 4>& s, std::size_t n,
                                                    double* u) noexcept {
  const __m256d s0 = _mm256_set1_pd(s[0]), s1 = _mm256_set1_pd(s[1]), s2 = _mm256_set1_pd(s[2]),
                s3 = _mm256_set1_pd(s[3]);
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    __m256d x = _mm256_loadu_pd(u + i);
    x = _mm256_sub_pd(x, _mm256_mul_pd(four(v[0] + i), s0));
    x = _mm256_sub_pd(x, _mm256_mul_pd(four(v[1] + i), s1));
    x = _mm256_sub_pd(x, _mm256_mul_pd(four(v[2] + i), s2));
    x = _mm256_sub_pd(x, _mm256_mul_pd(four(v[3] + i), s3));
    _mm256_storeu_pd(u + i, x);
  }
  subtract4_portable(v, s, i, n, u);
}

// Eight values as doubles. The masked forms: GCC 12 warns on the undefined pass-through operand
// of the plain ones.
__attribute__((target("avx512f"), always_inline)) inline __m512d eight(const float* v) noexcept {
  return _mm512_maskz_cvtps_pd(0xff, _mm256_loadu_ps(v));
}
__attribute__((target("avx512f"), always_inline)) inline __m512d eight(
    const std::int16_t* v) noexcept {
  return _mm512_maskz_cvtepi32_pd(
      0xff, _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v))));
}

template <typename T>
__attribute__((target("avx512f"))) void subtract_avx512(const T* values, double scaled,
                                                        std::size_t n, double* u) noexcept {
  const __m512d s = _mm512_set1_pd(scaled);
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512d t0 = _mm512_mul_pd(eight(values + i), s);
    const __m512d t1 = _mm512_mul_pd(eight(values + i + 8), s);
    _mm512_storeu_pd(u + i, _mm512_sub_pd(_mm512_loadu_pd(u + i), t0));
    _mm512_storeu_pd(u + i + 8, _mm512_sub_pd(_mm512_loadu_pd(u + i + 8), t1));
  }
  subtract_portable(values + i, scaled, n - i, u + i);
}
template <typename T>
__attribute__((target("avx512f"))) void subtract4_avx512(const four_columns<T>& v,
                                                         const std::array<double, 4>& s,
                                                         std::size_t n, double* u) noexcept {
  const __m512d s0 = _mm512_set1_pd(s[0]), s1 = _mm512_set1_pd(s[1]), s2 = _mm512_set1_pd(s[2]),
                s3 = _mm512_set1_pd(s[3]);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m512d x = _mm512_loadu_pd(u + i);
    x = _mm512_sub_pd(x, _mm512_mul_pd(eight(v[0] + i), s0));
    x = _mm512_sub_pd(x, _mm512_mul_pd(eight(v[1] + i), s1));
    x = _mm512_sub_pd(x, _mm512_mul_pd(eight(v[2] + i), s2));
    x = _mm512_sub_pd(x, _mm512_mul_pd(eight(v[3] + i), s3));
    _mm512_storeu_pd(u + i, x);
  }
  subtract4_portable(v, s, i, n, u);
}
#endif

template <typename T>
void subtract4_dispatch(const four_columns<T>& v, const std::array<double, 4>& s, std::size_t n,
                        double* u) noexcept {
#if COLFLOW_X86_DISPATCH
  if (cpu_has_avx512f()) return subtract4_avx512(v, s, n, u);
  if (cpu_has_avx2()) return subtract4_avx2(v, s, n, u);
#endif
  subtract4_portable(v, s, 0, n, u);
}

template <typename T>
void subtract_dispatch(const T* values, double scaled, std::size_t n, double* u) noexcept {
#if COLFLOW_X86_DISPATCH
  if (cpu_has_avx512f()) return subtract_avx512(values, scaled, n, u);
  if (cpu_has_avx2()) return subtract_avx2(values, scaled, n, u);
#endif
  subtract_portable(values, scaled, n, u);
}

}  // namespace

void subtract_scaled_column(const float* values, double scaled, std::size_t n, double* u) noexcept {
  subtract_dispatch(values, scaled, n, u);
}

void subtract_scaled_column(const std::int16_t* values, double scaled, std::size_t n,
                            double* u) noexcept {
  subtract_dispatch(values, scaled, n, u);
}

void subtract_scaled_columns(const std::array<const float*, 4>& values,
                             const std::array<double, 4>& scaled, std::size_t n,
                             double* u) noexcept {
  subtract4_dispatch(values, scaled, n, u);
}

void subtract_scaled_columns(const std::array<const std::int16_t*, 4>& values,
                             const std::array<double, 4>& scaled, std::size_t n,
                             double* u) noexcept {
  subtract4_dispatch(values, scaled, n, u);
}

}  // namespace colflow::detail
