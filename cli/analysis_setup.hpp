// What the analysis commands (stats, assoc, pca, ridge/lasso/enet, bayesr) share: the options
// for threads, in-flight depth, quiet mode, output precision and the sample and column lists;
// opening the store and applying the lists; the progress lines of the passes and loops; and a
// log of what was used on stderr.
#pragma once

#include <tbb/global_control.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "colflow/analysis/analysis.hpp"
#include "colflow/analysis/phenotype.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/analysis/sex_chromosomes.hpp"
#include "colflow/store/store.hpp"
#include "progress.hpp"
#include "qc_flags.hpp"

namespace colflow::cli {

struct analysis_flags {
  std::string store;
  unsigned threads = 0;
  std::size_t in_flight = 0;
  bool quiet = false;
  bool verify = false;  // check each frame's checksum before decoding it
  int digits = 6;
  selection_files lists;
  qc_flags qc;  // the quality-control filters, applied after the lists
};

// Registers STORE and the shared options on `app`, the quality-control filters included.
void add_analysis_flags(CLI::App& app, analysis_flags& flags);

// An open store, its selection (the lists, then the quality-control filters, whose plink2 log
// lines it prints) and the options of the run; prints progress while it lives:
// a line per pass (columns, columns/s, bytes/s of frames read, ETA) and a line per outer loop
// (BayesR's chain in iterations, a penalised path in lambda values).
class analysis_run {
 public:
  analysis_run(const std::string& name, const analysis_flags& flags);
  ~analysis_run();
  analysis_run(const analysis_run&) = delete;  // the progress callbacks point to this object
  analysis_run& operator=(const analysis_run&) = delete;

  const store& source() const noexcept { return store_; }
  const selection& selected() const noexcept { return selection_; }
  const analysis_options& options() const noexcept { return options_; }
  // Shows a progress line only for the passes labelled so (e.g. "statistics" for an analysis
  // whose other passes are the steps of a loop with a line of its own). Default: every pass.
  void show_passes(std::set<std::string> labels) { shown_passes_ = std::move(labels); }
  // A line on stderr, unless --quiet (a progress line being drawn is ended first).
  void log(const std::string& line);
  // A phenotype or covariate file read for the store's samples (read_phenotypes; `kind` is
  // PHENO or COVAR), logged as "FILE: M of N samples in the store, K <what>".
  phenotype_table read_table(const std::string& file, const std::vector<std::string>& names,
                             const std::string& kind, const std::string& what);
  // The store's sexes with those of a sex file (read_sex_file) in their place, logged as
  // "sexes from FILE: M males, F females and U of unknown sex among the selected samples".
  std::vector<sample_sex> read_sexes(const std::string& file);
  // For a command whose first pass reads every selected column in order: maps the columns'
  // pages that the page cache holds, on a thread of its own, while the command parses the
  // column list and gets its pass ready (the store's map_resident_pages), so that the pass
  // faults on none of them. A command that reads a few columns would pay for the rest.
  void map_store_pages();
  // For a command whose pass needs only the store's chromosome runs of the column list: parses
  // the rest (the store's columns(), for its tables) on a thread of its own, beside the pass.
  // A parse error surfaces where the command reads the list.
  void parse_columns_ahead();
  // For a command whose passes are over, with only its tables left to write: the store's
  // mapped pages are handed back on a thread of their own meanwhile (the store stays open and
  // readable), rather than when it closes at the end, after the last table's sync.
  void release_store_pages();

 private:
  void show(const std::string& label);
  // Redraws the loop's line: its last step's figures, the time since counted in.
  void draw_loop();
  // Narrows the selection by filters_, logging plink2's lines.
  void apply_filters();

  std::string command_;
  bool quiet_;
  std::unique_ptr<tbb::global_control> threads_;
  qc_filter_options filters_;  // checked before the store is opened
  store store_;
  std::atomic<bool> stop_mapping_{false};  // set when page_map_ is asked to stop
  std::jthread page_map_;                  // map_store_pages(); joined before store_ closes
  std::jthread column_parse_;              // parse_columns_ahead(); joined before store_ closes
  std::jthread page_release_;              // joined before store_ closes
  selection selection_;
  analysis_options options_;
  std::set<std::string> shown_passes_;
  std::string progress_label_;
  std::unique_ptr<progress_line> progress_;
  std::string loop_label_;  // the loop whose line is drawn, and its last step
  loop_progress loop_;
  std::chrono::steady_clock::time_point loop_time_;
};

}  // namespace colflow::cli
