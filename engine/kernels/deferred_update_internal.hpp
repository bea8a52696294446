// The residual update r −= δz of a standardised genotype column with the part its mean adds to
// every called sample left out, so that it costs the samples of the column's rarer allele.
//
// With x the count of the column's counted (rarer) allele, m_x its mean over the used samples
// and σ = ±1 whether z grows with x, z = σ(x − m_x)/s on a called sample, so −δz = h·x + g with
// h = −δσ/s and g = δσ·m_x/s. A solver that keeps the residual as r + c (c one number for
// every used sample; standardized_columns::defer_mean_updates) adds g to c, and to r only
// h·x on the samples with a copy of the allele and −g on those whose call is missing (which
// z leaves as they are). Every other entry of r is left as it is, to the bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/live_lists_internal.hpp"

namespace colflow::detail {

// For every sample i of `codes` (n samples) kept by `mask` (make_sample_mask's layout; all when
// empty) that has a copy of the allele `sums` counts or a missing call:
// r[i] = (r[i] + h·x_i) − g·missing_i, x_i its count (0 for a missing call). The same bits on
// every path, and the same as the list's update below.
void deferred_update(std::span<const std::uint8_t> codes, std::size_t n,
                     std::span<const std::uint8_t> mask, live_sums sums, double h, double g,
                     double* r) noexcept;

// The same from `list` (append_live_list of these codes, n, mask and sums): only the listed
// bytes' samples are read and written.
void deferred_update(const std::uint32_t* list, std::size_t n, std::span<const std::uint8_t> mask,
                     live_sums sums, double h, double g, double* r) noexcept;

}  // namespace colflow::detail
