#include "progress.hpp"

#include <cstdio>

#include "commands.hpp"

namespace colflow::cli {

progress_line::progress_line(std::string label, bool enabled)
    : label_(std::move(label)), enabled_(enabled && stderr_is_terminal()) {}

progress_line::~progress_line() { finish(); }

void progress_line::update(std::uint64_t done, std::uint64_t total, const char* unit,
                           double bytes, double seconds) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (done != total && now - last_ < std::chrono::milliseconds(200)) return;
  last_ = now;
  const double rate = seconds > 0 ? bytes / seconds : 0;
  const double eta = done > 0 ? seconds * static_cast<double>(total - done) /
                                    static_cast<double>(done)
                              : 0;
  std::fprintf(stderr, "\r%s: %llu/%llu %s, %s/s, ETA %.0f s   ", label_.c_str(),
               static_cast<unsigned long long>(done), static_cast<unsigned long long>(total), unit,
               human_bytes(rate).c_str(), eta);
  std::fflush(stderr);
  drawn_ = true;
}

void progress_line::finish() {
  if (drawn_) std::fputc('\n', stderr);
  drawn_ = false;
}

}  // namespace colflow::cli
