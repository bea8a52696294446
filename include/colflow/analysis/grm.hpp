/// @file grm.hpp
/// The genomic relationship matrix over samples, `colflow grm`: PLINK 2's `--make-rel` and
/// PLINK 1.9's `--make-grm-bin` (the GCTA binary files).
///
/// With x the A1 dosage of a selected sample at a selected autosomal variant, p the A1
/// frequency over the selected samples' observed calls (half their mean), the variant's value
/// is z = (x − 2p) / sqrt(2p(1 − p)) (`grm_scaling::standardized`, PLINK 2's default) or
/// z = x − 2p (`grm_scaling::centered`, PLINK 2's `cov` modifier); a missing call is 0, and a
/// variant with 2p(1 − p) below 1e-12 (monomorphic over the samples) is all zeros. Entry (i, j)
/// is Σ z_i z_j over the M variants divided by the number of variants where both i and j have a
/// call (`grm_missing::pairwise`, PLINK 2's default and PLINK 1.9's; the diagonal by the
/// variants where i has one), or by M (`grm_missing::mean_impute`, PLINK 2's `meanimpute`).
/// Monomorphic variants count in the divisors, as in PLINK. Variants on X, Y and MT are left
/// out, as PLINK 2 leaves them out of a GRM (the pseudo-autosomal XY stays). PLINK computes the
/// frequency over founders only: on data with non-founders, compare with its `--nonfounders`.
///
/// Memory: the matrix is computed in bands of rows (samples), each band one streaming pass over
/// the columns, so that a band's rows, the decoded block of columns and the stream's buffers
/// fit in `memory_limit`; with no limit (or enough memory) one band and one pass. A band holds
/// for each of its rows the entries of every column at or below the band's last row (the lower
/// triangle), or of every column (`full_rows`, what a square output needs).
///
/// Reproducibility: each entry is one chain of binary64 fused multiply-adds over the variants in
/// column order, whichever tile, thread, band or vector unit (AVX-512, AVX2, portable) computes
/// it, so the result is the same bits at any thread count, any memory limit and on any CPU
/// (docs/DESIGN.md §7). Entry (j, i) equals entry (i, j) to the bit. The pair counts are exact.
/// In single precision (grm_precision::single) the values are rounded to binary32, and each
/// run of 128 variants (from the first, in column order) is one chain of binary32 fused
/// multiply-adds from zero, added to the entry's binary64 sum: the same guarantees.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <vector>

#include "colflow/analysis/analysis.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/store/store.hpp"

