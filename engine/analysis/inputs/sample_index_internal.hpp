// A store's samples by their IDs, for the readers of files that name samples (phenotype,
// covariate, sex and keep files): which store row a line's FID and IID, or IID alone, names.
//
// Every analysis reads such a file before its first column, on one core, so the index must be
// cheap next to a pass: an open-addressing table of rows (no allocation per sample, nothing to
// free one by one), hashes computed across the threads. A node-based map of strings allocates
// per sample and chases a pointer per lookup, which at 100,000 samples costs a sizeable share
// of a short analysis (docs/SCALING.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "colflow/store/store.hpp"

namespace colflow::detail {

class sample_index {
 public:
  static constexpr std::size_t absent = ~std::size_t{0};

  // What a row is found by: its FID and IID, or its IID alone (the FID is then ignored).
  enum class key { fid_iid, iid };

  // Several samples may share a key: an IID in different families, or (in a store not made by
  // the converter, which refuses them) a repeated FID IID pair. They form a chain, first row
  // first. The index keeps its own copy of the keys.
  sample_index(const std::vector<sample_info>& samples, key by);

  // The first row with this key, or absent. Thread-safe (the index is read only).
  std::size_t find(std::string_view fid, std::string_view iid) const noexcept;

  // The same, trying row `expected` first: files often list the store's samples in its order,
  // and comparing the key of the row a line expects costs no cache miss, where a lookup in the
  // table costs one or two (most of the time of reading a phenotype file in store order).
  std::size_t find(std::string_view fid, std::string_view iid,
                   std::size_t expected) const noexcept {
    if (expected < first_of_key_.size() && first_of_key_[expected] && has_key(expected, fid, iid))
      return expected;
    return find(fid, iid);
  }

  // The next row after `row` with the same key, absent after the last.
  std::size_t next(std::size_t row) const noexcept { return next_[row]; }

 private:
  struct slot {
    std::uint64_t hash = 0;
    std::size_t row = absent;  // the chain's first row; absent: an empty slot
  };

  std::uint64_t hash(std::string_view fid, std::string_view iid) const noexcept;
  bool has_key(std::size_t row, std::string_view fid, std::string_view iid) const noexcept;

  key by_;
  // Every row's key, end to end ("FID\tIID" or "IID"; a store's fields hold no tab): lookups
  // compare against these few bytes a row rather than against the sample_info records, 192
  // bytes a row, whose cache misses would dominate a lookup.
  std::string keys_;
  std::vector<std::size_t> key_offsets_;  // row r: keys_[key_offsets_[r], key_offsets_[r + 1])
  std::vector<slot> slots_;               // a power of two, at most half full
  std::vector<std::size_t> next_;
  std::vector<std::uint8_t> first_of_key_;  // per row: no earlier row has its key
};

}  // namespace colflow::detail
