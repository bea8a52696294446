/// @file bit_columns_internal.hpp
/// Bit matrices of 64 columns, one 64-bit word a row (bit s of a row its column s): the 64 × 64
/// transposition that turns rows of samples into rows of variants, and the column sums of
/// chosen rows, which count a set bit of every chosen row in each of the 64 columns at once.
/// KING's pair counts use them for the terms that involve a missing call
/// (kernels/king_counts_internal.hpp). Exact integers on every code path.
#pragma once

#include <cstddef>
#include <cstdint>

namespace colflow {

/// Transposes the 64 × 64 bit matrix `rows` in place: afterwards bit s of rows[v] is what
/// bit v of rows[s] was.
void transpose_bits_64(std::uint64_t* rows) noexcept;

/// For each of `matrices` (1 or 2) bit matrices, the i-th starting at rows + i · stride:
/// sums[64 i + s] = the number of the `count` rows chosen[k] with bit s set, for s in [0, 64);
/// written, not added. The matrices share one pass over the chosen rows. With AVX2, counts in
/// bytes, 255 rows at a time.
void chosen_row_column_sums(const std::uint64_t* rows, std::size_t matrices, std::size_t stride,
                            const std::uint32_t* chosen, std::size_t count,
                            std::uint32_t* sums) noexcept;

/// Writes the position of each set bit of bits[0, words), ascending, to `at`; returns their
/// number.
std::size_t set_bit_positions(const std::uint64_t* bits, std::size_t words,
                              std::uint32_t* at) noexcept;

namespace detail {
/// The portable loop alone, whatever the CPU: what the tests compare the vector path with.
void chosen_row_column_sums_portable(const std::uint64_t* rows, std::size_t matrices,
                                     std::size_t stride, const std::uint32_t* chosen,
                                     std::size_t count, std::uint32_t* sums) noexcept;
}  // namespace detail

}  // namespace colflow
