// %g-style numbers with std::to_chars's bytes, fast for the usual ones
// (general_number_internal.hpp).
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>

#include "io/general_number_internal.hpp"

namespace colflow::detail {
namespace {

// Powers of ten exact in a double.
constexpr double exact_tens[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
constexpr int largest_exact = 22;
// More digits than this leave too little of a double's precision to tell a half apart.
constexpr int fast_digits = 12;

void append_by_to_chars(std::string& out, double v, int digits) {
  char text[64];
  const auto r = std::to_chars(text, text + sizeof text, v, std::chars_format::general, digits);
  out.append(text, r.ptr);
}

// A value rounded to `digits` significant digits: d₁d₂… × 10^(exponent − digits + 1).
struct rounded {
  std::uint64_t significand;
  int exponent;
};

// floor(log10 a), or one less, from a's binary exponent: a is in [2^e, 2^(e+1)), and
// 78913 / 2^18 is log10 2 to the precision this needs (|e| < 1100).
int decimal_exponent_estimate(double a) {
  const int e = static_cast<int>((std::bit_cast<std::uint64_t>(a) >> 52) & 0x7ff) - 1023;
  return (e * 78913) >> 18;  // an arithmetic shift: the floor for negative e too
}

// `a` (positive, finite, normal) rounded to `digits` digits when the rounding is certain; false
// when it is not (a scaled value too close to a half) or the scale is not an exact power of ten.
bool round_to_digits(double a, int digits, rounded& r) {
  int x = decimal_exponent_estimate(a);
  for (int attempt = 0; attempt < 2; ++attempt, ++x) {
    const int k = digits - 1 - x;
    if (k > largest_exact || k < -largest_exact) return false;
    const double scaled = k >= 0 ? a * exact_tens[k] : a / exact_tens[-k];  // within half an ulp
    if (scaled >= exact_tens[digits]) continue;                             // x one too low
    const auto whole = static_cast<std::uint64_t>(scaled);                  // its floor
    const double fraction = scaled - static_cast<double>(whole);            // exact
    if (std::fabs(fraction - 0.5) <= scaled * 0x1p-50) return false;        // a half, or near
    r = {whole + (fraction > 0.5 ? 1 : 0), x};
    if (r.significand == static_cast<std::uint64_t>(exact_tens[digits])) {  // 99…9.5 → 10^digits
      r.significand /= 10;
      ++r.exponent;
    }
    return r.significand >= static_cast<std::uint64_t>(exact_tens[digits - 1]);
  }
  return false;
}

// Writes ".ddd", text[0, n) without its trailing zeros, at `to`, or nothing when no digit is
// left (the fraction of %g); returns the end.
char* put_fraction(char* to, const char* text, int n) {
  while (n > 0 && text[n - 1] == '0') --n;
  if (n == 0) return to;
  *to++ = '.';
  for (int k = 0; k < n; ++k) *to++ = text[k];
  return to;
}

void append_rounded(std::string& out, bool negative, const rounded& r, int digits) {
  char text[24];
  std::uint64_t s = r.significand;
  for (int k = digits - 1; k >= 0; --k, s /= 10) text[k] = static_cast<char>('0' + s % 10);
  char line[48];
  char* to = line;
  if (negative) *to++ = '-';
  const int x = r.exponent;
  if (x < -4 || x >= digits) {  // d.ddde±XX
    *to++ = text[0];
    to = put_fraction(to, text + 1, digits - 1);
    *to++ = 'e';
    *to++ = x < 0 ? '-' : '+';
    const int e = x < 0 ? -x : x;  // below 100: |digits − 1 − x| ≤ 22
    *to++ = static_cast<char>('0' + e / 10);
    *to++ = static_cast<char>('0' + e % 10);
  } else if (x >= 0) {  // ddd.ddd
    for (int k = 0; k <= x; ++k) *to++ = text[k];
    to = put_fraction(to, text + x + 1, digits - 1 - x);
  } else {  // 0.000ddd: x is −1 to −4
    char fraction[32] = {'0', '0', '0'};
    const int zeros = -x - 1;
    for (int k = 0; k < digits; ++k) fraction[zeros + k] = text[k];
    *to++ = '0';
    to = put_fraction(to, fraction, zeros + digits);
  }
  out.append(line, static_cast<std::size_t>(to - line));
}

}  // namespace

void append_general(std::string& out, double v, int digits) {
  rounded r{};
  const double a = std::fabs(v);
  if (digits < 1 || digits > fast_digits || !(a >= 0x1p-1020 && a <= 0x1p1020) ||
      !round_to_digits(a, digits, r)) {  // 0, subnormal, huge, infinite: std::to_chars
    append_by_to_chars(out, v, digits);
    return;
  }
  append_rounded(out, v < 0, r, digits);
}

}  // namespace colflow::detail
