// Live-byte lists of packed genotype columns and the sums over them (live_lists_internal.hpp).
#include <algorithm>
#include <cmath>

#include "kernels/byte_values_internal.hpp"
#include "kernels/live_lists_internal.hpp"
#include "simd/cpu_dispatch_internal.hpp"

namespace colflow::detail {
namespace {

using namespace byte_tables;

// The values a list's sums take of a byte: row `byte` of `rows`, `stride` doubles a row, sum s
// at 4 s (a table of byte_values for one sum, of byte_values_and_missing for two).
struct sum_table {
  const double* rows;
  std::size_t stride, sums;
};

sum_table table_of(live_sums s) noexcept {
  if (s.with_missing)
    return {s.second_allele ? second_table_and_missing.eight[0] : table_and_missing.eight[0], 8, 2};
  return {s.second_allele ? second_table.four[0] : table.four[0], 4, 1};
}

// Whether a byte is live: one of its samples has a value other than 0 under one of the sums, for
// each kind of live_sums (index 2 · second_allele + with_missing).
struct live_flags {
  bool of[4][256];
  constexpr live_flags() noexcept : of{} {
    for (unsigned kind = 0; kind < 4; ++kind)
      for (unsigned b = 0; b < 256; ++b)
        for (unsigned l = 0; l < 4; ++l) {
          const double value = kind >= 2 ? second_table.four[b][l] : table.four[b][l];
          of[kind][b] =
              of[kind][b] || value != 0.0 || (kind % 2 == 1 && missing_table.four[b][l] != 0.0);
        }
  }
};
constexpr live_flags live_bytes{};

// A list's entries before its bytes: the number of groups of four entries, and the last part
// byte.
constexpr std::size_t header = 2;

// A byte whose four samples add 0 to every sum of `sums`: two copies of A1 (0b00) count no second
// allele, no missing call; no A1 (0b11) counts no first allele, no missing call.
constexpr std::uint8_t dead_byte(live_sums sums) noexcept {
  return sums.second_allele ? 0x00 : 0xff;
}

// The sums of the bytes listed: accumulator k adds entries k, k + 4, ... (its bytes in
// increasing order, then +0s), lane by lane, then ((a0 + a1) + (a2 + a3)) lane by lane and
// (lane 0 + lane 1) + (lane 2 + lane 3), then the samples after the last whole byte one by one,
// as the kernels of genotype_dot.cpp add. Every product is of 0, 1 or 2 and a double, exact, so
// a product and a sum round as a fused one.
std::array<double, 2> listed_portable(const sum_table& t, const std::uint32_t* list, std::size_t n,
                                      const double* w) noexcept {
  std::array<double, 2> total{};
  const std::uint32_t* entry = list + header;
  double acc[2][4][4] = {};
  for (std::size_t g = 0; g < list[0]; ++g)
    for (std::size_t k = 0; k < 4; ++k, ++entry) {
      const std::size_t b = *entry & 0xffffu;
      const double* row = t.rows + t.stride * (*entry >> 16);
      for (std::size_t s = 0; s < t.sums; ++s)
        for (std::size_t l = 0; l < 4; ++l) acc[s][k][l] += row[4 * s + l] * w[4 * b + l];
    }
  for (std::size_t s = 0; s < t.sums; ++s) {
    double lane[4];
    for (std::size_t l = 0; l < 4; ++l)
      lane[l] = (acc[s][0][l] + acc[s][1][l]) + (acc[s][2][l] + acc[s][3][l]);
    total[s] = (lane[0] + lane[1]) + (lane[2] + lane[3]);
    for (std::size_t i = n / 4 * 4; i < n; ++i)
      total[s] += t.rows[t.stride * ((list[1] >> (2 * (i % 4))) & 3u) + 4 * s] * w[i];
  }
  return total;
}

#if COLFLOW_X86_DISPATCH
// A listed byte's S sums added to accumulator d (S registers).
template <std::size_t S, std::size_t Stride>
[[gnu::target("avx2,fma"), gnu::always_inline]] inline void add_entry(const double* rows,
                                                                      const double* w,
                                                                      std::uint32_t entry,
                                                                      __m256d* d) noexcept {
  const __m256d weights = _mm256_loadu_pd(w + 4 * (entry & 0xffffu));
  const double* row = rows + Stride * (entry >> 16);
  for (std::size_t s = 0; s < S; ++s)
    d[s] = _mm256_fmadd_pd(_mm256_load_pd(row + 4 * s), weights, d[s]);
}

// listed_portable in AVX2 registers: the four accumulators' chains run side by side.
template <std::size_t S, std::size_t Stride>
[[gnu::target("avx2,fma")]] std::array<double, 2> listed_avx2(const double* rows,
                                                              const std::uint32_t* list,
                                                              std::size_t n,
                                                              const double* w) noexcept {
  __m256d d[4][S];
  for (std::size_t k = 0; k < 4; ++k)
    for (std::size_t s = 0; s < S; ++s) d[k][s] = _mm256_setzero_pd();
  const std::uint32_t* entry = list + header;
  for (std::size_t g = 0; g < list[0]; ++g, entry += 4)
#pragma GCC unroll 4
    for (std::size_t k = 0; k < 4; ++k) add_entry<S, Stride>(rows, w, entry[k], d[k]);
  std::array<double, 2> total{};
  for (std::size_t s = 0; s < S; ++s) {
    total[s] =
        lanes_sum(_mm256_add_pd(_mm256_add_pd(d[0][s], d[1][s]), _mm256_add_pd(d[2][s], d[3][s])));
    for (std::size_t i = n / 4 * 4; i < n; ++i)
      total[s] = std::fma(rows[Stride * ((list[1] >> (2 * (i % 4))) & 3u) + 4 * s], w[i], total[s]);
  }
  return total;
}
#endif

}  // namespace

bool append_live_list(std::span<const std::uint8_t> codes, std::size_t n, live_sums sums,
                      std::vector<std::uint32_t>& out) {
  const bool* live = live_bytes.of[2 * sums.second_allele + sums.with_missing];
  const std::size_t full = n / 4, grouped = full & ~std::size_t{3};
  if (full > 0xffffu + std::size_t{1} || codes.size() < (n + 3) / 4) return false;
  std::array<std::size_t, 4> count{};
  for (std::size_t b = 0; b < full; ++b)
    if (live[codes[b]]) ++count[b < grouped ? b % 4 : 0];
  const std::size_t groups = *std::max_element(count.begin(), count.end());
  if (4 * groups > full) return false;
  const std::size_t at = out.size() + header;
  out.resize(at + 4 * groups, std::uint32_t{dead_byte(sums)} << 16);
  out[at - 2] = static_cast<std::uint32_t>(groups);
  out[at - 1] = n % 4 == 0 ? 0u : codes[full];
  count = {};
  for (std::size_t b = 0; b < full; ++b)
    if (live[codes[b]]) {
      const std::size_t k = b < grouped ? b % 4 : 0;
      out[at + 4 * count[k]++ + k] = static_cast<std::uint32_t>(b) | std::uint32_t{codes[b]} << 16;
    }
  return true;
}

std::array<double, 2> listed_sums(const std::uint32_t* list, std::size_t n, live_sums sums,
                                  const double* w) noexcept {
  const sum_table t = table_of(sums);
#if COLFLOW_X86_DISPATCH
  if (cpu_has_avx2_fma())
    return sums.with_missing ? listed_avx2<2, 8>(t.rows, list, n, w)
                             : listed_avx2<1, 4>(t.rows, list, n, w);
#endif
  return listed_portable(t, list, n, w);
}

}  // namespace colflow::detail
