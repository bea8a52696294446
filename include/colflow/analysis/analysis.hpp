/// @file analysis.hpp
/// What every analysis takes besides its own parameters: how to stream, and whom to tell
/// about progress. Analyses are plain functions over an open store and a selection
/// (selection.hpp); each streams the selected columns through a column_stream (stream/column_stream.hpp).
#pragma once

#include <functional>
#include <string>

#include "colflow/stream/column_stream.hpp"

namespace colflow {

struct analysis_options {
  /// In-flight depth and decode settings of the passes (values and decode_values are chosen
  /// by the analysis).
  stream_options stream;
  /// Called from the compute stage during each pass (about ten times a second) with the
  /// pass's label ("stats", "assoc", "pca pass 3/8") and progress.
  std::function<void(const std::string& label, const pass_progress&)> progress;
};

}  // namespace colflow
