// The sums of four rows of the diploid Hardy-Weinberg test at once, one row in each lane of an
// AVX2 vector: the walk that takes most of `colflow hardy`'s test (hardy_weinberg.cpp).
//
// A row's sum Σ_h w(h) / w(mode) walks outward from the mode, a ratio a step, until the terms
// stop mattering: about √n steps, each waiting on a division and on the step before. Four rows
// side by side do four steps for the price of one. Each lane makes exactly the operations of
// the one-row walk (total_of_row), in its order and without fused multiply-adds, so the sums
// have its bits: the p-values never depend on how many rows were summed together.
#pragma once

#include <cstddef>

namespace colflow::detail {

// Where a row's walk starts: its mode h, the two homozygote counts there, and the row's first
// and last heterozygote counts (all whole numbers, exact in doubles).
struct row_walk_start {
  double mode, hom1, hom2, first, last;
};

// Below this relative to the sum so far, a term ends its side of the walk (the rest decreases
// faster than geometrically): what is left adds less than 2^-60 to P, relatively.
inline constexpr double negligible_term = 0x1p-64;

// The sums Σ_h w(h) / w(mode) of `count` rows (at most 4), as the one-row walk gives them.
// False, with nothing written, when the CPU has no AVX2 (or the build no x86 dispatch).
bool row_sums_in_lanes(const row_walk_start* rows, std::size_t count, double* sums) noexcept;

}  // namespace colflow::detail
