/// @file plink_number_internal.hpp
/// Numbers printed as PLINK 2 prints them to 6 significant digits (its text tables' default),
/// for files that must have PLINK 2's bytes.
///
/// The layout is %g's (exponent below 1e-4 and from 1e6 on, trailing zeros dropped, "nan",
/// "inf"), but the rounding is PLINK 2's, not the correctly rounded one of printf or
/// std::to_chars: the value is scaled by powers of ten in binary64 (in a fixed sequence of
/// steps), and where the scaled value lies within 5 × 10⁻⁹ of a half between two 6-digit
/// results, the even one is taken. So −0.18906250000000002 prints as −0.189062 (PLINK 2) where
/// printf gives −0.189063. Every other value prints as %.6g prints it.
#pragma once

#include <string>

namespace colflow {

/// Appends `v` as PLINK 2 prints it with 6 significant digits (see the file comment).
void append_plink_g6(std::string& out, double v);

}  // namespace colflow
