/// @file genotype.hpp
/// PLINK 2-bit genotype codes: counting, statistics and the lookup-table decoder.
///
/// A column holds ceil(n/4) bytes; sample i is in bits 2(i mod 4) and 2(i mod 4)+1 of byte
/// i/4 (the first sample in the two lowest bits). Codes: 0b00 = two copies of A1, 0b01 =
/// missing, 0b10 = heterozygous, 0b11 = two copies of A2; the genotype value is the count of
/// A1 (DESIGN §2). Bits past the n-th sample are padding and are ignored.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace colflow {

/// Per-column statistics, as kept in the store's index (DESIGN §2).
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

/// A subset of the samples, in the layout of the codes: the pair of sample i is 0b01 when it is
/// kept and 0b00 when it is not (pairs past the last sample are 0). ceil(n/4) bytes.
std::vector<std::uint8_t> make_sample_mask(std::span<const std::uint8_t> keep);

/// Kept samples of a mask (its set pairs).
std::size_t mask_count(std::span<const std::uint8_t> mask) noexcept;

/// Counts the codes of the samples kept by `mask` (from make_sample_mask for these n samples);
/// hom_a1 + missing + het + hom_a2 equals the number kept.
genotype_counts count_genotypes(std::span<const std::uint8_t> codes, std::size_t n,
                                std::span<const std::uint8_t> mask) noexcept;

/// Rows (sample indices) with a missing call, appended to `rows` in increasing order; only
/// rows kept by `mask` when it is not empty.
void missing_rows(std::span<const std::uint8_t> codes, std::size_t n,
                  std::span<const std::uint8_t> mask, std::vector<std::size_t>& rows);

/// Dot products of the column's dosages (count of A1; a missing call counts 0) with `m`
/// vectors: out[c] = sum over i < n of dosage_i * w[i + c * stride]. The vectors are the
/// columns of a column-major n x m matrix. One table lookup per four samples serves every
/// vector (AVX2 with FMA when the CPU has them), so the column is never decoded to values:
/// with the column's mean, SD and missing rows, every standardised product follows as scalars.
void dosage_dots(std::span<const std::uint8_t> codes, std::size_t n, const double* w,
                 std::size_t stride, std::size_t m, double* out) noexcept;

/// The same for `count` columns at once (each ceil(n/4) bytes): out[c * m + v] is column c
/// times vector v. Tiles of columns and vectors share their loads, so a block of columns
/// costs much less than one call per column. Each product's arithmetic is the same whatever
/// the tile or call it is computed in, so splitting the work never changes a result.
void dosage_dots(const std::uint8_t* const* columns, std::size_t count, std::size_t n,
                 const double* w, std::size_t stride, std::size_t m, double* out) noexcept;

/// The two sums a standardised product needs, in one pass over the codes: dot = sum of
/// dosage_i * w[i] (a missing call counts 0) and called = sum of w[i] over the samples with a
/// call. With the column's mean m and SD s (DESIGN §2), zᵀw = (dot − m · called) / s.
void dosage_and_call_sums(std::span<const std::uint8_t> codes, std::size_t n, const double* w,
                          double& dot, double& called) noexcept;

/// The dot product alone: sum of dosage_i * w[i] (a missing call counts 0). Half the work of
/// dosage_and_call_sums, for columns without a missing call among the samples where w is not
/// zero (where the call sum is the sum of w, which a solver can keep itself).
double dosage_dot(std::span<const std::uint8_t> codes, std::size_t n, const double* w) noexcept;

/// r[i] += a * dosage_i + c for every sample with a call that `mask` keeps (all when empty);
/// other entries are left as they are. With a = −δ/s and c = δm/s this is r −= δz, the
/// residual update of coordinate descent and Gibbs samplers, without decoding the column.
void genotype_axpy(std::span<const std::uint8_t> codes, std::size_t n,
                   std::span<const std::uint8_t> mask, double a, double c, double* r) noexcept;

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
