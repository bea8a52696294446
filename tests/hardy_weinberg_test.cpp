// The exact tests of Hardy-Weinberg equilibrium (hardy_weinberg.hpp): against every table of
// small samples enumerated with exact integer weights, against sums of log-gamma terms at
// large counts, against values PLINK 2 printed, and on the cases of a single possible table.
#include "colflow/analysis/hardy_weinberg.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

namespace colflow {
namespace {

// Exact weights of tables of up to 26 females (GCC and Clang have 128-bit integers).
__extension__ typedef unsigned __int128 u128;

u128 factorial(std::uint64_t n) {
  u128 f = 1;
  for (std::uint64_t k = 2; k <= n; ++k) f *= k;
  return f;
}

u128 choose(std::uint64_t n, std::uint64_t k) {
  return factorial(n) / factorial(k) / factorial(n - k);
}

// The weight of a table under equilibrium given its allele counts, a whole number:
// C(nm, m) · nf! · 2^h / (x! · h! · y!) (the papers' probabilities times a common constant).
u128 weight(const diploid_counts& f, std::uint64_t male_a1, std::uint64_t males) {
  const std::uint64_t nf = f.hom_a1 + f.het + f.hom_a2;
  return choose(males, male_a1) *
             (factorial(nf) / factorial(f.hom_a1) / factorial(f.het) / factorial(f.hom_a2))
         << f.het;
}

// P and mid-p by the definition: every table with the observed allele counts, the tables of
// weight at most the observed one's summed, the equal ones half for the mid-p.
hwe_p_values enumerated(const diploid_counts& females, const haploid_counts& males) {
  const std::uint64_t nf = females.hom_a1 + females.het + females.hom_a2, nm = males.a1 + males.a2,
                      n1 = 2 * females.hom_a1 + females.het + males.a1;
  const u128 observed = weight(females, males.a1, nm);
  u128 all = 0, tail = 0, ties = 0;
  for (std::uint64_t m = 0; m <= nm && m <= n1; ++m) {
    const std::uint64_t f = n1 - m;
    if (f > 2 * nf) continue;
    for (std::uint64_t h = f % 2; h <= f && h <= 2 * nf - f; h += 2) {
      const diploid_counts t{(f - h) / 2, h, nf - h - (f - h) / 2};
      const u128 w = weight(t, m, nm);
      all += w;
      if (w <= observed) tail += w;
      if (w == observed) ties += w;
    }
  }
  const auto ratio = [&](u128 a) {
    return static_cast<double>(static_cast<long double>(a) / static_cast<long double>(all));
  };
  return {ratio(tail), ratio(tail) - ratio(ties) / 2};
}

void expect_relatively_near(double got, double want, double tolerance, const std::string& what) {
  EXPECT_NEAR(got, want, tolerance * want) << what;
}

std::string describe(const diploid_counts& f, const haploid_counts& m) {
  return std::to_string(f.hom_a1) + "/" + std::to_string(f.het) + "/" + std::to_string(f.hom_a2) +
         " males " + std::to_string(m.a1) + "/" + std::to_string(m.a2);
}

TEST(HardyWeinbergTest, DiploidTestEqualsEnumerationOfEveryTableUpToTwentyGenotypes) {
  std::size_t tables = 0;
  for (std::uint64_t n = 0; n <= 20; ++n)
    for (std::uint64_t a = 0; a <= n; ++a)
      for (std::uint64_t h = 0; a + h <= n; ++h) {
        const diploid_counts g{a, h, n - a - h};
        const hwe_p_values want = enumerated(g, {}), got = hardy_weinberg_exact(g);
        expect_relatively_near(got.p, want.p, 1e-13, describe(g, {}));
        expect_relatively_near(got.midp, want.midp, 1e-13, describe(g, {}));
        ++tables;
      }
  EXPECT_EQ(tables, 1771u);
}

TEST(HardyWeinbergTest, XTestEqualsEnumerationOfEveryTableOfFewFemalesAndMales) {
  std::size_t tables = 0;
  for (std::uint64_t nf = 0; nf <= 9; ++nf)
    for (std::uint64_t a = 0; a <= nf; ++a)
      for (std::uint64_t h = 0; a + h <= nf; ++h)
        for (std::uint64_t nm = 0; nm <= 7; ++nm)
          for (std::uint64_t m1 = 0; m1 <= nm; ++m1) {
            const diploid_counts f{a, h, nf - a - h};
            const haploid_counts m{m1, nm - m1};
            const hwe_p_values want = enumerated(f, m), got = hardy_weinberg_exact_x(f, m);
            expect_relatively_near(got.p, want.p, 1e-13, describe(f, m));
            expect_relatively_near(got.midp, want.midp, 1e-13, describe(f, m));
            ++tables;
          }
  EXPECT_EQ(tables, 220u * 36u);
}

// Random tables of 3-26 females and up to 15 males, where the enumeration's weights still fit
// 128 bits.
TEST(HardyWeinbergTest, XTestEqualsEnumerationOfLargerRandomSamples) {
  std::uint64_t state = 12345;
  const auto next = [&](std::uint64_t bound) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % bound;
  };
  for (int trial = 0; trial < 300; ++trial) {
    const std::uint64_t nf = 3 + next(24), nm = next(16);
    const std::uint64_t a = next(nf + 1), h = next(nf - a + 1), m1 = next(nm + 1);
    const diploid_counts f{a, h, nf - a - h};
    const haploid_counts m{m1, nm - m1};
    const hwe_p_values want = enumerated(f, m), got = hardy_weinberg_exact_x(f, m);
    expect_relatively_near(got.p, want.p, 1e-12, describe(f, m));
    expect_relatively_near(got.midp, want.midp, 1e-12, describe(f, m));
  }
}

TEST(HardyWeinbergTest, TablesAsProbableAsTheObservedOneCountHalfInTheMidP) {
  // Six genotypes with four copies of each allele: the tables of h = 0, 2, 4 heterozygotes
  // weigh 6!·2^h/(a!·h!·b!) = 15, 240 and 240, of 495. 0/4/2 and 1/2/3 are equally probable
  // and the most probable: P = 1, and the mid-p leaves out half of both.
  for (const diploid_counts g : {diploid_counts{0, 4, 2}, diploid_counts{1, 2, 3}}) {
    const hwe_p_values r = hardy_weinberg_exact(g);
    EXPECT_DOUBLE_EQ(r.p, 1.0);
    EXPECT_NEAR(r.midp, (15.0 + 480.0 / 2) / 495.0, 1e-15);
  }
  // The least probable one: P = 15/495, half of it for the mid-p.
  const hwe_p_values r = hardy_weinberg_exact({2, 0, 4});
  EXPECT_NEAR(r.p, 15.0 / 495, 1e-15);
  EXPECT_NEAR(r.midp, 7.5 / 495, 1e-15);
}

TEST(HardyWeinbergTest, ASinglePossibleTableHasPOneAndMidPHalf) {
  for (const diploid_counts g : {diploid_counts{}, diploid_counts{7, 0, 0},
                                 diploid_counts{0, 0, 1000000}, diploid_counts{0, 1, 0}}) {
    const hwe_p_values r = hardy_weinberg_exact(g);
    EXPECT_EQ(r.p, 1.0);
    EXPECT_EQ(r.midp, 0.5);
  }
  // On X, males alone (no female to hold an allele elsewhere), or nobody.
  for (const haploid_counts m : {haploid_counts{}, haploid_counts{1, 2}, haploid_counts{0, 40}}) {
    const hwe_p_values r = hardy_weinberg_exact_x({}, m);
    EXPECT_EQ(r.p, 1.0);
    EXPECT_EQ(r.midp, 0.5);
  }
}

// The shortcut of a filter on P: never true where P or the mid-p is at or below the threshold,
// and true for most tables near equilibrium at a filter's usual thresholds.
TEST(HardyWeinbergTest, SurelyAboveIsNeverWrongAndSettlesTablesNearEquilibrium) {
  std::uint64_t state = 777;
  const auto next = [&](std::uint64_t bound) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % bound;
  };
  std::size_t settled = 0, trials = 0;
  for (const double threshold : {1e-15, 1e-6, 1e-3, 0.05, 0.5}) {
    for (int trial = 0; trial < 400; ++trial) {
      const std::uint64_t n = 1 + next(trial % 2 ? 30 : 3000);
      const std::uint64_t a = next(n + 1), h = next(n - a + 1);
      const diploid_counts g{a, h, n - a - h};
      const hwe_p_values r = hardy_weinberg_exact(g);
      if (hardy_weinberg_surely_above(g, threshold)) {
        EXPECT_GT(r.midp, threshold) << describe(g, {});
        EXPECT_GT(r.p, threshold) << describe(g, {});
      }
    }
    // Tables at equilibrium, 2pq n heterozygotes.
    for (const std::uint64_t n : {100u, 1000u, 10000u, 100000u})
      for (const double q : {0.01, 0.1, 0.3, 0.5}) {
        const auto het = static_cast<std::uint64_t>(2 * q * (1 - q) * static_cast<double>(n));
        const auto hom = static_cast<std::uint64_t>(q * q * static_cast<double>(n));
        ++trials;
        settled += hardy_weinberg_surely_above({hom, het, n - het - hom}, threshold) ? 1 : 0;
      }
  }
  EXPECT_GE(settled, trials / 2);
  EXPECT_TRUE(hardy_weinberg_surely_above({2500, 5000, 2500}, 1e-15));
  EXPECT_FALSE(hardy_weinberg_surely_above({5000, 0, 5000}, 1e-15));  // P underflows
  EXPECT_FALSE(hardy_weinberg_surely_above({0, 0, 0}, 1e-15));
}

