#include "analysis_setup.hpp"

#include <iostream>

#include "commands.hpp"

namespace colflow::cli {

void add_analysis_flags(CLI::App& app, analysis_flags& f) {
  app.add_option("STORE", f.store, "The store directory")->required();
  app.add_option("--keep", f.lists.keep,
                 "Use only the samples listed (FID IID per line; a .fam works; one field = IID)");
  app.add_option("--remove", f.lists.remove, "Leave out the samples listed (same format)");
  app.add_option("--extract", f.lists.extract,
                 "Use only the columns whose IDs are listed (first field of each line)");
  app.add_option("--exclude", f.lists.exclude, "Leave out the columns whose IDs are listed");
  app.add_option("--threads", f.threads, "Worker threads (default: all cores)");
  app.add_option("--in-flight", f.in_flight, "Blocks decoded ahead of compute (default: 2 x threads)");
  app.add_option("--digits", f.digits, "Significant digits of numbers in the output (default 6, as PLINK)")
      ->check(CLI::Range(1, 17));
  app.add_flag("--quiet", f.quiet, "No progress and no summary on stderr");
}

analysis_run::analysis_run(const std::string& name, const analysis_flags& f)
    : command_(name),
      quiet_(f.quiet),
      threads_(limit_threads(f.threads)),
      store_(store::open(f.store)),
      selection_(select(store_, f.lists)) {
  options_.stream.in_flight = f.in_flight;
  if (!quiet_ && stderr_is_terminal()) {
    options_.progress = [this](const std::string& label, const pass_progress& p) {
      if (label != progress_label_) {
        if (progress_) progress_->finish();
        progress_label_ = label;
        progress_ = std::make_unique<progress_line>(command_ + ": " + label, true);
      }
      progress_->update(p.columns_done, p.columns_total, "columns",
                        static_cast<double>(p.bytes_read), p.seconds);
    };
  }
  log(std::to_string(selection_.rows.size()) + " of " + std::to_string(store_.num_rows()) +
      " samples and " + std::to_string(selection_.columns.size()) + " of " +
      std::to_string(store_.num_columns()) + " columns selected" +
      (selection_.ids_not_found ? " (" + std::to_string(selection_.ids_not_found) +
                                      " listed IDs are not in the store)"
                                : ""));
}

analysis_run::~analysis_run() {
  if (progress_) progress_->finish();
}

void analysis_run::log(const std::string& line) const {
  if (!quiet_) std::cerr << "colflow " << command_ << ": " << line << "\n";
}

}  // namespace colflow::cli
