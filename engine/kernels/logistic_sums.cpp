// One pass of a logistic regression's Newton-Raphson over its samples
// (logistic_sums_internal.hpp).
//
// The arithmetic is written once (logistic_sums_body.inl), on eight-lane vectors, and compiled
// once per path for its target: this file holds the portable path (four SSE2 registers a
// vector, a fused multiply-add call per lane) and the choice of a path; AVX2 and AVX-512 have
// their own files (logistic_pass_internal.hpp). Every operation is one IEEE operation per lane
// (the fused multiply-adds are explicit, each path's own, and no product is followed by a sum
// the compiler could contract), so the paths differ in speed only.
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "kernels/logistic_pass_internal.hpp"
#include "simd/cpu_dispatch_internal.hpp"

namespace colflow::detail {
namespace logistic_pass {
namespace {
#include "kernels/logistic_lanes_generic.inl"

namespace portable_path {
#define COLFLOW_PATH
COLFLOW_INLINE lanes fused(const lanes& a, const lanes& b, const lanes& c) {
  lanes r;
  for (int i = 0; i < 8; ++i) r.v[i] = __builtin_fma(a.v[i], b.v[i], c.v[i]);
  return r;
}
constexpr bool widths_specialised = false;
#include "kernels/logistic_sums_body.inl"
#undef COLFLOW_PATH
}  // namespace portable_path

}  // namespace

void portable_sums(const pass_inputs& in, double* information, double* gradient,
                   const logistic_rows* rows) {
  portable_path::sums(in, information, gradient, rows);
}

void portable_firth(const pass_inputs& in, double* curvature, double* gradient) {
  portable_path::firth(in, curvature, gradient);
}

}  // namespace logistic_pass

void logistic_sums(const logistic_design& design, const double* beta, double* information,
                   double* gradient, const logistic_rows* rows) {
  using namespace logistic_pass;
  const pass_inputs in{design, beta};
#if COLFLOW_X86_DISPATCH
  if (cpu_has_avx512f()) return avx512_sums(in, information, gradient, rows);
  if (cpu_has_avx2_fma()) return avx2_sums(in, information, gradient, rows);
#endif
  portable_sums(in, information, gradient, rows);
}

void firth_sums(const logistic_design& design, const double* l_inverse, const double* p,
                const double* w, double* curvature, double* gradient) {
  using namespace logistic_pass;
  const pass_inputs in{design, nullptr, l_inverse, p, w};
#if COLFLOW_X86_DISPATCH
  if (cpu_has_avx512f()) return avx512_firth(in, curvature, gradient);
  if (cpu_has_avx2_fma()) return avx2_firth(in, curvature, gradient);
#endif
  portable_firth(in, curvature, gradient);
}

}  // namespace colflow::detail