TEST(HardyWeinbergTest, SwappingTheAllelesChangesNothing) {
  for (const auto& [f, m] :
       std::vector<std::pair<diploid_counts, haploid_counts>>{{{12, 5, 2}, {11, 1}},
                                                              {{4, 10, 3}, {10, 1}},
                                                              {{300, 20, 1}, {150, 40}},
                                                              {{5, 300, 7}, {0, 0}}}) {
    const hwe_p_values a = hardy_weinberg_exact_x(f, m),
                       b = hardy_weinberg_exact_x({f.hom_a2, f.het, f.hom_a1}, {m.a2, m.a1});
    expect_relatively_near(b.p, a.p, 1e-12, describe(f, m));
    expect_relatively_near(b.midp, a.midp, 1e-12, describe(f, m));
  }
}

TEST(HardyWeinbergTest, XTestWithoutMalesIsTheDiploidTest) {
  for (const diploid_counts g : {diploid_counts{33, 12, 2}, diploid_counts{100, 0, 4900},
                                 diploid_counts{25000, 50000, 25001}}) {
    const hwe_p_values a = hardy_weinberg_exact(g), b = hardy_weinberg_exact_x(g, {});
    EXPECT_EQ(a.p, b.p);
    EXPECT_EQ(a.midp, b.midp);
  }
}

