// The selected columns as iterative solvers see them: z_j, column j standardised over the
// samples a fit uses (docs/DESIGN.md §2 statistics of those samples; a missing call and an unused
// sample count 0). Solvers need two things per column, the product zᵀr with the residual and
// the update r −= δz. On a genotype store both work on the packed codes and the column's
// statistics (dosage_dot, missing_sum, genotype_axpy), so nothing is decoded; a dense column is
// standardised into a scratch vector once per visit. Both are computed on sample blocks
// (kernels/sample_blocks_internal.hpp), across the threads when the column is long enough, with
// the same bits at any thread count. Shared by the penalised regressions and BayesR.
#pragma once

#include <Eigen/Core>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analysis/shared/selected_stats_internal.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/kernels/genotype_kernels.hpp"
#include "colflow/store/store.hpp"
#include "colflow/stream/column_stream.hpp"
#include "kernels/sample_blocks_internal.hpp"

namespace colflow::detail {

// The samples a fit uses: selected and with a phenotype value, and the phenotype's mean and
// SD over them. Throws invalid_argument (prefixed by `what`) when the phenotype does not have
// one value per store row, fewer than `minimum` samples are used, or it is constant on them.
struct phenotype_samples {
  std::vector<std::uint8_t> used;  // one flag per store row
  std::size_t count = 0;
  double mean = 0, sd = 0;
};
phenotype_samples used_samples(const store& s, const selection& sel,
                               std::span<const double> phenotype, std::size_t minimum,
                               const std::string& what);

class standardized_columns {
 public:
  // `used`: one flag per store row, the samples the fit uses. With `processes` of several, the
  // products and updates run on this process's share of the sample blocks
  // (sample_blocks_internal.hpp).
  standardized_columns(const store& s, const selection& sel, std::vector<std::uint8_t> used,
                       communicator* processes = nullptr);

  bool genotype() const noexcept { return genotype_; }
  const std::vector<column_stats>& stats() const noexcept { return stats_; }
  const std::vector<std::uint8_t>& used() const noexcept { return used_; }
  // The sample blocks of every product and update, for the solver's own sums over samples
  // (the residual's sum, sums of squares), so that they split and add up the same way.
  sample_blocks& blocks() noexcept { return blocks_; }

  // From now on, learn() also lists the bytes each genotype column's products add, block by
  // block, while the lists take at most `budget` bytes in all (kernels/live_lists_internal.hpp):
  // the product of a rare column then costs the bytes of its rarer allele alone, and the same
  // bits. For solvers that take every column's product at every pass.
  void keep_live_lists(std::size_t budget);
  bool keeps_live_lists() const noexcept { return !listed_.empty(); }
  // The bytes the lists take.
  std::size_t live_list_bytes() const noexcept { return list_bytes_.load(); }

  // Learns the statistics of selection position `p` from its streamed view (a first pass), and
  // its lists of live bytes when kept.
  void learn(std::size_t p, const column_view<double>& v);

  // Asks for the start of position p's lists of live bytes without waiting, and for where
  // those of position `then` are: a solver calls it for the column it takes next and the one
  // after, whose lists it asks for in its next call.
  void cache_live_lists(std::size_t p, std::size_t then) const noexcept;

  // SD 0 over the used samples: the column standardises to zeros and takes no part.
  bool constant(std::size_t p) const noexcept { return !(stats_[p].sd > 0.0); }

  // z_pᵀ r, added over the sample blocks in block order. `r_sum` is the sum of r over the used
  // samples (r is 0 on the others), which the caller keeps: a genotype column then needs only the
  // products with its rarer allele's dosages, and the sum of r over its missing calls, each
  // costing the bytes of codes that hold one. Column updates r −= δz leave the sum unchanged
  // (z sums to zero over the used samples), so a solver computes it once per pass.
  double dot(std::size_t p, const column_view<double>& v, std::span<const double> r, double r_sum);

