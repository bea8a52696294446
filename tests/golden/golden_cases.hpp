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
  // The format minor version the committed store was written at. make_golden rewrites only
  // the cases of the version this build writes (format_minor_for): the older ones stay as the
  // earlier writer made them, so that stores of every earlier version keep being read.
  std::uint16_t minor = 0;
};

inline std::vector<golden_case> cases() {
  return {
      // Format 1.0: no list checksums in the manifest.
      {"genotype-none", value_type::genotype, {codec_id::none, 0, false}},
      {"genotype-zstd", value_type::genotype, {codec_id::zstd, 3, false}},
      {"float64-none", value_type::float64, {codec_id::none, 0, false}},
      {"float64-zlib", value_type::float64, {codec_id::zlib, 6, false}},
      {"float64-lz4-shuffle", value_type::float64, {codec_id::lz4, 1, true}},
      {"float32-zstd-shuffle", value_type::float32, {codec_id::zstd, 3, true}},
      // Format 1.3: the manifest records the checksums of samples.tsv and columns.tsv.
      {"v1.3-genotype-zstd", value_type::genotype, {codec_id::zstd, 3, false}, 3},
  };
}

// The lists every golden store holds, as text (docs/FORMAT.md §9.1, §9.2).
inline std::vector<sample_info> samples() {
  std::vector<sample_info> s;
  for (std::uint64_t i = 0; i < rows; ++i)
    s.push_back({"F" + std::to_string(i), "I" + std::to_string(i), "0", "0", "1", "-9"});
  return s;
}

inline column_info column(std::uint64_t j) {
  return {"1", "v" + std::to_string(j), "0", std::to_string(100 * (j + 1)), "A", "G"};
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
