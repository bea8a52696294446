// SBayesR's residual update from one LD column (analysis/sbayesr.hpp):
//
//   r[i] −= (double(values[i]) · root_d[i]) · scaled,   i < n,
//
// values the column's correlations (float32), root_d the variants' √D_i, scaled = √D_j Δβ_j.
// Each element is two products and a difference, rounded one by one in that order on every
// path (AVX-512, AVX2, portable; nothing fused): the same bits whatever the CPU.
#pragma once

#include <cstddef>

namespace colflow::detail {

void subtract_scaled_column(const float* values, const double* root_d, double scaled, std::size_t n,
                            double* r) noexcept;

}  // namespace colflow::detail
