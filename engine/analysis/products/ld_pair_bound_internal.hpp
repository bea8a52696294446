// plink2's LD test of a pair, cov² > threshold · var_a · var_b over the samples called in
// both, told where it can be from three of the pair's sums and each column's own counts.
//
// Σxa·xb and the calls x ≥ 1 of each column among those the other calls are counted; the
// other sums (n, Σ[x = 2] of each column there) differ from the columns' own counts only by
// the calls the other column's missing calls take. Ranges of those give ranges of cov and of
// the variances, and so an answer when the whole range of cov² lies on one side of
// threshold · var_a · var_b with a margin far wider than the rounding of plink2's doubles;
// otherwise the pair needs its exact sums. Most pairs are told: unlinked ones have a cov²
// orders of magnitude below the threshold, and the ranges are a few missing calls wide.
#pragma once

#include <cstdint>

namespace colflow::detail {

/// A column's planes counted (genotype_plane_counts): its called samples, Σ[x ≥ 1], Σ[x = 2].
struct plane_totals {
  std::int64_t called = 0, one = 0, two = 0;
};

/// Of a pair (genotype_pair_partials): Σxa·xb over the samples called in both, and |Oa∧Cb|,
/// |Ob∧Ca|.
struct pair_partials {
  std::int64_t sum_ab = 0, one_a = 0, one_b = 0;
};

enum class ld_verdict : std::uint8_t { not_in_ld, in_ld, unsure };

/// The test of columns a and b, of `samples` samples each (called or missing), with the
/// pair's partial sums `p`; `threshold` as the exact test compares.
ld_verdict bound_ld(const plane_totals& a, const plane_totals& b, std::int64_t samples,
                    const pair_partials& p, double threshold) noexcept;

/// The same from Σxa·xb alone, each side's calls x ≥ 1 among the other's called samples
/// ranged by the other's missing calls: looser, but told for most pairs where each column's
/// rarer homozygote is counted as 2 (the first look; bound_ld for the pairs it leaves).
ld_verdict bound_ld_from_product(const plane_totals& a, const plane_totals& b, std::int64_t samples,
                                 std::int64_t sum_ab, double threshold) noexcept;

}  // namespace colflow::detail
