// The hard calls of a streamed column as packed genotype codes.
#include "analysis/shared/hard_calls_internal.hpp"
#include "colflow/codec/dosage_codec.hpp"
#include "colflow/codec/genotype_codec.hpp"

namespace colflow::detail {

std::span<const std::uint8_t> hard_call_codes(const column_view<double>& v, std::size_t rows,
                                              bool genotype, double threshold,
                                              std::vector<std::uint8_t>& buffer) {
  if (genotype) return v.codes;
  std::vector<std::uint16_t> fixed(rows);
  for (std::size_t i = 0; i < rows; ++i)
    fixed[i] = dosage_to_fixed(v.values[static_cast<Eigen::Index>(i)]);
  buffer.assign(genotype_column_bytes(rows), 0);
  dosages_to_hard_calls(fixed, threshold, buffer);
  return buffer;
}

}  // namespace colflow::detail
