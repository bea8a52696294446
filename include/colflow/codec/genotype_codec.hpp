/// @file genotype_codec.hpp
/// The genotype codec: PLINK 2-bit codes, their counts and statistics, and the lookup-table
/// decoder that turns a column of codes into values. The kernels that compute on packed codes
/// without decoding them (products, residual updates, sample masks) are in
/// kernels/genotype_kernels.hpp.
///
/// A column holds ceil(n/4) bytes; sample i is in bits 2(i mod 4) and 2(i mod 4)+1 of byte
/// i/4 (the first sample in the two lowest bits). Codes: 0b00 = two copies of A1, 0b01 =
/// missing, 0b10 = heterozygous, 0b11 = two copies of A2; the genotype value is the count of
/// A1 (docs/DESIGN.md §2). Bits past the n-th sample are padding and are ignored.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace colflow {

/// Per-column statistics, as kept in the store's index (docs/DESIGN.md §2).
struct column_stats {
  std::uint64_t observed = 0;  ///< non-missing values
  double mean = 0;             ///< mean of the observed values
  double sd = 0;               ///< sqrt(sum over observed (x - mean)^2 / (n - 1)); 0 if n < 2
  double a1_freq = 0;          ///< mean / 2 for genotypes; NaN for dense columns
};

/// Counts of each genotype code in a column.
struct genotype_counts {
  std::uint64_t hom_a1 = 0;   ///< code 0b00 (value 2)
  std::uint64_t missing = 0;  ///< code 0b01
  std::uint64_t het = 0;      ///< code 0b10 (value 1)
  std::uint64_t hom_a2 = 0;   ///< code 0b11 (value 0)
};

/// Bytes of a column of `n` samples: ceil(n / 4).
constexpr std::size_t genotype_column_bytes(std::size_t n) noexcept { return (n + 3) / 4; }

/// Counts the codes of the first `n` samples (padding ignored).
/// Requires codes.size() >= genotype_column_bytes(n).
genotype_counts count_genotypes(std::span<const std::uint8_t> codes, std::size_t n) noexcept;

/// Observed count, mean, SD and A1 frequency from the counts of a column of `n` samples.
/// With no observed call, mean and frequency are NaN and SD is 0.
column_stats genotype_stats(const genotype_counts& counts, std::size_t n) noexcept;

/// Value of each 2-bit code, indexed by the code.
template <typename T>
using genotype_lut = std::array<T, 4>;

/// The standardising table: code -> (dosage - mean) / sd, missing -> 0 (mean imputation).
/// A column with SD 0 (monomorphic or no observed call) maps every code to 0.
/// The float table holds the double values rounded to float.
genotype_lut<double> standardized_lut(const column_stats& stats) noexcept;
genotype_lut<float> standardized_lut_f32(const column_stats& stats) noexcept;

/// The dosage table: 2, NaN (missing), 1, 0.
genotype_lut<double> dosage_lut() noexcept;
genotype_lut<float> dosage_lut_f32() noexcept;

/// Decodes the first out.size() samples through `lut`. Vectorised: one table lookup per four
/// samples. Requires codes.size() >= genotype_column_bytes(out.size()).
void decode_genotypes(std::span<const std::uint8_t> codes, const genotype_lut<double>& lut,
                      std::span<double> out) noexcept;
void decode_genotypes(std::span<const std::uint8_t> codes, const genotype_lut<float>& lut,
                      std::span<float> out) noexcept;

}  // namespace colflow
