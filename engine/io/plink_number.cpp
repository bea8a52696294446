// Numbers with PLINK's rounding (io/plink_number_internal.hpp): binary64 scaling by fixed
// powers of ten, then a round-half-even with a tolerance around the half; one formatter for
// PLINK 2's 6 digits and PLINK 1.9's 3, which differ only in their constants.
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <string>

#include "io/plink_number_internal.hpp"

namespace colflow {
namespace {

// How a PLINK prints: its significant digits, what it adds to the fraction of an even and of an
// odd integer to round (a half within its tolerance goes to even), and the digits of its bounds
// "just under 10^k" (what rounds up to 10^k counts as it): 9.99...9499... for `digits` digits.
struct plink_style {
  int digits;
  double round_even, round_odd;
  const char* near_ten;
};
constexpr plink_style plink2_style{6, 0.499999995, 0.500000005, "9.9999949999999"};
constexpr plink_style plink1_style{3, 0.499999999995, 0.500000000005, "9.9949999999999"};

// near_ten × 10^power, read from its decimal text (correctly rounded, whatever the locale):
// the very constant PLINK writes as a literal.
double bound(const plink_style& style, int power) {
  const std::string text = std::string(style.near_ten) + "e" + std::to_string(power);
  double value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

// The bounds a style uses, from 10^-256 to 10^255, made once.
class plink_bounds {
 public:
  explicit plink_bounds(const plink_style& style) {
    for (int p = min_power; p <= max_power; ++p) values_[p - min_power] = bound(style, p);
  }
  double operator()(int power) const { return values_[power - min_power]; }

 private:
  static constexpr int min_power = -256, max_power = 255;
  std::array<double, max_power - min_power + 1> values_{};
};

const plink_bounds& bounds_of(const plink_style& style) {
  static const plink_bounds six(plink2_style), three(plink1_style);
  return style.digits == 6 ? six : three;
}

std::uint32_t round_half_even(double x, const plink_style& style) {
  const auto whole = static_cast<std::uint32_t>(static_cast<std::int32_t>(x));
  const double fraction = x - static_cast<double>(whole);
  return whole + static_cast<std::uint32_t>(static_cast<std::int32_t>(
                     fraction + ((whole & 1) ? style.round_odd : style.round_even)));
}

// `value` (< 10^digits) as `digits` digits with the point after the first `whole` of them,
// trailing zeros of the fraction (and a bare point) dropped.
void append_digits(std::string& out, std::uint32_t value, int digits, int whole) {
  char text[16];
  std::snprintf(text, sizeof text, "%0*u", digits, static_cast<unsigned>(value));
  int end = digits;
  while (end > whole && text[end - 1] == '0') --end;
  out.append(text, static_cast<std::size_t>(whole));
  if (end > whole) {
    out += '.';
    out.append(text + whole, static_cast<std::size_t>(end - whole));
  }
}

// The steps of the scaling, PLINK's literals: 10^p and 10^-p for each power p.
constexpr int step_powers[] = {256, 128, 64, 32, 16, 8, 4, 2, 1};
constexpr double step_up[] = {1e256, 1e128, 1e64, 1e32, 1e16, 1e8, 1e4, 1e2, 1e1};
constexpr double step_down[] = {1e-256, 1e-128, 1e-64, 1e-32, 1e-16, 1e-8, 1e-4, 1e-2, 1e-1};
// 10^k for the digits' scales, k ≤ 6.
constexpr double ten_to[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6};

// v below 10^-4 or from 10^digits on: scaled into [1, 10) by the steps, then d.dddde±XX.
void append_exponential(std::string& out, double v, const plink_style& style) {
  const plink_bounds& b = bounds_of(style);
  int exponent = 0;
  const bool small = v < 1;
  for (std::size_t k = 0; k < std::size(step_powers); ++k) {
    const int p = step_powers[k];
    if (small && v < b(-p)) {
      v *= step_up[k];
      exponent -= p;
    } else if (!small && v >= b(p - 1)) {
      v *= step_down[k];
      exponent += p;
    }
  }
  append_digits(out, round_half_even(v * ten_to[style.digits - 1], style), style.digits, 1);
  char text[16];
  std::snprintf(text, sizeof text, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  out += text;
}

void append_plink_number(std::string& out, double v, const plink_style& style) {
  if (std::isnan(v)) {
    out += "nan";
    return;
  }
  if (v < 0) {
    out += '-';
    v = -v;
  }
  if (v == 0) {
    out += '0';
    return;
  }
  if (std::isinf(v)) {
    out += "inf";
    return;
  }
  const plink_bounds& b = bounds_of(style);
  const int d = style.digits;
  if (v < b(-5) || v >= b(d - 1)) return append_exponential(out, v, style);
  if (v < b(-1)) {  // 0.0001 to just under 1: "0.", up to three zeros, `digits` digits
    out += "0.";
    if (v < b(-3)) {
      v *= 100;
      out += "00";
    }
    if (v < b(-2)) {
      v *= 10;
      out += '0';
    }
    char text[16];
    std::snprintf(text, sizeof text, "%0*u", d,
                  static_cast<unsigned>(round_half_even(v * ten_to[d], style)));
    int end = d;
    while (text[end - 1] == '0') --end;
    out.append(text, static_cast<std::size_t>(end));
    return;
  }
  // 1 to just under 10^digits: `whole` digits before the point.
  int whole = 1;
  while (whole < d && v >= b(whole - 1)) ++whole;
  append_digits(out, round_half_even(v * ten_to[d - whole], style), d, whole);
}

}  // namespace

void append_plink_g6(std::string& out, double v) { append_plink_number(out, v, plink2_style); }

std::string detail::plink1_g3(double x) {
  std::string out;
  append_plink_number(out, x, plink1_style);
  return out;
}

}  // namespace colflow
