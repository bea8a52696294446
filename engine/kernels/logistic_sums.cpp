// One pass of a logistic regression's Newton-Raphson over its samples
// (logistic_sums_internal.hpp).
//
// The arithmetic is written once (logistic_sums_body.inl), on eight-lane vectors of GCC's
// vector extension, and compiled once per path for its target: AVX-512 keeps a vector in one
// register, the portable path in four SSE2 registers with a fused multiply-add call per lane;
// the AVX2 path replaces the generic vectors by its own pair of 256-bit registers
// (logistic_lanes_avx2.inl), which GCC would otherwise lower lane by lane through memory. Every
// operation is one IEEE operation per lane (the fused multiply-adds are explicit, each path's own
// below, and no product is followed by a sum the compiler could contract), so the paths differ in
// speed only.
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "kernels/logistic_sums_internal.hpp"
#include "simd/cpu_dispatch_internal.hpp"

namespace colflow::detail {
namespace {

#define COLFLOW_INLINE __attribute__((always_inline)) inline

typedef double lane_values __attribute__((vector_size(64)));
typedef long long lane_words __attribute__((vector_size(64)));

// Eight doubles, and eight 64-bit words (bit patterns and comparison masks). In structs: a
// 64-byte struct is passed in memory on every x86-64 target, so no helper below has an
// eight-double vector in its signature, which clang refuses on targets without AVX-512 even
// where the helper is inlined (each one is, into the function of its path).
struct lanes {
  lane_values v;
};
struct lane_bits {
  lane_words v;
};

COLFLOW_INLINE lanes operator+(const lanes& a, const lanes& b) { return {a.v + b.v}; }
COLFLOW_INLINE lanes operator-(const lanes& a, const lanes& b) { return {a.v - b.v}; }
COLFLOW_INLINE lanes operator*(const lanes& a, const lanes& b) { return {a.v * b.v}; }
COLFLOW_INLINE lanes operator/(const lanes& a, const lanes& b) { return {a.v / b.v}; }
COLFLOW_INLINE lanes operator-(const lanes& a) { return {-a.v}; }
COLFLOW_INLINE lane_bits operator<(const lanes& a, const lanes& b) {
  return {reinterpret_cast<lane_words>(a.v < b.v)};
}
COLFLOW_INLINE lane_bits operator>(const lanes& a, const lanes& b) { return b < a; }
COLFLOW_INLINE lane_bits operator>=(const lanes& a, const lanes& b) {
  return {reinterpret_cast<lane_words>(a.v >= b.v)};
}
// Lane by lane, a where the mask is set, b where it is clear.
COLFLOW_INLINE lanes select(const lane_bits& mask, const lanes& a, const lanes& b) {
  return {mask.v ? a.v : b.v};
}
COLFLOW_INLINE lane_bits operator+(const lane_bits& a, const lane_bits& b) { return {a.v + b.v}; }
COLFLOW_INLINE lane_bits operator-(const lane_bits& a, const lane_bits& b) { return {a.v - b.v}; }
COLFLOW_INLINE lane_bits operator|(const lane_bits& a, const lane_bits& b) { return {a.v | b.v}; }
COLFLOW_INLINE lane_bits operator<<(const lane_bits& a, int bits) { return {a.v << bits}; }
COLFLOW_INLINE lane_bits bits_of(const lanes& a) {
  lane_bits b;
  std::memcpy(&b.v, &a.v, sizeof b.v);
  return b;
}
COLFLOW_INLINE lanes lanes_of(const lane_bits& b) {
  lanes a;
  std::memcpy(&a.v, &b.v, sizeof a.v);
  return a;
}

// v in every lane: lane 0's value shuffled into all (GCC builds an initialiser list of a
// value loaded from memory lane by lane).
template <class V, class T>
COLFLOW_INLINE V splat(T v) {
  using vector = decltype(V::v);
#if defined(__clang__)
  return {__builtin_shufflevector(vector{v}, vector{v}, 0, 0, 0, 0, 0, 0, 0, 0)};
#else
  return {__builtin_shuffle(vector{v}, lane_words{})};
#endif
}

COLFLOW_INLINE lanes load(const double* p) {
  lanes v;
  std::memcpy(&v.v, p, sizeof v.v);
  return v;
}

COLFLOW_INLINE void store(double* p, const lanes& v) { std::memcpy(p, &v.v, sizeof v.v); }

COLFLOW_INLINE double lanes_total(const lanes& l) {
  const lane_values& v = l.v;
  return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
}

constexpr double inverse_factorial(int d) {
  double f = 1;
  for (int i = 2; i <= d; ++i) f *= i;  // exact: d! < 2^53 for d ≤ 18
  return 1 / f;
}

// Where eight samples' values are read and written: column j's at columns[j] + at, and so on.
struct samples_at {
  const double* const* columns;
  const double* y;
  const double* count;   // or null
  const double* offset;  // or null
  const double* p;       // a Firth pass's: the logistic pass's p and w; null in a logistic pass
  const double* w;
  std::size_t at;
};

// What one pass reads: the design, and beta (a logistic pass) or L⁻¹ and each row's p and w
// (a Firth pass).
struct pass_inputs {
  const logistic_design& design;
  const double* beta = nullptr;
  const double* l_inverse = nullptr;
  const double* p = nullptr;
  const double* w = nullptr;
};

// Each path: its fused multiply-add (a · b + c rounded once, lane by lane), then the body.
namespace portable_path {
#define COLFLOW_PATH
COLFLOW_INLINE lanes fused(const lanes& a, const lanes& b, const lanes& c) {
  lanes r;
  for (int i = 0; i < 8; ++i) r.v[i] = __builtin_fma(a.v[i], b.v[i], c.v[i]);
  return r;
}
#include "kernels/logistic_sums_body.inl"
#undef COLFLOW_PATH
}  // namespace portable_path

#if COLFLOW_X86_DISPATCH
namespace avx2_path {
#define COLFLOW_PATH __attribute__((target("avx2,fma")))
#include "kernels/logistic_lanes_avx2.inl"
#include "kernels/logistic_sums_body.inl"
#undef COLFLOW_PATH
}  // namespace avx2_path

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
#include "kernels/logistic_sums_body.inl"
#undef COLFLOW_PATH
}  // namespace avx512_path
#endif

}  // namespace

void logistic_sums(const logistic_design& design, const double* beta, double* information,
                   double* gradient, const logistic_rows* rows) {
  const pass_inputs in{design, beta};
#if COLFLOW_X86_DISPATCH
  if (cpu_has_avx512f()) return avx512_path::sums(in, information, gradient, rows);
  if (cpu_has_avx2_fma()) return avx2_path::sums(in, information, gradient, rows);
#endif
  portable_path::sums(in, information, gradient, rows);
}

void firth_sums(const logistic_design& design, const double* l_inverse, const double* p,
                const double* w, double* curvature, double* gradient) {
  const pass_inputs in{design, nullptr, l_inverse, p, w};
#if COLFLOW_X86_DISPATCH
  if (cpu_has_avx512f()) return avx512_path::firth(in, curvature, gradient);
  if (cpu_has_avx2_fma()) return avx2_path::firth(in, curvature, gradient);
#endif
  portable_path::firth(in, curvature, gradient);
}

}  // namespace colflow::detail