namespace colflow {

/// How a variant's dosages become its values (see the file comment).
enum class grm_scaling {
  standardized,  ///< (x − 2p) / sqrt(2p(1 − p)): PLINK 2's default, PLINK 1.9's --make-grm-bin
  centered,      ///< x − 2p: PLINK 2's `cov` modifier (a covariance matrix)
};

/// The divisor of an entry.
enum class grm_missing {
  pairwise,     ///< variants where both samples have a call: PLINK's default
  mean_impute,  ///< every variant (M): PLINK 2's `meanimpute`
};

/// The arithmetic of the products.
enum class grm_precision {
  /// binary64 values and products: what PLINK computes (the .rel text and bin forms)
  double_,
  /// binary32 values and products per block, binary64 sums across blocks: twice the vector
  /// lanes, for outputs that are binary32 anyway (GCTA's .grm.bin, .rel.bin4). An entry moves from
  /// the binary64 one by a few units of binary32's last place
  /// relative to the sum of its products' magnitudes (each block's sum is rounded to
  /// binary32's 24 bits).
  single,
};

struct grm_options {
  grm_scaling scaling = grm_scaling::standardized;
  grm_missing missing = grm_missing::pairwise;
  grm_precision precision = grm_precision::double_;
  /// Compute every column of a band's rows, not only the lower triangle (square outputs).
  bool full_rows = false;
  /// Variants decoded into one dense block before its products (memory and cache only in
  /// double precision; in single precision each block's products are one binary32 chain).
  std::size_t block_columns = 0;
  /// Bytes the computation may hold (the bands, the decoded block, the stream's buffers);
  /// 0: no limit, one band.
  std::uint64_t memory_limit = 0;
};

/// Rows [first_row, first_row + rows) of the matrix (positions among the selected samples),
/// handed to a sink in row order.
struct grm_band {
  std::size_t first_row = 0;
  /// Every column of the rows is meaningful (computed with full_rows), not only the lower
  /// triangle.
  bool full = false;
  /// rows × width: entry (first_row + r, c) at (r, c); width = first_row + rows (lower
  /// triangle: only c ≤ first_row + r is meaningful, the rest is 0) or, with full_rows, every
  /// selected sample.
  Eigen::MatrixXd values;
  /// The same shape: the variants that divided each entry (exact integers).
  Eigen::MatrixXd variants;
};

/// What a run used and needed.
struct grm_plan {
  std::size_t samples = 0;          ///< selected samples: the matrix is samples × samples
  std::size_t variants = 0;         ///< M: selected variants but those on X, Y and MT
  std::size_t non_autosomal = 0;    ///< selected variants left out (X, Y, MT)
  std::size_t band_rows = 0;        ///< rows per band (the last band may have fewer)
  std::size_t block_columns = 0;    ///< variants decoded per block
  std::size_t bands = 0;            ///< bands, each one pass over the variants
  std::size_t processes = 1;        ///< ranks sharing the bands (analysis_options::processes)
  std::uint64_t band_bytes = 0;     ///< bytes of one band (values and divisors)
  std::uint64_t block_bytes = 0;    ///< bytes of the decoded block of variants
  std::uint64_t stream_bytes = 0;   ///< bytes of the stream's buffers in flight
  std::uint64_t total_bytes = 0;    ///< band + block + stream: what the run holds at most
  std::uint64_t minimum_bytes = 0;  ///< what the smallest band (64 rows) would need
};

/// The plan grm() follows: the variants used and the bands that fit in options.memory_limit.
/// Throws colflow::error invalid_argument for a store that is not of genotypes or dosages,
/// fewer than 2 selected samples, no autosomal variant, block_columns not a multiple of 128 in
/// single precision, or a limit below
/// minimum_bytes (the message names both sizes).
grm_plan plan_grm(const store& s, const selection& sel, const grm_options& grm,
                  const analysis_options& options = {});

/// Computes the matrix band by band and hands each band to `sink`, in row order, on the
/// calling thread. Progress labels: "grm" (one band) or "grm band B/N". Errors: those of
/// plan_grm(), the stream's, and whatever `sink` throws (the run stops there).
///
/// On R processes (options.processes, a collective): at least 2 bands per process; in round t
/// process r makes band t·R + r, and two all-gathers give every process the round's bands, so
/// that `sink` sees every band, in row order, on every process. Each process holds the round's
/// bands besides its own (plan_grm counts them). The entries are the single process's bits.
grm_plan grm(const store& s, const selection& sel, const grm_options& grm,
             const analysis_options& options, const std::function<void(const grm_band&)>& sink);

/// The whole matrix in memory (one band, lower triangle mirrored), for small sample counts:
/// entries and divisors, samples × samples.
struct grm_matrix {
  Eigen::MatrixXd values, variants;
  grm_plan plan;
};
grm_matrix grm_dense(const store& s, const selection& sel, const grm_options& grm,
                     const analysis_options& options = {});

/// The shape of a PLINK 2 .rel matrix.
enum class rel_shape {
  triangle,  ///< row i holds entries 0..i (the default of the text form)
  square,    ///< every entry (the default of the binary forms)
  square0,   ///< square, with zeros above the diagonal
};

/// The form of a PLINK 2 .rel matrix.
enum class rel_form {
  text,  ///< PREFIX.rel: tab-separated, `digits` significant digits
  bin,   ///< PREFIX.rel.bin: little-endian float64, row by row
  bin4,  ///< PREFIX.rel.bin: little-endian float32, row by row
};

/// Which files write_grm / grm_writer produce; at least one of the two.
struct grm_outputs {
  bool rel = false;  ///< PREFIX.rel or PREFIX.rel.bin, and PREFIX.rel.id (#FID IID)
  rel_shape shape = rel_shape::triangle;
  rel_form form = rel_form::text;
  /// GCTA's binary GRM, as PLINK 1.9 --make-grm-bin: PREFIX.grm.bin (float32 lower triangle
  /// with the diagonal, row by row), PREFIX.grm.N.bin (float32 divisors, the same layout),
  /// PREFIX.grm.id (FID IID, no header).
  bool gcta = false;
  /// True when the outputs need every column of each row (grm_options::full_rows).
  bool needs_full_rows() const noexcept { return rel && shape == rel_shape::square; }
};

/// The files of `colflow grm` for an output prefix (prefix followed by the suffix as text).
struct grm_files {
  std::vector<std::filesystem::path> paths;  ///< in the order written
};
grm_files grm_output_files(const std::filesystem::path& prefix, const grm_outputs& outputs);

/// Writes the files of `colflow grm` band by band: construct it, pass write() as the sink of
/// grm(), then commit(). Every file is a staged output (io/staged_output.hpp): nothing appears
/// under its name before commit(), and a writer destroyed without commit() leaves nothing.
/// Throws colflow::error invalid_argument for no output, digits out of range (1 to 17), a band
/// out of order or of the wrong width (a square shape needs full_rows); the file system's errors
/// naming the file. Not thread-safe.
class grm_writer {
 public:
  grm_writer(const store& s, const selection& sel, const std::filesystem::path& prefix,
             const grm_outputs& outputs, int digits = 6);
  ~grm_writer();
  grm_writer(const grm_writer&) = delete;
  grm_writer& operator=(const grm_writer&) = delete;

  void write(const grm_band& band);
  /// Writes the ID files and publishes every file; throws invalid_argument unless every row
  /// was written.
  grm_files commit();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace colflow
