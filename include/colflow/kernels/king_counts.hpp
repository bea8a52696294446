/// @file king_counts.hpp
/// The call pairs of two samples that the KING-robust kinship estimator counts (Manichaikul et
/// al. 2010), over the variants where both samples have a call. Exact integers: the kernels
/// that count them (any vector path, any tile, any thread) give the same numbers.
#pragma once

#include <cstdint>

namespace colflow {

/// The call pairs of samples i and j, i the later of the two (PLINK 2's IID1) and j the
/// earlier (IID2), over the variants where both have a call.
struct king_pair_counts {
  std::uint32_t hethet = 0;   ///< both heterozygous
  std::uint32_t ibs0 = 0;     ///< opposite homozygotes (no allele in common)
  std::uint32_t het_hom = 0;  ///< i heterozygous, j homozygous
  std::uint32_t hom_het = 0;  ///< i homozygous, j heterozygous
  std::uint32_t homhom = 0;   ///< both homozygous, ibs0 included

  /// The variants where both samples have a call: PLINK 2's NSNP.
  constexpr std::uint64_t called() const noexcept {
    return std::uint64_t{hethet} + het_hom + hom_het + homhom;
  }
  friend constexpr bool operator==(const king_pair_counts&, const king_pair_counts&) = default;
};

}  // namespace colflow
