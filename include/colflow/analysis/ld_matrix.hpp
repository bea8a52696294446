/// @file ld_matrix.hpp
/// LD matrices for summary-statistics methods (SBayesR, LDpred2): made from a genotype or
/// dosage store as an LD store (docs/FORMAT.md §13), optionally also as GCTB's `.ldm` files,
/// and read column by column from an LD store, from GCTB's `.ldm.full`, `.ldm.band` and
/// `.ldm.sparse` files, or from colflow's `.ldband`, through one reader.
///
/// Values. Entry (i, j) is r, the correlation of the A1 dosages of variants i and j over the
/// selected samples called in both (analysis/ld.hpp: the exact pair sums of `colflow ld`),
/// rounded to float32; the diagonal is 1. GCTB 2.05 computes r from mean-imputed genotypes
/// in float32: without missing calls the two are the same value up to float32 rounding (GCTB's
/// diagonal is 1 within about 3e-6).
///
/// Kinds, as GCTB's `--make-full-ldm`, `--make-band-ldm` and `--make-sparse-ldm`:
/// - full: every pair of the selected variants, across chromosomes too;
/// - band: the pairs of each variant's window (`--ld-window`, `--ld-window-kb` or
///   `--ld-window-cm`, on one chromosome; symmetric: j is in i's window when i is in j's);
/// - sparse: every pair, but only those whose r² × N reaches a chi-square threshold (GCTB's
///   `--chisq`, default 10; N the selected samples), or whose r² reaches min_r2; the diagonal is
///   always kept. Entries dropped, and entries that are exactly 0, are not stored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "colflow/analysis/analysis.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/store/store.hpp"
#include "colflow/store/store_writer.hpp"

namespace colflow {

/// Which pairs an LD matrix holds (see the file comment).
enum class ldm_kind { full, band, sparse };

/// "full", "band" or "sparse".
std::string_view ldm_kind_name(ldm_kind kind) noexcept;

/// How make_ld_matrix builds the matrix.
struct ldm_options {
  ldm_kind kind = ldm_kind::full;
  /// band: the window, as `colflow ld` takes it (ld_options): pairs at most window − 1
  /// variants apart, and at most window_kb kb (or window_cm cM when > 0) apart.
  std::int64_t window = 10;
  double window_kb = 1000;
  double window_cm = 0;
  /// sparse: keep pairs with r² × N ≥ chisq (GCTB's chi-square test of non-zero LD)...
  double chisq = 10;
  /// ... or, when set, those with r² ≥ min_r2 instead (0 keeps every pair).
  std::optional<double> min_r2;
  /// 32: every r as float32 (lossless against the pairs' float32 rounding). 16: every r
  /// rounded to the nearest multiple of 2⁻¹⁴ (at most 3.1e-5 off; the diagonal stays 1) and
  /// stored as that 16-bit multiple (the codec fixed16-zstd at encoding's level: zstd alone,
  /// unshuffled), in about half the bytes; readers still see float32 values, and SBayesR keeps
  /// them in 16 bits (docs/FORMAT.md §13).
  unsigned value_bits = 32;
  /// The frames of the LD store: float32 columns, zstd 3 without the byte shuffle by default
  /// (on uk10k the shuffle makes full columns 30% larger: docs/FORMAT.md §13.4).
  column_encoding encoding{codec_id::zstd, 3, false};
  /// Also write GCTB's `PREFIX.ldm.KIND.info` and `.bin` beside the store.
  bool gctb = false;
  bool overwrite = false;  ///< replace an existing LD store at the output
};

/// Throws colflow::error invalid_argument naming the option (`--ld-window`, `--ld-window-kb`,
/// `--ld-window-cm`, `--chisq`, `--ld-min-r2`, `--ldm-bits`) when it is out of range or does not
/// apply.
void check_ldm_options(const ldm_options& options);

/// A variant of an LD matrix: its `.bim` fields, its A1 frequency and its samples with a
/// call, over the samples the matrix was made from (NaN and 0 where the source does not
/// record them: `.ldband`).
struct ldm_variant {
  column_info info;
  double a1_freq = 0;
  std::uint64_t n = 0;
};

/// One column of an LD matrix, valid during the kernel call: r of the variant at `position`
/// with the variants it holds. Dense (full and band): values[k] is the row first + k, zeros
/// included. Sparse: values[k] is the row rows[k], rows ascending.
struct ld_column_view {
  std::size_t position = 0;
  std::size_t first = 0;
  std::span<const std::uint32_t> rows;
  std::span<const float> values;

