// Resident memory of this process, for the figures `colflow bench` reports.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

namespace colflow::cli {

struct memory_figures {
  std::uint64_t peak_rss = 0;   // VmHWM: everything resident, mapped file pages included
  std::uint64_t peak_anon = 0;  // sampled RssAnon: heap and stacks, without the page cache
};

// Samples /proc/self/status every few milliseconds between start() and stop(); the kernel's
// high-water mark is reset at start() (via /proc/self/clear_refs) where Linux allows it.
class memory_sampler {
 public:
  void start();
  memory_figures stop();
  ~memory_sampler();

 private:
  std::atomic<bool> running_{false};
  std::atomic<std::uint64_t> peak_anon_{0};
  std::thread thread_;
};

// Bytes that could be allocated without swapping or reaching a memory limit: the kernel's
// MemAvailable, or less where this process's cgroup or an ancestor (cgroup v2 memory.max, v1
// memory.limit_in_bytes) leaves less room; 0 if unknown.
std::uint64_t available_memory();

}  // namespace colflow::cli
