/// @file plink_number_internal.hpp
/// Numbers printed as PLINK prints them, for files that must have PLINK's bytes: PLINK 2's text
/// tables (6 significant digits) and PLINK 1.9's fixed-width reports (3, its `.clumped`).
///
/// The layout is %g's (exponent below 1e-4 and from 10^digits on, trailing zeros dropped,
/// "nan", "inf"), but the rounding is PLINK's, not the correctly rounded one of printf or
/// std::to_chars: the value is scaled by powers of ten in binary64 (in a fixed sequence of
/// steps, so the same bits as PLINK's), and where the scaled value lies within a tolerance of a
/// half between two results (5 × 10⁻⁹ of the last digit in PLINK 2, 5 × 10⁻¹² in PLINK 1.9),
/// the even one is taken. So −0.18906250000000002 prints as −0.189062 (PLINK 2) where printf
/// gives −0.189063. Every other value prints as %.6g (%.3g) prints it.
#pragma once

#include <string>

namespace colflow {

/// Appends `v` as PLINK 2 prints it with 6 significant digits (see the file comment).
void append_plink_g6(std::string& out, double v);

namespace detail {
/// `x` as PLINK 1.9 prints it with 3 significant digits (its dtoa_g_wxp3 without the padding):
/// "0", "0.0345", "1", "1.5e-05", "2e-123", "nan"; 999.5 and above in exponent form ("1e+03"),
/// scaled by the steps of the small ones (the P-values it prints never reach them).
std::string plink1_g3(double x);
}  // namespace detail

}  // namespace colflow