  /// Calls f(row, value) for every value held, in row order.
  template <typename F>
  void for_each(F&& f) const {
    if (rows.empty())
      for (std::size_t k = 0; k < values.size(); ++k) f(first + k, values[k]);
    else
      for (std::size_t k = 0; k < values.size(); ++k) f(std::size_t{rows[k]}, values[k]);
  }
};

/// What make_ld_matrix wrote.
struct ldm_summary {
  std::size_t variants = 0;
  std::uint64_t samples = 0;                      ///< selected samples
  std::uint64_t values = 0;                       ///< values held (GCTB's sum of WindSize)
  std::uint64_t store_bytes = 0;                  ///< bytes of the LD store's files
  std::vector<std::filesystem::path> gctb_files;  ///< with ldm_options::gctb
};

/// Computes the LD matrix of the selected columns of a genotype or dosage store and writes the
/// LD store `out` (docs/FORMAT.md §13), and with options.gctb GCTB's files at the prefix `out`.
/// The pairs are computed as `colflow ld` computes them, in memory (full and sparse: the
/// m × m matrix; band: the band), across the threads (and analysis.processes, as ld() shares
/// them); the store is written column by column, by process 0 alone.
/// Throws colflow::error: invalid_argument for bad options, a store without variants, or a
/// variant constant over the selected samples (its LD is undefined; GCTB refuses it too),
/// already_exists, and the errors of reading and writing.
ldm_summary make_ld_matrix(const store& s, const selection& sel, const ldm_options& options,
                           const std::filesystem::path& out, const analysis_options& analysis = {});

/// An LD matrix read column by column, from any of the sources open() takes. Movable; const
/// members are safe from many threads.
class ld_matrix {
 public:
  /// Opens an LD store (a directory), GCTB's files by their prefix `P.ldm.full`,
  /// `P.ldm.band` or `P.ldm.sparse` (or the `.info` / `.bin` path), or colflow's
  /// `P.ldband` (with `P.ldband.vars`). Validates the layout (sizes, windows, counts) before
  /// any column is read. Throws colflow::error: not_found, the store's errors,
  /// corrupt_header / corrupt_index naming the file and line for a malformed GCTB or band
  /// file, invalid_argument for a store that is not an LD store.
  static ld_matrix open(const std::filesystem::path& path);

  ld_matrix(ld_matrix&&) noexcept;
  ld_matrix& operator=(ld_matrix&&) noexcept;
  ~ld_matrix();

  /// What was opened: "colflow LD store", "GCTB .ldm.full" (band, sparse), "colflow .ldband".
  std::string_view source_format() const noexcept;
  ldm_kind kind() const noexcept;
  std::size_t size() const noexcept;  ///< variants (rows and columns)
  const std::vector<ldm_variant>& variants() const noexcept;
  std::uint64_t samples() const noexcept;  ///< samples it was made from (0 if not recorded)
  std::uint64_t values() const noexcept;   ///< values held over all columns

  /// Reads column `j` (j < size()) into `rows` (left empty for a dense column) and `values`;
  /// returns its first row. Throws the source's read errors (corrupt_frame naming the column).
  std::size_t read_column(std::size_t j, std::vector<std::uint32_t>& rows,
                          std::vector<float>& values) const;

  /// Streams the columns in `order` to `kernel`, in that order, one at a time on the calling
  /// thread; an LD store's frames are read and decoded in parallel ahead of it through the
  /// engine (column_stream, `options`' in-flight depth), the other sources read sequentially.
  /// The kernel returns false to stop. Returns the pass's statistics.
  pass_stats stream(std::span<const std::size_t> order,
                    const std::function<bool(const ld_column_view&)>& kernel,
                    const stream_options& options = {}) const;

  struct impl;

 private:
  explicit ld_matrix(std::unique_ptr<impl> p) noexcept;
  std::unique_ptr<impl> impl_;
};

/// Writes GCTB's `PREFIX.ldm.KIND.info` and `PREFIX.ldm.KIND.bin` (KIND the matrix's kind) from
/// any LD matrix, with the bytes GCTB 2.05 writes for the same values (docs/FORMAT.md §13.3).
/// Staged outputs: each file appears only complete. Returns the two paths.
std::vector<std::filesystem::path> write_gctb_ldm(const ld_matrix& matrix,
                                                  const std::filesystem::path& prefix);

}  // namespace colflow
