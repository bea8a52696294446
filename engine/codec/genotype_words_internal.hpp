// What the genotype codec and the kernels on packed codes share: the 64-bit word of 32
// samples and the popcount that counts its codes.
#pragma once

#include <cstdint>

#include "colflow/codec/genotype_codec.hpp"

namespace colflow::detail {

constexpr std::uint64_t low_bits = 0x5555555555555555ULL;

// Adds the codes of a 64-bit word (32 samples) whose unused pairs are masked out by `valid`.
// Inlined into each counting loop below, so that it compiles to the POPCNT instruction where
// the loop is built for it, and to the portable bit-twiddling popcount elsewhere.
#define COLFLOW_COUNT_WORD(w, valid, c)                                          \
  do {                                                                           \
    const std::uint64_t lo_ = (w) & (valid), hi_ = ((w) >> 1) & (valid);         \
    (c).hom_a2 += static_cast<std::uint64_t>(__builtin_popcountll(lo_ & hi_));   \
    (c).missing += static_cast<std::uint64_t>(__builtin_popcountll(lo_ & ~hi_)); \
    (c).het += static_cast<std::uint64_t>(__builtin_popcountll(hi_ & ~lo_));     \
  } while (false)

// Adds the classes of codes counted by their bits, as the vector kernels count them: lo the
// low bits set, hi the high bits, both the two (11, hom A2); 01 is missing, 10 het.
inline void add_code_classes(genotype_counts& c, std::uint64_t lo, std::uint64_t hi,
                             std::uint64_t both) noexcept {
  c.hom_a2 += both;
  c.missing += lo - both;
  c.het += hi - both;
}

}  // namespace colflow::detail
