/// @file genotype_kernels.hpp
/// Kernels on packed 2-bit genotype codes (layout: codec/genotype_codec.hpp): sample masks,
/// counts over a subset of samples, and the products and residual updates of the analyses,
/// all computed without decoding a column to values.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "colflow/codec/genotype_codec.hpp"

namespace colflow {

/// A subset of the samples, in the layout of the codes: the pair of sample i is 0b01 when it is
/// kept and 0b00 when it is not (pairs past the last sample are 0). ceil(n/4) bytes.
std::vector<std::uint8_t> make_sample_mask(std::span<const std::uint8_t> keep);

/// Kept samples of a mask (its set pairs).
std::size_t mask_count(std::span<const std::uint8_t> mask) noexcept;

/// Counts the codes of the samples kept by `mask` (from make_sample_mask for these n samples);
/// hom_a1 + missing + het + hom_a2 equals the number kept, which this overload counts from
/// the mask at each call (a scan over many columns passes it, below).
genotype_counts count_genotypes(std::span<const std::uint8_t> codes, std::size_t n,
                                std::span<const std::uint8_t> mask) noexcept;

/// The same with the mask's kept samples (mask_count(mask)) known: a scan that counts many
/// columns over one mask counts its samples once.
genotype_counts count_genotypes(std::span<const std::uint8_t> codes, std::size_t n,
                                std::span<const std::uint8_t> mask, std::size_t kept) noexcept;

/// Rows (sample indices) with a missing call, appended to `rows` in increasing order; only
/// rows kept by `mask` when it is not empty.
void missing_rows(std::span<const std::uint8_t> codes, std::size_t n,
                  std::span<const std::uint8_t> mask, std::vector<std::size_t>& rows);

/// Dot products of the column's dosages (count of A1; a missing call counts 0) with `m`
/// vectors: out[c] = sum over i < n of dosage_i * w[i + c * stride]. The vectors are the
/// columns of a column-major n x m matrix. One table lookup per four samples serves every
/// vector (AVX-512, or AVX2 with FMA, when the CPU has them; the same numbers either way), so
/// the column is never decoded to values:
/// with the column's mean, SD and missing rows, every standardised product follows as scalars.
void dosage_dots(std::span<const std::uint8_t> codes, std::size_t n, const double* w,
                 std::size_t stride, std::size_t m, double* out);

/// The same for `count` columns at once (each ceil(n/4) bytes): out[c * m + v] is column c
/// times vector v. Tiles of columns and vectors share their loads, so a block of columns
/// costs much less than one call per column. Each product's arithmetic is the same whatever
/// the tile or call it is computed in, so splitting the work never changes a result.
void dosage_dots(const std::uint8_t* const* columns, std::size_t count, std::size_t n,
                 const double* w, std::size_t stride, std::size_t m, double* out);

/// The `m` vectors of dosage_dots (n samples each, `stride` apart in `w`, which must outlive
/// this object) made ready for many calls: on CPUs with AVX-512 and from four vectors on, a
/// copy of them with each pair of vectors interleaved four samples at a time, the layout its
/// kernel reads (one aligned load a pair, which costs less than two half loads and a merge).
/// A scan prepares its vectors once; each call of the unprepared overload prepares them again.
class dosage_vectors {
 public:
  dosage_vectors(const double* w, std::size_t n, std::size_t stride, std::size_t m);

  const double* w() const noexcept { return w_; }
  std::size_t samples() const noexcept { return n_; }
  std::size_t stride() const noexcept { return stride_; }
  std::size_t size() const noexcept { return m_; }
  /// Pair p's samples [4b, 4b + 4) of vectors 2p and 2p + 1 at pairs() + p * pair_stride() +
  /// 8b; null when the CPU's kernel reads the vectors themselves.
  const double* pairs() const noexcept { return pairs_; }
  std::size_t pair_stride() const noexcept { return 8 * (n_ / 4); }

 private:
  const double* w_;
  std::size_t n_, stride_, m_;
  // The interleaved pairs, from its first 64-byte boundary; left uninitialised until the
  // threads that copy the pairs touch it.
  std::unique_ptr<double[]> storage_;
  const double* pairs_ = nullptr;
};

/// dosage_dots of `count` columns with prepared vectors.
void dosage_dots(const std::uint8_t* const* columns, std::size_t count, const dosage_vectors& v,
                 double* out) noexcept;

/// The dot product of the dosages with w: sum of dosage_i * w[i] (a missing call counts 0;
/// w finite). Where few bytes of codes hold a dosage above 0 (a rare A1 allele) it costs those
/// bytes, not the column, with the same bits.
double dosage_dot(std::span<const std::uint8_t> codes, std::size_t n, const double* w) noexcept;

/// dosage_dot with the other allele's dosages: sum of (2 − dosage_i) * w[i] over the samples
/// with a call. Cheap where A1 is common and the other allele rare.
double second_dosage_dot(std::span<const std::uint8_t> codes, std::size_t n,
                         const double* w) noexcept;

/// The sum of w[i] over the samples whose call is missing (w finite), at the cost of the bytes
/// that hold one. With the column's mean m and SD s (docs/DESIGN.md §2) and S the sum of w,
/// zᵀw = (dosage_dot − m · (S − missing_sum)) / s: the standardised product, without decoding.
double missing_sum(std::span<const std::uint8_t> codes, std::size_t n, const double* w) noexcept;

/// {dosage_dot, missing_sum} of the same codes and w, each with its bits alone, in one pass over
/// the bytes that hold either where the CPU allows (docs/PERFORMANCE.md, BayesR).
std::array<double, 2> dosage_dot_and_missing_sum(std::span<const std::uint8_t> codes, std::size_t n,
                                                 const double* w) noexcept;

/// {second_dosage_dot, missing_sum} in the same way.
std::array<double, 2> second_dosage_dot_and_missing_sum(std::span<const std::uint8_t> codes,
                                                        std::size_t n, const double* w) noexcept;

/// r[i] += a * dosage_i + c for every sample with a call that `mask` keeps (all when empty);
/// other entries are left as they are. With a = −δ/s and c = δm/s this is r −= δz, the
/// residual update of coordinate descent and Gibbs samplers, without decoding the column.
void genotype_axpy(std::span<const std::uint8_t> codes, std::size_t n,
                   std::span<const std::uint8_t> mask, double a, double c, double* r) noexcept;

}  // namespace colflow
