// 2-bit genotype codes: counts, statistics and decoding against a double reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>

#include "colflow/codec/genotype_codec.hpp"
#include "colflow/kernels/genotype_kernels.hpp"
#include "kernels/deferred_update_internal.hpp"
#include "kernels/live_lists_internal.hpp"
#include "kernels/missing_tally_internal.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

// Reference: statistics and standardised values computed plainly in double from dosages.
struct reference {
  column_stats stats;
  std::vector<double> z;
};

reference reference_of(const std::vector<std::uint8_t>& codes, std::uint64_t n) {
  reference r;
  double sum = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const int d = test::dosage_at(codes, i);
    if (d >= 0) {
      sum += d;
      ++r.stats.observed;
    }
  }
  r.stats.mean = sum / static_cast<double>(r.stats.observed);
  double ss = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const int d = test::dosage_at(codes, i);
    if (d >= 0) ss += (d - r.stats.mean) * (d - r.stats.mean);
  }
  r.stats.sd = std::sqrt(ss / static_cast<double>(n - 1));
  for (std::uint64_t i = 0; i < n; ++i) {
    const int d = test::dosage_at(codes, i);
    r.z.push_back(d < 0 ? 0.0 : (d - r.stats.mean) / r.stats.sd);
  }
  return r;
}

