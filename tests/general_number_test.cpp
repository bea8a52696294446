// Tests of the %g-style number formatting of result tables (engine/io/general_number_internal.hpp):
// the bytes of std::to_chars (std::chars_format::general) for every kind of value, the halves
// and values near them where the fast rounding must give way, and every digit count.
#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "io/general_number_internal.hpp"

namespace colflow::detail {
namespace {

std::string by_to_chars(double v, int digits) {
  char text[64];
  const auto r = std::to_chars(text, text + sizeof text, v, std::chars_format::general, digits);
  return std::string(text, r.ptr);
}

std::string formatted(double v, int digits) {
  std::string out = "x";  // appended to what is there
  append_general(out, v, digits);
  return out.substr(1);
}

void expect_as_to_chars(double v, int digits) {
  EXPECT_EQ(formatted(v, digits), by_to_chars(v, digits))
      << "value " << by_to_chars(v, 17) << ", " << digits << " digits";
}

TEST(GeneralNumberTest, RandomValuesOfEveryMagnitudeAreWrittenAsToCharsWritesThem) {
  std::uint64_t state = 99;
  const auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 11;
  };
  for (int trial = 0; trial < 200000; ++trial) {
    const double unit = static_cast<double>(next()) * 0x1p-53;  // [0, 1)
    const double magnitude = std::pow(10.0, static_cast<double>(next() % 61) - 30.0);
    const double v = (trial % 2 ? -1 : 1) * unit * magnitude;
    expect_as_to_chars(v, 1 + static_cast<int>(next() % 17));
    expect_as_to_chars(v, 6);
  }
}

TEST(GeneralNumberTest, HalvesBoundariesAndSpecialValuesAreWrittenAsToCharsWritesThem) {
  const std::vector<double> values = {
      0.0,       -0.0,      1.0,        0.5,       1.5,
      2.5,       0.125,     0.375,      9.5,       99.5,
      999999.5,  9999995.0, 0.00015,    0.000125,  1e-4,
      9.9999e-5, 1e-5,      123456.0,   1234567.0, 999999.4,
      999999.6,  0.1,       0.2,        0.3,       1e15,
      1e16,      1e22,      1e23,       1e-16,     1e-17,
      1e-300,    5e-324,    1e300,      1.7e308,   0.1 + 0.2,
      2.0 / 3.0, 1.0 / 3.0, 0.95,       0.05,      0.0005,
      1234.5,    12345.5,   0.12345650, 4.35,      0.018906250000000002};
  for (const double v : values)
    for (int digits = 1; digits <= 17; ++digits) {
      expect_as_to_chars(v, digits);
      expect_as_to_chars(-v, digits);
    }
  for (const double v :
       {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()})
    expect_as_to_chars(v, 6);
  // Integers, and the doubles on either side of exact halves at six digits.
  for (std::uint64_t k = 0; k < 20000; ++k) {
    const double v = static_cast<double>(k * 37 + 1);
    expect_as_to_chars(v, 3);
    const double half = (static_cast<double>(k) + 0.5) * 1e-6;
    for (const double near : {std::nextafter(half, 0.0), half, std::nextafter(half, 1.0)})
      expect_as_to_chars(near, 6);
  }
}

}  // namespace
}  // namespace colflow::detail
