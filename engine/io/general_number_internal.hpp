/// @file general_number_internal.hpp
/// A double in %g style with a given number of significant digits, the bytes std::to_chars
/// (std::chars_format::general) gives, in a fraction of its time for the numbers result tables
/// hold.
///
/// The value is scaled by an exact power of ten (at most 10^22) to an integer of `digits` digits
/// and rounded; the rounding is correct wherever the scaled value lies clearly away from a half
/// (the scaling is exact to half an ulp), and std::to_chars formats the rest: values too close
/// to a half, beyond the exact powers (below about 10^-16), infinities, and more than 15
/// digits. The layout is then %g's: an exponent below 10^-4 and from 10^digits on, trailing
/// zeros dropped.
#pragma once

#include <string>

namespace colflow::detail {

/// Appends `v` (not NaN) as std::to_chars(general, digits) writes it; digits in 1..17.
void append_general(std::string& out, double v, int digits);

}  // namespace colflow::detail
