// plink2's LD test of a pair bounded from Σxa·xb and each column's counts
// (analysis/products/ld_pair_bound_internal.hpp).
#include <algorithm>

#include "analysis/products/ld_pair_bound_internal.hpp"

namespace colflow::detail {
namespace {

struct range {
  std::int64_t lo, hi;
};

// Σx and Σx² of a column over the samples the other column calls, given the range of Σ[x ≥ 1]
// there (`one`): Σ[x = 2] there is its own less at most the calls x ≥ 1 that the other's
// missing calls took (T ⊆ O), and at most Σ[x ≥ 1].
struct side_sums {
  range sum, squares;
};

side_sums side(const plane_totals& c, range one) noexcept {
  const std::int64_t two_lo = c.two - std::min(c.two, c.one - one.lo);
  const std::int64_t two_hi = std::min(c.two, one.hi);
  return {{one.lo + two_lo, one.hi + two_hi}, {one.lo + 3 * two_lo, one.hi + 3 * two_hi}};
}

// Σ[x ≥ 1] of a column over the samples the other calls, unknown but for the other's missing
// calls: at most that many of its own are not counted.
range ones_among(const plane_totals& c, std::int64_t other_missing) noexcept {
  return {c.one - std::min(c.one, other_missing), c.one};
}

// n · Σx² − (Σx)² over the ranges: the least and the most it can be.
range variance_range(range n, const side_sums& s) noexcept {
  return {n.lo * s.squares.lo - s.sum.hi * s.sum.hi, n.hi * s.squares.hi - s.sum.lo * s.sum.lo};
}

double square(std::int64_t v) noexcept { return static_cast<double>(v) * static_cast<double>(v); }

// Far above the relative rounding of cov², var_a · var_b and their product with the threshold
// in doubles (a few units of 2^-53), far below any width a range of counts gives.
constexpr double margin = 1e-6;

// The test from Σxa·xb and the ranges of each side's Σ[x ≥ 1] over the other's calls.
ld_verdict verdict(const plane_totals& a, const plane_totals& b, std::int64_t samples,
                   std::int64_t sum_ab, range ones_a, range ones_b, double threshold) noexcept {
  const std::int64_t missing_a = samples - a.called, missing_b = samples - b.called;
  // n = samples − missing_a − missing_b + (missing in both), the last within 0..the lesser.
  const range n{std::max<std::int64_t>(0, samples - missing_a - missing_b),
                samples - std::max(missing_a, missing_b)};
  const side_sums sa = side(a, ones_a), sb = side(b, ones_b);
  const range cov{n.lo * sum_ab - sa.sum.hi * sb.sum.hi, n.hi * sum_ab - sa.sum.lo * sb.sum.lo};
  const range va = variance_range(n, sa), vb = variance_range(n, sb);
  const double cov_most = std::max(square(cov.lo), square(cov.hi));
  if (va.lo > 0 && vb.lo > 0 &&
      cov_most < threshold * static_cast<double>(va.lo) * static_cast<double>(vb.lo) * (1 - margin))
    return ld_verdict::not_in_ld;
  const double cov_least =
      cov.lo <= 0 && cov.hi >= 0 ? 0 : std::min(square(cov.lo), square(cov.hi));
  if (cov_least >
      threshold * static_cast<double>(va.hi) * static_cast<double>(vb.hi) * (1 + margin))
    return ld_verdict::in_ld;
  return ld_verdict::unsure;
}

}  // namespace

ld_verdict bound_ld(const plane_totals& a, const plane_totals& b, std::int64_t samples,
                    const pair_partials& p, double threshold) noexcept {
  return verdict(a, b, samples, p.sum_ab, {p.one_a, p.one_a}, {p.one_b, p.one_b}, threshold);
}

ld_verdict bound_ld_from_product(const plane_totals& a, const plane_totals& b, std::int64_t samples,
                                 std::int64_t sum_ab, double threshold) noexcept {
  return verdict(a, b, samples, sum_ab, ones_among(a, samples - b.called),
                 ones_among(b, samples - a.called), threshold);
}

}  // namespace colflow::detail
