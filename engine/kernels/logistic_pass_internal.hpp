// What the vector paths of the logistic pass share (logistic_sums_internal.hpp): the inputs
// of a pass and each path's entries. Each path instantiates the whole pass for eight design
// widths, so each is a translation unit of its own (logistic_sums.cpp the portable path and the
// dispatch, logistic_sums_avx2.cpp, logistic_sums_avx512.cpp), compiled side by side.
#pragma once

#include <cstddef>

#include "kernels/logistic_sums_internal.hpp"

#define COLFLOW_INLINE __attribute__((always_inline)) inline

namespace colflow::detail::logistic_pass {

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

// Each path's passes: the sums of logistic_sums and of firth_sums.
void portable_sums(const pass_inputs& in, double* information, double* gradient,
                   const logistic_rows* rows);
void portable_firth(const pass_inputs& in, double* curvature, double* gradient);
void avx2_sums(const pass_inputs& in, double* information, double* gradient,
               const logistic_rows* rows);
void avx2_firth(const pass_inputs& in, double* curvature, double* gradient);
void avx512_sums(const pass_inputs& in, double* information, double* gradient,
                 const logistic_rows* rows);
void avx512_firth(const pass_inputs& in, double* curvature, double* gradient);

}  // namespace colflow::detail::logistic_pass
