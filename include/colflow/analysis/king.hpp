/// @file king.hpp
/// KING-robust kinship between every pair of samples, `colflow king`: PLINK 2's
/// `--make-king-table` and `--king-cutoff`.
///
/// For samples i > j (positions among the selected samples) and the selected autosomal variants
/// where both have a call, the pair counts of colflow/kernels/king_counts.hpp: HETHET (both
/// heterozygous), IBS0 (opposite homozygotes), HET_HOM and HOM_HET (one heterozygous, the other
/// homozygous) and HOMHOM. The kinship is PLINK 2's between-family KING-robust estimator
/// (Manichaikul et al. 2010):
///   kinship = 1/2 − (4·IBS0 + HET_HOM + HOM_HET) / (4·(HETHET + min(HET_HOM, HOM_HET))),
/// in binary64 as PLINK 2 evaluates it; each sample's heterozygous calls are counted over the
/// variants both have called (HETHET + HET_HOM for i). Duplicates are at 0.5, first-degree
/// relatives near 0.25. The estimator does not use allele frequencies. Variants on X, Y and MT
/// are left out, as PLINK 2 leaves them out (the pseudo-autosomal XY stays).
///
/// Memory: the counts are computed in bands of rows (samples), each band one streaming pass over
/// the variants, so that a band's counts (20 bytes a pair) fit in `memory_limit`; with no limit
/// one band and one pass.
///
/// Reproducibility: the counts are integers, the same whatever the threads, bands, in-flight
/// depth or vector path (AVX2, POPCNT, portable); the kinship a function of them alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "colflow/analysis/analysis.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/kernels/king_counts.hpp"
#include "colflow/store/store.hpp"

namespace colflow {

/// PLINK 2's KING-robust kinship of a pair's counts; −inf (or NaN) when neither sample of the
/// pair has a heterozygous call among the variants both have called.
double king_kinship(const king_pair_counts& c) noexcept;

struct king_options {
  /// Variants turned into bit planes at once (a multiple of 64; 0: the default, 4,096).
  std::size_t block_columns = 0;
  /// Bytes the computation may hold (the bands' counts, the block, the stream's buffers);
  /// 0: no limit, one band.
  std::uint64_t memory_limit = 0;
};

/// What a run used and needed.
struct king_plan {
  std::size_t samples = 0;          ///< selected samples
  std::size_t variants = 0;         ///< selected variants but those on X, Y and MT
  std::size_t non_autosomal = 0;    ///< selected variants left out (X, Y, MT)
  std::size_t band_rows = 0;        ///< rows per band (the last band may have fewer)
  std::size_t bands = 0;            ///< bands, each one pass over the variants
  std::size_t block_columns = 0;    ///< variants per block of planes
  std::uint64_t band_bytes = 0;     ///< bytes of one band's counts
  std::uint64_t block_bytes = 0;    ///< bytes of a block's codes and planes
  std::uint64_t stream_bytes = 0;   ///< bytes of the stream's buffers in flight
  std::uint64_t total_bytes = 0;    ///< what the run holds at most
  std::uint64_t minimum_bytes = 0;  ///< what the smallest band (64 rows) would need
};

/// The counts of the pairs (i, j), j < i, of rows i in [first_row, first_row + rows).
/// The allocator of a band's counts: a vector grown by resize() leaves the new values unwritten,
/// so that king() zeroes a band (a gigabyte for 10,000 samples) on every thread at once; the
/// first touch of fresh memory, not the counting, would otherwise be a serial part of the run.
/// Every other construction is std::allocator's.
template <class T>
struct king_counts_allocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = king_counts_allocator<U>;
  };
  king_counts_allocator() noexcept = default;
  template <class U>
  king_counts_allocator(const king_counts_allocator<U>&) noexcept {}
  template <class U>
  void construct(U*) noexcept {}  // value-initialisation by resize(): left to the caller
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

struct king_band {
  std::size_t first_row = 0, rows = 0;
  /// The lower triangle's rows one after another: row i holds its i pairs (i, 0) … (i, i − 1),
  /// so pair (i, j) is at row_offset(i) + j; size() entries.
  std::vector<king_pair_counts, king_counts_allocator<king_pair_counts>> counts;
  std::size_t width() const noexcept { return first_row + rows; }
  /// Pairs before row i in the whole triangle: i (i − 1) / 2.
  static constexpr std::size_t triangle(std::size_t i) noexcept { return i * (i - 1) / 2; }
  std::size_t row_offset(std::size_t i) const noexcept { return triangle(i) - triangle(first_row); }
  /// The band's pairs: triangle(width()) − triangle(first_row).
  std::size_t size() const noexcept { return row_offset(width()); }
  const king_pair_counts& pair(std::size_t i, std::size_t j) const noexcept {
    return counts[row_offset(i) + j];
  }
};

