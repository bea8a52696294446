// What the analysis commands share: options, the store and selection, progress, the log.
#include "analysis_setup.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <limits>
#include <stop_token>

#include "commands.hpp"
#include "processes.hpp"
#include "validators.hpp"

namespace colflow::cli {

void add_analysis_flags(CLI::App& app, analysis_flags& f) {
  app.add_option("STORE", f.store, "The store directory")->required();
  app.add_option("--keep", f.lists.keep,
                 "Use only the samples listed (FID IID per line; a .fam works; one field = IID)");
  app.add_option("--remove", f.lists.remove, "Leave out the samples listed (same format)");
  app.add_option("--extract", f.lists.extract,
                 "Use only the columns whose IDs are listed (first field of each line)");
  app.add_option("--exclude", f.lists.exclude, "Leave out the columns whose IDs are listed");
  app.add_option("--threads", f.threads, "Worker threads (default: all cores)")
      ->check(non_negative_integer(std::numeric_limits<unsigned>::max()));
  app.add_option("--in-flight", f.in_flight,
                 "Blocks decoded ahead of compute (default: 2 x threads)")
      ->check(non_negative_integer());
  app.add_option("--digits", f.digits,
                 "Significant digits of numbers in the output (default 6, as PLINK)")
      ->check(integer_range(1, 17));
  app.add_flag("--quiet", f.quiet, "No progress and no summary on stderr");
  app.add_flag("--verify", f.verify,
               "Check each column's frame checksum before decoding it: a damaged store is\n"
               "refused, naming the column, as by colflow verify (a hash of every frame read)");
  add_qc_flags(app, f.qc);
}

analysis_run::analysis_run(const std::string& name, const analysis_flags& f)
    : command_(name),
      quiet_(f.quiet || !is_writer()),
      threads_(limit_threads(f.threads)),
      filters_(qc_filter_options_of(f.qc)),
      store_(store::open(f.store, {access_mode::mmap, f.verify})),
      selection_(select(store_, f.lists)) {
  options_.stream.in_flight = f.in_flight;
  options_.stream.verify_checksums = f.verify;
  options_.processes = run_processes();
  if (!quiet_ && stderr_is_terminal()) {
    // Both callbacks run while the caller waits for the analysis, never at the same time
    // (passes report from the compute stage, loops between passes).
    options_.progress = [this](const std::string& label, const pass_progress& p) {
      if (shown_passes_.empty() || shown_passes_.count(label)) {
        show(label);
        progress_->update(p.columns_done, p.columns_total, "columns",
                          static_cast<double>(p.bytes_read), p.seconds);
      } else if (progress_ && progress_label_ == loop_label_) {
        // A pass inside the loop's step: the loop's line says what runs, and its rate and
        // ETA follow the clock while a long step (a small lambda) runs.
        progress_->note(label);
        draw_loop();
      }
    };
    options_.on_step = [this](const std::string& label, const loop_progress& p) {
      show(label);
      loop_label_ = label;
      loop_ = p;
      loop_time_ = std::chrono::steady_clock::now();
      progress_->note({});
      draw_loop();
    };
  }
  log(std::to_string(selection_.rows.size()) + " of " + std::to_string(store_.num_rows()) +
      " samples and " + std::to_string(selection_.columns.size()) + " of " +
      std::to_string(store_.num_columns()) + " columns selected" +
      (selection_.ids_not_found
           ? " (" + std::to_string(selection_.ids_not_found) + " listed IDs are not in the store)"
           : ""));
  apply_filters();
}

void analysis_run::map_store_pages() {
  const std::vector<std::size_t>& columns = selection_.columns;
  if (columns.empty() || distributed(options_.processes) || page_map_.joinable())
    return;  // a rank reads its share
  const auto [first, last] = std::minmax_element(columns.begin(), columns.end());
  // A few columns spread over the store would map mostly pages the analysis never reads.
  if (2 * columns.size() < *last - *first + 1) return;
  // Stopped when the run ends, whichever way (the jthread asks at its destruction).
  page_map_ = std::jthread([this, first = *first, last = *last](std::stop_token stop) {
    const std::stop_callback on_stop(stop, [this] { stop_mapping_ = true; });
    store_.map_resident_pages(first, last, stop_mapping_);
  });
}

void analysis_run::apply_filters() {
  if (!filters_.any()) return;
  map_store_pages();  // the filters' pass reads every selected column in order
  qc_filter_result r = apply_qc_filters(store_, selection_, filters_, options_);
  for (const std::string& line : qc_filter_log(filters_, r)) log(line);
  selection_ = std::move(r.selected);
}

analysis_run::~analysis_run() {
  if (progress_) progress_->finish();
}

void analysis_run::parse_columns_ahead() {
  if (column_parse_.joinable()) return;
  column_parse_ = std::jthread([this] {
    try {
      (void)store_.columns();
    } catch (...) {  // parsed again where the command reads the list, which then throws
    }
  });
}

void analysis_run::release_store_pages() {
  if (store_.num_columns() == 0 || page_release_.joinable()) return;
  page_map_.request_stop();  // done before the release starts, so that it maps nothing after
  if (page_map_.joinable()) page_map_.join();
  page_release_ = std::jthread([this] { store_.drop_pages(0, store_.num_columns() - 1); });
}

void analysis_run::draw_loop() {
  const double since =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - loop_time_).count();
  progress_->update(loop_.done, loop_.total, loop_.resumed_at,
                    loop_label_ == "chain"  ? "iterations"
                    : loop_label_ == "path" ? "lambda values"
                                            : "steps",
                    0, loop_.seconds + since);
}

// A new label starts a new line; the same label redraws its line.
void analysis_run::show(const std::string& label) {
  if (progress_ && label == progress_label_) return;
  if (progress_) progress_->finish();
  progress_label_ = label;
  progress_ = std::make_unique<progress_line>("colflow " + command_ + ": " + label, true);
}

phenotype_table analysis_run::read_table(const std::string& file,
                                         const std::vector<std::string>& names,
                                         const std::string& kind, const std::string& what) {
  phenotype_table t = read_phenotypes(file, store_.samples(), names, kind);
  log(file + ": " + std::to_string(t.matched_samples) + " of " + std::to_string(t.file_samples) +
      " samples in the store, " + std::to_string(t.names.size()) + " " + what);
  return t;
}

std::vector<sample_sex> analysis_run::read_sexes(const std::string& file) {
  std::vector<sample_sex> sexes = read_sex_file(file, store_.samples(), sexes_of(store_.samples()));
  std::size_t count[3] = {};
  for (std::size_t i : selection_.rows) ++count[static_cast<std::size_t>(sexes[i])];
  log("sexes from " + file + ": " + std::to_string(count[1]) + " males, " +
      std::to_string(count[2]) + " females and " + std::to_string(count[0]) +
      " of unknown sex among the selected samples");
  return sexes;
}

void analysis_run::log(const std::string& line) {
  if (quiet_) return;
  if (progress_) {
    progress_->finish();
    progress_.reset();
    progress_label_.clear();
  }
  std::cerr << "colflow " << command_ << ": " << line << "\n";
}

}  // namespace colflow::cli
