// The LD columns an SBayesR chain has read, kept for its next iterations (sbayesr.cpp).
//
// A column is read from its source when its variant's effect changes, and kept while there is
// room in the budget. A column whose effect turned zero is let go: kept still, but the first to
// leave when a column read later needs its room, the longest let go first, so that the columns
// of the effects that come and go between iterations stay as long as the budget allows (every
// iteration reads the non-zero effects' columns again). A source that holds its columns in
// memory already (ld_columns::resident) is not copied.
//
// A column whose values are all multiples of 2⁻¹⁴ in [−2, 2) (an LD store of 16-bit values,
// `colflow ld --ldm-bits 16`, FORMAT.md) is kept as those multiples, 16 bits a value: half the
// memory, and half the bytes each residual update streams. The value is the same number either
// way, q · 2⁻¹⁴ exactly, so what is kept, and how, never changes a result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <utility>
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
  // earlier read, else read and kept when there is room (made by the columns let go). When it
  // is neither kept nor resident, its values are copied into `spare`. It stays valid until
  // let_go(position) and a later get() of another column or, when in `spare`, until `spare`
  // changes.
  held_column get(std::size_t position, std::size_t index, std::vector<float>& spare);

  // The column at `position` may leave to make room, until get() asks for it again.
  void let_go(std::size_t position);

  std::size_t bytes() const noexcept { return bytes_; }

 private:
  struct kept_column {
    std::size_t first = 0;
    std::vector<float> values;        // all empty: not kept
    std::vector<std::int16_t> fixed;  // in place of values when they fit
    std::uint64_t let_go_at = 0;      // the let_go() that made it free to leave; 0: in use
    bool held() const noexcept { return !values.empty() || !fixed.empty(); }
  };

  // Keeps the column c at `position` if there is room, or room once columns let go have left,
  // in 16 bits when its values fit.
  void keep(std::size_t position, const ld_column& c);
  // Frees columns let go, the longest let go first, until `bytes` more fit; false if they do
  // not even then.
  bool make_room(std::size_t bytes);
  void drop(kept_column& kept);
  static held_column view(const kept_column& kept);

  ld_columns& ld_;
  std::size_t budget_, bytes_ = 0;
  std::vector<kept_column> kept_;
  std::uint64_t let_gos_ = 0;
  // (let_go_at, position) in let-go order; an entry whose column was asked for again since, or
  // let go again, no longer matches its let_go_at and is skipped.
  std::deque<std::pair<std::uint64_t, std::size_t>> let_go_order_;
};

}  // namespace colflow::detail
