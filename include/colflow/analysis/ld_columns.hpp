/// @file ld_columns.hpp
/// An LD reference as the summary-statistics models read it: the variant table and, pass after
/// pass, the columns of the LD matrix, each the run of correlations inside its variant's window.
///
/// This is the interface between the models that read LD (SBayesR, `colflow sbayesr`) and the
/// sources that hold it: the LD store (`colflow ld --make-ldm`), GCTB's `.ldm.full` and
/// `.ldm.sparse` files, or a matrix computed in memory from a genotype store. A model never sees
/// where the values come from, nor whether the source holds them whole, decodes them from disk or
/// streams them through the engine.
///
/// The matrix. Variant j's column holds r(i, j) for the variants i of its window, a run
/// [first, first + count) of the variant table that contains j itself (r(j, j) = 1 for a
/// variant that varies). r is the correlation of the A1 allele counts (ld.hpp), so its sign
/// follows the table's A1. Values are float32, as GCTB's files and the LD store keep them; a
/// pair the source does not hold (a sparse matrix's dropped pairs) is 0 inside the run. A value
/// may be NaN where a variant is constant in the reference; a model treats such a variant as
/// absent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace colflow {

/// One variant of an LD reference: one row and one column of its matrix.
struct ld_variant {
  std::string id;     ///< the variant's name, what a GWAS file's SNP column is matched on
  std::string chrom;  ///< chromosome code as the reference writes it
  std::int64_t pos = 0;
  std::string a1, a2;  ///< r is of A1 counts
  /// The A1 frequency in the reference's samples, NaN when the source does not keep it.
  double a1_freq = std::numeric_limits<double>::quiet_NaN();
  /// The reference samples the variant's LD comes from (GCTB's `.ldm.info` N): SBayesR's
  /// sampling variance of LD is 1/samples per pair. 0 when unknown.
  std::size_t samples = 0;
};

/// One column as a pass hands it over: r(first + i, index) for i < values.size(). The span is
/// valid during the visitor's call only.
struct ld_column {
  std::size_t index = 0;  ///< the variant: its position in variants()
  std::size_t first = 0;  ///< the first variant of its window
  std::span<const float> values;
};

/// Called once per column of a pass, in the order the pass asked for, one call at a time.
using ld_column_visitor = std::function<void(const ld_column&)>;

/// A source of LD columns.
class ld_columns {
 public:
  virtual ~ld_columns() = default;

  /// The variant table, in the matrix's order (by chromosome and position for every source
  /// colflow writes or reads).
  virtual const std::vector<ld_variant>& variants() const = 0;

  /// What to name in messages: the file, the store or "LD of STORE in memory".
  virtual std::string description() const = 0;

  /// One pass: calls `visit` for each variant of `indices` (positions in variants(), strictly
  /// increasing), in that order, never two calls at once; the calls may come from a thread
  /// other than the caller's (a streaming source decodes ahead of them), and they return before
  /// pass() does. An exception thrown by `visit` stops the pass and leaves pass() with it;
  /// a damaged source throws colflow::error naming the file and the variant. Memory stays
  /// bounded by the source's in-flight depth whatever the number of variants.
  virtual void pass(std::span<const std::size_t> indices, const ld_column_visitor& visit) = 0;

  /// One column, read on the calling thread: what a pass would hand over for `index`. The span
  /// stays valid until the next column() or pass() call. For a sampler that needs a column only
  /// now and then (SBayesR: when a variant's effect changes), through the source's index rather
  /// than a pass over every column. Throws as pass() does.
  virtual ld_column column(std::size_t index) = 0;

  /// The source holds every column in memory already: a copy kept by the caller saves nothing.
  virtual bool resident() const noexcept { return false; }
};

}  // namespace colflow
