// A one-line progress display on stderr, redrawn at most a few times a second, shown only
// when stderr is a terminal (and not --quiet): done/total in the unit of the work, the rate in
// that unit (and in bytes when bytes are read), and the time left at that rate.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace colflow::cli {

class progress_line {
 public:
  progress_line(std::string label, bool enabled);
  ~progress_line();
  progress_line(const progress_line&) = delete;
  progress_line& operator=(const progress_line&) = delete;

  // done of total items (the unit names them: "columns", "iterations"); `bytes` processed so
  // far (0: none to show); `seconds` since the work started. The rate is done / seconds.
  void update(std::uint64_t done, std::uint64_t total, const char* unit, double bytes,
              double seconds);
  // The same for work that started at `resumed_at` of total (a resumed chain): `seconds` is
  // the time of the items done since, and the rate is (done - resumed_at) / seconds.
  void update(std::uint64_t done, std::uint64_t total, std::uint64_t resumed_at, const char* unit,
              double bytes, double seconds);
  // Text shown in parentheses after the figures from the next drawing on (empty: none), e.g.
  // the pass that runs inside a long step.
  void note(std::string text) { note_ = std::move(text); }
  // Ends the line (a newline after the last drawing); the next update starts a new one.
  void finish();

 private:
  std::string label_;
  std::string note_;
  bool enabled_;
  bool drawn_ = false;
  std::size_t last_length_ = 0;
  std::chrono::steady_clock::time_point last_{};
};

// "3.2", "45.1", "1234": a rate with a few significant digits.
std::string human_rate(double per_second);
// "0.4 s", "12 s", "2 min 05 s", "3 h 20 min": a duration for people.
std::string human_duration(double seconds);

}  // namespace colflow::cli
