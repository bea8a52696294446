// Sums over columns in a fixed grouping of segments, the same on any number of processes.
#include <algorithm>
#include <span>

#include "analysis/shared/column_segments_internal.hpp"

namespace colflow::detail {

column_segments::column_segments(std::size_t m, std::size_t block, communicator* processes)
    : m_(m), block_(block), processes_(processes) {
  const std::size_t blocks_total = (m + block - 1) / block;
  per_segment_ = (blocks_total + max_segments - 1) / max_segments;
  segments_ = (blocks_total + per_segment_ - 1) / per_segment_;
  own_end_ = segments_;
  if (processes) {
    own_first_ = share(static_cast<std::size_t>(processes->rank()));
    own_end_ = share(static_cast<std::size_t>(processes->rank()) + 1);
  }
}

std::size_t column_segments::first_column(std::size_t g) const {
  return std::min(m_, g * per_segment_ * block_);
}

void column_segments::end(Eigen::MatrixXd& total, Eigen::MatrixXd& running,
                          std::vector<Eigen::MatrixXd>& done) const {
  if (processes_)
    done.push_back(running);
  else
    total += running;
  running.setZero();
}

void column_segments::exchange(Eigen::MatrixXd& total, std::vector<Eigen::MatrixXd>& done) const {
  if (!processes_) return;
  const auto cells = static_cast<std::size_t>(total.size());
  std::vector<std::size_t> counts;
  for (std::size_t r = 0; r < ranks(); ++r) counts.push_back(cells * (share(r + 1) - share(r)));
  std::vector<double> mine;
  for (const Eigen::MatrixXd& d : done) mine.insert(mine.end(), d.data(), d.data() + d.size());
  std::vector<double> all(cells * segments_);
  processes_->all_gather(mine, all, counts);
  total.setZero();
  for (std::size_t g = 0; g < segments_; ++g)
    total += Eigen::Map<const Eigen::MatrixXd>(all.data() + g * cells, total.rows(), total.cols());
  done.clear();
}

void column_segments::gather_rows(Eigen::MatrixXd& b) const {
  if (!processes_) return;
  const std::size_t first = first_column(own_first_);
  const Eigen::MatrixXd rows_mine =  // column-major: one column of it per column of b's rows
      b.middleRows(static_cast<Eigen::Index>(first),
                   static_cast<Eigen::Index>(first_column(own_end_) - first))
          .transpose();
  const auto l = static_cast<std::size_t>(b.cols());
  std::vector<std::size_t> counts;
  for (std::size_t r = 0; r < ranks(); ++r)
    counts.push_back(l * (first_column(share(r + 1)) - first_column(share(r))));
  Eigen::MatrixXd all(b.cols(), static_cast<Eigen::Index>(m_));
  processes_->all_gather(std::span<const double>(rows_mine.data(), rows_mine.size()),
                         std::span<double>(all.data(), all.size()), counts);
  b = all.transpose();
}

std::size_t column_segments::share(std::size_t r) const {
  return even_share(segments_, r, ranks());
}

}  // namespace colflow::detail
