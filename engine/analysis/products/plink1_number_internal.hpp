// Numbers as PLINK 1.9 prints them in its fixed-width reports (.clumped): its own %g with 3
// significant digits and banker's rounding of near-ties, which printf does not reproduce.
#pragma once

#include <string>

namespace colflow::detail {

// x ≥ 0 (a P-value) with 3 significant digits, as PLINK 1.9's dtoa_g_wxp3 without the
// padding: "0", "0.0345", "1", "1.5e-05", "2e-123", "nan"; values of 999.5 and above in
// exponent form ("1e+03").
std::string plink1_g3(double x);

}  // namespace colflow::detail
