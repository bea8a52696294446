// Per-sample counts of missing calls (kernels/missing_tally_internal.hpp).
#include <algorithm>

#include "colflow/kernels/genotype_kernels.hpp"
#include "kernels/missing_tally_internal.hpp"
#include "simd/cpu_dispatch_internal.hpp"

namespace colflow {
namespace {

// Adds one to the byte counter of each masked sample whose code is 0b01 (low bit set, high
// bit clear): a loop of shifts and masks that the compiler vectorises for the target it is
// inlined into (the counters share no byte with the codes or the mask).
__attribute__((always_inline)) inline void add_missing_bytes(const std::uint8_t* __restrict codes,
                                                             const std::uint8_t* __restrict mask,
                                                             std::size_t bytes,
                                                             std::uint8_t* pending) noexcept {
  std::uint8_t* __restrict slot0 = pending;
  std::uint8_t* __restrict slot1 = pending + bytes;
  std::uint8_t* __restrict slot2 = pending + 2 * bytes;
  std::uint8_t* __restrict slot3 = pending + 3 * bytes;
  for (std::size_t j = 0; j < bytes; ++j) {
    const auto code = codes[j];
    const auto missing = static_cast<std::uint8_t>(code & ~(code >> 1) & mask[j]);
    slot0[j] = static_cast<std::uint8_t>(slot0[j] + (missing & 1));
    slot1[j] = static_cast<std::uint8_t>(slot1[j] + ((missing >> 2) & 1));
    slot2[j] = static_cast<std::uint8_t>(slot2[j] + ((missing >> 4) & 1));
    slot3[j] = static_cast<std::uint8_t>(slot3[j] + (missing >> 6));
  }
}

#if COLFLOW_X86_DISPATCH
__attribute__((target("avx2"))) void add_missing_bytes_avx2(const std::uint8_t* codes,
                                                            const std::uint8_t* mask,
                                                            std::size_t bytes,
                                                            std::uint8_t* pending) noexcept {
  add_missing_bytes(codes, mask, bytes, pending);
}
#endif

// Byte counters take 255 columns before one could overflow.
constexpr unsigned columns_per_fold = 255;

}  // namespace

namespace detail {
void add_missing_bytes_portable(const std::uint8_t* codes, const std::uint8_t* mask,
                                std::size_t bytes, std::uint8_t* pending) noexcept {
  add_missing_bytes(codes, mask, bytes, pending);
}
}  // namespace detail

missing_call_tally::missing_call_tally(std::size_t samples)
    : samples_(samples),
      bytes_(genotype_column_bytes(samples)),
      pending_(4 * bytes_, 0),
      counts_(samples, 0) {}

void missing_call_tally::add(std::span<const std::uint8_t> codes,
                             std::span<const std::uint8_t> mask) {
  // The mask covers no pair past the last sample, so padding codes never count.
#if COLFLOW_X86_DISPATCH
  if (detail::cpu_has_avx2())
    add_missing_bytes_avx2(codes.data(), mask.data(), bytes_, pending_.data());
  else
#endif
    detail::add_missing_bytes_portable(codes.data(), mask.data(), bytes_, pending_.data());
  if (++columns_pending_ == columns_per_fold) fold();
}

void missing_call_tally::fold() {
  for (std::size_t i = 0; i < samples_; ++i) counts_[i] += pending_[(i % 4) * bytes_ + i / 4];
  std::fill(pending_.begin(), pending_.end(), std::uint8_t{0});
  columns_pending_ = 0;
}

void missing_call_tally::move_into(std::span<std::uint32_t> totals) {
  fold();
  for (std::size_t i = 0; i < samples_; ++i) totals[i] += counts_[i];
  std::fill(counts_.begin(), counts_.end(), 0u);
}

}  // namespace colflow
