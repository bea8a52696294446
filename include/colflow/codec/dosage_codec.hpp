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
#include <vector>

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

/// The split layout of a dosage column (docs/FORMAT.md §7.4.1), which the dosage-zstd codec
/// compresses: a 2-bit code per row (0, 1 or 2 whole copies, 3 for any other value), one bit per
/// code-3 row (1 missing, 0 another value), then those other values, their low bytes first and
/// then their high bytes. Imputed dosages are mostly whole copies, so zstd compresses this
/// layout better than the 16-bit values, byte-shuffled or not: most rows shrink to their 2-bit
/// code. Any 16-bit values round-trip, valid dosages or not. The payload is replaced.
void split_dosages(std::span<const std::uint16_t> values, std::vector<std::byte>& payload);

/// Bytes of a split payload of `rows` rows: at least (every value whole) and at most.
std::uint64_t split_dosage_min_bytes(std::uint64_t rows) noexcept;
std::uint64_t split_dosage_max_bytes(std::uint64_t rows) noexcept;

/// The values of a split payload, one per element of `values`. Throws errc::corrupt_frame when
/// the payload's size does not match its codes and kinds, or when one of its other values is a
/// whole number of copies or the missing value (split_dosages writes those as codes or kinds).
void join_dosages(std::span<const std::byte> payload, std::span<std::uint16_t> values);

/// The PLINK 2-bit codes of the hard calls of `values` (genotype_codec.hpp layout): a dosage
/// within `threshold` of 0, 1 or 2 becomes that call, anything else and a missing dosage a
/// missing call (PLINK 2's --hard-call-threshold, whose default is 0.1). `codes` holds
/// genotype_column_bytes(values.size()) bytes; padding bits are zeroed.
void dosages_to_hard_calls(std::span<const std::uint16_t> values, double threshold,
                           std::span<std::uint8_t> codes) noexcept;

}  // namespace colflow
