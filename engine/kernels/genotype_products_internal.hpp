/// @file genotype_products_internal.hpp
/// Exact products of packed genotype columns, column × column: for every pair of columns the
/// integer sums over the samples called in both that a correlation (LD), a covariance or a
/// block of XᵀX needs, computed from population counts of bit planes as PLINK 1.9 does, never
/// from decoded values.
///
/// A column is first turned into three bit planes over the samples (one bit a sample, 64 to
/// a word; make_genotype_planes): `called` (a call, and kept by the sample mask), `one`
/// (dosage ≥ 1) and `two` (dosage = 2), the dosage being the count of A1 (docs/DESIGN.md §2).
/// As x = one + two and x² = one + 3·two, every sum of a pair (a, b) is a sum of population
/// counts of two planes ANDed, nine a word: n = |Ca∧Cb|, Σxa = |Oa∧Cb| + |Ta∧Cb|, Σxa² =
/// |Oa∧Cb| + 3|Ta∧Cb| (and the same for b over Ca), Σxa·xb = |Oa∧Ob| + |Oa∧Tb| + |Ta∧Ob| +
/// |Ta∧Tb|. The sums are integers, so every code path (portable, POPCNT, AVX2, AVX-512 with
/// VPOPCNTDQ, chosen once per process from the CPU) gives the same numbers, whatever the tile,
/// the call or the thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace colflow {

/// 64-bit words of one plane of `n` samples: ceil(n / 64). A column's planes take three times
/// as many: called, one, two, in that order.
constexpr std::size_t genotype_plane_words(std::size_t n) noexcept { return (n + 63) / 64; }

/// Writes the three planes of a column of `n` samples (codes: ceil(n/4) bytes, layout of
/// codec/genotype_codec.hpp) to `planes` (3 · genotype_plane_words(n) words): samples not kept
/// by `mask` (make_sample_mask, genotype_kernels.hpp; empty = every sample), missing calls and
/// the padding past the n-th sample are 0 in every plane.
void make_genotype_planes(std::span<const std::uint8_t> codes, std::size_t n,
                          std::span<const std::uint8_t> mask, std::uint64_t* planes) noexcept;

/// The sums of a pair of columns a and b over the samples called in both.
struct genotype_pair_sums {
  std::uint64_t n = 0;       ///< samples called in both
  std::uint64_t sum_a = 0;   ///< Σ xa
  std::uint64_t sum_b = 0;   ///< Σ xb
  std::uint64_t sum_aa = 0;  ///< Σ xa²
  std::uint64_t sum_bb = 0;  ///< Σ xb²
  std::uint64_t sum_ab = 0;  ///< Σ xa·xb
};

/// A tile of pairs: out[i * count_b + j] are the sums of column a[i] with column b[j], each a
/// pointer to a column's planes (make_genotype_planes, `words` = genotype_plane_words(n)).
/// Exact integers on every code path.
void genotype_pair_products(const std::uint64_t* const* a, std::size_t count_a,
                            const std::uint64_t* const* b, std::size_t count_b, std::size_t words,
                            genotype_pair_sums* out) noexcept;

/// Three sums of a pair of columns a and b: what a test that bounds the pair's other sums by
/// its columns' own counts needs, from five of the nine counts a word.
struct genotype_pair_partials {
  std::uint64_t sum_ab = 0;  ///< Σ xa·xb over the samples called in both
  std::uint64_t one_a = 0;   ///< |Oa∧Cb|: samples with xa ≥ 1 among those b calls
  std::uint64_t one_b = 0;   ///< |Ob∧Ca|
};

/// The partial sums of column a with each of b[0..count_b) into out (planes as above). Exact
/// integers on every code path, equal to the counts genotype_pair_products adds up.
void genotype_pair_partial_sums(const std::uint64_t* a, const std::uint64_t* const* b,
                                std::size_t count_b, std::size_t words,
                                genotype_pair_partials* out) noexcept;

/// Σxa·xb alone into out[j].sum_ab (one_a, one_b 0): three counts a word, the first look at a
/// pair, which most pairs need no more than.
void genotype_pair_dots(const std::uint64_t* a, const std::uint64_t* const* b, std::size_t count_b,
                        std::size_t words, genotype_pair_partials* out) noexcept;

/// The 3 × 3 table of a pair's calls: count[i][j] the samples (called in both, kept by the
/// mask) with dosage i in column a and dosage j in column b, the dosage being the count of A1.
/// What a haplotype-frequency estimate needs beyond the sums (PLINK 1.9's two-locus tables).
struct genotype_pair_table {
  std::uint64_t count[3][3] = {};
};

/// The table of columns a and b (planes of make_genotype_planes, `words` =
/// genotype_plane_words(n)): exact integers, from nine population counts a word (in vectors
/// with AVX2 or AVX-512).
genotype_pair_table genotype_pair_counts(const std::uint64_t* a, const std::uint64_t* b,
                                         std::size_t words) noexcept;

/// The calls of a column's planes (make_genotype_planes, `words` = genotype_plane_words(n)):
/// the set bits of `called`, `one` and `two`, that is the called samples, Σ[x ≥ 1] and Σ[x = 2].
std::array<std::uint64_t, 3> genotype_plane_counts(const std::uint64_t* planes,
                                                   std::size_t words) noexcept;

/// The code path genotype_pair_products takes on this CPU: "avx512", "avx2", "popcnt" or
/// "portable" (for benchmarks and logs).
const char* genotype_pair_products_path() noexcept;

namespace detail {
/// The portable loop alone, whatever the CPU: what the tests compare the vector paths with.
void genotype_pair_products_portable(const std::uint64_t* const* a, std::size_t count_a,
                                     const std::uint64_t* const* b, std::size_t count_b,
                                     std::size_t words, genotype_pair_sums* out) noexcept;
genotype_pair_table genotype_pair_counts_portable(const std::uint64_t* a, const std::uint64_t* b,
                                                  std::size_t words) noexcept;
void genotype_pair_partial_sums_portable(const std::uint64_t* a, const std::uint64_t* const* b,
                                         std::size_t count_b, std::size_t words,
                                         genotype_pair_partials* out) noexcept;
void genotype_pair_dots_portable(const std::uint64_t* a, const std::uint64_t* const* b,
                                 std::size_t count_b, std::size_t words,
                                 genotype_pair_partials* out) noexcept;
}  // namespace detail

}  // namespace colflow
