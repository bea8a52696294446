// r² between two variants from their haplotype frequencies, estimated from the 3 × 3 table of
// their genotypes as PLINK 1.9 does for --clump (and --r2 dprime): the maximum-likelihood
// split of the double heterozygotes between the two phases, found among the real roots of a
// cubic (the EM fixed points) in closed form.
#pragma once

#include "kernels/genotype_products_internal.hpp"

namespace colflow::detail {

// Signed r² = |D|·D / (pA·pB·(1 − pA)·(1 − pB)) of the A1 alleles of a (the table's rows) and
// b (its columns), D = f11 − pA·pB from the estimated haplotype frequency f11; 0 when |D| is
// below 2^-44; NaN when either variant has one allele only among the samples called in both.
// The arithmetic is PLINK 1.9's, step for step (its choice among the roots included), so that
// a comparison with a threshold falls the same way.
double haplotype_r2(const genotype_pair_table& table) noexcept;

}  // namespace colflow::detail
