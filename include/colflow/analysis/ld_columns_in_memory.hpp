/// @file ld_columns_in_memory.hpp
/// An LD reference computed from a genotype or dosage store and held in memory: the source of
/// LD columns (ld_columns.hpp) for `colflow sbayesr --ldm STORE` and for tests.
///
/// The correlations are ld()'s (ld.hpp: r of A1 counts over the selected samples called in
/// both, PLINK 1.9's rule), in the band of `window` (ld_options' window, window_kb and
/// window_cm; the band's other settings are ignored), rounded to float32 as the LD store and
/// GCTB's files keep them. Variant j's column is the run of variants whose band reaches j and
/// the band of j itself: a symmetric window on one chromosome. The whole band is held (4 bytes
/// a pair): for small references; the LD store streams large ones.
#pragma once

#include <string>
#include <vector>

#include "colflow/analysis/analysis.hpp"
#include "colflow/analysis/ld.hpp"
#include "colflow/analysis/ld_columns.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/store/store.hpp"

namespace colflow {

class ld_columns_in_memory final : public ld_columns {
 public:
  /// Computes the band of the selected columns of `s` (a collective on analysis.processes, as
  /// ld()). `name` is what description() returns. Throws as ld().
  ld_columns_in_memory(const store& s, const selection& sel, const ld_options& window,
                       const std::string& name, const analysis_options& analysis = {});

  const std::vector<ld_variant>& variants() const override { return variants_; }
  std::string description() const override { return name_; }
  /// Calls `visit` on the calling thread.
  void pass(std::span<const std::size_t> indices, const ld_column_visitor& visit) override;
  /// A view of the held column, valid as long as the object.
  ld_column column(std::size_t index) override;
  bool resident() const noexcept override { return true; }

 private:
  std::string name_;
  std::vector<ld_variant> variants_;
  std::vector<std::size_t> first_, offset_;  // per variant: its window's first, its values' start
  std::vector<float> values_;
};

}  // namespace colflow
