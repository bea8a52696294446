/// @file missing_tally_internal.hpp
/// Per-sample counts of missing calls over many columns of packed 2-bit codes: what --mind
/// needs. Each column adds to counters laid out like the codes, without a branch (missing
/// calls are scattered, so a test per call mispredicts): 2-bit counters a column, carried into
/// 4-bit ones every third column, those into byte counters every fifteenth, and the bytes into
/// whole counts before they can overflow. Exact integers on every code path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace colflow {

class missing_call_tally {
 public:
  /// A tally over columns of `samples` packed codes.
  explicit missing_call_tally(std::size_t samples);

  /// Counts each sample of `mask` (make_sample_mask's layout) whose code is missing (0b01).
  void add(std::span<const std::uint8_t> codes, std::span<const std::uint8_t> mask);

  /// Adds the counts so far to totals[0, samples), and starts again from zero.
  void move_into(std::span<std::uint32_t> totals);

 private:
  void fold();

  std::size_t samples_, bytes_;
  std::vector<std::uint8_t> counters_;  // 2-bit, 4-bit (two arrays) and byte counters
  std::vector<std::uint32_t> counts_;   // by sample
  unsigned columns_pending_ = 0;
};

}  // namespace colflow
