// The LD columns an SBayesR chain has read, kept for its next iterations (sbayesr.cpp).
//
// A column is read from its source when its variant's effect changes, and kept while the kept
// columns fill less than the budget; once they fill half of it, a column whose effect turned
// zero is let go, leaving the room to the non-zero effects, whose columns every iteration reads
// again. A source that holds its columns in memory already (ld_columns::resident) is not copied.
//
// A column whose values are all multiples of 2⁻¹⁴ in [−2, 2) (an LD store of 16-bit values,
// `colflow ld --ldm-bits 16`, FORMAT.md) is kept as those multiples, 16 bits a value: half the
// memory, and half the bytes each residual update streams. The value is the same number either
// way, q · 2⁻¹⁴ exactly, so what is kept, and how, never changes a result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "colflow/analysis/ld_columns.hpp"

namespace colflow::detail {

// r(first + i, j) = values[i], or fixed[i] · 2⁻¹⁴ (fixed16_step, codec.hpp) where values is null;
// i < size.
struct held_column {
  const float* values = nullptr;
  const std::int16_t* fixed = nullptr;
  std::size_t first = 0, size = 0;
};

class ld_column_cache {
 public:
  // Slots for `positions` variants; `budget`: the bytes the kept columns may fill.
  ld_column_cache(ld_columns& ld, std::size_t positions, std::size_t budget);

  // The column of reference variant `index`, the model's variant at `position`: kept from an
  // earlier read, else read and kept while there is room. When it is neither kept nor resident,
  // its values are copied into `spare`. It stays valid until let_go(position) or, when in
  // `spare`, until `spare` changes.
  held_column get(std::size_t position, std::size_t index, std::vector<float>& spare);

  // The column at `position` goes, when the kept columns fill at least half the budget.
  void let_go(std::size_t position);

  std::size_t bytes() const noexcept { return bytes_; }

 private:
  struct kept_column {
    std::size_t first = 0;
    std::vector<float> values;        // all empty: not kept
    std::vector<std::int16_t> fixed;  // in place of values when they fit
  };

  // Keeps the column c at `position` if there is room, in 16 bits when its values fit.
  void keep(std::size_t position, const ld_column& c);
  static held_column view(const kept_column& kept);

  ld_columns& ld_;
  std::size_t budget_, bytes_ = 0;
  std::vector<kept_column> kept_;
};

}  // namespace colflow::detail
