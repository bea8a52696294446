// What the sample × sample products (the GRM, KING) share: the variants they use, X, Y and MT
// left out as plink2 leaves them out of --make-rel and KING, and the figures of their memory
// plans.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "colflow/analysis/analysis.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/store/store.hpp"

namespace colflow::detail {

// The selected variants used, in selection order, and the count left out (on X, Y or MT; the
// pseudo-autosomal XY stays). Chromosome codes are read by kind_of_chromosome, so a store with
// PLINK 1's numeric codes (23 for X) leaves out the same variants.
struct autosomal_columns {
  std::vector<std::size_t> columns;
  std::size_t left_out = 0;
};
autosomal_columns autosomal_columns_of(const store& s, const selection& sel);

// Bytes as "12.3 MiB", for the messages of a plan.
std::string mib(std::uint64_t bytes);

// The stream's in-flight depth that a pass with these options will use.
std::size_t resolved_in_flight(const analysis_options& options);

}  // namespace colflow::detail
