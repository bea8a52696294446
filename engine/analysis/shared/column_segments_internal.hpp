// Sums over columns in a fixed grouping, so that MPI ranks that each take whole segments of the
// columns add exactly what one process adds (docs/DESIGN.md §4.9): pca's Y = Σ Z_b B_b and
// C = Σ B_bᵀ B_b, score's per-sample sums.
//
// The blocks of columns form at most `max_segments` consecutive segments; each segment's blocks
// are added up from zero, and the segments' sums are added in segment order. The grouping
// depends on the column count and the block size only, never on the processes.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <vector>

#include "colflow/communicator.hpp"

namespace colflow::detail {

class column_segments {
 public:
  static constexpr std::size_t max_segments = 16;

  // `m` (≥ 1) columns in blocks of `block`; `processes` null for this process alone.
  column_segments(std::size_t m, std::size_t block, communicator* processes);

  // The position of segment g's first column (m from the last segment on).
  std::size_t first_column(std::size_t g) const;
  // This process's segments: [own_first(), own_end()).
  std::size_t own_first() const noexcept { return own_first_; }
  std::size_t own_end() const noexcept { return own_end_; }

  // A running segment of a sum is complete: added to `total` in one process, kept in `done`
  // for the exchange on several. Zeroed for the next.
  void end(Eigen::MatrixXd& total, Eigen::MatrixXd& running,
           std::vector<Eigen::MatrixXd>& done) const;

  // On several processes: every process's segments of a sum, added in segment order into
  // `total` (one all-gather of all the segments' sums).
  void exchange(Eigen::MatrixXd& total, std::vector<Eigen::MatrixXd>& done) const;

  // On several processes: the rows of `b` (one per column) of each process's segments, to
  // every process.
  void gather_rows(Eigen::MatrixXd& b) const;

 private:
  std::size_t ranks() const { return static_cast<std::size_t>(processes_->size()); }
  // The first segment of process r.
  std::size_t share(std::size_t r) const;

  std::size_t m_, block_, per_segment_ = 0, segments_ = 0, own_first_ = 0, own_end_ = 0;
  communicator* processes_;
};

}  // namespace colflow::detail
