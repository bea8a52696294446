// The hard calls of a streamed column as packed genotype codes: what the analyses that count
// calls (hardy, the quality-control filters) read, whatever the store holds.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "colflow/stream/column_stream.hpp"

namespace colflow::detail {

// A column's packed 2-bit codes (codec/genotype_codec.hpp) over `rows` samples: a genotype
// column's own codes; a dosage column's hard calls, PLINK 2's rule (a decoded dosage within
// `threshold` of 0, 1 or 2 is that call, anything else missing), made in `buffer`. The decoded
// dosages are whole numbers of 1/16384ths, so the stored fixed-point values are recovered
// exactly and the calls are those of the stored dosages. The span lives as long as the view
// and `buffer`.
std::span<const std::uint8_t> hard_call_codes(const column_view<double>& v, std::size_t rows,
                                              bool genotype, double threshold,
                                              std::vector<std::uint8_t>& buffer);

}  // namespace colflow::detail