  // The same product of a genotype column computed on the calling thread alone, by the same
  // block partials added in the same order, so the same bits: for passes that spread columns,
  // not blocks, over the threads. Genotype stores only; may run concurrently for different
  // columns (also learn() then, which only writes position p).
  double dot_alone(std::size_t p, const column_view<double>& v, std::span<const double> r,
                   double r_sum) const;

  // dot() of genotype columns p (view v) and q (view u) with the same r, each with the bits
  // dot() gives it: one loop over the sample blocks computes both, and the second product reads
  // each block of r from the closest cache. `next`: the codes of the two columns after q (or
  // empty), whose blocks are asked for as the loop goes.
  using next_pair = std::array<std::span<const std::uint8_t>, 2>;
  std::array<double, 2> dot_pair(std::size_t p, const column_view<double>& v, std::size_t q,
                                 const column_view<double>& u, std::span<const double> r,
                                 double r_sum, const next_pair& next);

  // r −= δ z_p, after dot() on the same view (which standardised a dense column).
  void subtract(std::size_t p, const column_view<double>& v, double delta, std::span<double> r);

  // From now on, subtract() of a genotype column leaves out the part of the update its mean adds
  // to every called sample (kernels/deferred_update_internal.hpp): the residual the solver holds
  // is then r − c on the used samples, c a number kept here, which the products take into account
  // (z sums to 0 over a column's called samples) and settle() adds back. A rare column's update
  // then costs its rarer allele's samples. Other bits than the updates in full, the same on every
  // path and at any threads, blocks or lists.
  void defer_mean_updates() noexcept { defer_means_ = genotype_; }
  // Adds the deferred part back to r (the used samples of this process's blocks): r is the
  // residual in full again. A solver calls it before anything but products and updates reads r.
  void settle(std::span<double> r);

  // z_p itself, one value per store row (for solvers that hold the matrix in memory).
  void values(std::size_t p, const column_view<double>& v, double* out) const;

 private:
  // Column p's two sums over rows [first, first + n) into out[0] and out[1], and the product
  // they make over all the blocks.
  void block_sums(std::size_t p, const std::uint8_t* codes, std::span<const double> r,
                  std::size_t first, std::size_t n, double* out) const;
  double centred_dot(std::size_t p, double allele, double missing, double r_sum) const;
  // dot() of a genotype column over `blocks`; asks for the blocks of `next` (the codes of the
  // column computed next, or empty) as it goes.
  template <typename Blocks>
  double genotype_dot(Blocks& blocks, std::size_t p, const std::uint8_t* codes,
                      std::span<const double> r, double r_sum,
                      std::span<const std::uint8_t> next) const;
  // Rows [first, first + n) of z_p into out[first, first + n).
  void standardize(std::size_t p, const column_view<double>& v, std::size_t first, std::size_t n,
                   double* out) const;

  // subtract() with the mean's part deferred.
  void subtract_deferred(std::size_t p, std::span<const std::uint8_t> codes, double delta,
                         std::span<double> r);
  // Column p's lists of live bytes, one per block of this process that has one.
  void list_live_bytes(std::size_t p, std::span<const std::uint8_t> codes);
  // Block b's list of column p, or null.
  const std::uint32_t* live_list(std::size_t p, std::size_t b) const noexcept;

  // A column's lists: entry b - own_begin is where the list of this process's block b begins
  // (from the vector's start), or no_list; the lists follow.
  using listed_column = std::vector<std::uint32_t>;
  static constexpr std::uint32_t no_list = ~std::uint32_t{0};

  bool genotype_;
  std::size_t rows_;
  std::vector<std::uint8_t> used_;
  std::uint64_t used_count_;
  sample_blocks blocks_;
  selected_stats statistics_;
  std::vector<column_stats> stats_;
  std::vector<listed_column> listed_;  // empty unless keep_live_lists()
  std::size_t list_budget_ = 0;
  bool defer_means_ = false;
  double mean_shift_ = 0;  // c: what settle() adds to every used sample
  std::atomic<std::size_t> list_bytes_{0};
  Eigen::VectorXd z_;
};

}  // namespace colflow::detail
