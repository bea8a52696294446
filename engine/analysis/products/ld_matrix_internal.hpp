// The files an LD store attaches (docs/FORMAT.md §13.1), shared by its writer and reader.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "colflow/analysis/ld_matrix.hpp"

namespace colflow {

inline constexpr std::string_view ld_description_file = "ld.json";
inline constexpr std::string_view ld_variants_file = "ld.tsv";
inline constexpr std::string_view ld_variants_header = "#ID\tA1_FREQ\tN\tFIRST\tLAST\tCOUNT";

// Where column j's values are: rows [first, last], `count` of them (dense: all of them).
struct ld_window_entry {
  std::uint64_t first = 0, last = 0, count = 0;
};

// ld.tsv: the header, then per variant its ID, A1 frequency (17 significant digits), samples
// with a call and window.
std::string format_ld_variants(const std::vector<ldm_variant>& variants,
                               const std::vector<ld_window_entry>& windows);

}  // namespace colflow
