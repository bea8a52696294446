// The logistic pass on AVX2 with FMA (logistic_pass_internal.hpp): the body of
// logistic_sums_body.inl on the AVX2 lanes of logistic_lanes_avx2.inl.
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
namespace avx2_path {
#define COLFLOW_PATH __attribute__((target("avx2,fma")))
#include "kernels/logistic_lanes_avx2.inl"
constexpr bool widths_specialised = true;
#include "kernels/logistic_sums_body.inl"
#undef COLFLOW_PATH
}  // namespace avx2_path

}  // namespace

void avx2_sums(const pass_inputs& in, double* information, double* gradient,
               const logistic_rows* rows) {
  avx2_path::sums(in, information, gradient, rows);
}

void avx2_firth(const pass_inputs& in, double* curvature, double* gradient) {
  avx2_path::firth(in, curvature, gradient);
}

}  // namespace colflow::detail::logistic_pass
#endif
