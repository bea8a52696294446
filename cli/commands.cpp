// The helpers that commands.hpp declares for the commands: thread cap, terminal test, sizes.
#include "commands.hpp"

#include <unistd.h>

#include <cstdio>
#include <string>

namespace colflow::cli {

std::unique_ptr<tbb::global_control> limit_threads(unsigned threads) {
  if (threads == 0) return nullptr;
  return std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                               threads);
}

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  int u = 0;
  while (bytes >= 1000 && u < 4) {
    bytes /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

}  // namespace colflow::cli
