/// @file dosage_codec.hpp
/// The dosage value type: allele dosages in 16-bit fixed point, PLINK 2's precision.
///
/// A dosage column holds n little-endian uint16 values, one per sample: the count of the
/// counted allele (A1) times 16384, so 0 = no copy, 16384 = one, 32768 = two, and every value
/// in between is a multiple of 1/16384, the resolution at which PLINK 2 stores dosages (.pgen).
/// 65535 is a missing value; 32769..65534 never occur in a valid column. The statistics and the
/// standardised values follow the genotype conventions (docs/DESIGN.md §2): the mean and SD of
/// the observed dosages, SD over n - 1 with missing values counted as the mean, and
/// standardised values (x - mean) / SD with missing -> 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "colflow/codec/genotype_codec.hpp"

namespace colflow {

/// One allele copy in fixed point: dosage d is stored as d * dosage_one.
inline constexpr std::uint16_t dosage_one = 16384;
/// The largest stored value: two copies.
inline constexpr std::uint16_t dosage_max = 2 * dosage_one;
/// A missing dosage.
inline constexpr std::uint16_t dosage_missing = 0xFFFF;

/// The fixed-point value nearest to `dosage` (0..2; halves round up), or dosage_missing for NaN.
/// Values outside 0..2 are clamped.
std::uint16_t dosage_to_fixed(double dosage) noexcept;

/// Index of the first value that is neither 0..dosage_max nor dosage_missing, or values.size().
std::size_t first_invalid_dosage(std::span<const std::uint16_t> values) noexcept;

/// Observed count, mean, SD and A1 frequency (mean / 2) of a column (n = values.size()),
/// computed exactly in integers up to the final divisions. With no observed value, mean and
/// frequency are NaN and SD is 0.
column_stats dosage_stats(std::span<const std::uint16_t> values) noexcept;

/// Decodes `values` into `out` (the same length): dosages with NaN for missing, or, with
/// `standardized`, (x - mean) / SD from `stats` with missing -> 0 and an SD of 0 -> all zeros.
void decode_dosages(std::span<const std::uint16_t> values, const column_stats& stats,
                    bool standardized, std::span<double> out) noexcept;
void decode_dosages(std::span<const std::uint16_t> values, const column_stats& stats,
                    bool standardized, std::span<float> out) noexcept;

/// The PLINK 2-bit codes of the hard calls of `values` (genotype_codec.hpp layout): a dosage
/// within `threshold` of 0, 1 or 2 becomes that call, anything else and a missing dosage a
/// missing call (PLINK 2's --hard-call-threshold, whose default is 0.1). `codes` holds
/// genotype_column_bytes(values.size()) bytes; padding bits are zeroed.
void dosages_to_hard_calls(std::span<const std::uint16_t> values, double threshold,
                           std::span<std::uint8_t> codes) noexcept;

}  // namespace colflow
