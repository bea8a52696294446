// SBayesR's residual update from an LD column (ld_update_internal.hpp), on the widest vector
// path the CPU has. Built with -ffp-contract=off: a product fused into the difference would round
// once where the other paths round twice.
#include "kernels/ld_update_internal.hpp"
#include "simd/cpu_dispatch_internal.hpp"

namespace colflow::detail {
namespace {

void subtract_portable(const float* values, const double* root_d, double scaled, std::size_t n,
                       double* r) noexcept {
  for (std::size_t i = 0; i < n; ++i) r[i] -= static_cast<double>(values[i]) * root_d[i] * scaled;
}

#if COLFLOW_X86_DISPATCH
__attribute__((target("avx2"))) void subtract_avx2(const float* values, const double* root_d,
                                                   double scaled, std::size_t n,
                                                   double* r) noexcept {
  const __m256d s = _mm256_set1_pd(scaled);
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256d v = _mm256_cvtps_pd(_mm_loadu_ps(values + i));
    const __m256d t = _mm256_mul_pd(_mm256_mul_pd(v, _mm256_loadu_pd(root_d + i)), s);
    _mm256_storeu_pd(r + i, _mm256_sub_pd(_mm256_loadu_pd(r + i), t));
  }
  subtract_portable(values + i, root_d + i, scaled, n - i, r + i);
}

__attribute__((target("avx512f"))) void subtract_avx512(const float* values, const double* root_d,
                                                        double scaled, std::size_t n,
                                                        double* r) noexcept {
  const __m512d s = _mm512_set1_pd(scaled);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    // The masked form: GCC 12 warns on the undefined pass-through operand of the plain one.
    const __m512d v = _mm512_maskz_cvtps_pd(0xff, _mm256_loadu_ps(values + i));
    const __m512d t = _mm512_mul_pd(_mm512_mul_pd(v, _mm512_loadu_pd(root_d + i)), s);
    _mm512_storeu_pd(r + i, _mm512_sub_pd(_mm512_loadu_pd(r + i), t));
  }
  subtract_portable(values + i, root_d + i, scaled, n - i, r + i);
}
#endif

}  // namespace

void subtract_scaled_column(const float* values, const double* root_d, double scaled, std::size_t n,
                            double* r) noexcept {
#if COLFLOW_X86_DISPATCH
  if (cpu_has_avx512f()) return subtract_avx512(values, root_d, scaled, n, r);
  if (cpu_has_avx2()) return subtract_avx2(values, root_d, scaled, n, r);
#endif
  subtract_portable(values, root_d, scaled, n, r);
}

}  // namespace colflow::detail
