// What BayesR's products of one packed genotype column with the residual cost (dosage_dot and
// dosage_dot_and_missing_sum, the sums that skip the bytes without the counted allele), by the
// counted allele's frequency, on the kernel this CPU takes (COLFLOW_SIMD caps it).
//
// Columns of 4,096 samples (one sample block, as BayesR hands them to its kernels) drawn at each
// frequency under Hardy-Weinberg, with 1% missing calls for the paired sum and none for the
// single one. Printed per frequency: nanoseconds per column for each sum, medians of rounds that
// alternate the frequencies. Two builds are compared by running their programs in turns.
//
// Run: sparse_sums_bench [--rounds N] [--samples N]
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "colflow/kernels/genotype_kernels.hpp"

namespace {

// `columns` columns of n samples at A1 frequency f, a fraction `missing` of calls missing.
std::vector<std::uint8_t> draw_columns(std::size_t columns, std::size_t n, double f, double missing,
                                       std::mt19937_64& rng) {
  const std::size_t bytes = colflow::genotype_column_bytes(n);
  std::vector<std::uint8_t> codes(columns * bytes, 0);
  std::uniform_real_distribution<double> u;
  for (std::size_t c = 0; c < columns; ++c)
    for (std::size_t i = 0; i < n; ++i) {
      unsigned code = 0b11;  // no A1
      if (u(rng) < missing)
        code = 0b01;
      else {
        const int a1 = (u(rng) < f) + (u(rng) < f);
        code = a1 == 2 ? 0b00 : a1 == 1 ? 0b10 : 0b11;
      }
      codes[c * bytes + i / 4] |= static_cast<std::uint8_t>(code << (2 * (i % 4)));
    }
  return codes;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 15;
  std::size_t n = 4096;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--rounds") {
      rounds = std::atoi(argv[i + 1]);
    } else if (flag == "--samples") {
      n = std::strtoull(argv[i + 1], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: sparse_sums_bench [--rounds N] [--samples N]\n");
      return 2;
    }
  }
  constexpr std::size_t columns = 2000;
  const std::vector<double> frequencies = {0.002, 0.01, 0.03, 0.1, 0.25, 0.5};
  const std::size_t bytes = colflow::genotype_column_bytes(n);
  std::mt19937_64 rng(1);
  std::vector<double> w(n);
  std::normal_distribution<double> normal;
  for (double& x : w) x = normal(rng);
  std::vector<std::vector<std::uint8_t>> full, with_missing;
  for (double f : frequencies) {
    full.push_back(draw_columns(columns, n, f, 0.0, rng));
    with_missing.push_back(draw_columns(columns, n, f, 0.01, rng));
  }
  std::vector<std::vector<double>> single(frequencies.size()), paired(frequencies.size());
  double sink = 0;
  const auto per_column = [&](auto&& sum) {
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t c = 0; c < columns; ++c) sink += sum(c);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
           static_cast<double>(columns) * 1e9;
  };
  for (int r = 0; r < rounds; ++r)
    for (std::size_t k = 0; k < frequencies.size(); ++k) {
      single[k].push_back(per_column([&](std::size_t c) {
        return colflow::dosage_dot({full[k].data() + c * bytes, bytes}, n, w.data());
      }));
      paired[k].push_back(per_column([&](std::size_t c) {
        const std::array<double, 2> s = colflow::dosage_dot_and_missing_sum(
            {with_missing[k].data() + c * bytes, bytes}, n, w.data());
        return s[0] + s[1];
      }));
    }
  std::printf("%zu columns x %zu samples, medians of %d rounds (ns per column)\n", columns, n,
              rounds);
  std::printf("%10s %12s %22s\n", "A1 freq", "dosage_dot", "with missing (1%)");
  for (std::size_t k = 0; k < frequencies.size(); ++k)
    std::printf("%10.3f %12.1f %22.1f\n", frequencies[k], median(single[k]), median(paired[k]));
  return sink == 0.123 ? 1 : 0;  // keeps the sums from being optimised away
}
