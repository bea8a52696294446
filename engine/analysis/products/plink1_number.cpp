// PLINK 1.9's 3-significant-digit numbers (analysis/products/plink1_number_internal.hpp): a
// scale to [1, 10) by powers of ten, then rounding to the nearest integer with ties (within
// a tolerance of 5 × 10^-12) to even, as PLINK 1.9's double_bround does.
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "analysis/products/plink1_number_internal.hpp"

namespace colflow::detail {
namespace {

// PLINK 1.9's banker_round11: what is added to the fraction of an even and of an odd integer.
constexpr double round_even = 0.499999999995, round_odd = 0.500000000005;

std::uint32_t banker_round(double x) {
  const auto whole = static_cast<std::uint32_t>(static_cast<std::int32_t>(x));
  const double frac = x - static_cast<std::int32_t>(whole);
  return whole + static_cast<std::uint32_t>(
                     static_cast<std::int32_t>(frac + ((whole & 1) ? round_odd : round_even)));
}

// d.dd with trailing zeros (and a bare point) dropped: n is the value times 100, < 1000.
std::string mantissa(std::uint32_t n) {
  std::string s(1, static_cast<char>('0' + n / 100));
  const std::uint32_t frac = n % 100;
  if (frac == 0) return s;
  s += '.';
  s += static_cast<char>('0' + frac / 10);
  if (frac % 10) s += static_cast<char>('0' + frac % 10);
  return s;
}

std::string exponent(char sign, unsigned e) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "e%c%02u", sign, e);
  return buf;
}

// 9.995e-5 > x > 0: scaled by powers of ten (the same steps as PLINK, so the same bits).
std::string small_exponent_form(double x) {
  unsigned e = 0;
  // The cascade of PLINK 1.9, branch for branch.
  if (x < 9.9949999999999e-16) {
    if (x < 9.9949999999999e-128) {
      if (x < 9.9949999999999e-256) {
        x *= 1.0e256;
        e |= 256;
      } else {
        x *= 1.0e128;
        e |= 128;
      }
    }
    if (x < 9.9949999999999e-64) {
      x *= 1.0e64;
      e |= 64;
    }
    if (x < 9.9949999999999e-32) {
      x *= 1.0e32;
      e |= 32;
    }
    if (x < 9.9949999999999e-16) {
      x *= 1.0e16;
      e |= 16;
    }
  }
  if (x < 9.9949999999999e-8) {
    x *= 100000000;
    e |= 8;
  }
  if (x < 9.9949999999999e-4) {
    x *= 10000;
    e |= 4;
  }
  if (x < 9.9949999999999e-2) {
    x *= 100;
    e |= 2;
  }
  if (x < 9.9949999999999e-1) {
    x *= 10;
    e++;
  }
  return mantissa(banker_round(x * 100)) + exponent('-', e);
}

// 0.9995 ≤ x < 999.5: PLINK 1.9's dtoa_so3.
std::string three_digits(double x) {
  if (x < 9.9949999999999) return mantissa(banker_round(x * 100));
  if (x < 99.949999999999) {
    const std::uint32_t n = banker_round(x * 10);
    std::string s = std::to_string(n / 10);
    if (n % 10) {
      s += '.';
      s += static_cast<char>('0' + n % 10);
    }
    return s;
  }
  return std::to_string(banker_round(x));
}

// 9.995e-5 ≤ x < 0.9995: "0." and the 3 digits, trailing zeros dropped.
std::string decimal_form(double x) {
  std::string s = "0.";
  if (x < 9.9949999999999e-3) {
    x *= 100;
    s += "00";
  }
  if (x < 9.9949999999999e-2) {
    x *= 10;
    s += '0';
  }
  std::uint32_t n = banker_round(x * 1000);
  s += static_cast<char>('0' + n / 100);
  n %= 100;
  if (n == 0) return s;
  s += static_cast<char>('0' + n / 10);
  if (n % 10) s += static_cast<char>('0' + n % 10);
  return s;
}

}  // namespace

std::string plink1_g3(double x) {
  if (std::isnan(x)) return "nan";
  if (x == 0.0) return "0";
  if (x < 9.9949999999999e-5) return small_exponent_form(x);
  if (x >= 999.49999999999) {
    if (std::isinf(x)) return "inf";
    unsigned e = 0;
    while (x >= 9.9949999999999e0) {  // P-values never come here: a plain scale suffices
      x *= 1.0e-1;
      ++e;
    }
    return mantissa(banker_round(x * 100)) + exponent('+', e);
  }
  if (x >= 0.99949999999999) return three_digits(x);
  return decimal_form(x);
}

}  // namespace colflow::detail
