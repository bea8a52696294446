// Haplotype-frequency r² of a pair of variants from their genotype table
// (analysis/products/haplotype_r2_internal.hpp), following PLINK 1.9's two-locus EM.
#include <cmath>
#include <limits>

#include "analysis/products/haplotype_r2_internal.hpp"

namespace colflow::detail {
namespace {

// PLINK 1.9's tolerances: 2^-30, 2^-35 and 2^-44.
constexpr double epsilon = 0.000000000931322574615478515625;
constexpr double smallish_epsilon = 0.00000000002910383045673370361328125;
constexpr double small_epsilon = 0.00000000000005684341886080801486968994140625;
constexpr double pi = 3.1415926535897932;

// The distinct real roots of x³ + a·x² + b·x + c, increasing, into `roots`; their count.
// Roots closer than `epsilon` count once.
int cubic_real_roots(double a, double b, double c, double roots[3]) noexcept {
  const double a2 = a * a;
  const double q = (a2 - 3 * b) * (1.0 / 9.0);
  const double r = (2 * a2 * a - 9 * a * b + 27 * c) * (1.0 / 54.0);
  const double r2 = r * r, q3 = q * q * q, a_third = a * (1.0 / 3.0);
  if (r2 < q3) {  // three real roots
    double sq = std::sqrt(q);
    const double t = std::acos(r / (q * sq)) * (1.0 / 3.0);
    sq *= -2;
    roots[0] = sq * std::cos(t) - a_third;
    roots[1] = sq * std::cos(t + (2.0 * pi / 3.0)) - a_third;
    roots[2] = sq * std::cos(t - (2.0 * pi / 3.0)) - a_third;
    if (roots[0] > roots[1]) {
      const double x = roots[0];
      roots[0] = roots[1];
      if (x > roots[2]) {
        roots[1] = roots[2];
        roots[2] = x;
      } else {
        roots[1] = x;
      }
      if (roots[0] > roots[1]) {
        const double y = roots[0];
        roots[0] = roots[1];
        roots[1] = y;
      }
    } else if (roots[1] > roots[2]) {
      const double x = roots[1];
      roots[1] = roots[2];
      roots[2] = x;
    }
    if (roots[1] - roots[0] < epsilon) {
      roots[1] = roots[2];
      return roots[1] - roots[0] < epsilon ? 1 : 2;
    }
    return roots[2] - roots[1] < epsilon ? 2 : 3;
  }
  double u = -std::pow(std::fabs(r) + std::sqrt(r2 - q3), 1.0 / 3.0);
  if (u == 0.0) {
    roots[0] = -a_third;
    return 1;
  }
  if (r < 0.0) u = -u;
  const double v = q / u;
  roots[0] = u + v - a_third;
  if (std::fabs(u - v) >= epsilon * 8) return 1;
  if (u >= 0.0) {
    roots[1] = roots[0];
    roots[0] = -u - a_third;
  } else {
    roots[1] = -u - a_third;
  }
  return 2;
}

// Haplotype counts known from the unambiguous genotypes, and the double heterozygotes.
struct known_haplotypes {
  double h11, h12, h21, h22;
  double center;
};

// The log-likelihood of the frequencies with `incr` of the double heterozygotes' share moved
// to phase 11/22.
double log_likelihood(const known_haplotypes& k, double f11, double f12, double f21, double f22,
                      double half_share, double incr) noexcept {
  f11 += incr;
  f22 += incr;
  f12 += half_share - incr;
  f21 += half_share - incr;
  double l = k.center * std::log(f11 * f22 + f12 * f21);
  if (k.h11 != 0.0) l += k.h11 * std::log(f11);
  if (k.h12 != 0.0) l += k.h12 * std::log(f12);
  if (k.h21 != 0.0) l += k.h21 * std::log(f21);
  if (k.h22 != 0.0) l += k.h22 * std::log(f22);
  return l;
}

struct phased {
  double f1x, f2x, fx1, fx2, f11;
};

// The candidate shares of the double heterozygotes in phase 11/22: [*first, *end) of roots.
void candidate_shares(double f11, double f12, double f21, double f22, double half_share,
                      double roots[3], int* first, int* end) noexcept {
  const double p1122 = f11 * f22, p1221 = f12 * f21;
  *first = 0;
  if (p1122 != 0.0 || p1221 != 0.0) {
    *end =
        cubic_real_roots(0.5 * (f11 + f22 - f12 - f21 - 3 * half_share),
                         0.5 * (p1122 + p1221 + half_share * (f12 + f21 - f11 - f22 + half_share)),
                         -0.5 * half_share * p1122, roots);
    while (*end && roots[*end - 1] > half_share + smallish_epsilon) --*end;
    while (*first < *end && roots[*first] < -smallish_epsilon) ++*first;
    if (*first == *end) {  // a double root at a boundary: try both ends
      *first = 0;
      *end = 2;
      roots[0] = 0;
      roots[1] = half_share;
    } else {
      if (roots[*first] < 0) roots[*first] = 0;
      if (roots[*end - 1] > half_share) roots[*end - 1] = half_share;
    }
    return;
  }
  roots[0] = 0;
  const double xx = f11 + f22, xy = f12 + f21;
  if (xx + smallish_epsilon < half_share + xy && xy + smallish_epsilon < half_share + xx) {
    *end = 3;
    roots[1] = (half_share + xy - xx) * 0.5;
    roots[2] = half_share;
  } else {
    *end = 2;
    roots[1] = half_share;
  }
}

// false when a variant is monomorphic over the calls.
bool phase(const known_haplotypes& k, phased& out) noexcept {
  const double twice_total = k.h11 + k.h12 + k.h21 + k.h22 + 2 * k.center;
  if (twice_total == 0.0) return false;
  const double recip = 1.0 / twice_total;
  double f11 = k.h11 * recip;
  const double f12 = k.h12 * recip, f21 = k.h21 * recip, f22 = k.h22 * recip;
  const double half_share = k.center * recip;
  out.f1x = f11 + f12 + half_share;
  out.f2x = 1.0 - out.f1x;
  out.fx1 = f11 + f21 + half_share;
  out.fx2 = 1.0 - out.fx1;
  if (k.center != 0) {
    double roots[3];
    int first = 0, end = 1;
    candidate_shares(f11, f12, f21, f22, half_share, roots, &first, &end);
    double best = roots[first];
    if (end > first + 1) {
      // PLINK 1.9 keeps the first root's likelihood as the bar for every later root (it never
      // raises it), so the last root above that bar wins; done the same way here.
      const double bar = log_likelihood(k, f11, f12, f21, f22, half_share, best);
      for (int i = first + 1; i < end; ++i)
        if (log_likelihood(k, f11, f12, f21, f22, half_share, roots[i]) > bar) best = roots[i];
    }
    f11 += best;
  } else if (f11 * f22 == 0.0 && f12 * f21 == 0.0) {
    return false;
  }
  out.f11 = f11;
  return true;
}

}  // namespace

double haplotype_r2(const genotype_pair_table& table) noexcept {
  // PLINK 1.9 orders genotypes as two copies of A1, one, none: row i is dosage 2 − i.
  const auto c = [&](int i, int j) { return static_cast<double>(table.count[2 - i][2 - j]); };
  const known_haplotypes k{2 * c(0, 0) + c(0, 1) + c(1, 0), 2 * c(0, 2) + c(0, 1) + c(1, 2),
                           2 * c(2, 0) + c(1, 0) + c(2, 1), 2 * c(2, 2) + c(1, 2) + c(2, 1),
                           c(1, 1)};
  phased p;
  if (!phase(k, p)) return std::numeric_limits<double>::quiet_NaN();
  const double expected = p.fx1 * p.f1x;
  const double d = p.f11 - expected;
  const double abs_d = std::fabs(d);
  if (!(abs_d >= small_epsilon)) return 0;
  return abs_d * d / (expected * p.f2x * p.fx2);
}

}  // namespace colflow::detail
