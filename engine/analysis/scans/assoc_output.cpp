// The tables of `colflow assoc`, one per phenotype, filled while the scan runs.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "analysis/shared/result_table_internal.hpp"
#include "colflow/analysis/assoc.hpp"
#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"
#include "io/tsv_writer_internal.hpp"

namespace colflow {

std::filesystem::path assoc_file(const std::filesystem::path& prefix, std::string_view phenotype,
                                 assoc_model model) {
  std::string name(phenotype);
  std::replace(name.begin(), name.end(), '/', '_');
  return detail::prefixed(
      prefix, "." + name + (model == assoc_model::logistic ? ".logistic.tsv" : ".assoc.tsv"));
}

struct assoc_writer::impl {
  const store& source;
  assoc_model model = assoc_model::linear;
  bool odds_ratio = true;
  std::vector<std::filesystem::path> files;
  std::vector<std::unique_ptr<tsv_writer>> tables;
  // Results of the columns not yet formatted: pending_columns[k]'s results are
  // pending[k * phenotypes, (k + 1) * phenotypes).
  std::vector<assoc_result> pending;
  std::vector<std::size_t> pending_columns;
  // Big enough that a batch's tasks outweigh their scheduling, small enough to stay in cache.
  static constexpr std::size_t batch = 2048;

  impl(const store& s, assoc_model m, bool odds) : source(s), model(m), odds_ratio(odds) {}

  void write_pending() {
    const auto& columns = source.columns();
    const std::size_t np = tables.size();
    tbb::parallel_for(std::size_t{0}, np, [&](std::size_t p) {
      tsv_writer& out = *tables[p];
      for (std::size_t k = 0; k < pending_columns.size(); ++k) {
        const column_info& c = columns[pending_columns[k]];
        const assoc_result& r = pending[k * np + p];
        out.text(c.chrom).text(c.pos).text(c.id).text(c.a1).text(c.a2);
        if (model == assoc_model::logistic) out.text(r.firth ? "Y" : "N");
        out.integer(r.n_obs);
        out.number(model == assoc_model::logistic && odds_ratio ? std::exp(r.beta) : r.beta);
        out.number(r.se).number(r.t_stat).number(r.p);
        out.text(assoc_status_name(r.status));
        out.end_line();
      }
    });
    pending.clear();
    pending_columns.clear();
  }
};

assoc_writer::assoc_writer(const store& s, std::span<const std::string> phenotypes,
                           const std::filesystem::path& prefix, int digits, assoc_model model,
                           bool odds_ratio)
    : impl_(std::make_unique<impl>(s, model, odds_ratio)) {
  detail::check_digits(digits);
  if (phenotypes.empty()) throw error(errc::invalid_argument, "assoc_writer: no phenotype");
  for (const std::string& name : phenotypes) {
    impl_->files.push_back(assoc_file(prefix, name, model));
    impl_->tables.push_back(std::make_unique<tsv_writer>(impl_->files.back(), digits));
    tsv_writer& table = *impl_->tables.back();
    if (model == assoc_model::linear)
      detail::write_header(
          table, {"#CHR", "POS", "ID", "A1", "A2", "N_OBS", "BETA", "SE", "T_STAT", "P", "NOTE"});
    else if (odds_ratio)
      detail::write_header(table, {"#CHR", "POS", "ID", "A1", "A2", "FIRTH?", "N_OBS", "OR",
                                   "LOG(OR)_SE", "Z_STAT", "P", "NOTE"});
    else
      detail::write_header(table, {"#CHR", "POS", "ID", "A1", "A2", "FIRTH?", "N_OBS", "BETA", "SE",
                                   "Z_STAT", "P", "NOTE"});
  }
}

assoc_writer::~assoc_writer() = default;

assoc_sink assoc_writer::sink() {
  return [this](std::size_t position, std::size_t column, std::span<const assoc_result> results) {
    add(position, column, results);
  };
}

void assoc_writer::add(std::size_t, std::size_t column, std::span<const assoc_result> results) {
  if (results.size() != impl_->tables.size())
    throw error(errc::invalid_argument, "assoc_writer: " + std::to_string(results.size()) +
                                            " results for " + std::to_string(impl_->tables.size()) +
                                            " phenotypes");
  impl_->pending.insert(impl_->pending.end(), results.begin(), results.end());
  impl_->pending_columns.push_back(column);
  if (impl_->pending_columns.size() == impl::batch) impl_->write_pending();
}

const std::vector<std::filesystem::path>& assoc_writer::commit() {
  impl_->write_pending();
  // The tables are synced together by a few threads that wait on the disk, not on a core
  // (ten fsyncs one after another were a tenth of a scan's time; a thread per table would be
  // thousands for an expression study), and renamed only when every one is written.
  const std::size_t count = impl_->tables.size();
  std::vector<std::exception_ptr> failed(count);
  {
    constexpr std::size_t most_syncs = 16;
    std::atomic<std::size_t> next{0};
    std::vector<std::jthread> syncs;
    for (std::size_t t = 0; t < std::min(count, most_syncs); ++t)
      syncs.emplace_back([this, count, &next, &failed] {
        for (std::size_t p = next++; p < count; p = next++) {
          try {
            impl_->tables[p]->finish();
          } catch (...) {
            failed[p] = std::current_exception();
          }
        }
      });
  }
  for (const std::exception_ptr& e : failed)
    if (e) std::rethrow_exception(e);
  // Renamed one after another, then their directory synced once: the tables share one prefix
  // (assoc_file), so one directory.
  for (const auto& table : impl_->tables) table->commit(staged_output::directory_sync::by_caller);
  sync_directory(directory_of(impl_->files.front()));
  return impl_->files;
}

const std::vector<std::filesystem::path>& assoc_writer::files() const noexcept {
  return impl_->files;
}

}  // namespace colflow
