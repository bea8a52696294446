// A one-line progress display on stderr, redrawn at most a few times a second, shown only
// when stderr is a terminal (and not --quiet).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace colflow::cli {

class progress_line {
 public:
  progress_line(std::string label, bool enabled);
  ~progress_line();
  // done of total items (the unit names them, e.g. "columns"); bytes processed so far.
  void update(std::uint64_t done, std::uint64_t total, const char* unit, double bytes,
              double seconds);
  void finish();

 private:
  std::string label_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace colflow::cli
