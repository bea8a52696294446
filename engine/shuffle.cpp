#include "colflow/codec.hpp"

namespace colflow {

// Plain loops: the compiler vectorises the 4- and 8-byte cases well enough that the
// shuffle costs a small fraction of any real codec's time.
void shuffle_bytes(std::span<const std::byte> src, std::size_t element_size,
                   std::span<std::byte> dst) noexcept {
  const std::size_t n = src.size() / element_size;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t b = 0; b < element_size; ++b) dst[b * n + i] = src[i * element_size + b];
}

void unshuffle_bytes(std::span<const std::byte> src, std::size_t element_size,
                     std::span<std::byte> dst) noexcept {
  const std::size_t n = src.size() / element_size;
  for (std::size_t b = 0; b < element_size; ++b)
    for (std::size_t i = 0; i < n; ++i) dst[i * element_size + b] = src[b * n + i];
}

}  // namespace colflow
