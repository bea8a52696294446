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
// multiple of 4) and the lanes of its samples that `mask` keeps (make_sample_mask's layout; all
// when empty), then G groups of four entries, entry k of a group the next byte of accumulator k
// in increasing order, or a byte that adds 0 where the accumulator has no more. An entry holds
// the byte offsets a sum reads at, of the byte's four values of w and of its row of the sums'
// table (live_list:: below), so sums over the list read the list and w, not the codes, with two
// loads and no arithmetic on addresses. Returns false, appending nothing, where the list's
// additions would outnumber the column's bytes (4 G times the number of sums > n / 4), which
// the kernels then stream, or the column has more than live_list::most_bytes bytes.
bool append_live_list(std::span<const std::uint8_t> codes, std::size_t n,
                      std::span<const std::uint8_t> mask, live_sums sums,
                      std::vector<std::uint32_t>& out);

// listed_sums of two lists against the same w, each with the bits it has alone: the two
// columns' sums run side by side, twice the independent chains of one. {a's two sums, b's two}.
std::array<double, 4> listed_sums_pair(const std::uint32_t* a, live_sums a_sums,
                                       const std::uint32_t* b, live_sums b_sums, std::size_t n,
                                       const double* w) noexcept;

// The parts of a list.
namespace live_list {
inline constexpr std::size_t header = 2;         // G, then the last part byte and its lanes
inline constexpr std::size_t most_bytes = 2048;  // 32 bytes of w a byte: 16-bit offsets
constexpr std::size_t groups(const std::uint32_t* list) noexcept { return list[0]; }
constexpr const std::uint32_t* entries(const std::uint32_t* list) noexcept { return list + header; }
// Byte offsets from w and from the first row of the sums' table (32 bytes a row for one sum, 64
// for two), and what they stand for.
constexpr std::size_t w_at(std::uint32_t entry) noexcept { return entry & 0xffffu; }
constexpr std::size_t row_at(std::uint32_t entry) noexcept { return entry >> 16; }
constexpr unsigned row_shift(live_sums sums) noexcept { return sums.with_missing ? 6 : 5; }
constexpr std::size_t row_bytes(live_sums sums) noexcept {
  return std::size_t{1} << row_shift(sums);
}
constexpr std::size_t offset(std::uint32_t entry) noexcept { return w_at(entry) >> 5; }
constexpr unsigned byte(std::uint32_t entry, live_sums sums) noexcept {
  return static_cast<unsigned>(row_at(entry) >> row_shift(sums));
}
constexpr unsigned last_byte(const std::uint32_t* list) noexcept { return list[1] & 0xffu; }
// Bit l set: sample l of the last part byte is kept.
constexpr unsigned last_lanes(const std::uint32_t* list) noexcept { return list[1] >> 8 & 0xfu; }
// Bit l set: sample l of a byte of a make_sample_mask mask is kept (its pair 0b01).
constexpr unsigned kept_lanes(std::uint8_t mask) noexcept {
  return (mask & 1u) | (mask >> 1 & 2u) | (mask >> 2 & 4u) | (mask >> 3 & 8u);
}
}  // namespace live_list

// {the allele's dosage sum, the missing calls' sum (0 without with_missing)} with w over the
// column of n samples that `list` was made of by append_live_list with these sums: the bits of
// dosage_dot_and_missing_sum and the others.
std::array<double, 2> listed_sums(const std::uint32_t* list, std::size_t n, live_sums sums,
                                  const double* w) noexcept;

}  // namespace colflow::detail
