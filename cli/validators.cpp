// Option checks whose messages name the rule and the value given (validators.hpp).
#include "validators.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <system_error>

namespace colflow::cli {
namespace {

// A number as people write it in messages: 1, 0.5, 1e-07.
std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// The value as given, quoted when it is empty or has spaces, so that the message shows it.
std::string shown(const std::string& value) {
  if (value.empty() || value.find_first_of(" \t") != std::string::npos) return "'" + value + "'";
  return value;
}

}  // namespace

CLI::Validator integer_range(std::uint64_t lo, std::uint64_t hi) {
  constexpr std::uint64_t unbounded = std::numeric_limits<std::uint64_t>::max();
  // Options that hold the largest values of their integer type: naming those in the rule would
  // only add noise ("from 1 to 4294967295").
  const bool open = hi == unbounded || hi == std::numeric_limits<unsigned>::max() ||
                    hi == static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
                    hi == static_cast<std::uint64_t>(std::numeric_limits<int>::max());
  const std::string rule =
      open && lo == 1   ? "a positive integer"
      : open && lo == 0 ? "a non-negative integer"
      : open            ? "an integer, " + std::to_string(lo) + " or more"
                        : "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  const std::string description =
      open ? (lo == 0   ? "NONNEGATIVE"
              : lo == 1 ? "POSITIVE"
                        : "")
           : "in [" + std::to_string(lo) + " - " + std::to_string(hi) + "]";
  return CLI::Validator(
      [=](std::string& value) -> std::string {
        std::uint64_t v = 0;
        const char* first = value.data();
        const char* last = first + value.size();
        const auto [end, ec] = std::from_chars(first, last, v);
        const bool digits = !value.empty() && value[0] >= '0' && value[0] <= '9';
        if (digits && end == last &&
            (ec == std::errc::result_out_of_range || (ec == std::errc() && open && v > hi)))
          return "must be " + rule + ", got " + value + " (too large)";
        if (!digits || ec != std::errc() || end != last || v < lo || v > hi)
          return "must be " + rule + ", got " + shown(value);
        return {};
      },
      description);
}

CLI::Validator positive_integer(std::uint64_t hi) { return integer_range(1, hi); }
CLI::Validator non_negative_integer(std::uint64_t hi) { return integer_range(0, hi); }

namespace {

// Parses a whole finite number; false for anything else (trailing text, nan, inf).
bool parse_number(const std::string& value, double& v) {
  const char* first = value.data();
  const char* last = first + value.size();
  if (first != last && *first == '+') ++first;  // from_chars takes no '+'; people write it
  const auto [end, ec] = std::from_chars(first, last, v);
  return first != last && ec == std::errc() && end == last && std::isfinite(v);
}

}  // namespace

CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        double v = 0;
        if (!parse_number(value, v) || !(v > 0))
          return "must be a positive number, got " + shown(value);
        return {};
      },
      "POSITIVE");
}

CLI::Validator number_range(double lo, double hi) {
  const std::string rule = "a number from " + number_text(lo) + " to " + number_text(hi);
  return CLI::Validator(
      [=](std::string& value) -> std::string {
        double v = 0;
        if (!parse_number(value, v) || v < lo || v > hi)
          return "must be " + rule + ", got " + shown(value);
        return {};
      },
      "in [" + number_text(lo) + " - " + number_text(hi) + "]");
}

CLI::Validator one_of(std::vector<std::string> choices) {
  std::string list, set;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    list += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
    set += (i == 0 ? "" : ",") + choices[i];
  }
  return CLI::Validator(
      [choices, list](std::string& value) -> std::string {
        for (const std::string& c : choices)
          if (value == c) return {};
        return "must be one of " + list + ", got " + shown(value);
      },
      "{" + set + "}");
}

CLI::Validator output_path() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        if (value.empty()) return "must name a file, got an empty string";
        const std::filesystem::path dir = std::filesystem::path(value).parent_path();
        std::error_code ec;
        if (!dir.empty() && !std::filesystem::is_directory(dir, ec))
          return "must name a file in an existing directory, got " + shown(value) +
                 " (no directory " + shown(dir.string()) + ")";
        return {};
      },
      "");
}

}  // namespace colflow::cli
