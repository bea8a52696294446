/// @file ld.hpp
/// Linkage disequilibrium between variants: `colflow ld`, PLINK 1.9's `--r` and `--r2`.
///
/// Definition. For columns a and b, r is the Pearson correlation of their dosages (counts of
/// A1) over the selected samples called in both (PLINK 1.9's rule for missing calls):
/// with n, Σxa, Σxb, Σxa², Σxb², Σxa·xb over those samples,
///   r = (n Σxa·xb − Σxa Σxb) / sqrt((n Σxa² − (Σxa)²)(n Σxb² − (Σxb)²)),
/// NaN when either variance is 0 there. On a genotype store the sums are exact integers from
/// the bit planes of the packed codes (kernels/genotype_products_internal.hpp) and r² is computed
/// as cov² / (var_a · var_b) from them; on a dosage store they are sums of the decoded dosages in
/// double precision, in sample order. r's sign follows the store's A1 (the .bim's column 5):
/// PLINK 1.9 makes the minor allele A1 unless given --keep-allele-order.
///
/// Reproducibility: every value is computed by one task from its own pair of columns, so the
/// results are the same bits at any thread count or in-flight depth.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "colflow/analysis/analysis.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/store/store.hpp"

namespace colflow {

/// What is reported: r (`--r`) or r² (`--r2`).
enum class ld_statistic { r, r2 };

/// The shape of the report (PLINK 1.9's modifiers): a table of the pairs in a window
/// (default), or the matrix of every pair of selected columns: `square` (full), `square0` (the
/// upper triangle written as 0) or `triangle` (the lower triangle and the diagonal alone); or
/// `band`, colflow's banded matrix for summary-statistics methods: every pair in the table's
/// window, without a threshold, in the binary format of docs/FORMAT.md, "Banded LD matrix".
enum class ld_shape { table, square, square0, triangle, band };

/// How a matrix is written: text (`PREFIX.ld`), or binary `PREFIX.ld.bin` with float64
/// values (`bin`) or float32 values (`bin4`), native byte order, row by row, as PLINK 1.9.
/// A band is always binary: float32 with bin4, else float64.
enum class ld_encoding { text, bin, bin4 };

struct ld_options {
  ld_statistic statistic = ld_statistic::r2;
  ld_shape shape = ld_shape::table;
  ld_encoding encoding = ld_encoding::text;
  /// Table: pairs on different chromosomes too, every pair i < j, filtered by min_r2 alone
  /// (PLINK's `inter-chr`); window and window_kb are then not used.
  bool inter_chr = false;
  /// Table and band: pairs at most window − 1 selected variants apart (`--ld-window`, ≥ 1).
  std::int64_t window = 10;
  /// Table and band: pairs at most window_kb × 1000 bp apart, positions from the store's POS
  /// (`--ld-window-kb`, > 0).
  double window_kb = 1000;
  /// Table and band, when > 0: pairs at most window_cm centimorgans apart on the store's
  /// genetic map (the .bim's third column), in place of window_kb (`--ld-window-cm`, colflow's:
  /// the windows of LDpred2 and SBayesR's LD matrices). Every selected variant needs a position
  /// in cM, and a map that is 0 for every variant (no map) is refused.
  double window_cm = 0;
  /// Table: pairs with r² ≥ min_r2 (`--ld-window-r2`, in [0, 1]); pairs whose r is NaN are
  /// never listed.
  double min_r2 = 0.2;
  /// Table: the A1 frequency of each variant over the selected samples with a call, in columns
  /// MAF_A and MAF_B (`with-freqs`).
  bool with_freqs = false;
};

/// A pair of the table: positions in selection::columns (a < b), r and r².
struct ld_pair {
  std::size_t a = 0, b = 0;
  double r = 0, r2 = 0;
};

struct ld_result {
  ld_options options;          ///< the options used
  std::size_t columns = 0;     ///< selected columns
  std::vector<ld_pair> pairs;  ///< table: the pairs, by a then b
  /// Matrix shapes: columns × columns, row-major, r or r² (NaN where undefined); the diagonal
  /// is 1, or NaN for a variant constant over the selected samples with a call, as PLINK 1.9
  /// writes it.
  std::vector<double> matrix;
  std::vector<double> a1_freq;  ///< with_freqs: per selected column
  /// Band: row i holds r or r² of column i with columns [i, band_end[i]) (the diagonal first),
  /// the rows one after another in `matrix`.
  std::vector<std::size_t> band_end;
};

/// Throws colflow::error invalid_argument naming the option (`--ld-window`, `--ld-window-kb`,
/// `--ld-window-cm`, `--ld-window-r2`, `inter-chr`) when it is out of range or does not apply.
void check_ld_options(const ld_options& options);

/// LD of the selected columns of a genotype or dosage store. The selected columns are read in
/// one pass and held in memory (genotype: 3 bits a sample and column; dosage: 4 bytes a sample
/// and column), then the pairs are computed across the threads. On R processes
/// (analysis.processes, a collective) each takes a run of rows of about 1/R of the pairs, reads
/// only the columns they pair with, and the rows are gathered: every process returns the whole
/// result, the single process's bits. Throws colflow::error:
/// invalid_argument for options out of range (check_ld_options) or a store without variants
/// (dense values); errors of the store's reads.
ld_result ld(const store& s, const selection& sel, const ld_options& options,
             const analysis_options& analysis = {});

/// Writes the report: the table `PREFIX.ld` (CHR_A BP_A SNP_A [MAF_A] CHR_B BP_B SNP_B [MAF_B]
/// R or R2, tab-separated, `digits` significant digits, nan for NaN), the matrix `PREFIX.ld`
/// (tab-separated rows), `PREFIX.ld.bin`, or the band `PREFIX.ldband` with its variants
/// `PREFIX.ldband.vars` (CHR BP SNP A1 A2, one line a row). Staged outputs (io/staged_output.hpp):
/// a file appears under its name only complete. Returns the path written.
std::filesystem::path write_ld(const store& s, const selection& sel, const ld_result& result,
                               const std::filesystem::path& prefix, int digits = 6);

}  // namespace colflow
