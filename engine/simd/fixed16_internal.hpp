// Conversions between float32 values and their 16-bit multiples of 2⁻¹⁴ (fixed16_step,
// colflow/codec/codec.hpp), the form of 16-bit LD stores: the fixed16-zstd codec's decoding and
// the SBayesR cache's keeping of such columns run them on every column they read. SSE2 (every
// x86-64) four or eight values at a time, with a scalar loop for the rest and other targets;
// the same values either way.
#pragma once

#include <cstddef>
#include <cstdint>

namespace colflow::detail {

// The i-th float32 at `out` (any alignment) = the 16-bit value whose low byte is low[i] and high
// byte high[i], times 2⁻¹⁴.
void fixed16_bytes_to_float(const std::uint8_t* low, const std::uint8_t* high, std::size_t n,
                            std::byte* out) noexcept;

// out[i] = values[i] / 2⁻¹⁴ for every i when each is a multiple of 2⁻¹⁴ in [−2, 2) (the test of
// fixed16_of); false, out undefined, when one is not.
bool float_to_fixed16(const float* values, std::size_t n, std::int16_t* out) noexcept;

}  // namespace colflow::detail
