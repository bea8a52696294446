// The positions of a list of IDs by ID: what matching a table of variants (clump's P-values)
// to a store's columns looks up, once per line. An open-addressing table of positions, one
// allocation, the IDs hashed on the threads, where a node-based map makes an allocation per ID
// (docs/PERFORMANCE.md, clump, has what that cost).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace colflow::detail {

class id_index {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  /// ids[k] at position k (the views must outlive the index); at most 2^32 − 2 of them.
  explicit id_index(std::vector<std::string_view> ids);

  /// The position of `id` (its first, if it repeats), or npos.
  std::size_t find(std::string_view id) const noexcept;

  /// The position of the first ID, in order, that repeats an earlier one, if any.
  std::optional<std::size_t> first_repeat() const noexcept { return first_repeat_; }

 private:
  std::vector<std::string_view> ids_;
  std::vector<std::uint32_t> slots_;  // position + 1, 0 when empty
  std::size_t mask_;
  std::optional<std::size_t> first_repeat_;
};

}  // namespace colflow::detail
