// Lists of the bytes of packed genotype codes that a sparse sum adds, made once for a column
// whose product is taken again and again.
//
// dosage_dot and its kindred (colflow/kernels/genotype_kernels.hpp) add only the bytes holding
// a sample whose value is not 0, and find those bytes at every call: for a rare column that
// search costs several times the additions. An iterative solver (BayesR, the penalised
// regressions) takes each column's product with the residual at every visit, so it can list
// the bytes once and sum over the list. A sum over a list has the bits of the kernel that finds
// the bytes itself, on every vector path: each of the four accumulators adds its own bytes in
// increasing order, and a byte left out would have added +0 (docs/DESIGN.md §4.8).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace colflow::detail {

// The sums a list serves: the dosages of the first allele (dosage_dot) or of the second
// (second_dosage_dot), alone or with the sum over the missing calls (missing_sum); with it, a
// byte is listed when it is live to either sum.
struct live_sums {
  bool second_allele = false;
  bool with_missing = false;
};

// Appends to `out` the list of the live bytes of `codes` (n samples) for `sums`. Byte b adds to
// accumulator b mod 4 (the bytes after the last whole group of four to accumulator 0); the list
// holds the number G of groups, the byte of the samples after the last whole byte (0 when n is a
// multiple of 4), then G groups of four entries, entry k of a group the next byte of accumulator
// k in increasing order, or a byte that adds 0 where the accumulator has no more. An entry is
// the byte's offset and, in bits 16-23, the byte itself, so a sum over the list reads the list
// and `w`, not the codes. Returns false, appending nothing, where the list would be longer than
// the column's bytes (4 G > n / 4), which the kernels' own sums then stream.
bool append_live_list(std::span<const std::uint8_t> codes, std::size_t n, live_sums sums,
                      std::vector<std::uint32_t>& out);

// {the allele's dosage sum, the missing calls' sum (0 without with_missing)} with w over the
// column of n samples that `list` was made of by append_live_list with these sums: the bits of
// dosage_dot_and_missing_sum and the others.
std::array<double, 2> listed_sums(const std::uint32_t* list, std::size_t n, live_sums sums,
                                  const double* w) noexcept;

}  // namespace colflow::detail
