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

using live_list::header;

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
  const std::uint32_t* entry = live_list::entries(list);
  double acc[2][4][4] = {};
  for (std::size_t g = 0; g < live_list::groups(list); ++g)
    for (std::size_t k = 0; k < 4; ++k, ++entry) {
      const std::size_t b = live_list::offset(*entry);
      const double* row = t.rows + live_list::row_at(*entry) / sizeof(double);
      for (std::size_t s = 0; s < t.sums; ++s)
        for (std::size_t l = 0; l < 4; ++l) acc[s][k][l] += row[4 * s + l] * w[4 * b + l];
    }
  for (std::size_t s = 0; s < t.sums; ++s) {
    double lane[4];
    for (std::size_t l = 0; l < 4; ++l)
      lane[l] = (acc[s][0][l] + acc[s][1][l]) + (acc[s][2][l] + acc[s][3][l]);
    total[s] = (lane[0] + lane[1]) + (lane[2] + lane[3]);
    for (std::size_t i = n / 4 * 4; i < n; ++i)
      total[s] +=
          t.rows[t.stride * ((live_list::last_byte(list) >> (2 * (i % 4))) & 3u) + 4 * s] * w[i];
  }
  return total;
}

#if COLFLOW_X86_DISPATCH
// A listed byte's S sums added to accumulator d (S registers): a load of w and of the table's
// row at the entry's two offsets.
template <std::size_t S>
[[gnu::target("avx2,fma"), gnu::always_inline]] inline void add_entry(const double* rows,
                                                                      const double* w,
                                                                      std::uint32_t entry,
                                                                      __m256d* d) noexcept {
  const auto* w_bytes = reinterpret_cast<const char*>(w);
  const auto* row_bytes = reinterpret_cast<const char*>(rows);
  const __m256d weights =
      _mm256_loadu_pd(reinterpret_cast<const double*>(w_bytes + live_list::w_at(entry)));
  const auto* row = reinterpret_cast<const double*>(row_bytes + live_list::row_at(entry));
  for (std::size_t s = 0; s < S; ++s)
    d[s] = _mm256_fmadd_pd(_mm256_load_pd(row + 4 * s), weights, d[s]);
}

// The four accumulators of a list's sums in registers, group by group.
template <std::size_t S, std::size_t Stride>
struct avx2_list_sums {
  const double* rows;
  const std::uint32_t* entry;
  __m256d d[4][S];

  [[gnu::target("avx2,fma"), gnu::always_inline]] avx2_list_sums(const double* table,
                                                                 const std::uint32_t* list) noexcept
      : rows(table), entry(live_list::entries(list)) {
    for (std::size_t k = 0; k < 4; ++k)
      for (std::size_t s = 0; s < S; ++s) d[k][s] = _mm256_setzero_pd();
  }
  // The next group's four entries.
  [[gnu::target("avx2,fma"), gnu::always_inline]] void add_group(const double* w) noexcept {
#pragma GCC unroll 4
    for (std::size_t k = 0; k < 4; ++k) add_entry<S>(rows, w, entry[k], d[k]);
    entry += 4;
  }
  // The accumulators added as the kernels add them, then the last samples.
  [[gnu::target("avx2,fma"), gnu::always_inline]] void finish(const std::uint32_t* list,
                                                              std::size_t n, const double* w,
                                                              double* total) const noexcept {
    const unsigned last = live_list::last_byte(list);
    for (std::size_t s = 0; s < S; ++s) {
      total[s] = lanes_sum(
          _mm256_add_pd(_mm256_add_pd(d[0][s], d[1][s]), _mm256_add_pd(d[2][s], d[3][s])));
      for (std::size_t i = n / 4 * 4; i < n; ++i)
        total[s] = std::fma(rows[Stride * ((last >> (2 * (i % 4))) & 3u) + 4 * s], w[i], total[s]);
    }
  }
};

// listed_portable in AVX2 registers: the four accumulators' chains run side by side.
template <std::size_t S, std::size_t Stride>
[[gnu::target("avx2,fma")]] std::array<double, 2> listed_avx2(const double* rows,
                                                              const std::uint32_t* list,
                                                              std::size_t n,
                                                              const double* w) noexcept {
  avx2_list_sums<S, Stride> sums(rows, list);
  for (std::size_t g = 0; g < live_list::groups(list); ++g) sums.add_group(w);
  std::array<double, 2> total{};
  sums.finish(list, n, w, total.data());
  return total;
}

