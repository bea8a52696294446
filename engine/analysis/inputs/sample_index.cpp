// A store's samples by their IDs: an open-addressing table from FID and IID, or IID, to rows.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <functional>

#include "analysis/inputs/sample_index_internal.hpp"

namespace colflow::detail {

sample_index::sample_index(const std::vector<sample_info>& samples, key by)
    : by_(by),
      key_offsets_(samples.size() + 1, 0),
      next_(samples.size(), absent),
      first_of_key_(samples.size(), 1) {
  const std::size_t n = samples.size();
  std::size_t capacity = 16;
  while (capacity < 2 * n) capacity *= 2;
  slots_.resize(capacity);
  const auto key_size = [&](const sample_info& s) {
    return by == key::fid_iid ? s.fid.size() + 1 + s.iid.size() : s.iid.size();
  };
  for (std::size_t i = 0; i < n; ++i) key_offsets_[i + 1] = key_offsets_[i] + key_size(samples[i]);
  keys_.resize(key_offsets_[n]);
  std::vector<std::uint64_t> hashes(n);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 8192),
                    [&](const tbb::blocked_range<std::size_t>& r) {
                      for (std::size_t i = r.begin(); i != r.end(); ++i) {
                        const sample_info& s = samples[i];
                        char* k = keys_.data() + key_offsets_[i];
                        if (by == key::fid_iid) {
                          k = std::copy(s.fid.begin(), s.fid.end(), k);
                          *k++ = '\t';
                        }
                        std::copy(s.iid.begin(), s.iid.end(), k);
                        hashes[i] = hash(s.fid, s.iid);
                      }
                    });
  // Rows go in from the last, each one put at the front of its key's chain: the chain then runs
  // from the first row on, and no chain is walked however many samples share a key.
  const std::size_t mask = capacity - 1;
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t p = hashes[i] & mask;; p = (p + 1) & mask) {
      slot& s = slots_[p];
      if (s.row == absent) {
        s = {hashes[i], i};
        break;
      }
      if (s.hash == hashes[i] && has_key(s.row, samples[i].fid, samples[i].iid)) {
        next_[i] = s.row;
        first_of_key_[s.row] = 0;
        s.row = i;
        break;
      }
    }
  }
}

std::size_t sample_index::find(std::string_view fid, std::string_view iid) const noexcept {
  const std::uint64_t h = hash(fid, iid);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t p = h & mask;; p = (p + 1) & mask) {
    const slot& s = slots_[p];
    if (s.row == absent) return absent;
    if (s.hash == h && has_key(s.row, fid, iid)) return s.row;
  }
}

std::uint64_t sample_index::hash(std::string_view fid, std::string_view iid) const noexcept {
  std::uint64_t h = std::hash<std::string_view>{}(iid);
  if (by_ == key::fid_iid) h ^= std::hash<std::string_view>{}(fid)*0x9e3779b97f4a7c15u;
  // The low bits pick the slot: mix the high ones into them (the finaliser of SplitMix64).
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9u;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebu;
  return h ^ (h >> 31);
}

bool sample_index::has_key(std::size_t row, std::string_view fid,
                           std::string_view iid) const noexcept {
  const std::string_view k(keys_.data() + key_offsets_[row],
                           key_offsets_[row + 1] - key_offsets_[row]);
  if (by_ == key::iid) return k == iid;
  return k.size() == fid.size() + 1 + iid.size() && k.starts_with(fid) && k[fid.size()] == '\t' &&
         k.ends_with(iid);
}

}  // namespace colflow::detail
