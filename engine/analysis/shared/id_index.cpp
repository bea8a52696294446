// The positions of a list of IDs by ID (analysis/shared/id_index_internal.hpp).
#include <tbb/parallel_for.h>

#include <bit>
#include <functional>
#include <string>

#include "analysis/shared/id_index_internal.hpp"
#include "colflow/error.hpp"

namespace colflow::detail {

id_index::id_index(std::vector<std::string_view> ids) : ids_(std::move(ids)) {
  if (ids_.size() >= 0xffffffffu)
    throw error(errc::invalid_argument, "id_index: " + std::to_string(ids_.size()) + " IDs");
  // At most half full: probes stay short.
  const std::size_t size = std::bit_ceil(std::max<std::size_t>(2 * ids_.size(), 16));
  mask_ = size - 1;
  slots_.assign(size, 0);
  std::vector<std::size_t> hashes(ids_.size());
  tbb::parallel_for(std::size_t{0}, ids_.size(),
                    [&](std::size_t k) { hashes[k] = std::hash<std::string_view>{}(ids_[k]); });
  // Inserted in order, so that an ID's slot names its first position.
  for (std::size_t k = 0; k < ids_.size(); ++k) {
    for (std::size_t s = hashes[k] & mask_;; s = (s + 1) & mask_) {
      if (slots_[s] == 0) {
        slots_[s] = static_cast<std::uint32_t>(k + 1);
        break;
      }
      if (ids_[slots_[s] - 1] == ids_[k]) {
        if (!first_repeat_) first_repeat_ = k;
        break;
      }
    }
  }
}

std::size_t id_index::find(std::string_view id) const noexcept {
  for (std::size_t s = std::hash<std::string_view>{}(id)&mask_;; s = (s + 1) & mask_) {
    const std::uint32_t at = slots_[s];
    if (at == 0) return npos;
    if (ids_[at - 1] == id) return at - 1;
  }
}

}  // namespace colflow::detail
