// What the GRM and KING share (analysis/products/relationship_shared_internal.hpp).
#include <tbb/task_arena.h>

#include <cstdio>

#include "analysis/products/relationship_shared_internal.hpp"
#include "colflow/analysis/sex_chromosomes.hpp"

namespace colflow::detail {

autosomal_columns autosomal_columns_of(const store& s, const selection& sel) {
  autosomal_columns u;
  for (const std::size_t j : sel.columns) {
    const chromosome_kind kind = kind_of_chromosome(s.columns()[j].chrom);
    if (kind == chromosome_kind::x || kind == chromosome_kind::y || kind == chromosome_kind::mt)
      ++u.left_out;
    else
      u.columns.push_back(j);
  }
  return u;
}

std::string mib(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

std::size_t resolved_in_flight(const analysis_options& options) {
  if (options.stream.in_flight != 0) return options.stream.in_flight;
  return 2 * static_cast<std::size_t>(tbb::this_task_arena::max_concurrency());
}

}  // namespace colflow::detail
