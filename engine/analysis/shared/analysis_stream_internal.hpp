// The column stream of an analysis: stored values (an analysis standardises them over the
// samples it uses itself), and progress reported to analysis_options::progress under the label
// of the pass that runs. Shared by the analyses, so that each opens its stream the same way.
#pragma once

#include <string>

#include "colflow/analysis/analysis.hpp"
#include "colflow/store/store.hpp"
#include "colflow/stream/column_stream.hpp"

namespace colflow::detail {

struct analysis_stream {
  // `decode_values`: false for kernels that read a genotype column's packed codes only.
  // `label`: that of the first pass. `analysis` is called back during passes: it must outlive
  // the stream (the analysis's own argument does).
  analysis_stream(const store& s, const analysis_options& analysis, bool decode_values,
                  std::string label);
  // The progress callback reads `label` through this object: it stays where it was made.
  analysis_stream(const analysis_stream&) = delete;
  analysis_stream& operator=(const analysis_stream&) = delete;

  // The label of the passes to come. Set between passes: the compute stage of a pass reads it.
  std::string label;
  column_stream<double> columns;
};

}  // namespace colflow::detail
