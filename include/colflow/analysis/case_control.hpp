/// @file case_control.hpp
/// Case/control phenotypes in PLINK's codes: which columns of a phenotype table are
/// case/control traits, and their values as the 1/0 case indicators of logistic_association().
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "colflow/analysis/phenotype.hpp"

namespace colflow {

/// PLINK's two codings of a case/control trait (missing values, NA or -9, read as NaN).
enum class case_control_codes : std::uint8_t {
  one_two,   ///< 1 control, 2 case, 0 missing (PLINK's default)
  zero_one,  ///< 0 control, 1 case (PLINK's --1)
};

/// Whether column `c` of `t` is a case/control trait as PLINK decides: every value on the
/// rows `rows_used` keeps is a code of `codes` (1, 2 or 0; or 0 or 1), and one at least is a
/// case or control code (a column of 0 alone is all missing in PLINK's default coding).
bool is_case_control(const phenotype_table& t, std::size_t c,
                     std::span<const std::uint8_t> rows_used,
                     case_control_codes codes = case_control_codes::one_two);

/// The columns `which` of `t`, in that order, keeping the file counts.
phenotype_table select_phenotypes(const phenotype_table& t, std::span<const std::size_t> which);

/// Rewrites every column of `t` to 1 for a case, 0 for a control and NaN for missing (0 too
/// in the one_two coding), on every row. Throws colflow::error invalid_argument naming the
/// phenotype and a value that is not one of the codes.
void code_case_control(phenotype_table& t, case_control_codes codes = case_control_codes::one_two);

}  // namespace colflow
