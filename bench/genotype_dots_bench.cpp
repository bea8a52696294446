// What the products of packed genotype columns with several vectors cost (dosage_dots, the
// kernel of `assoc`: a vector per phenotype and covariate), by number of vectors, on the
// kernel this CPU takes (AVX-512, AVX2 or portable; docs/SCALING.md "Several phenotypes").
//
// Columns of random codes are multiplied in calls of 20 columns (what an assoc task takes)
// with m vectors of 100,000 samples. Printed per m: ms per 160 columns, picoseconds per
// multiply-add (one sample of one column with one vector) and multiply-adds per second on one
// core; the rounds alternate the m values and the medians are printed.
//
// Run: genotype_dots_bench [--rounds N] [--samples N] [--vectors M,M,...]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "colflow/kernels/genotype_kernels.hpp"

namespace {

std::vector<std::size_t> parse_list(const char* text) {
  std::vector<std::size_t> out;
  for (const char* p = text; *p != '\0';) {
    char* end = nullptr;
    out.push_back(std::strtoull(p, &end, 10));
    p = *end == ',' ? end + 1 : end;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 7;
  std::size_t n = 100000;
  std::vector<std::size_t> vectors = {1, 2, 5, 10, 20};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--rounds") {
      rounds = std::atoi(argv[i + 1]);
    } else if (flag == "--samples") {
      n = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (flag == "--vectors") {
      vectors = parse_list(argv[i + 1]);
    } else {
      std::fprintf(stderr,
                   "usage: genotype_dots_bench [--rounds N] [--samples N] [--vectors M,...]\n");
      return 2;
    }
  }
  constexpr std::size_t columns = 160, call = 20;
  const std::size_t bytes = colflow::genotype_column_bytes(n);
  std::mt19937_64 rng(1);
  std::vector<std::uint8_t> codes(columns * bytes);
  for (auto& b : codes) b = static_cast<std::uint8_t>(rng());
  std::vector<const std::uint8_t*> column(columns);
  for (std::size_t c = 0; c < columns; ++c) column[c] = codes.data() + c * bytes;
  const std::size_t most = *std::max_element(vectors.begin(), vectors.end());
  std::vector<double> w(n * most), out(call * most);
  std::normal_distribution<double> normal;
  for (double& x : w) x = normal(rng);

  std::vector<std::vector<double>> seconds(vectors.size());
  double sink = 0;
  // The vectors are prepared once, as a scan does (dosage_vectors).
  std::vector<colflow::dosage_vectors> prepared;
  for (std::size_t m : vectors) prepared.emplace_back(w.data(), n, n, m);
  for (int r = 0; r < rounds; ++r)
    for (std::size_t k = 0; k < vectors.size(); ++k) {
      const auto start = std::chrono::steady_clock::now();
      for (std::size_t c = 0; c < columns; c += call) {
        colflow::dosage_dots(column.data() + c, call, prepared[k], out.data());
        sink += out[0];
      }
      seconds[k].push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  std::printf("%zu columns x %zu samples, calls of %zu columns, medians of %d rounds\n", columns, n,
              call, rounds);
  std::printf("%8s %10s %16s %22s\n", "vectors", "ms", "ps per mult-add", "mult-adds per s (1e9)");
  for (std::size_t k = 0; k < vectors.size(); ++k) {
    std::sort(seconds[k].begin(), seconds[k].end());
    const double s = seconds[k][seconds[k].size() / 2];
    const double products = static_cast<double>(columns * n * vectors[k]);
    std::printf("%8zu %10.3f %16.2f %22.1f\n", vectors[k], s * 1e3, s / products * 1e12,
                products / s / 1e9);
  }
  return sink == 0.123 ? 1 : 0;  // keeps the products from being optimised away
}
