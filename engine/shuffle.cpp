#include <cstring>

#include "colflow/codec.hpp"

namespace colflow {
namespace {

// Element-major loops with the element size known at compile time: each output element is
// assembled from E sequential input streams (unshuffle) or spread into them (shuffle), so every
// stream is read or written front to back. The generic byte-plane loop strode through memory
// and ran at about 3 GB/s; this one keeps the shuffle well below any codec's cost.
template <std::size_t E>
void shuffle_fixed(const std::byte* src, std::size_t n, std::byte* dst) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    std::byte element[E];
    std::memcpy(element, src + i * E, E);
    for (std::size_t b = 0; b < E; ++b) dst[b * n + i] = element[b];
  }
}

template <std::size_t E>
void unshuffle_fixed(const std::byte* src, std::size_t n, std::byte* dst) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    std::byte element[E];
    for (std::size_t b = 0; b < E; ++b) element[b] = src[b * n + i];
    std::memcpy(dst + i * E, element, E);
  }
}

}  // namespace

void shuffle_bytes(std::span<const std::byte> src, std::size_t element_size,
                   std::span<std::byte> dst) noexcept {
  const std::size_t n = src.size() / element_size;
  if (element_size == 8) return shuffle_fixed<8>(src.data(), n, dst.data());
  if (element_size == 4) return shuffle_fixed<4>(src.data(), n, dst.data());
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t b = 0; b < element_size; ++b) dst[b * n + i] = src[i * element_size + b];
}

void unshuffle_bytes(std::span<const std::byte> src, std::size_t element_size,
                     std::span<std::byte> dst) noexcept {
  const std::size_t n = src.size() / element_size;
  if (element_size == 8) return unshuffle_fixed<8>(src.data(), n, dst.data());
  if (element_size == 4) return unshuffle_fixed<4>(src.data(), n, dst.data());
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t b = 0; b < element_size; ++b) dst[i * element_size + b] = src[b * n + i];
}

}  // namespace colflow