// Values printed by plink2 2.00a3.5 --hardy [midp] --nonfounders on .bed files of these counts
// (its HOM_A1_CT, HET_A1_CT, TWO_AX_CT and, on X, MALE_A1_CT and MALE_AX_CT), 6 digits.
TEST(HardyWeinbergTest, EqualsValuesPlink2Printed) {
  struct printed {
    diploid_counts f;
    haploid_counts m;
    double p, midp;
  };
  for (const printed& v : std::vector<printed>{{{33, 12, 2}, {}, 0.597504, 0.458765},
                                               {{8, 19, 18}, {}, 0.530606, 0.442426},
                                               {{5, 24, 15}, {}, 0.523222, 0.439067},
                                               {{0, 400, 4600}, {}, 0.000581717, 0.000459244},
                                               {{20, 10, 4970}, {}, 3.40496e-47, 1.70285e-47},
                                               {{100, 0, 4900}, {}, 1.82433e-213, 9.12167e-214},
                                               {{0, 600, 4400}, {}, 8.96717e-09, 6.50478e-09},
                                               {{12, 8, 0}, {11, 0}, 0.195537, 0.170215},
                                               {{4, 10, 3}, {10, 1}, 0.0537463, 0.0502709},
                                               {{1, 11, 4}, {1, 5}, 0.18569, 0.171813},
                                               {{2, 2, 2}, {0, 0}, 0.480519, 0.285714}}) {
    const hwe_p_values r = hardy_weinberg_exact_x(v.f, v.m);
    expect_relatively_near(r.p, v.p, 6e-6, describe(v.f, v.m));
    expect_relatively_near(r.midp, v.midp, 6e-6, describe(v.f, v.m));
  }
  // All heterozygous: far below the smallest double, which plink2 prints as 0.
  const hwe_p_values r = hardy_weinberg_exact({0, 5000, 0});
  EXPECT_EQ(r.p, 0.0);
  EXPECT_EQ(r.midp, 0.0);
}

