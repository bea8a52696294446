/// @file ld_matrix_columns.hpp
/// An LD matrix on disk (an LD store, GCTB's `.ldm.full`/`.ldm.band`/`.ldm.sparse`, or colflow's
/// `.ldband`; ld_matrix.hpp) read as the ld_columns a summary-statistics sampler takes
/// (ld_columns.hpp): each pass streams the columns asked for, an LD store's decoded ahead in
/// parallel and in order, so memory stays bounded by the in-flight depth whatever the size of
/// the matrix.
#pragma once

#include <string>
#include <vector>

#include "colflow/analysis/ld_columns.hpp"
#include "colflow/analysis/ld_matrix.hpp"

namespace colflow {

/// ld_columns over an ld_matrix. A sparse column is handed over spread out over the span of
/// its rows, zeros between them; a full or banded one as it is stored. Each variant's
/// `samples` is its own N where the source records one, else the matrix's.
class ld_matrix_columns final : public ld_columns {
 public:
  /// Takes the matrix over; `path` is what it was opened from (named in messages with the
  /// source's format), `options` (threads, in-flight depth) for an LD store's stream.
  ld_matrix_columns(ld_matrix matrix, const std::string& path, stream_options options = {});

  const std::vector<ld_variant>& variants() const override { return variants_; }
  std::string description() const override { return description_; }
  void pass(std::span<const std::size_t> indices, const ld_column_visitor& visit) override;
  /// Reads and decodes the column through the matrix's index (ld_matrix::read_column).
  ld_column column(std::size_t index) override;

 private:
  ld_matrix matrix_;
  stream_options options_;
  std::vector<ld_variant> variants_;
  std::string description_;
  std::vector<float> spread_;        // a sparse column over the span of its rows
  std::vector<std::uint32_t> rows_;  // column(): a sparse column's rows
  std::vector<float> values_;        // column(): its values
};

}  // namespace colflow
