// One pass of a logistic regression's Newton-Raphson over its samples: the fitted
// probabilities at beta, the Fisher information X'WX and the gradient X'(y − p), each sample
// read once (logistic_regression.cpp runs the fit on it).
//
// Eight samples travel together; every sum is accumulated per lane (sample i into lane
// i mod 8) by fused multiply-adds in sample order, and the lanes are added
// ((0 + 1) + (2 + 3)) + ((4 + 5) + (6 + 7)). The exponential is the kernel's own: a reduction
// to [−½ ln 2, ½ ln 2] and a polynomial of fused multiply-adds, so every code path (AVX-512,
// AVX2 with FMA, portable on std::fma) gives the same bits; its error is a few units in the
// last place (tests/logistic_sums_test.cpp holds p to 1e-15 of its value).
#pragma once

#include <cstddef>
#include <span>

namespace colflow::detail {

// A design by columns: k columns of `rows` values, responses 0 or 1, and optionally how many
// identical samples each row stands for (null: one) and a fixed term of each row's linear
// predictor (null: none).
struct logistic_design {
  std::span<const double* const> columns;
  std::size_t rows = 0;
  const double* y = nullptr;
  const double* count = nullptr;
  const double* offset = nullptr;
};

// What a pass keeps when asked: per row (`rows` long each) p and the weight count · p(1 − p);
// and the log-likelihood Σ count (y η − max(η, 0) − log(1 + e^−|η|)), η = offset + x'β.
struct logistic_rows {
  double* p;
  double* w;
  double* log_likelihood;
};

// At beta (k values): information (k x k, column-major, both triangles) = Σ w x x', gradient
// (k) = Σ count (y − p) x; and, when `rows` is not null, what it asks for. |η| beyond 708 is
// taken as 708: e^−708 is below every sum's rounding.
void logistic_sums(const logistic_design& design, const double* beta, double* information,
                   double* gradient, const logistic_rows* rows);

// The sums of a step of Firth's fit at the beta where a logistic pass gave each row's p and w
// and the information I = LL' (l_inverse: L⁻¹, k x k column-major, its upper triangle unread):
// with each row's leverage h = p(1 − p) |L⁻¹x|², curvature = Σ w (1 + h) x x' and gradient =
// Σ count ((y − p) + h (½ − p)) x; the same lanes and order as logistic_sums.
void firth_sums(const logistic_design& design, const double* l_inverse, const double* p,
                const double* w, double* curvature, double* gradient);

}  // namespace colflow::detail
