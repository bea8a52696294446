// Numbers with PLINK 2's 6-digit rounding (io/plink_number_internal.hpp): binary64 scaling by
// fixed powers of ten, then a round-half-even with a tolerance around the half.
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "io/plink_number_internal.hpp"

namespace colflow {
namespace {

// Within this of a half (in units of the last digit), a scaled value is a tie.
constexpr double tie_low = 0.499999995, tie_high = 0.500000005;

// x rounded to an integer, ties (within the tolerance) to even.
std::uint32_t round_half_even(double x) {
  const auto whole = static_cast<std::uint32_t>(static_cast<std::int32_t>(x));
  const double fraction = x - static_cast<double>(whole);
  return whole + static_cast<std::uint32_t>(
                     static_cast<std::int32_t>(fraction + ((whole & 1) ? tie_high : tie_low)));
}

// The bounds below which (small) or from which (large) a value needs a step of 10^power to
// come nearer [1, 10): just under a power of ten, so that what rounds up to it counts as it.
struct step {
  double small_bound, small_scale, large_bound, large_scale;
  int power;
};
constexpr step steps[] = {
    {9.9999949999999e-256, 1.0e256, 9.9999949999999e255, 1.0e-256, 256},
    {9.9999949999999e-128, 1.0e128, 9.9999949999999e127, 1.0e-128, 128},
    {9.9999949999999e-64, 1.0e64, 9.9999949999999e63, 1.0e-64, 64},
    {9.9999949999999e-32, 1.0e32, 9.9999949999999e31, 1.0e-32, 32},
    {9.9999949999999e-16, 1.0e16, 9.9999949999999e15, 1.0e-16, 16},
    {9.9999949999999e-8, 1.0e8, 9.9999949999999e7, 1.0e-8, 8},
    {9.9999949999999e-4, 1.0e4, 9.9999949999999e3, 1.0e-4, 4},
    {9.9999949999999e-2, 1.0e2, 9.9999949999999e1, 1.0e-2, 2},
    {9.9999949999999e-1, 1.0e1, 9.9999949999999e0, 1.0e-1, 1},
};

// The six digits of `digits` (< 1,000,000) with the point after the first `whole` of them,
// trailing zeros of the fraction (and a bare point) dropped.
void append_digits(std::string& out, std::uint32_t digits, int whole) {
  char text[8];
  std::snprintf(text, sizeof text, "%06u", static_cast<unsigned>(digits));
  int end = 6;
  while (end > whole && text[end - 1] == '0') --end;
  out.append(text, static_cast<std::size_t>(whole));
  if (end > whole) {
    out += '.';
    out.append(text + whole, static_cast<std::size_t>(end - whole));
  }
}

// A mantissa in [1, 10) and its exponent: d.ddddde±XX.
void append_exponential(std::string& out, double mantissa, int exponent) {
  append_digits(out, round_half_even(mantissa * 100000), 1);
  char text[16];
  std::snprintf(text, sizeof text, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  out += text;
}

}  // namespace

void append_plink_g6(std::string& out, double v) {
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
  if (v < 9.9999949999999e-5) {  // exponential, small
    int exponent = 0;
    for (const step& s : steps)
      if (v < s.small_bound) {
        v *= s.small_scale;
        exponent += s.power;
      }
    return append_exponential(out, v, -exponent);
  }
  if (v >= 999999.49999999) {  // exponential, large
    int exponent = 0;
    for (const step& s : steps)
      if (v >= s.large_bound) {
        v *= s.large_scale;
        exponent += s.power;
      }
    return append_exponential(out, v, exponent);
  }
  if (v < 0.99999949999999) {  // 0.000100000 to 0.999999: "0." and six digits
    out += "0.";
    if (v < 9.9999949999999e-3) {
      v *= 100;
      out += "00";
    }
    if (v < 9.9999949999999e-2) {
      v *= 10;
      out += '0';
    }
    std::uint32_t digits = round_half_even(v * 1000000);
    int end = 6;
    while (digits % 10 == 0) {
      digits /= 10;
      --end;
    }
    char text[8];
    std::snprintf(text, sizeof text, "%0*u", end, static_cast<unsigned>(digits));
    out += text;
    return;
  }
  // 1 to 999999: `whole` digits before the point.
  static constexpr double bounds[] = {9.9999949999999, 99.999949999999, 999.99949999999,
                                      9999.9949999999, 99999.949999999};
  static constexpr double scales[] = {1e5, 1e4, 1e3, 1e2, 1e1};
  int whole = 1;
  while (whole < 6 && v >= bounds[whole - 1]) ++whole;
  append_digits(out, round_half_even(whole < 6 ? v * scales[whole - 1] : v), whole);
}

}  // namespace colflow