TEST(GenotypeTest, CountsIgnorePaddingBits) {
  // 7 samples: 2 bytes, the last holding 3 samples and one padding pair set to 0b01.
  // Samples: 2,1,0,missing | 2,2,0 | padding.
  const std::vector<std::uint8_t> codes = {static_cast<std::uint8_t>(0b01'11'10'00),
                                           static_cast<std::uint8_t>(0b01'11'00'00)};
  const genotype_counts c = count_genotypes(codes, 7);
  EXPECT_EQ(c.hom_a1, 3u);
  EXPECT_EQ(c.het, 1u);
  EXPECT_EQ(c.hom_a2, 2u);
  EXPECT_EQ(c.missing, 1u);
  const column_stats s = genotype_stats(c, 7);
  EXPECT_EQ(s.observed, 6u);
  EXPECT_DOUBLE_EQ(s.mean, 7.0 / 6.0);
  EXPECT_DOUBLE_EQ(s.a1_freq, 7.0 / 12.0);
}

// The counts of every class equal a count sample by sample, at lengths that end inside and
// after each vector path's words (8 for AVX-512, 4 for AVX2, 1 for POPCNT).
TEST(GenotypeTest, CountsEqualAPlainLoopAtEveryLength) {
  std::mt19937_64 rng(11);
  for (std::uint64_t n = 1; n <= 1100; n += n < 300 ? 1 : 37) {
    const auto codes = test::random_genotype_codes(n, 0.3, 0.1, rng);
    std::uint64_t by_code[4] = {0, 0, 0, 0};
    for (std::uint64_t i = 0; i < n; ++i) ++by_code[(codes[i / 4] >> (2 * (i % 4))) & 3];
    const genotype_counts c = count_genotypes(codes, n);
    EXPECT_EQ(c.hom_a1, by_code[0]) << n;
    EXPECT_EQ(c.missing, by_code[1]) << n;
    EXPECT_EQ(c.het, by_code[2]) << n;
    EXPECT_EQ(c.hom_a2, by_code[3]) << n;
  }
}

// Columns long enough for many of the AVX2 kernel's blocks (63 steps of 128 samples, its
// byte counters' limit), all of one class or random, with and without a mask: a counter that
// wraps or a block a step too long gives another count.
TEST(GenotypeTest, CountsOfLongColumnsEqualAPlainLoop) {
  std::mt19937_64 rng(5);
  for (const std::uint64_t n : {8064u, 8065u, 40000u, 100001u}) {
    std::vector<std::vector<std::uint8_t>> columns;
    for (const int code : {0x00, 0x55, 0xaa, 0xff})
      columns.emplace_back(genotype_column_bytes(n), static_cast<std::uint8_t>(code));
    columns.push_back(test::random_genotype_codes(n, 0.4, 0.2, rng));
    std::vector<std::uint8_t> all(n, 1), some(n, 0);
    for (std::uint64_t i = 0; i < n; ++i) some[i] = (rng() % 5) != 0;
    for (auto& codes : columns) {
      codes.back() &= static_cast<std::uint8_t>(0xff >> (2 * ((4 - n % 4) % 4)));  // padding
      for (const auto* keep : {&all, &some}) {
        std::uint64_t by_code[4] = {0, 0, 0, 0};
        for (std::uint64_t i = 0; i < n; ++i)
          if ((*keep)[i]) ++by_code[(codes[i / 4] >> (2 * (i % 4))) & 3];
        const auto mask = make_sample_mask(*keep);
        for (const genotype_counts& c :
             {count_genotypes(codes, n, mask), count_genotypes(codes, n, mask, mask_count(mask))}) {
          EXPECT_EQ(c.hom_a1, by_code[0]) << n;
          EXPECT_EQ(c.missing, by_code[1]) << n;
          EXPECT_EQ(c.het, by_code[2]) << n;
          EXPECT_EQ(c.hom_a2, by_code[3]) << n;
        }
        if (keep != &all) continue;
        const genotype_counts c = count_genotypes(codes, n);
        EXPECT_EQ(c.hom_a1, by_code[0]) << n;
        EXPECT_EQ(c.missing, by_code[1]) << n;
        EXPECT_EQ(c.het, by_code[2]) << n;
        EXPECT_EQ(c.hom_a2, by_code[3]) << n;
      }
    }
  }
}

TEST(GenotypeTest, StatsAndStandardisedValuesMatchDoubleReference) {
  std::mt19937_64 rng(7);
  for (std::uint64_t n : {2u, 3u, 5u, 31u, 32u, 33u, 97u, 1000u, 10001u}) {
    for (double p : {0.02, 0.3, 0.5}) {
      const auto codes = test::random_genotype_codes(n, p, 0.1, rng);
      const reference ref = reference_of(codes, n);
      const column_stats s = genotype_stats(count_genotypes(codes, n), n);
      if (ref.stats.sd == 0 || ref.stats.observed == 0) continue;
      EXPECT_EQ(s.observed, ref.stats.observed);
      EXPECT_NEAR(s.mean, ref.stats.mean, 1e-15);
      EXPECT_NEAR(s.sd, ref.stats.sd, 1e-13 * ref.stats.sd);
      std::vector<double> z(n);
      decode_genotypes(codes, standardized_lut(s), z);
      double zz = 0, zsum = 0;
      for (std::uint64_t i = 0; i < n; ++i) {
        EXPECT_NEAR(z[i], ref.z[i], 1e-12) << "n=" << n << " i=" << i;
        zz += z[i] * z[i];
        zsum += z[i];
      }
      // docs/DESIGN.md §2: centred, z'z = N - 1.
      EXPECT_NEAR(zsum, 0.0, 1e-9);
      EXPECT_NEAR(zz, static_cast<double>(n - 1), 1e-9 * static_cast<double>(n));
    }
  }
}

TEST(GenotypeTest, DecodesEveryPositionOfEveryLength) {
  // Each output position must come from its own 2-bit code, including the partial last byte.
  std::mt19937_64 rng(11);
  const genotype_lut<double> lut = {10.0, -1.0, 20.0, 30.0};
  const genotype_lut<float> lutf = {10.0f, -1.0f, 20.0f, 30.0f};
  for (std::uint64_t n = 0; n < 300; ++n) {
    auto codes = test::random_genotype_codes(n, 0.4, 0.2, rng);
    codes.push_back(0xFF);  // bytes past the column must not be read into the output
    std::vector<double> out(n + 1, 99.0);
    std::vector<float> outf(n + 1, 99.0f);
    decode_genotypes(codes, lut, std::span(out).first(n));
    decode_genotypes(codes, lutf, std::span(outf).first(n));
    for (std::uint64_t i = 0; i < n; ++i) {
      const int d = test::dosage_at(codes, i);
      const double expected = d < 0 ? -1.0 : d == 2 ? 10.0 : d == 1 ? 20.0 : 30.0;
      ASSERT_EQ(out[i], expected) << "n=" << n << " i=" << i;
      ASSERT_EQ(outf[i], static_cast<float>(expected)) << "n=" << n << " i=" << i;
    }
    EXPECT_EQ(out[n], 99.0) << "wrote past the end, n=" << n;
    EXPECT_EQ(outf[n], 99.0f) << "wrote past the end, n=" << n;
  }
}

TEST(GenotypeTest, MonomorphicAndAllMissingColumnsStandardiseToZero) {
  std::mt19937_64 rng(3);
  const auto mono = test::random_genotype_codes(50, 0.0, 0.1, rng);
  const column_stats s = genotype_stats(count_genotypes(mono, 50), 50);
  EXPECT_EQ(s.sd, 0.0);
  EXPECT_EQ(s.mean, 0.0);
  for (double v : standardized_lut(s)) EXPECT_EQ(v, 0.0);

  const std::vector<std::uint8_t> missing(3, 0x55);  // every code 0b01
  const column_stats m = genotype_stats(count_genotypes(missing, 10), 10);
  EXPECT_EQ(m.observed, 0u);
  EXPECT_TRUE(std::isnan(m.mean));
  EXPECT_EQ(m.sd, 0.0);
  for (double v : standardized_lut(m)) EXPECT_EQ(v, 0.0);
}

TEST(GenotypeTest, DosageTableMarksMissingAsNan) {
  const auto lut = dosage_lut();
  EXPECT_EQ(lut[0], 2.0);
  EXPECT_TRUE(std::isnan(lut[1]));
  EXPECT_EQ(lut[2], 1.0);
  EXPECT_EQ(lut[3], 0.0);
}

// Codes with padding pairs set to 0b01 (missing): kernels must never count them.
std::vector<std::uint8_t> dirty_codes(std::uint64_t n, double p, double missing,
                                      std::mt19937_64& rng) {
  auto codes = test::random_genotype_codes(n, p, missing, rng);
  for (std::uint64_t i = n; i < 4 * codes.size(); ++i)
    codes[i / 4] =
        static_cast<std::uint8_t>((codes[i / 4] & ~(3u << (2 * (i % 4)))) | (1u << (2 * (i % 4))));
  return codes;
}

// Sizes up to several of the AVX-512 count's eight-word steps, with a rest of whole words and
// of a part word.
TEST(GenotypeTest, MaskedCountsAndMissingRowsMatchPlainLoops) {
  std::mt19937_64 rng(11);
  for (std::uint64_t n : {1u, 3u, 31u, 32u, 33u, 64u, 100u, 257u, 1000u, 2048u, 2081u, 5003u}) {
    const auto codes = dirty_codes(n, 0.3, 0.1, rng);
    std::vector<std::uint8_t> keep(n);
    for (auto& k : keep) k = static_cast<std::uint8_t>(rng() % 3 != 0);
    const auto mask = make_sample_mask(keep);
    ASSERT_EQ(mask.size(), genotype_column_bytes(n));
    genotype_counts expect;
    std::vector<std::size_t> expect_missing, expect_missing_all;
    std::size_t kept = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      const int d = test::dosage_at(codes, i);
      if (d < 0) expect_missing_all.push_back(i);
      if (!keep[i]) continue;
      ++kept;
      if (d < 0) {
        ++expect.missing;
        expect_missing.push_back(i);
      }
      if (d == 0) ++expect.hom_a2;
      if (d == 1) ++expect.het;
      if (d == 2) ++expect.hom_a1;
    }
    EXPECT_EQ(mask_count(mask), kept);
    const genotype_counts c = count_genotypes(codes, n, mask);
    EXPECT_EQ(c.hom_a1, expect.hom_a1) << n;
    EXPECT_EQ(c.het, expect.het) << n;
    EXPECT_EQ(c.hom_a2, expect.hom_a2) << n;
    EXPECT_EQ(c.missing, expect.missing) << n;
    std::vector<std::size_t> rows;
    missing_rows(codes, n, mask, rows);
    EXPECT_EQ(rows, expect_missing) << n;
    rows.clear();
    missing_rows(codes, n, {}, rows);
    EXPECT_EQ(rows, expect_missing_all) << n;
  }
}

// The first 300 columns are mostly missing calls, more than a byte counter holds unless it is
// folded in time; padding pairs are missing codes here and must never count.
TEST(GenotypeTest, MissingCallTallyEqualsAPlainCountOverManyColumns) {
  std::mt19937_64 rng(12);
  for (std::uint64_t n : {1u, 5u, 130u, 1001u}) {
    std::vector<std::uint8_t> keep(n);
    for (auto& k : keep) k = static_cast<std::uint8_t>(rng() % 4 != 0);
    const auto mask = make_sample_mask(keep);
    missing_call_tally tally(n);
    std::vector<std::uint32_t> expect(n, 0), got(n, 7);
    for (int column = 0; column < 600; ++column) {
      const auto codes = dirty_codes(n, 0.3, column < 300 ? 0.999 : 0.2, rng);
      for (std::uint64_t i = 0; i < n; ++i) expect[i] += keep[i] && test::dosage_at(codes, i) < 0;
      tally.add(codes, mask);
      if (column == 299 || column == 301) {  // counts taken between carries, then going on
        std::vector<std::uint32_t> so_far(n, 0);
        tally.move_into(so_far);
        for (std::uint64_t i = 0; i < n; ++i) got[i] += so_far[i];
      }
    }
    for (std::uint64_t i = 0; i < n; ++i) expect[i] += 7;
    tally.move_into(got);
    EXPECT_EQ(got, expect) << n;
  }
}

TEST(GenotypeTest, DosageDotsMatchPlainSumsForEveryTileShape) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal;
  // 30001 samples span several of the kernels' chunks of samples for ten or more vectors;
  // 10, 11 and 21 vectors fill the AVX-512 kernel's groups of pairs and leave an odd one.
  for (std::uint64_t n : {1u, 5u, 8u, 9u, 63u, 1001u, 30001u}) {
    for (std::size_t count : {1u, 2u, 3u, 4u, 5u, 9u}) {
      for (std::size_t m : {1u, 2u, 3u, 5u, 10u, 11u, 21u}) {
        if (n == 30001 && count != 5) continue;  // one column count is enough for the chunks
        std::vector<std::vector<std::uint8_t>> cols;
        std::vector<const std::uint8_t*> ptrs;
        for (std::size_t c = 0; c < count; ++c) cols.push_back(dirty_codes(n, 0.4, 0.05, rng));
        for (const auto& c : cols) ptrs.push_back(c.data());
        const std::size_t stride = n + 3;  // a stride larger than n must be honoured
        std::vector<double> w(stride * m);
        for (double& x : w) x = normal(rng);
        std::vector<double> out(count * m, -1.0);
        dosage_dots(ptrs.data(), count, n, w.data(), stride, m, out.data());
        for (std::size_t c = 0; c < count; ++c)
          for (std::size_t v = 0; v < m; ++v) {
            double expect = 0, scale = 0;
            for (std::uint64_t i = 0; i < n; ++i) {
              const int d = test::dosage_at(cols[c], i);
              if (d > 0) expect += d * w[i + v * stride];
              scale += std::fabs(2.0 * w[i + v * stride]);
            }
            EXPECT_NEAR(out[c * m + v], expect, 1e-13 * scale) << n << " " << count << " " << m;
            // Exactly the documented order: four lanes over the bytes in order, added
            // (0+1)+(2+3), then the tail; with or without fused multiply-adds, as the
            // vector or the portable kernel runs.
            double fused[4] = {0, 0, 0, 0}, plain[4] = {0, 0, 0, 0};
            for (std::uint64_t i = 0; i < n / 4 * 4; ++i) {
              const double d = std::max(test::dosage_at(cols[c], i), 0);
              fused[i % 4] = std::fma(d, w[i + v * stride], fused[i % 4]);
              plain[i % 4] += d * w[i + v * stride];
            }
            double in_order[2] = {(fused[0] + fused[1]) + (fused[2] + fused[3]),
                                  (plain[0] + plain[1]) + (plain[2] + plain[3])};
            for (std::uint64_t i = n / 4 * 4; i < n; ++i)
              for (double& x : in_order)
                x += std::max(test::dosage_at(cols[c], i), 0) * w[i + v * stride];
            EXPECT_TRUE(out[c * m + v] == in_order[0] || out[c * m + v] == in_order[1])
                << n << " " << count << " " << m;
            // One column at a time gives exactly the same number: tiling never changes results.
            double single = 0;
            dosage_dots(cols[c], n, w.data() + v * stride, stride, 1, &single);
            EXPECT_EQ(single, out[c * m + v]);
          }
      }
    }
  }
}

TEST(GenotypeTest, StandardisedProductAndResidualUpdateWithoutDecoding) {
  std::mt19937_64 rng(8);
  std::normal_distribution<double> normal;
  for (std::uint64_t n : {1u, 4u, 7u, 64u, 203u, 1000u}) {
    const auto codes = dirty_codes(n, 0.35, 0.08, rng);
    std::vector<double> w(n);
    for (double& x : w) x = normal(rng);
    const double dot = dosage_dot(codes, n, w.data());
    const double second = second_dosage_dot(codes, n, w.data());
    const double missing = missing_sum(codes, n, w.data());
    double expect_dot = 0, expect_second = 0, expect_missing = 0, w_sum = 0, scale = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      const int d = test::dosage_at(codes, i);
      if (d >= 0) {
        expect_dot += d * w[i];
        expect_second += (2 - d) * w[i];
      } else {
        expect_missing += w[i];
      }
      w_sum += w[i];
      scale += 2 * std::fabs(w[i]);
    }
    EXPECT_NEAR(dot, expect_dot, 1e-13 * scale) << n;
    EXPECT_NEAR(second, expect_second, 1e-13 * scale) << n;
    EXPECT_NEAR(missing, expect_missing, 1e-13 * scale) << n;
    // zᵀw from either allele's sum equals the product with the decoded standardised column.
    const column_stats st = genotype_stats(count_genotypes(codes, n), n);
    if (st.sd > 0) {
      std::vector<double> z(n);
      decode_genotypes(codes, standardized_lut(st), z);
      double zw = 0;
      for (std::uint64_t i = 0; i < n; ++i) zw += z[i] * w[i];
      const double called = w_sum - missing;
      EXPECT_NEAR((dot - st.mean * called) / st.sd, zw, 1e-12 * scale / st.sd) << n;
      EXPECT_NEAR(((2 - st.mean) * called - second) / st.sd, zw, 1e-12 * scale / st.sd) << n;
    }

    // r −= δz through genotype_axpy, with and without a mask.
    std::vector<std::uint8_t> keep(n);
    for (auto& k : keep) k = static_cast<std::uint8_t>(rng() % 4 != 0);
    const auto mask = make_sample_mask(keep);
    for (const bool masked : {false, true}) {
      std::vector<double> r = w;
      const double a = -0.75, c = 0.3;
      genotype_axpy(codes, n,
                    masked ? std::span<const std::uint8_t>(mask) : std::span<const std::uint8_t>(),
                    a, c, r.data());
      for (std::uint64_t i = 0; i < n; ++i) {
        const int d = test::dosage_at(codes, i);
        const bool touched = d >= 0 && (!masked || keep[i]);
        EXPECT_NEAR(r[i], touched ? w[i] + a * d + c : w[i], 1e-15) << n << " " << i;
      }
    }
  }
}

