// The two matrix products of the randomised SVD's passes, on column-major blocks:
//   multiply_add:        Y (n x l) += Z (n x b) · B (b x l)
//   transpose_multiply:  C (b x l)  = Zᵀ (b x n) · Q (n x l)
// with l small (k + oversampling) and b a block of streamed columns. Built for AVX2 with FMA
// when the CPU has them (chosen at run time: the library is compiled for plain x86-64, where
// Eigen's products would be SSE2 only), portable loops otherwise.
//
// Every output element is accumulated in a fixed order that does not depend on which tile,
// call or thread computes it, so splitting the rows or columns across threads never changes a
// result.
#pragma once

#include <cstddef>

namespace colflow::detail {

void multiply_add(const double* z, std::size_t ldz, std::size_t n, std::size_t b, const double* bm,
                  std::size_t ldb, std::size_t l, double* y, std::size_t ldy) noexcept;

void transpose_multiply(const double* z, std::size_t ldz, std::size_t n, std::size_t b,
                        const double* q, std::size_t ldq, std::size_t l, double* c,
                        std::size_t ldc) noexcept;

}  // namespace colflow::detail
