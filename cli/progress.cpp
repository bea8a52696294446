// The one-line progress display on stderr, and durations and rates for people.
#include "progress.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "commands.hpp"

namespace colflow::cli {

progress_line::progress_line(std::string label, bool enabled)
    : label_(std::move(label)), enabled_(enabled && stderr_is_terminal()) {}

progress_line::~progress_line() { finish(); }

void progress_line::update(std::uint64_t done, std::uint64_t total, const char* unit, double bytes,
                           double seconds) {
  update(done, total, 0, unit, bytes, seconds);
}

void progress_line::update(std::uint64_t done, std::uint64_t total, std::uint64_t resumed_at,
                           const char* unit, double bytes, double seconds) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (done != total && drawn_ && now - last_ < std::chrono::milliseconds(200)) return;
  last_ = now;
  // Rate and time left come from the same unit and the same span: the items done in this
  // run over the time they took.
  const double items = done > resumed_at ? static_cast<double>(done - resumed_at) : 0.0;
  const double rate = seconds > 0 && items > 0 ? items / seconds : 0.0;
  std::string line =
      label_ + ": " + std::to_string(done) + "/" + std::to_string(total) + " " + unit;
  if (rate > 0) line += ", " + human_rate(rate) + " " + unit + "/s";
  if (bytes > 0 && seconds > 0) line += ", " + human_bytes(bytes / seconds) + "/s";
  if (done >= total)
    line += ", done in " + human_duration(seconds);
  else if (rate > 0)
    line += ", ETA " + human_duration(static_cast<double>(total - done) / rate);
  else
    line += ", ETA --";
  if (!note_.empty()) line += " (" + note_ + ")";
  // Blank out what a longer previous drawing left behind.
  const std::size_t length = line.size();
  if (length < last_length_) line.append(last_length_ - length, ' ');
  last_length_ = length;
  std::fprintf(stderr, "\r%s", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void progress_line::finish() {
  if (drawn_) std::fputc('\n', stderr);
  drawn_ = false;
  last_length_ = 0;
}

std::string human_rate(double per_second) {
  char buf[32];
  std::snprintf(buf, sizeof buf,
                per_second >= 100  ? "%.0f"
                : per_second >= 10 ? "%.1f"
                                   : "%.2f",
                per_second);
  return buf;
}

std::string human_duration(double seconds) {
  char buf[48];
  // Hundredths and tenths while they matter (short passes), whole units after.
  if (seconds < 9.95) {
    std::snprintf(buf, sizeof buf, seconds < 0.995 ? "%.2f s" : "%.1f s", std::max(0.0, seconds));
    return buf;
  }
  const double s = std::round(seconds);
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%.0f s", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%.0f min %02.0f s", std::floor(s / 60), std::fmod(s, 60));
  } else {
    const double minutes = std::round(s / 60);
    std::snprintf(buf, sizeof buf, "%.0f h %02.0f min", std::floor(minutes / 60),
                  std::fmod(minutes, 60));
  }
  return buf;
}

}  // namespace colflow::cli