// The order dosage_dot, second_dosage_dot and missing_sum add in on every path
// (engine/kernels/genotype_dot.cpp): whole bytes into four accumulators of four lanes (byte b
// into b mod 4 while four remain, the rest into the first), then ((a0 + a1) + (a2 + a3)) by
// lane, (l0 + l1) + (l2 + l3), and the last samples one by one. `value` maps a dosage (−1 for
// a missing call) to the sample's term.
template <typename Value>
double sum_in_order(const std::vector<std::uint8_t>& codes, std::uint64_t n,
                    const std::vector<double>& w, Value value) {
  const std::uint64_t full = n / 4;
  double acc[4][4] = {};
  for (std::uint64_t b = 0; b < full; ++b)
    for (std::uint64_t l = 0; l < 4; ++l)
      acc[b < (full & ~std::uint64_t{3}) ? b % 4 : 0][l] +=
          value(test::dosage_at(codes, 4 * b + l)) * w[4 * b + l];
  double lane[4];
  for (int l = 0; l < 4; ++l) lane[l] = (acc[0][l] + acc[1][l]) + (acc[2][l] + acc[3][l]);
  double sum = (lane[0] + lane[1]) + (lane[2] + lane[3]);
  for (std::uint64_t i = 4 * full; i < n; ++i) sum += value(test::dosage_at(codes, i)) * w[i];
  return sum;
}

