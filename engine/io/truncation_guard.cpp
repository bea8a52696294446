// The SIGBUS handler that keeps a file shrinking under its mapping from killing the reader.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>

#include "io/truncation_guard_internal.hpp"

#if defined(__SANITIZE_THREAD__)
#define COLFLOW_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define COLFLOW_TSAN 1
#endif
#endif
#if defined(COLFLOW_TSAN)
// ThreadSanitizer's runtime (GCC's <sanitizer/tsan_interface.h> does not declare these).
extern "C" void __tsan_ignore_thread_begin();
extern "C" void __tsan_ignore_thread_end();
#endif

namespace colflow::detail {
namespace {

// Lock-free, fixed-size: the signal handler may only read atomics.
struct region {
  std::atomic<std::uintptr_t> begin{0}, end{0};
  std::atomic<bool> damaged{false};
  std::atomic<bool> taken{false};
};
constexpr int region_slots = 1024;
region regions[region_slots];
std::uintptr_t page_size = 4096;
struct sigaction previous_action;

void on_sigbus(int signal_number, siginfo_t* info, void* context) {
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (region& r : regions) {
    const std::uintptr_t begin = r.begin.load(std::memory_order_acquire);
    if (begin == 0 || address < begin || address >= r.end.load(std::memory_order_acquire)) continue;
    // Marked before the zero page exists: another thread may read the zero page without
    // faulting, and its check of the mark after the read must then find it. (Marked after,
    // a reader could finish, check and pass zeros for data while this thread was preempted
    // between the mmap and the mark.)
    r.damaged.store(true, std::memory_order_seq_cst);
    // mmap is a plain system call on Linux, safe here. The zero page stays until the mapping
    // is unmapped; the faulting read is retried when the handler returns.
    void* page = reinterpret_cast<void*>(address & ~(page_size - 1));
#if defined(COLFLOW_TSAN)
    // ThreadSanitizer takes a mapping made over mapped pages for a write, racing with every
    // other thread that read the page; the zero page is new memory whose readers all check the
    // mark set above. With this thread's accesses ignored its mmap interceptor resets the
    // page's history instead (tsan's MemoryRangeImitateWriteOrResetRange).
    __tsan_ignore_thread_begin();
#endif
    void* zero = ::mmap(page, page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
#if defined(COLFLOW_TSAN)
    __tsan_ignore_thread_end();
#endif
    if (zero != MAP_FAILED) return;
  }
  if (previous_action.sa_flags & SA_SIGINFO) {
    if (previous_action.sa_sigaction != nullptr)
      return previous_action.sa_sigaction(signal_number, info, context);
  } else if (previous_action.sa_handler != SIG_DFL && previous_action.sa_handler != SIG_IGN) {
    return previous_action.sa_handler(signal_number);
  }
  // Not ours and nobody else's: restore the default, so that the retried read terminates the
  // process as it would have without the guard.
  ::signal(SIGBUS, SIG_DFL);
}

void install_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    page_size = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    struct sigaction action {};
    action.sa_sigaction = on_sigbus;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGBUS, &action, &previous_action);
  });
}

}  // namespace

int watch_mapping(const void* begin, std::size_t size) noexcept {
  if (begin == nullptr || size == 0) return -1;
  install_handler();
  for (int i = 0; i < region_slots; ++i) {
    bool expected = false;
    if (!regions[i].taken.compare_exchange_strong(expected, true)) continue;
    regions[i].damaged.store(false);
    regions[i].end.store(reinterpret_cast<std::uintptr_t>(begin) + size, std::memory_order_release);
    regions[i].begin.store(reinterpret_cast<std::uintptr_t>(begin), std::memory_order_release);
    return i;
  }
  return -1;
}

void unwatch_mapping(int slot) noexcept {
  if (slot < 0) return;
  regions[slot].begin.store(0, std::memory_order_release);
  regions[slot].end.store(0, std::memory_order_release);
  regions[slot].taken.store(false, std::memory_order_release);
}

bool mapping_damaged(int slot) noexcept {
  return slot >= 0 && regions[slot].damaged.load(std::memory_order_acquire);
}

}  // namespace colflow::detail
