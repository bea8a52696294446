// Residual updates with the mean's part deferred (deferred_update_internal.hpp).
#include "kernels/byte_values_internal.hpp"
#include "kernels/deferred_update_internal.hpp"
#include "simd/cpu_dispatch_internal.hpp"

namespace colflow::detail {
namespace {

using namespace byte_tables;

using live_list::kept_lanes;

// One sample: its count x of the allele and whether its call is missing. The products are of 0,
// 1 or 2 and a double, exact, so the plain steps round as the fused ones do.
inline double updated(double r, double h, double x, double ng, double missing) noexcept {
  return (r + h * x) + ng * missing;
}

// The samples after the last whole byte: those of `byte` below n, kept where `lanes` says.
void update_last(std::uint8_t byte, unsigned lanes, std::size_t n, const unsigned* lanes_of,
                 const double* x_rows, double h, double ng, double* r) noexcept {
  for (std::size_t i = n / 4 * 4; i < n; ++i) {
    const unsigned code = (byte >> (2 * (i % 4))) & 3u;
    // Byte `code` holds the sample as its first, so its first lane and its first value.
    if ((lanes >> (i % 4) & 1u) && (lanes_of[code] & 1u))
      r[i] = updated(r[i], h, x_rows[4 * code], ng, missing_table.four[code][0]);
  }
}

// Byte b's four samples where `lanes` says.
inline void update_byte(std::uint8_t byte, unsigned lanes, std::size_t b, const double* x_rows,
                        double h, double ng, double* r) noexcept {
  for (unsigned l = 0; l < 4; ++l)
    if (lanes >> l & 1u)
      r[4 * b + l] =
          updated(r[4 * b + l], h, x_rows[4 * byte + l], ng, missing_table.four[byte][l]);
}

#if COLFLOW_X86_DISPATCH
// All ones in the lanes of bit l of the index.
struct lane_masks {
  alignas(32) std::int64_t of[16][4];
  constexpr lane_masks() noexcept : of{} {
    for (unsigned m = 0; m < 16; ++m)
      for (unsigned l = 0; l < 4; ++l) of[m][l] = (m >> l & 1u) ? -1 : 0;
  }
};
constexpr lane_masks blend_masks{};

[[gnu::target("avx2,fma"), gnu::always_inline]] inline void update_byte_avx2(
    std::uint8_t byte, unsigned lanes, std::size_t b, const double* x_rows, __m256d h, __m256d ng,
    double* r) noexcept {
  const __m256d before = _mm256_loadu_pd(r + 4 * b);
  const __m256d after =
      _mm256_fmadd_pd(ng, _mm256_load_pd(missing_table.four[byte]),
                      _mm256_fmadd_pd(h, _mm256_load_pd(x_rows + 4 * byte), before));
  const __m256d keep = _mm256_load_pd(reinterpret_cast<const double*>(blend_masks.of[lanes]));
  _mm256_storeu_pd(r + 4 * b, _mm256_blendv_pd(before, after, keep));
}

[[gnu::target("avx2,fma")]] void scan_avx2(const std::uint8_t* codes, std::size_t n,
                                           const std::uint8_t* mask, const unsigned* lanes_of,
                                           const double* x_rows, double h, double ng,
                                           double* r) noexcept {
  const __m256d hv = _mm256_set1_pd(h), ngv = _mm256_set1_pd(ng);
  for (std::size_t b = 0; b < n / 4; ++b) {
    const unsigned lanes = lanes_of[codes[b]] & (mask ? kept_lanes(mask[b]) : 0xfu);
    if (lanes != 0) update_byte_avx2(codes[b], lanes, b, x_rows, hv, ngv, r);
  }
}

// Masked: a mask of kept samples is given. Shift: the entries' table rows are 2^Shift bytes.
template <bool Masked, unsigned Shift>
[[gnu::target("avx2,fma")]] void listed_avx2(const std::uint32_t* list, const std::uint8_t* mask,
                                             const unsigned* lanes_of, const double* x_rows,
                                             double h, double ng, double* r) noexcept {
  const __m256d hv = _mm256_set1_pd(h), ngv = _mm256_set1_pd(ng);
  const std::uint32_t* entry = live_list::entries(list);
  for (std::size_t e = 0; e < 4 * live_list::groups(list); ++e) {
    const auto byte = static_cast<std::uint8_t>(live_list::row_at(entry[e]) >> Shift);
    const std::size_t b = live_list::offset(entry[e]);
    const unsigned lanes = Masked ? lanes_of[byte] & kept_lanes(mask[b]) : lanes_of[byte];
    if (lanes != 0) update_byte_avx2(byte, lanes, b, x_rows, hv, ngv, r);
  }
}

template <bool Masked>
void listed_avx2(const std::uint32_t* list, const std::uint8_t* mask, live_sums sums,
                 const unsigned* lanes_of, const double* x_rows, double h, double ng,
                 double* r) noexcept {
  if (sums.with_missing)
    listed_avx2<Masked, 6>(list, mask, lanes_of, x_rows, h, ng, r);
  else
    listed_avx2<Masked, 5>(list, mask, lanes_of, x_rows, h, ng, r);
}
#endif

}  // namespace

void deferred_update(std::span<const std::uint8_t> codes, std::size_t n,
                     std::span<const std::uint8_t> mask, live_sums sums, double h, double g,
                     double* r) noexcept {
  const unsigned* lanes_of = nonzero_lanes.of[sums.second_allele][1];
  const double* x_rows = sums.second_allele ? second_table.four[0] : table.four[0];
  const std::uint8_t* m = mask.empty() ? nullptr : mask.data();
  const std::size_t full = n / 4;
  if (n % 4 != 0)
    update_last(codes[full], m ? kept_lanes(m[full]) : 0xfu, n, lanes_of, x_rows, h, -g, r);
#if COLFLOW_X86_DISPATCH
  if (cpu_has_avx2_fma()) return scan_avx2(codes.data(), n, m, lanes_of, x_rows, h, -g, r);
#endif
  for (std::size_t b = 0; b < full; ++b) {
    const unsigned lanes = lanes_of[codes[b]] & (m ? kept_lanes(m[b]) : 0xfu);
    if (lanes != 0) update_byte(codes[b], lanes, b, x_rows, h, -g, r);
  }
}

void deferred_update(const std::uint32_t* list, std::size_t n, std::span<const std::uint8_t> mask,
                     live_sums sums, double h, double g, double* r) noexcept {
  const unsigned* lanes_of = nonzero_lanes.of[sums.second_allele][1];
  const double* x_rows = sums.second_allele ? second_table.four[0] : table.four[0];
  const std::uint8_t* m = mask.empty() ? nullptr : mask.data();
  if (n % 4 != 0)
    update_last(static_cast<std::uint8_t>(live_list::last_byte(list)), live_list::last_lanes(list),
                n, lanes_of, x_rows, h, -g, r);
#if COLFLOW_X86_DISPATCH
  if (cpu_has_avx2_fma())
    return m ? listed_avx2<true>(list, m, sums, lanes_of, x_rows, h, -g, r)
             : listed_avx2<false>(list, m, sums, lanes_of, x_rows, h, -g, r);
#endif
  const std::uint32_t* entry = live_list::entries(list);
  for (std::size_t e = 0; e < 4 * live_list::groups(list); ++e) {
    const auto byte = static_cast<std::uint8_t>(live_list::byte(entry[e], sums));
    const std::size_t b = live_list::offset(entry[e]);
    const unsigned lanes = lanes_of[byte] & (m ? kept_lanes(m[b]) : 0xfu);
    if (lanes != 0) update_byte(byte, lanes, b, x_rows, h, -g, r);
  }
}

}  // namespace colflow::detail