// Columns from no carrier of A1 to nearly all, with few missing calls or many, over lengths of
// part windows, whole windows and more: listed or streamed, a byte at a time or whole windows,
// alone or paired with the missing calls' sum, each sum has the bits of the sum over every byte.
TEST(GenotypeTest, SparseSumsHaveTheBitsOfTheFullSumAtAnyDensity) {
  std::mt19937_64 rng(21);
  std::normal_distribution<double> normal;
  const auto first = [](int d) { return static_cast<double>(std::max(0, d)); };
  const auto second = [](int d) { return d < 0 ? 0.0 : static_cast<double>(2 - d); };
  const auto missing = [](int d) { return d < 0 ? 1.0 : 0.0; };
  for (std::uint64_t n : {3u, 255u, 256u, 259u, 4095u, 4096u, 4100u, 9001u})
    for (double p : {0.0, 0.001, 0.01, 0.05, 0.2, 0.5, 0.95, 1.0})
      for (double miss : {0.0, 0.02, 0.5}) {
        const auto codes = dirty_codes(n, p, miss, rng);
        std::vector<double> w(n);
        for (double& x : w) x = normal(rng);
        const double dot = dosage_dot(codes, n, w.data());
        EXPECT_EQ(dot, sum_in_order(codes, n, w, first)) << n << " " << p << " " << miss;
        const double other = second_dosage_dot(codes, n, w.data());
        EXPECT_EQ(other, sum_in_order(codes, n, w, second)) << n << " " << p << " " << miss;
        const double missed = missing_sum(codes, n, w.data());
        EXPECT_EQ(missed, sum_in_order(codes, n, w, missing)) << n << " " << p << " " << miss;
        // Both sums in one pass over the bytes live to either: each with its bits alone.
        const std::array<double, 2> with_first = dosage_dot_and_missing_sum(codes, n, w.data());
        EXPECT_EQ(with_first[0], dot) << n << " " << p << " " << miss;
        EXPECT_EQ(with_first[1], missed) << n << " " << p << " " << miss;
        const std::array<double, 2> with_second =
            second_dosage_dot_and_missing_sum(codes, n, w.data());
        EXPECT_EQ(with_second[0], other) << n << " " << p << " " << miss;
        EXPECT_EQ(with_second[1], missed) << n << " " << p << " " << miss;
        if (p == 0.0) {
          EXPECT_FALSE(std::signbit(dot)) << n;
        }
        if (p == 1.0 && miss == 0.0) {
          EXPECT_FALSE(std::signbit(other)) << n;
        }
        if (miss == 0.0) {
          EXPECT_FALSE(std::signbit(missed)) << n;
        }
      }
}

