// Per-sample counts of missing calls (kernels/missing_tally_internal.hpp).
#include <algorithm>

#include "colflow/kernels/genotype_kernels.hpp"
#include "kernels/missing_tally_internal.hpp"
#include "simd/cpu_dispatch_internal.hpp"

namespace colflow {
namespace {

// The counters of a tally, each `bytes` long, in the layout of the codes: byte j holds the
// samples 4j .. 4j+3.
struct counter_arrays {
  std::uint8_t* pairs;  // 2-bit counters, one a sample: up to 3 columns
  std::uint8_t* even;   // 4-bit counters of samples 4j and 4j+2: up to 15 columns
  std::uint8_t* odd;    // ... of samples 4j+1 and 4j+3
  std::uint8_t* slots;  // byte counters: sample 4j+s at s · bytes + j, up to 255 columns
  std::size_t bytes;
};

// Adds one column's missing calls (code 0b01) of the masked samples to the 2-bit counters,
// then carries the 2-bit counters into the 4-bit ones after every third column and those
// into the byte counters after every fifteenth: a few vector operations a byte of codes
// where a byte counter a sample took four. Plain loops, vectorised for the target each is
// inlined into; no loop shares a byte between its arrays.
__attribute__((always_inline)) inline void add_column(const counter_arrays& a,
                                                      const std::uint8_t* __restrict codes,
                                                      const std::uint8_t* __restrict mask,
                                                      unsigned column) noexcept {
  const std::size_t bytes = a.bytes;
  std::uint8_t* __restrict pairs = a.pairs;
  for (std::size_t j = 0; j < bytes; ++j)
    pairs[j] = static_cast<std::uint8_t>(pairs[j] + (codes[j] & ~(codes[j] >> 1) & mask[j]));
  if (column % 3 != 0) return;
  std::uint8_t* __restrict even = a.even;
  std::uint8_t* __restrict odd = a.odd;
  for (std::size_t j = 0; j < bytes; ++j) {
    even[j] = static_cast<std::uint8_t>(even[j] + (pairs[j] & 0x33));
    odd[j] = static_cast<std::uint8_t>(odd[j] + ((pairs[j] >> 2) & 0x33));
    pairs[j] = 0;
  }
  if (column % 15 != 0) return;
  std::uint8_t* __restrict slot0 = a.slots;
  std::uint8_t* __restrict slot1 = a.slots + bytes;
  std::uint8_t* __restrict slot2 = a.slots + 2 * bytes;
  std::uint8_t* __restrict slot3 = a.slots + 3 * bytes;
  for (std::size_t j = 0; j < bytes; ++j) {
    slot0[j] = static_cast<std::uint8_t>(slot0[j] + (even[j] & 0x0f));
    slot2[j] = static_cast<std::uint8_t>(slot2[j] + (even[j] >> 4));
    slot1[j] = static_cast<std::uint8_t>(slot1[j] + (odd[j] & 0x0f));
    slot3[j] = static_cast<std::uint8_t>(slot3[j] + (odd[j] >> 4));
    even[j] = odd[j] = 0;
  }
}

void add_column_portable(const counter_arrays& a, const std::uint8_t* codes,
                         const std::uint8_t* mask, unsigned column) noexcept {
  add_column(a, codes, mask, column);
}

#if COLFLOW_X86_DISPATCH
__attribute__((target("avx2"))) void add_column_avx2(const counter_arrays& a,
                                                     const std::uint8_t* codes,
                                                     const std::uint8_t* mask,
                                                     unsigned column) noexcept {
  add_column(a, codes, mask, column);
}
#endif

// A multiple of 15 (the 4-bit counters' carry) whose columns the byte counters hold.
constexpr unsigned columns_per_fold = 255;

}  // namespace

missing_call_tally::missing_call_tally(std::size_t samples)
    : samples_(samples),
      bytes_(genotype_column_bytes(samples)),
      counters_(7 * bytes_, 0),
      counts_(samples, 0) {}

void missing_call_tally::add(std::span<const std::uint8_t> codes,
                             std::span<const std::uint8_t> mask) {
  // The mask covers no pair past the last sample, so padding codes never count.
  std::uint8_t* base = counters_.data();
  const counter_arrays a{base, base + bytes_, base + 2 * bytes_, base + 3 * bytes_, bytes_};
  ++columns_pending_;
#if COLFLOW_X86_DISPATCH
  if (detail::cpu_has_avx2())
    add_column_avx2(a, codes.data(), mask.data(), columns_pending_);
  else
#endif
    add_column_portable(a, codes.data(), mask.data(), columns_pending_);
  if (columns_pending_ == columns_per_fold) fold();
}

void missing_call_tally::fold() {
  const std::uint8_t* pairs = counters_.data();
  const std::uint8_t* even = pairs + bytes_;
  const std::uint8_t* odd = pairs + 2 * bytes_;
  const std::uint8_t* slots = pairs + 3 * bytes_;
  for (std::size_t i = 0; i < samples_; ++i) {
    const std::size_t j = i / 4, s = i % 4;
    const unsigned nibbles = s % 2 == 0 ? even[j] : odd[j];
    counts_[i] +=
        slots[s * bytes_ + j] + ((nibbles >> (4 * (s / 2))) & 0x0f) + ((pairs[j] >> (2 * s)) & 3u);
  }
  std::fill(counters_.begin(), counters_.end(), std::uint8_t{0});
  columns_pending_ = 0;
}

void missing_call_tally::move_into(std::span<std::uint32_t> totals) {
  fold();
  for (std::size_t i = 0; i < samples_; ++i) totals[i] += counts_[i];
  std::fill(counts_.begin(), counts_.end(), 0u);
}

}  // namespace colflow
