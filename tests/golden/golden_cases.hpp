// The definition of the golden stores, shared by the generator and the test.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "colflow/colflow.hpp"

namespace colflow::golden {

inline constexpr std::uint64_t rows = 7;
inline constexpr std::uint64_t columns = 3;

struct golden_case {
  std::string name;
  value_type type;
  column_encoding encoding;
};

inline std::vector<golden_case> cases() {
  return {
      {"genotype-none", value_type::genotype, {codec_id::none, 0, false}},
      {"genotype-zstd", value_type::genotype, {codec_id::zstd, 3, false}},
      {"float64-none", value_type::float64, {codec_id::none, 0, false}},
      {"float64-zlib", value_type::float64, {codec_id::zlib, 6, false}},
      {"float64-lz4-shuffle", value_type::float64, {codec_id::lz4, 1, true}},
      {"float32-zstd-shuffle", value_type::float32, {codec_id::zstd, 3, true}},
  };
}

// Column j's codes: sample i gets code (i + j) % 4 (so every code appears, missing included);
// the padding pair of the last byte is set to 0b11 to check that it is ignored and zeroed.
inline std::vector<std::uint8_t> genotype_codes(std::uint64_t j) {
  std::vector<std::uint8_t> codes(2, 0);
  for (std::uint64_t i = 0; i < rows; ++i)
    codes[i / 4] = static_cast<std::uint8_t>(codes[i / 4] | (((i + j) % 4) << (2 * (i % 4))));
  codes[1] = static_cast<std::uint8_t>(codes[1] | 0b11000000);
  return codes;
}

// Column j's values: exact binary fractions, with a NaN in column 1.
inline std::vector<double> dense_values(std::uint64_t j) {
  std::vector<double> v(rows);
  for (std::uint64_t i = 0; i < rows; ++i)
    v[i] = static_cast<double>(i) * 0.25 - static_cast<double>(j) + 0.5;
  if (j == 1) v[3] = std::nan("");
  return v;
}

}  // namespace colflow::golden
