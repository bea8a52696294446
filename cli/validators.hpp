// Option checks whose messages name the rule and the value given, e.g. "--iterations: must be
// a positive integer, got 0" (CLI11 prefixes the option's name). CLI11's own PositiveNumber
// and Range print the raw range of a double instead ("Value 0 not in range 0.000000 to
// 1797693134862315708..."), and its conversions only say "Could not convert".
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace colflow::cli {

// A whole number from lo to hi (decimal digits only: no sign, no exponent). Messages: "must be
// a positive integer" when lo is 1 and hi unbounded, "must be a non-negative integer" when lo
// is 0 and hi unbounded, "must be an integer from lo to hi" otherwise. `hi` should be the
// largest value of the option's type, so that conversion never fails after the check.
CLI::Validator integer_range(std::uint64_t lo,
                             std::uint64_t hi = std::numeric_limits<std::uint64_t>::max());

// integer_range(1, hi) and integer_range(0, hi): the usual cases.
CLI::Validator positive_integer(std::uint64_t hi = std::numeric_limits<std::uint64_t>::max());
CLI::Validator non_negative_integer(std::uint64_t hi = std::numeric_limits<std::uint64_t>::max());

// A finite number greater than 0: "must be a positive number".
CLI::Validator positive_number();

// A finite number from lo to hi, both included: "must be a number from lo to hi".
CLI::Validator number_range(double lo, double hi);

// An output path or prefix (--out): not empty, in a directory that exists, so that a run is
// refused before it computes rather than when it writes. "must name a file in an existing
// directory, got 'x/y' (no directory 'x')".
CLI::Validator output_path();

// One of `choices`: "must be one of a, b or c".
CLI::Validator one_of(std::vector<std::string> choices);

}  // namespace colflow::cli
