// The level-0 predictors of whole-genome regression, kept from level 0 until each trait's
// level 1: in memory, or spilled to a scratch file so that memory holds one trait's at a time.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <filesystem>
#include <vector>

#include "colflow/io/file_io.hpp"

namespace colflow::detail {

// Per trait an n × C matrix, filled a column at a time and taken whole, once. Spilled, the
// columns go to an unnamed scratch file in `spill_directory` (trait after trait, column-major,
// as doubles: the values read back are the values written), freed by the system when the
// object goes or the process ends.
class wgr_predictors {
 public:
  // `spill_directory` empty: in memory.
  wgr_predictors(std::size_t traits, Eigen::Index n, Eigen::Index predictors,
                 const std::filesystem::path& spill_directory);

  void put(std::size_t trait, Eigen::Index c, const Eigen::VectorXd& column);
  // Trait `trait`'s matrix; in memory it leaves this object (whose copy is then freed).
  Eigen::MatrixXd take(std::size_t trait);
  bool spilled() const noexcept { return static_cast<bool>(file_); }

 private:
  std::uint64_t offset(std::size_t trait, Eigen::Index c) const noexcept;
  Eigen::Index n_, predictors_;
  std::vector<Eigen::MatrixXd> memory_;
  file_descriptor file_;
};

}  // namespace colflow::detail
