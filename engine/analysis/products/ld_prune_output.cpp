// The lists of `colflow ld --indep-pairwise`: PREFIX.prune.in and PREFIX.prune.out, one variant
// ID a line, as plink2 writes them (analysis/ld_prune.hpp).
#include <string>

#include "analysis/shared/result_table_internal.hpp"
#include "colflow/analysis/ld_prune.hpp"
#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"
#include "colflow/io/staged_output.hpp"
#include "io/tsv_writer_internal.hpp"

namespace colflow {
namespace {

void check_positions(const selection& sel, const std::vector<std::size_t>& positions) {
  for (std::size_t k : positions)
    if (k >= sel.columns.size())
      throw error(errc::invalid_argument, "write_ld_prune: column " + std::to_string(k) +
                                              " of a selection of " +
                                              std::to_string(sel.columns.size()));
}

}  // namespace

std::vector<std::filesystem::path> write_ld_prune(const store& s, const selection& sel,
                                                  const ld_prune_result& result,
                                                  const std::filesystem::path& prefix) {
  check_positions(sel, result.kept);
  check_positions(sel, result.removed);
  const std::filesystem::path in = detail::prefixed(prefix, ".prune.in"),
                              out = detail::prefixed(prefix, ".prune.out");
  // Both staged, both complete before either is renamed into place.
  tsv_writer kept(in, 6), removed(out, 6);
  for (std::size_t k : result.kept) {
    kept.text(s.columns()[sel.columns[k]].id);
    kept.end_line();
  }
  for (std::size_t k : result.removed) {
    removed.text(s.columns()[sel.columns[k]].id);
    removed.end_line();
  }
  kept.finish();
  removed.finish();
  kept.commit(staged_output::directory_sync::by_caller);
  removed.commit(staged_output::directory_sync::by_caller);
  sync_directory(directory_of(in));
  return {in, out};
}

}  // namespace colflow
