// Resident memory of this process, read from /proc for `colflow bench`.
#include "memory_usage.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
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

namespace {

// The first line of a cgroup file as a number; nothing for "max", a missing file or text.
std::optional<std::uint64_t> cgroup_number(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string text;
  if (!(in >> text) || text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoull(text);
}

// A "key value" line of a cgroup's memory.stat, 0 if absent.
std::uint64_t cgroup_stat(const std::filesystem::path& file, const std::string& key) {
  std::ifstream in(file);
  std::string name;
  std::uint64_t value = 0;
  while (in >> name >> value)
    if (name == key) return value;
  return 0;
}

// Where a cgroup hierarchy is mounted: the cgroup2 one, or v1's with the memory controller.
std::string cgroup_mount(bool v2) {
  std::ifstream in("/proc/self/mounts");
  for (std::string device, dir, type, options, rest; in >> device >> dir >> type >> options;) {
    std::getline(in, rest);
    if (v2 && type == "cgroup2") return dir;
    if (!v2 && type == "cgroup" && ("," + options + ",").find(",memory,") != std::string::npos)
      return dir;
  }
  return {};
}

// This process's cgroup in the hierarchy: the path of its "0::" line (v2) or ":memory:" line.
std::string own_cgroup(bool v2) {
  std::ifstream in("/proc/self/cgroup");
  const std::string tag = v2 ? "0::" : ":memory:";
  for (std::string line; std::getline(in, line);) {
    const std::size_t at = line.find(tag);
    if (at != std::string::npos && (v2 ? at == 0 : true)) return line.substr(at + tag.size());
  }
  return {};
}

// The room left under the memory limits of this process's cgroup and of each ancestor (a
// container's or a batch job's), the least of them: the limit less the memory charged that is
// not page cache (the kernel reclaims that first). Nothing where no limit is set or readable.
std::optional<std::uint64_t> cgroup_room() {
  std::optional<std::uint64_t> room;
  for (const bool v2 : {true, false}) {
    const std::string mount = cgroup_mount(v2), own = own_cgroup(v2);
    if (mount.empty() || own.empty()) continue;
    const char* limit_file = v2 ? "memory.max" : "memory.limit_in_bytes";
    const char* usage_file = v2 ? "memory.current" : "memory.usage_in_bytes";
    const char* cache_key = v2 ? "file" : "total_cache";
    for (std::filesystem::path dir = std::filesystem::path(mount) / own.substr(1);;
         dir = dir.parent_path()) {
      const auto limit = cgroup_number(dir / limit_file);
      const auto usage = cgroup_number(dir / usage_file);
      if (limit && usage && *limit < (std::uint64_t{1} << 60)) {
        const std::uint64_t cache = cgroup_stat(dir / "memory.stat", cache_key);
        const std::uint64_t charged = *usage > cache ? *usage - cache : 0;
        const std::uint64_t left = *limit > charged ? *limit - charged : 0;
        room = room ? std::min(*room, left) : left;
      }
      if (dir == mount || !dir.has_relative_path() || dir.parent_path() == dir) break;
    }
    if (room) break;
  }
  return room;
}

}  // namespace

std::uint64_t available_memory() {
  const std::uint64_t system = proc_field("/proc/meminfo", "MemAvailable");
  const std::optional<std::uint64_t> room = cgroup_room();
  if (!room) return system;
  return system != 0 ? std::min(system, *room) : *room;
}

}  // namespace colflow::cli