// A kept-sample mask of n samples (make_sample_mask), a fraction `dropped` of them left out, and
// the flags it was made of.
std::pair<std::vector<std::uint8_t>, std::vector<std::uint8_t>> drop_some(std::uint64_t n,
                                                                          double dropped,
                                                                          std::mt19937_64& rng) {
  std::vector<std::uint8_t> keep(n);
  std::uniform_real_distribution<double> u;
  for (auto& k : keep) k = static_cast<std::uint8_t>(u(rng) >= dropped);
  return {make_sample_mask(keep), keep};
}

// The same columns through lists of their live bytes made once (an iterative solver's): every
// kind of list gives the bits of the kernel that finds the bytes itself, each accumulator's bytes
// are listed in increasing order and padded with bytes that add 0, and a column is refused a
// list exactly where the padded list's additions would outnumber its bytes.
TEST(GenotypeTest, SparseSumsOverLiveListsHaveTheBitsOfTheKernels) {
  std::mt19937_64 rng(23);
  std::normal_distribution<double> normal;
  std::size_t listed = 0, refused = 0;
  for (std::uint64_t n : {3u, 13u, 255u, 256u, 259u, 3642u, 4095u, 4096u, 8191u})
    for (double p : {0.0, 0.001, 0.01, 0.05, 0.2, 0.5, 0.95, 1.0})
      for (double miss : {0.0, 0.02, 0.5}) {
        const auto codes = dirty_codes(n, p, miss, rng);
        const auto [mask, keep] = drop_some(n, 0.1, rng);
        std::vector<double> w(n);
        for (double& x : w) x = normal(rng);
        for (const bool second : {false, true})
          for (const bool with_missing : {false, true}) {
            const detail::live_sums sums{second, with_missing};
            const std::string at = std::to_string(n) + " " + std::to_string(p) + " " +
                                   std::to_string(miss) + " " + std::to_string(second) +
                                   std::to_string(with_missing);
            std::array<double, 2> expect{};
            if (with_missing)
              expect = second ? second_dosage_dot_and_missing_sum(codes, n, w.data())
                              : dosage_dot_and_missing_sum(codes, n, w.data());
            else
              expect[0] =
                  second ? second_dosage_dot(codes, n, w.data()) : dosage_dot(codes, n, w.data());
            // The bytes a sum adds, by the dosages of their samples, and their accumulators.
            const std::uint64_t full = n / 4;
            std::vector<std::uint16_t> by_accumulator[4];
            for (std::uint64_t b = 0; b < full; ++b) {
              bool any = false;
              for (std::uint64_t l = 0; l < 4; ++l) {
                const int d = test::dosage_at(codes, 4 * b + l);
                any = any || (d > 0 && !second) || (d >= 0 && d < 2 && second) ||
                      (d < 0 && with_missing);
              }
              if (any)
                by_accumulator[b < (full & ~std::uint64_t{3}) ? b % 4 : 0].push_back(
                    static_cast<std::uint16_t>(b));
            }
            std::size_t groups = 0;
            for (const auto& bytes : by_accumulator) groups = std::max(groups, bytes.size());
            std::vector<std::uint32_t> list = {7};  // appended after what is there
            const bool made = detail::append_live_list(codes, n, mask, sums, list);
            ASSERT_EQ(made, 4 * groups * (with_missing ? 2 : 1) <= full) << at;
            if (!made) {
              EXPECT_EQ(list.size(), 1u) << at;
              ++refused;
              continue;
            }
            ++listed;
            ASSERT_EQ(list.size(), 1 + 2 + 4 * groups) << at;
            EXPECT_EQ(list[1], groups) << at;
            // The last part byte and the lanes of its kept samples.
            unsigned last_lanes = 0;
            for (std::uint64_t i = 4 * full; i < n; ++i) last_lanes |= unsigned{keep[i]} << (i % 4);
            EXPECT_EQ(list[2], n % 4 == 0 ? 0u : codes[full] | last_lanes << 8) << at;
            // Entry k of group g: accumulator k's byte g, or a byte that adds 0 to every sum, as
            // the offsets of its four values of w and of its row of a table of 32 or 64 bytes.
            const std::uint32_t row = with_missing ? 64 : 32;
            const std::uint32_t dead = row * (second ? 0x00u : 0xffu) << 16;
            for (std::size_t g = 0; g < groups; ++g)
              for (std::size_t k = 0; k < 4; ++k) {
                const std::uint32_t expect_entry =
                    g < by_accumulator[k].size()
                        ? 32u * by_accumulator[k][g] | row * codes[by_accumulator[k][g]] << 16
                        : dead;
                EXPECT_EQ(list[3 + 4 * g + k], expect_entry) << at << " group " << g << " " << k;
              }
            const std::array<double, 2> sums_listed =
                detail::listed_sums(list.data() + 1, n, sums, w.data());
            EXPECT_EQ(sums_listed[0], expect[0]) << at;
            EXPECT_EQ(std::signbit(sums_listed[0]), std::signbit(expect[0])) << at;
            EXPECT_EQ(sums_listed[1], expect[1]) << at;
            // Two lists side by side: each the bits it has alone (the other of another kind).
            const detail::live_sums other{!second, false};
            std::vector<std::uint32_t> other_list;
            if (detail::append_live_list(codes, n, {}, other, other_list)) {
              const std::array<double, 2> alone =
                  detail::listed_sums(other_list.data(), n, other, w.data());
              const std::array<double, 4> both = detail::listed_sums_pair(
                  list.data() + 1, sums, other_list.data(), other, n, w.data());
              EXPECT_EQ(both[0], sums_listed[0]) << at;
              EXPECT_EQ(both[1], sums_listed[1]) << at;
              EXPECT_EQ(both[2], alone[0]) << at;
              EXPECT_EQ(both[3], alone[1]) << at;
            }
          }
      }
  EXPECT_GT(listed, 100u);
  EXPECT_GT(refused, 50u);
  // A column past what a 16-bit offset of w reaches is refused a list.
  std::vector<std::uint32_t> list;
  EXPECT_FALSE(detail::append_live_list(std::vector<std::uint8_t>(2049, 0xff), 4 * 2049, {},
                                        {false, false}, list));
  EXPECT_TRUE(list.empty());
}

