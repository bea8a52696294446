// The threads a parallel loop may use here: the arena's, capped by a global_control limit
// (the command line's --threads), which max_concurrency() alone does not report.
#pragma once

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstddef>

namespace colflow::detail {

inline std::size_t allowed_threads() {
  return std::min<std::size_t>(
      static_cast<std::size_t>(std::max(1, tbb::this_task_arena::max_concurrency())),
      tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
}

}  // namespace colflow::detail
