// The logistic pass on AVX-512 (logistic_pass_internal.hpp): the body of
// logistic_sums_body.inl on generic eight-lane vectors, one 512-bit register each.
#include "simd/cpu_dispatch_internal.hpp"

#if COLFLOW_X86_DISPATCH
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "kernels/logistic_pass_internal.hpp"

namespace colflow::detail::logistic_pass {
namespace {
#include "kernels/logistic_lanes_generic.inl"

namespace avx512_path {
#define COLFLOW_PATH __attribute__((target("avx512f,avx2,fma")))
COLFLOW_PATH COLFLOW_INLINE lanes fused(const lanes& a, const lanes& b, const lanes& c) {
  __m512d x, y, z;
  std::memcpy(&x, &a.v, sizeof x);
  std::memcpy(&y, &b.v, sizeof y);
  std::memcpy(&z, &c.v, sizeof z);
  z = _mm512_fmadd_pd(x, y, z);
  lanes r;
  std::memcpy(&r.v, &z, sizeof r.v);
  return r;
}
constexpr bool widths_specialised = true;
#include "kernels/logistic_sums_body.inl"
#undef COLFLOW_PATH
}  // namespace avx512_path

}  // namespace

void avx512_sums(const pass_inputs& in, double* information, double* gradient,
                 const logistic_rows* rows) {
  avx512_path::sums(in, information, gradient, rows);
}

void avx512_firth(const pass_inputs& in, double* curvature, double* gradient) {
  avx512_path::firth(in, curvature, gradient);
}

}  // namespace colflow::detail::logistic_pass
#endif
