// Run-time choice of x86-64 vector code. The library is built for plain x86-64; kernels that
// gain from AVX2, FMA, AVX-512 or POPCNT carry a target attribute and are called only when the
// CPU has the feature and the environment variable COLFLOW_SIMD (portable, avx2 or avx512; see
// colflow/simd/vector_path.hpp) allows it. Builds with -DCOLFLOW_X86_DISPATCH=0 keep just
// the portable code.
#pragma once

#include "colflow/simd/vector_path.hpp"

#ifndef COLFLOW_X86_DISPATCH
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define COLFLOW_X86_DISPATCH 1
#else
#define COLFLOW_X86_DISPATCH 0
#endif
#endif

#if COLFLOW_X86_DISPATCH
#include <immintrin.h>

namespace colflow::detail {

// The paths COLFLOW_SIMD allows: "portable" none of the features below, "avx2" all but
// AVX-512 (POPCNT, AVX2 and FMA: what every AVX2 CPU has).
inline bool simd_allows_avx2() noexcept {
  static const bool allows = vector_path_cap() != vector_path::portable;
  return allows;
}

inline bool simd_allows_avx512() noexcept {
  static const bool allows = vector_path_cap() == vector_path::avx512;
  return allows;
}

inline bool cpu_has_avx2() noexcept {
  static const bool has = [] {
    __builtin_cpu_init();
    return simd_allows_avx2() && __builtin_cpu_supports("avx2") != 0;
  }();
  return has;
}

inline bool cpu_has_avx2_fma() noexcept {
  static const bool has = [] {
    __builtin_cpu_init();
    return cpu_has_avx2() && __builtin_cpu_supports("fma") != 0;
  }();
  return has;
}

// The foundation of AVX-512 (which brings AVX2 and FMA with it); the check includes the
// operating system's saving of the 512-bit registers.
inline bool cpu_has_avx512f() noexcept {
  static const bool has = [] {
    __builtin_cpu_init();
    return simd_allows_avx512() && __builtin_cpu_supports("avx512f") != 0 &&
           __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0;
  }();
  return has;
}

// AVX-512 with its population count of 64-bit lanes (Ice Lake, Zen 4 and later).
inline bool cpu_has_avx512_popcnt() noexcept {
  static const bool has = [] {
    __builtin_cpu_init();
    return cpu_has_avx512f() && __builtin_cpu_supports("avx512vpopcntdq") != 0;
  }();
  return has;
}

// AVX-512 with byte and word lanes (BW) and their compress instructions (VBMI2): Ice Lake,
// Zen 4 and later.
inline bool cpu_has_avx512_vbmi2() noexcept {
  static const bool has = [] {
    __builtin_cpu_init();
    return cpu_has_avx512f() && __builtin_cpu_supports("avx512bw") != 0 &&
           __builtin_cpu_supports("avx512vbmi2") != 0;
  }();
  return has;
}

inline bool cpu_has_popcnt() noexcept {
  static const bool has = [] {
    __builtin_cpu_init();
    return simd_allows_avx2() && __builtin_cpu_supports("popcnt") != 0;
  }();
  return has;
}

// (lane 0 + lane 1) + (lane 2 + lane 3): the order the portable kernels add their four lanes.
__attribute__((target("avx2"))) inline double lanes_sum(__m256d v) noexcept {
  const __m128d lo = _mm256_castpd256_pd128(v), hi = _mm256_extractf128_pd(v, 1);
  const double a = _mm_cvtsd_f64(_mm_add_sd(lo, _mm_unpackhi_pd(lo, lo)));
  const double b = _mm_cvtsd_f64(_mm_add_sd(hi, _mm_unpackhi_pd(hi, hi)));
  return a + b;
}

}  // namespace colflow::detail
#endif
