/// @file concatenated_source.hpp
/// Several inputs of the same samples, one after the other, as one column_source: per-chromosome
/// files (`--bed chr1 chr2 ...`, `--bgen chr*.bgen`, `--vcf chr*.vcf.gz`) become one store. Part
/// of libcolflow_preprocess (colflow::preprocess).
#pragma once

#include <memory>
#include <vector>

#include "colflow/preprocess/column_source.hpp"

namespace colflow::preprocess {

/// The columns of `parts[0]`, then those of `parts[1]`, and so on. Every part must be of the
/// same kind and list the same samples (FID and IID) in the same order: the samples, their sex
/// and phenotype fields are those of the first part.
///
/// Errors (colflow::error), from the constructor: errc::invalid_argument for no part or parts
/// of different kinds; errc::bad_input naming the first part whose samples differ from the
/// first part's, and the first sample that differs (or the counts).
///
/// Thread safety: that of the parts; one thread at a time (the converter's contract).
class concatenated_source final : public column_source {
 public:
  explicit concatenated_source(std::vector<std::unique_ptr<column_source>> parts);

  value_type kind() const override { return parts_.front()->kind(); }
  std::uint64_t rows() const override { return parts_.front()->rows(); }
  std::uint64_t columns() const override { return columns_; }
  std::vector<sample_info> samples() const override { return parts_.front()->samples(); }
  column_info column(std::uint64_t j) const override;
  /// The parts' descriptions joined by "; ".
  std::string description() const override;
  /// The parts' notes, in order.
  std::vector<std::string> notes() const override;
  void read_genotypes(std::uint64_t j, std::span<std::uint8_t> codes) override;
  void read_dosages(std::uint64_t j, std::span<std::uint16_t> dosages) override;
  /// True when every part's is.
  bool has_hard_calls() const override;
  void read_values(std::uint64_t j, std::span<double> values) override;

 private:
  // The part holding column j and the column's index in it.
  std::pair<column_source*, std::uint64_t> locate(std::uint64_t j) const;

  std::vector<std::unique_ptr<column_source>> parts_;
  std::vector<std::uint64_t> first_column_;  // of each part, then the total
  std::uint64_t columns_ = 0;
};

}  // namespace colflow::preprocess
