// The process-wide stop request (colflow/cancellation.hpp).
#include "colflow/cancellation.hpp"

#include <atomic>

#include "colflow/error.hpp"

namespace colflow {
namespace {

// Lock-free, so that a signal handler may set it. Relaxed order is enough: the flag carries no
// data, and a check that misses a store made a moment ago sees it at the next column.
std::atomic<bool> stop_flag{false};
static_assert(std::atomic<bool>::is_always_lock_free);

}  // namespace

void request_stop() noexcept { stop_flag.store(true, std::memory_order_relaxed); }

bool stop_requested() noexcept { return stop_flag.load(std::memory_order_relaxed); }

void clear_stop_request() noexcept { stop_flag.store(false, std::memory_order_relaxed); }

void throw_if_stop_requested() {
  if (stop_requested()) throw error(errc::cancelled, "stopped on request");
}

}  // namespace colflow
