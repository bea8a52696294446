/// @file analysis.hpp
/// What every analysis takes besides its own parameters: how to stream, and whom to tell
/// about progress. Analyses are plain functions over an open store and a selection
/// (selection.hpp); each streams the selected columns through a column_stream
/// (stream/column_stream.hpp).
///
/// Each analysis also has a function that writes its result files, the tables the `colflow`
/// command writes (write_stats, assoc_writer, write_pca, write_penalized, write_bayesr): an
/// embedding program that calls them produces the same bytes as the command.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "colflow/communicator.hpp"
#include "colflow/stream/column_stream.hpp"

namespace colflow {

/// Progress of an analysis that repeats passes in an outer loop (BayesR's iterations, the λ
/// values of a penalised path), reported after each step of the loop.
struct loop_progress {
  std::uint64_t done = 0;   ///< steps finished, those before a resume included
  std::uint64_t total = 0;  ///< steps of the whole loop
  /// Steps already finished when this run started: a resumed BayesR chain's checkpoint
  /// iteration, 0 otherwise. A rate is (done − resumed_at) / seconds.
  std::uint64_t resumed_at = 0;
  double seconds = 0;  ///< wall time of this run's steps so far
};

struct analysis_options {
  /// In-flight depth and decode settings of the passes (values and decode_values are chosen
  /// by the analysis).
  stream_options stream;
  /// Called from the compute stage during each pass (about ten times a second) with the
  /// pass's label ("stats", "assoc", "pca pass 3/8", "statistics", "lambda 2/100 sweep 1",
  /// "iteration 5/1000") and progress.
  std::function<void(const std::string& label, const pass_progress&)> progress;
  /// Called on the calling thread after each step of an outer loop, with the loop's label
  /// ("chain": BayesR iterations; "path": the λ values of a penalised regression) and
  /// progress. Analyses without a loop never call it.
  std::function<void(const std::string& label, const loop_progress&)> on_step;
  /// The processes the analysis runs on (docs/DESIGN.md §4.9); null: this process alone.
  /// BayesR and the penalised regressions split the samples among them at the sample blocks
  /// and give every process the same, bit-identical result as one process; only process 0
  /// writes files (BayesR's checkpoints). Every process must call the analysis with the same
  /// arguments. The other analyses compute everything on every process.
  communicator* processes = nullptr;
};

}  // namespace colflow
