/// @file king_counts_internal.hpp
/// The KING-robust pair counts (colflow/kernels/king_counts.hpp) from population counts of bit
/// planes, sample by sample, as PLINK 2 computes them.
///
/// A block of variants is first turned, for each sample, into three planes over the variants
/// (one bit a variant, 64 to a word; make_king_planes): `hom` (a homozygous call), `het` (a
/// heterozygous one) and `two` (no A1 allele: code 11). A missing call and the padding past the
/// block's last variant are 0 in every plane, so every count below runs over the variants
/// where both samples have a call. For samples a and b, a word adds
///   hethet = |het_a ∧ het_b|, het_hom = |het_a ∧ hom_b|, hom_het = |hom_a ∧ het_b|,
///   homhom = |hom_a ∧ hom_b|, ibs0 = |hom_a ∧ hom_b ∧ (two_a ⊕ two_b)|.
/// The counts are integers: every code path (portable, POPCNT, AVX2, chosen once per process
/// from the CPU and COLFLOW_SIMD) gives the same numbers whatever the tile, call or thread.
#pragma once

#include <cstddef>
#include <cstdint>

#include "colflow/kernels/king_counts.hpp"

namespace colflow {

/// 64-bit words of one plane of `variants` variants: ceil(variants / 64). A sample's planes
/// take three times as many: hom, het, two, in that order.
constexpr std::size_t king_plane_words(std::size_t variants) noexcept {
  return (variants + 63) / 64;
}

/// Writes the planes of the sample at store row `row` over `count` columns (each a pointer to
/// its packed codes, layout of codec/genotype_codec.hpp) to `planes` (3 · words words, words ≥
/// king_plane_words(count)); bits past the count-th variant are 0.
void make_king_planes(const std::uint8_t* const* columns, std::size_t count, std::size_t row,
                      std::uint64_t* planes, std::size_t words) noexcept;

/// A tile of pairs: adds the counts of sample a[i] with sample b[j] (pointers to their planes,
/// `words` per plane) to out[i * ld + j], a[i] taking the place of i in king_pair_counts.
void king_pair_tile(const std::uint64_t* const* a, std::size_t count_a,
                    const std::uint64_t* const* b, std::size_t count_b, std::size_t words,
                    king_pair_counts* out, std::size_t ld) noexcept;

/// The code path king_pair_tile takes on this CPU: "avx2", "popcnt" or "portable".
const char* king_pair_tile_path() noexcept;

namespace detail {
/// The portable loop alone, whatever the CPU: what the tests compare the vector paths with.
void king_pair_tile_portable(const std::uint64_t* const* a, std::size_t count_a,
                             const std::uint64_t* const* b, std::size_t count_b, std::size_t words,
                             king_pair_counts* out, std::size_t ld) noexcept;
}  // namespace detail

}  // namespace colflow