// Two lists' sums, their groups side by side while both have some.
template <std::size_t Sa, std::size_t StrideA, std::size_t Sb, std::size_t StrideB>
[[gnu::target("avx2,fma")]] std::array<double, 4> listed_pair_avx2(
    const double* a_rows, const std::uint32_t* a, const double* b_rows, const std::uint32_t* b,
    std::size_t n, const double* w) noexcept {
  avx2_list_sums<Sa, StrideA> x(a_rows, a);
  avx2_list_sums<Sb, StrideB> y(b_rows, b);
  const std::size_t both = std::min(live_list::groups(a), live_list::groups(b));
  for (std::size_t g = 0; g < both; ++g) {
    x.add_group(w);
    y.add_group(w);
  }
  for (std::size_t g = both; g < live_list::groups(a); ++g) x.add_group(w);
  for (std::size_t g = both; g < live_list::groups(b); ++g) y.add_group(w);
  std::array<double, 4> total{};
  x.finish(a, n, w, total.data());
  y.finish(b, n, w, total.data() + 2);
  return total;
}

template <std::size_t Sa, std::size_t StrideA>
std::array<double, 4> listed_pair_avx2(const double* a_rows, const std::uint32_t* a,
                                       const sum_table& b_table, const std::uint32_t* b,
                                       std::size_t n, const double* w) noexcept {
  return b_table.sums == 2 ? listed_pair_avx2<Sa, StrideA, 2, 8>(a_rows, a, b_table.rows, b, n, w)
                           : listed_pair_avx2<Sa, StrideA, 1, 4>(a_rows, a, b_table.rows, b, n, w);
}
#endif

}  // namespace

bool append_live_list(std::span<const std::uint8_t> codes, std::size_t n,
                      std::span<const std::uint8_t> mask, live_sums sums,
                      std::vector<std::uint32_t>& out) {
  const unsigned* live = nonzero_lanes.of[sums.second_allele][sums.with_missing];
  const std::size_t full = n / 4, grouped = full & ~std::size_t{3};
  if (full > live_list::most_bytes || codes.size() < (n + 3) / 4) return false;
  std::array<std::size_t, 4> count{};
  for (std::size_t b = 0; b < full; ++b)
    if (live[codes[b]]) ++count[b < grouped ? b % 4 : 0];
  const std::size_t groups = *std::max_element(count.begin(), count.end());
  // A listed byte costs an addition a sum, as a streamed byte does.
  if (4 * groups * (sums.with_missing ? 2 : 1) > full) return false;
  // Entry of byte b: the offsets of its values of w and of its row of the sums' table.
  const auto row_bytes = static_cast<std::uint32_t>(live_list::row_bytes(sums));
  const auto entry = [&](std::size_t b) {
    return static_cast<std::uint32_t>(32 * b) | (row_bytes * codes[b]) << 16;
  };
  const std::size_t at = out.size() + header;
  out.resize(at + 4 * groups, (row_bytes * dead_byte(sums)) << 16);
  out[at - 2] = static_cast<std::uint32_t>(groups);
  out[at - 1] = 0;
  if (n % 4 != 0) {
    const std::uint8_t m = mask.empty() ? std::uint8_t{0x55} : mask[full];
    out[at - 1] = codes[full] | live_list::kept_lanes(m) << 8;
  }
  count = {};
  for (std::size_t b = 0; b < full; ++b)
    if (live[codes[b]]) {
      const std::size_t k = b < grouped ? b % 4 : 0;
      out[at + 4 * count[k]++ + k] = entry(b);
    }
  return true;
}

std::array<double, 4> listed_sums_pair(const std::uint32_t* a, live_sums a_sums,
                                       const std::uint32_t* b, live_sums b_sums, std::size_t n,
                                       const double* w) noexcept {
#if COLFLOW_X86_DISPATCH
  if (cpu_has_avx2_fma()) {
    const sum_table ta = table_of(a_sums), tb = table_of(b_sums);
    return ta.sums == 2 ? listed_pair_avx2<2, 8>(ta.rows, a, tb, b, n, w)
                        : listed_pair_avx2<1, 4>(ta.rows, a, tb, b, n, w);
  }
#endif
  const std::array<double, 2> x = listed_sums(a, n, a_sums, w), y = listed_sums(b, n, b_sums, w);
  return {x[0], x[1], y[0], y[1]};
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
