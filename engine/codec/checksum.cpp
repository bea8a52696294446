// The frame checksum (colflow/codec/codec.hpp): XXH3-64 of a frame's bytes.
#include <xxhash.h>

#include "colflow/codec/codec.hpp"

namespace colflow {

std::uint64_t checksum64(std::span<const std::byte> bytes) noexcept {
  return XXH3_64bits(bytes.data(), bytes.size());
}

}  // namespace colflow
