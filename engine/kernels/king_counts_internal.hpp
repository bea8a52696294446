/// @file king_counts_internal.hpp
/// The KING-robust pair counts (colflow/kernels/king_counts.hpp) of one block of variants, from
/// bit planes of the samples, in two counts a pair and three sparse terms.
///
/// A block of variants is first turned, for each sample, into four planes over the variants
/// (one bit a variant, 64 to a word; make_king_planes): `hom` (a homozygous call), `het` (a
/// heterozygous one), `two` (no A1 allele: code 11) and `miss` (a missing call). The padding
/// past the block's last variant is 0 in every plane. Of a pair's five counts, two are population
/// counts over both samples' planes (king_hethet_ibs0):
///   hethet = |het_a ∧ het_b|,   ibs0 = |hom_a ∧ hom_b ∧ (two_a ⊕ two_b)|;
/// the other three follow from each sample's heterozygous and missing calls in the block
/// (king_sample_calls) and three terms that involve a missing call (king_missing_terms),
///   het_hom = het_a − hethet − |het_a ∧ miss_b|,   hom_het = het_b − hethet − |miss_a ∧ het_b|,
///   called  = variants − missing_a − missing_b + |miss_a ∧ miss_b|,
///   homhom  = called − hethet − het_hom − hom_het,
/// which are counted for 64 samples at once from one sample's missing calls and the transposed
/// planes of the others (king_tile_rows, chosen_row_column_sums): with few missing calls, a
/// small part of the work.
/// All integers: every code path (portable, POPCNT, AVX2, AVX-512, chosen once per process from
/// the CPU and COLFLOW_SIMD) gives the same numbers whatever the tile, call or thread.
#pragma once

#include <cstddef>
#include <cstdint>

#include "colflow/kernels/king_counts.hpp"

namespace colflow {

/// 64-bit words of one plane of `variants` variants: ceil(variants / 64).
constexpr std::size_t king_plane_words(std::size_t variants) noexcept {
  return (variants + 63) / 64;
}

/// The planes of a sample, `words` words each, in this order from its first word.
enum king_plane : std::size_t { hom_plane, het_plane, two_plane, missing_plane, king_planes };

/// A sample's calls in one block.
struct king_sample_calls {
  std::uint32_t het = 0;      ///< heterozygous calls
  std::uint32_t missing = 0;  ///< missing calls
};

/// Writes the planes of the sample at store row `row` over `count` columns (each a pointer to
/// its packed codes, layout of codec/genotype_codec.hpp) to `planes` (king_planes · words
/// words, words ≥ king_plane_words(count)), bits past the count-th variant 0; returns its calls.
king_sample_calls make_king_planes(const std::uint8_t* const* columns, std::size_t count,
                                   std::size_t row, std::uint64_t* planes,
                                   std::size_t words) noexcept;

/// The transposed het and miss planes of a tile of up to 64 samples (planes[s], `samples` of
/// them): bit s of het_rows[v] is sample s's het bit of variant v, of missing_rows[v] its miss
/// bit; bits of absent samples are 0. Each output holds 64 · words rows.
void king_tile_rows(const std::uint64_t* const* planes, std::size_t samples, std::size_t words,
                    std::uint64_t* het_rows, std::uint64_t* missing_rows) noexcept;

/// For sample a (its planes, `words` words each) and each b[j], j < count_b: hethet[j] and
/// ibs0[j] over the block, written.
void king_hethet_ibs0(const std::uint64_t* a, const std::uint64_t* const* b, std::size_t count_b,
                      std::size_t words, std::uint32_t* hethet, std::uint32_t* ibs0) noexcept;

/// The terms of a pair (a, b) that involve a missing call.
struct king_missing_terms {
  std::uint32_t het_missing = 0;      ///< |het_a ∧ miss_b|
  std::uint32_t missing_het = 0;      ///< |miss_a ∧ het_b|
  std::uint32_t missing_missing = 0;  ///< |miss_a ∧ miss_b|
};

/// The pair's five counts over a block of `count` variants, from the formulas above.
constexpr king_pair_counts king_block_counts(std::uint32_t hethet, std::uint32_t ibs0,
                                             const king_sample_calls& a, const king_sample_calls& b,
                                             const king_missing_terms& m,
                                             std::uint32_t count) noexcept {
  king_pair_counts c;
  c.hethet = hethet;
  c.ibs0 = ibs0;
  c.het_hom = a.het - hethet - m.het_missing;
  c.hom_het = b.het - hethet - m.missing_het;
  const std::uint32_t called = count - a.missing - b.missing + m.missing_missing;
  c.homhom = called - hethet - c.het_hom - c.hom_het;
  return c;
}

/// The code path king_hethet_ibs0 takes on this CPU: "avx512" (with VPOPCNTDQ), "avx2",
/// "popcnt" or "portable".
const char* king_hethet_ibs0_path() noexcept;

namespace detail {
/// The portable loop alone, whatever the CPU: what the tests compare the vector paths with.
void king_hethet_ibs0_portable(const std::uint64_t* a, const std::uint64_t* const* b,
                               std::size_t count_b, std::size_t words, std::uint32_t* hethet,
                               std::uint32_t* ibs0) noexcept;
}  // namespace detail

}  // namespace colflow