// The residual update with the mean's part deferred, from the codes and from a list: both
// change r only on kept samples with a copy of the counted allele or a missing call, there to
// (r + h·x) − g·missing, and leave every other entry as it was, to the bit.
TEST(GenotypeTest, SparseSumsDeferredUpdatesTouchTheAlleleAndMissingCallsAlone) {
  std::mt19937_64 rng(29);
  std::normal_distribution<double> normal;
  for (std::uint64_t n : {3u, 255u, 3642u, 4096u, 8191u})
    for (double p : {0.0, 0.01, 0.3, 0.99})
      for (double miss : {0.0, 0.05})
        for (const bool masked : {false, true})
          for (const bool second : {false, true}) {
            const std::string at = std::to_string(n) + " " + std::to_string(p) + " " +
                                   std::to_string(miss) + " " + std::to_string(masked) +
                                   std::to_string(second);
            const auto codes = dirty_codes(n, p, miss, rng);
            auto [mask, keep] = drop_some(n, masked ? 0.2 : 0.0, rng);
            if (!masked) mask.clear();
            std::vector<double> r(n);
            for (double& x : r) x = normal(rng);
            r[0] = -0.0;  // a negative zero stays one where nothing is added
            const double h = normal(rng), g = normal(rng);
            std::vector<double> expect = r;
            for (std::uint64_t i = 0; i < n; ++i) {
              const int d = test::dosage_at(codes, i);
              const double x = d < 0 ? 0.0 : second ? 2.0 - d : d, missing = d < 0;
              if (keep[i] && (x > 0 || missing > 0)) expect[i] = (r[i] + h * x) - g * missing;
            }
            const detail::live_sums sums{second, miss > 0};
            std::vector<double> scanned = r;
            detail::deferred_update(codes, n, mask, sums, h, g, scanned.data());
            for (std::uint64_t i = 0; i < n; ++i) {
              EXPECT_EQ(scanned[i], expect[i]) << at << " sample " << i;
              EXPECT_EQ(std::signbit(scanned[i]), std::signbit(expect[i])) << at << " " << i;
            }
            std::vector<std::uint32_t> list;
            if (!detail::append_live_list(codes, n, mask, sums, list)) continue;
            std::vector<double> listed = r;
            detail::deferred_update(list.data(), n, mask, sums, h, g, listed.data());
            for (std::uint64_t i = 0; i < n; ++i) {
              EXPECT_EQ(listed[i], expect[i]) << at << " sample " << i;
              EXPECT_EQ(std::signbit(listed[i]), std::signbit(expect[i])) << at << " " << i;
            }
          }
}

}  // namespace
}  // namespace colflow
