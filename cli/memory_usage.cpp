// Resident memory of this process, read from /proc for `colflow bench`.
#include "memory_usage.hpp"

#include <chrono>
#include <fstream>
#include <string>

namespace colflow::cli {
namespace {

// A "Key:   123 kB" field of a /proc file, in bytes.
std::uint64_t proc_field(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (line.compare(0, key.size(), key) == 0 && line.size() > key.size() &&
        line[key.size()] == ':')
      return std::stoull(line.substr(key.size() + 1)) * 1024;
  return 0;
}

}  // namespace

void memory_sampler::start() {
  stop();
  std::ofstream("/proc/self/clear_refs") << "5";  // resets VmHWM; ignored where not allowed
  peak_anon_ = proc_field("/proc/self/status", "RssAnon");
  running_ = true;
  thread_ = std::thread([this] {
    while (running_) {
      const std::uint64_t anon = proc_field("/proc/self/status", "RssAnon");
      if (anon > peak_anon_) peak_anon_ = anon;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
}

memory_figures memory_sampler::stop() {
  if (thread_.joinable()) {
    running_ = false;
    thread_.join();
  }
  return {proc_field("/proc/self/status", "VmHWM"), peak_anon_.load()};
}

memory_sampler::~memory_sampler() { stop(); }

std::uint64_t available_memory() { return proc_field("/proc/meminfo", "MemAvailable"); }

}  // namespace colflow::cli