/// The plan king() follows. Throws colflow::error invalid_argument for a store that is not of
/// genotypes (dosage and dense stores hold no calls to count), fewer than 2 selected samples,
/// no autosomal variant, block_columns not a multiple of 64, or a memory limit below
/// minimum_bytes (the message names both sizes).
king_plan plan_king(const store& s, const selection& sel, const king_options& king = {},
                    const analysis_options& options = {});

/// Counts the pairs band by band and hands each band to `sink`, in row order, on the calling
/// thread. Progress labels: "king" (one band) or "king band B/N". Errors: those of plan_king(),
/// the stream's, and whatever `sink` throws (the run stops there). Every process computes
/// everything (analysis_options::processes is not used).
king_plan king(const store& s, const selection& sel, const king_options& king,
               const analysis_options& options, const std::function<void(const king_band&)>& sink);

/// The greedy removal of PLINK 2's --king-cutoff: `related` holds the pairs (i, j) of samples
/// (positions among `samples`) whose kinship exceeds the cutoff, each pair once. While a pair
/// is left, the partner of the first sample (lowest position) with one related sample left is
/// removed, or, when there is none, the first sample with the most. Returns the removed
/// positions, increasing. Throws invalid_argument for a position out of range or a sample
/// paired with itself.
std::vector<std::size_t> king_cutoff_removals(
    std::size_t samples, std::span<const std::pair<std::size_t, std::size_t>> related);

/// The columns of a .kin0 table, PLINK 2's `cols=` (default maybefid,id,maybesid,nsnp,hethet,
/// ibs0,kinship); a store's samples always have a family ID and never a SID.
struct king_table_columns {
  bool fid = true;      ///< FID1, FID2
  bool id = true;       ///< IID1, IID2 (without them PREFIX.kin0.id lists the samples)
  bool nsnp = true;     ///< NSNP: variants where both have a call
  bool hethet = true;   ///< HETHET
  bool ibs0 = true;     ///< IBS0
  bool ibs1 = false;    ///< HET1_HOM2, HET2_HOM1
  bool kinship = true;  ///< KINSHIP
  bool counts = false;  ///< HETHET, IBS0 and IBS1 as counts, not proportions of NSNP
};

/// What `colflow king` writes.
struct king_outputs {
  /// PREFIX.kin0, as plink2 --make-king-table: a line per pair, i = 1 … n − 1, j = 0 … i − 1
  /// (IID1 the later sample), numbers to `digits` significant digits.
  bool table = false;
  king_table_columns columns;
  /// Leave out of the table the pairs whose kinship is below this (--king-table-filter); at
  /// most 0.5.
  std::optional<double> table_filter;
  /// PREFIX.king.cutoff.in.id and .out.id, as plink2 --king-cutoff: the samples kept and
  /// removed by king_cutoff_removals over the pairs whose kinship exceeds this; 0 ≤ cutoff < 0.5.
  std::optional<double> cutoff;
};

/// Writes the files of `colflow king` band by band: construct it, pass write() as the sink of
/// king(), then commit(). Every file is a staged output (io/staged_output.hpp): nothing appears
/// under its name before commit(). Throws colflow::error invalid_argument for no output, a
/// filter above 0.5, a cutoff outside [0, 0.5), digits out of range (1 to 17), a band out of
/// order; the file system's errors naming the file. Not thread-safe.
class king_writer {
 public:
  king_writer(const store& s, const selection& sel, const std::filesystem::path& prefix,
              const king_outputs& outputs, int digits = 6);
  ~king_writer();
  king_writer(const king_writer&) = delete;
  king_writer& operator=(const king_writer&) = delete;

  void write(const king_band& band);

  /// What commit() wrote and found.
  struct summary {
    std::vector<std::filesystem::path> files;  ///< in the order written
    std::uint64_t pairs_written = 0;           ///< lines of the table
    std::uint64_t pairs_filtered = 0;          ///< left out by table_filter
    std::size_t removed = 0;                   ///< samples removed by the cutoff
  };
  /// Applies the cutoff, writes its ID files and publishes every file; throws
  /// invalid_argument unless every row was written.
  summary commit();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace colflow