// log of a table's weight from log-gamma functions in long double: an independent route to the
// same probabilities, accurate to about 1e-13 at these counts.
long double log_weight(long double nf, long double x, long double h, long double y, long double nm,
                       long double m) {
  return std::lgammal(nm + 1) - std::lgammal(m + 1) - std::lgammal(nm - m + 1) +
         std::lgammal(nf + 1) + h * std::log(2.0L) - std::lgammal(x + 1) - std::lgammal(h + 1) -
         std::lgammal(y + 1);
}

hwe_p_values summed_from_log_gamma(const diploid_counts& f, const haploid_counts& males) {
  const long double nf = static_cast<long double>(f.hom_a1 + f.het + f.hom_a2),
                    nm = static_cast<long double>(males.a1 + males.a2),
                    n1 = static_cast<long double>(2 * f.hom_a1 + f.het + males.a1);
  const long double observed =
      log_weight(nf, static_cast<long double>(f.hom_a1), static_cast<long double>(f.het),
                 static_cast<long double>(f.hom_a2), nm, static_cast<long double>(males.a1));
  long double all = 0, tail = 0, ties = 0;
  for (long double m = 0; m <= nm && m <= n1; ++m) {
    const long double fa = n1 - m;
    if (fa > 2 * nf) continue;
    for (long double h = std::fmod(fa, 2.0L); h <= fa && h <= 2 * nf - fa; h += 2) {
      const long double d =
          log_weight(nf, (fa - h) / 2, h, nf - h - (fa - h) / 2, nm, m) - observed;
      const long double w = std::exp(d);
      all += w;
      if (d <= 1e-11L) tail += w;
      if (std::abs(d) <= 1e-11L) ties += w;
    }
  }
  return {static_cast<double>(tail / all), static_cast<double>((tail - ties / 2) / all)};
}

TEST(HardyWeinbergTest, AgreesWithLogGammaSumsAtThousandsOfSamples) {
  for (const auto& [f, m] :
       std::vector<std::pair<diploid_counts, haploid_counts>>{{{25000, 50000, 25000}, {}},
                                                              {{24000, 52000, 24000}, {}},
                                                              {{10, 1985, 98005}, {}},
                                                              {{600, 900, 400}, {700, 600}},
                                                              {{620, 780, 500}, {640, 660}},
                                                              {{3, 120, 1777}, {30, 1570}},
                                                              {{2, 60, 1938}, {90, 1510}}}) {
    const hwe_p_values want = summed_from_log_gamma(f, m), got = hardy_weinberg_exact_x(f, m);
    expect_relatively_near(got.p, want.p, 1e-9, describe(f, m));
    expect_relatively_near(got.midp, want.midp, 1e-9, describe(f, m));
  }
}

