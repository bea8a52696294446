// What the linear and logistic association scans share.
#pragma once

#include <cstddef>
#include <functional>

#include "colflow/analysis/assoc.hpp"

namespace colflow::detail {

// A scan of `sel` on this process alone, with these options, handing results to a sink.
using local_association =
    std::function<assoc_summary(const selection&, const assoc_sink&, const analysis_options&)>;

// On several processes: each scans its share of the columns with `local` (a column's tests
// depend on that column only), the results are exchanged, and every process hands all of
// them to `sink` in order. `phenotypes` results per column.
assoc_summary distributed_association(const store& s, const selection& sel, std::size_t phenotypes,
                                      const assoc_sink& sink, const analysis_options& options,
                                      const local_association& local);

// Two-sided p of the standard normal: erfc(|z| / √2).
double two_sided_normal_p(double z);

}  // namespace colflow::detail
