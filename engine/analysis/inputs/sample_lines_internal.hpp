// The samples that the lines of a PLINK-style table name (phenotype, covariate and sex files):
// by FID and IID, or by IID alone, matched to a store's samples (docs/ANALYSES.md, "Phenotype
// and covariate files").
//
// Matching is in two steps so that a large file can be read across threads: find() looks a
// line's IDs up (read only, any thread, any order), take() then checks the lines in file order
// (a sample listed twice is named at its second line, an ambiguous IID at its first).
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/inputs/sample_index_internal.hpp"
#include "colflow/store/store.hpp"

namespace colflow::detail {

class sample_lines {
 public:
  static constexpr std::size_t absent = sample_index::absent;

  // `samples` must outlive this object; `file` names the table in messages. Lines name their
  // sample by their first two fields (FID IID) when `has_fid`, else by their first (IID).
  sample_lines(const std::vector<sample_info>& samples, std::filesystem::path file, bool has_fid);

  // The store row that a line with these fields names, as far as the index tells: absent when
  // the store does not have it, `ambiguous` for an IID alone that several store samples share
  // (in different families). Row `expected` is tried first (sample_index::find). Thread-safe.
  static constexpr std::size_t ambiguous = absent - 1;
  std::size_t find(std::span<const std::string_view> fields,
                   std::size_t expected = absent) const noexcept;

  // The row of data line `line`, whose fields find() answered `found`: absent when the store
  // does not have the sample. Call in file order. Throws errc::bad_input naming the file and
  // line for a sample listed on an earlier line and for an ambiguous IID.
  std::size_t take(std::size_t found, std::span<const std::string_view> fields, std::size_t line);

  // find() then take().
  std::size_t row_of(std::span<const std::string_view> fields, std::size_t line) {
    return take(find(fields), fields, line);
  }

 private:
  const std::vector<sample_info>& samples_;
  std::filesystem::path file_;
  bool has_fid_;
  sample_index index_;
  std::vector<std::size_t> first_line_;  // per store row: the line that named it, 0 for none
  std::unordered_map<std::string, std::size_t> others_;  // a sample the store lacks -> its line
};

}  // namespace colflow::detail
