// Long calls from Python (an analysis, a conversion): the work on a thread of its own without
// the GIL, progress reported and Ctrl-C honoured on the calling thread.
#pragma once

#include <tbb/task_arena.h>

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <set>
#include <string>

#include "bindings.hpp"
#include "colflow/analysis/analysis.hpp"

namespace colflow::python {

// Runs `f` in an arena of `threads` workers (0: oneTBB's default, every core).
template <typename F>
void in_arena(int threads, F&& f) {
  if (threads <= 0) {
    f();
    return;
  }
  tbb::task_arena arena(threads);
  arena.execute(f);
}

// A long call: the work runs on a thread of its own, without the GIL, while the calling thread
// waits and wakes every 50 ms to run Python's signal handlers and to report progress. Ctrl-C thus
// raises KeyboardInterrupt from a handler there (or the progress callback raises); the library's
// process-wide stop request (cancellation.hpp) then ends the work at its next column, removing the
// outputs it was writing, and once it has ended the request is withdrawn and the Python exception
// raised.
class python_call {
 public:
  // `progress`: None, or a callable (label, done, total, unit) called on the calling thread
  // with the latest progress when it changed. `passes`: the labels of the passes to report
  // (empty: every one); the steps of an outer loop (BayesR's chain, a penalised path) always.
  python_call(nb::object progress, std::set<std::string> passes);

  // The analysis options reporting progress to this call.
  analysis_options options();

  // Reports progress from any thread (the latest report wins).
  void note(const std::string& label, std::uint64_t done, std::uint64_t total, const char* unit);

  // Runs `work` in an arena of `threads` (0: every core) and returns when it has ended; called
  // with the GIL held. Rethrows the work's exception, or the Python one that stopped it.
  void run(int threads, const std::function<void()>& work);

 private:
  std::exception_ptr wait_for(const bool& finished);
  void report();

  nb::object progress_;
  std::set<std::string> passes_;
  std::mutex mutex_;
  std::condition_variable ended_;
  std::string label_, unit_;
  std::uint64_t done_ = 0, total_ = 0;
  bool fresh_ = false;
};

}  // namespace colflow::python