// Millions of samples: finite, ordered, quick. An extreme table (every sample heterozygous, or
// males and females with opposite alleles) is 0 at once, without a walk across the sample.
TEST(HardyWeinbergTest, MillionsOfSamplesGiveFiniteValuesQuickly) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::pair<diploid_counts, haploid_counts>> cases = {
      {{250000, 500000, 250000}, {}},
      {{249500, 501000, 249500}, {}},
      {{0, 1000000, 0}, {}},
      {{1000000000000, 1, 1000000000000}, {0, 0}},
      {{125000, 250000, 125000}, {250000, 250000}},
      {{124700, 250500, 124800}, {250300, 249700}},
      {{200, 39600, 1960200}, {20000, 1980000}},
      {{500000, 0, 500000}, {0, 1000000}},
      {{1000000000000, 1, 1000000000000}, {1000000000000, 1000000000}}};
  for (const auto& [f, m] : cases) {
    const hwe_p_values r = hardy_weinberg_exact_x(f, m);
    EXPECT_TRUE(r.p >= 0 && r.p <= 1) << describe(f, m) << " " << r.p;
    EXPECT_TRUE(r.midp >= 0 && r.midp <= r.p) << describe(f, m) << " " << r.midp;
  }
  EXPECT_GT(hardy_weinberg_exact({250000, 500000, 250000}).p, 0.99);
  EXPECT_EQ(hardy_weinberg_exact({0, 1000000, 0}).p, 0.0);
  EXPECT_EQ(hardy_weinberg_exact_x({500000, 0, 500000}, {0, 1000000}).p, 0.0);
  const double p = hardy_weinberg_exact({249500, 501000, 249500}).p;
  EXPECT_TRUE(p > 0 && p < 0.5) << p;
  // A generous bound, for sanitised builds on a busy machine: the cases take milliseconds.
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 20.0);
}

// Tables tested together (their rows summed four at a time, side by side in vector lanes) get
// the bits each gets tested alone: rows of very different lengths in one group, groups of one
// to four, tables whose P underflows or that have a single possible table among them. A lane
// that stopped a step early or late, or added in another order, fails it.
TEST(HardyWeinbergTest, TablesTestedTogetherHaveTheBitsOfEachTestedAlone) {
  std::uint64_t state = 4242;
  const auto next = [&](std::uint64_t bound) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % bound;
  };
  std::vector<diploid_counts> tables = {{0, 0, 0}, {5000, 0, 5000}, {0, 0, 7}, {1, 0, 0}};
  for (int trial = 0; trial < 600; ++trial) {
    const std::uint64_t n = 1 + next(trial % 3 == 0 ? 40 : trial % 3 == 1 ? 5000 : 60000);
    const std::uint64_t a = next(n + 1), h = next(n - a + 1);
    tables.push_back({a, h, n - a - h});
    // Near equilibrium, with a rarer allele of frequency q.
    const double q = static_cast<double>(1 + next(500)) / 1000, nd = static_cast<double>(n);
    const auto het = static_cast<std::uint64_t>(2 * q * (1 - q) * nd) + next(3);
    const auto hom = std::min(n - std::min(n, het), static_cast<std::uint64_t>(q * q * nd));
    tables.push_back({hom, std::min(n, het), n - hom - std::min(n, het)});
  }
  for (const std::size_t group : {1u, 3u, 4u, 7u, 64u}) {
    for (std::size_t first = 0; first < tables.size(); first += group) {
      const std::span<const diploid_counts> some =
          std::span(tables).subspan(first, std::min(group, tables.size() - first));
      std::vector<hwe_p_values> together(some.size());
      hardy_weinberg_exact(some, together);
      for (std::size_t k = 0; k < some.size(); ++k) {
        const hwe_p_values alone = hardy_weinberg_exact(some[k]);
        EXPECT_EQ(together[k].p, alone.p) << describe(some[k], {});
        EXPECT_EQ(together[k].midp, alone.midp) << describe(some[k], {});
      }
    }
  }
}

}  // namespace
}  // namespace colflow
