// wgr's level-0 predictors, in memory or spilled to a scratch file.
#include <span>
#include <utility>

#include "analysis/models/wgr/wgr_predictors_internal.hpp"

namespace colflow::detail {

wgr_predictors::wgr_predictors(std::size_t traits, Eigen::Index n, Eigen::Index predictors,
                               const std::filesystem::path& spill_directory)
    : n_(n), predictors_(predictors) {
  if (spill_directory.empty())
    memory_.assign(traits, Eigen::MatrixXd(n, predictors));
  else
    file_ = create_scratch_file(spill_directory);
}

std::uint64_t wgr_predictors::offset(std::size_t trait, Eigen::Index c) const noexcept {
  const auto n = static_cast<std::uint64_t>(n_), columns = static_cast<std::uint64_t>(predictors_);
  return (trait * columns + static_cast<std::uint64_t>(c)) * n * sizeof(double);
}

void wgr_predictors::put(std::size_t trait, Eigen::Index c, const Eigen::VectorXd& column) {
  if (!spilled()) {
    memory_[trait].col(c) = column;
    return;
  }
  file_.pwrite_all(std::as_bytes(std::span(column.data(), static_cast<std::size_t>(n_))),
                   offset(trait, c));
}

Eigen::MatrixXd wgr_predictors::take(std::size_t trait) {
  if (!spilled()) return std::exchange(memory_[trait], Eigen::MatrixXd());
  Eigen::MatrixXd w(n_, predictors_);
  file_.pread_exact(std::as_writable_bytes(std::span(w.data(), static_cast<std::size_t>(w.size()))),
                    offset(trait, 0));
  return w;
}

}  // namespace colflow::detail
