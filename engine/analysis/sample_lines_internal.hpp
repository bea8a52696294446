// The samples that the lines of a PLINK-style table name (phenotype, covariate and sex files):
// by FID and IID, or by IID alone, matched to a store's samples (docs/ANALYSES.md, "Phenotype
// and covariate files"). Implemented in phenotype.cpp.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "colflow/store/store.hpp"

namespace colflow::detail {

class sample_lines {
 public:
  static constexpr std::size_t absent = ~std::size_t{0};

  // `samples` must outlive this object; `file` names the table in messages.
  sample_lines(const std::vector<sample_info>& samples, std::filesystem::path file);

  // The store row of the sample that data line `line` names: its first two fields (FID IID)
  // when `has_fid`, else its first (IID); absent when the store does not have it. Throws
  // errc::bad_input naming the file and line for a sample listed on an earlier line and for an
  // IID alone that several store samples share (in different families).
  std::size_t row_of(std::span<const std::string_view> fields, bool has_fid, std::size_t line);

 private:
  const std::vector<sample_info>& samples_;
  std::filesystem::path file_;
  std::unordered_map<std::string, std::size_t> by_fid_iid_, by_iid_;
  std::unordered_map<std::string, std::size_t> seen_;  // sample -> first line
};

}  // namespace colflow::detail
