// SBayesR's residual update from one LD column (analysis/sbayesr.hpp), on a residual kept over
// √D (u_i = r_i / √D_i):
//
//   u[i] −= double(values[i]) · scaled,   i < n,
//
// values the column's correlations, scaled = √D_j Δβ_j, or for 16-bit values q (r = q · 2⁻¹⁴)
// scaled · 2⁻¹⁴, which gives the same bits: q · 2⁻¹⁴ is exact, and so is the power of two moved
// into `scaled`. Each element is a product and a difference, rounded one by one in that order on
// every path (AVX-512, AVX2, portable; nothing fused): the same bits whatever the CPU.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace colflow::detail {

void subtract_scaled_column(const float* values, double scaled, std::size_t n, double* u) noexcept;

void subtract_scaled_column(const std::int16_t* values, double scaled, std::size_t n,
                            double* u) noexcept;

// Four columns in turn, u[i] −= values[0][i] · scaled[0], then [1], [2], [3]: the bits of four
// calls of the one-column update, with u read and written once instead of four times.
void subtract_scaled_columns(const std::array<const float*, 4>& values,
                             const std::array<double, 4>& scaled, std::size_t n,
                             double* u) noexcept;
void subtract_scaled_columns(const std::array<const std::int16_t*, 4>& values,
                             const std::array<double, 4>& scaled, std::size_t n,
                             double* u) noexcept;

}  // namespace colflow::detail
