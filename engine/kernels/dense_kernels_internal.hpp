// Dense matrix products on column-major blocks:
//   multiply_add:             Y (n x l) += Z (n x b) · B (b x l)
//   transpose_multiply:       C (b x l)  = Zᵀ (b x n) · Q (n x l)
//   multiply_add_transposed:  Y (n x l) += A (n x b) · Bᵀ (b x l), B being l x b (binary64
//                             or binary32)
// the first two for the randomised SVD's passes (l small: k + oversampling; b a block of
// streamed columns), the third for the relationship matrix's tiles of samples. Built for AVX-512 or
// AVX2 with FMA when the CPU has them (chosen at run time: the library is compiled for plain
// x86-64, where Eigen's products would be SSE2 only), portable loops on std::fma otherwise.
//
// Every output element is accumulated by the same fused multiply-adds in a fixed order that
// depends neither on the code path nor on which tile, call or thread computes it, so neither
// the CPU nor splitting the rows or columns across threads changes a result.
#pragma once

#include <cstddef>

namespace colflow::detail {

void multiply_add(const double* z, std::size_t ldz, std::size_t n, std::size_t b, const double* bm,
                  std::size_t ldb, std::size_t l, double* y, std::size_t ldy) noexcept;

// Every entry of Y is its own chain of fused multiply-adds, y = fma(a(i, k), b(j, k), y) for
// k = 0 … b − 1, on every code path (AVX-512, AVX2 with FMA, and the portable loop, which calls
// std::fma): the bits depend neither on the CPU nor on how the rows and columns are split, and
// as a·b = b·a exactly, the product of A with itself is symmetric to the bit.
void multiply_add_transposed(const double* a, std::size_t lda, std::size_t n, std::size_t b,
                             const double* bt, std::size_t ldb, std::size_t l, double* y,
                             std::size_t ldy) noexcept;

// The same in binary32: each entry one chain of single-precision fused multiply-adds
// (std::fma on floats on the portable path), the same bits on every path.
void multiply_add_transposed(const float* a, std::size_t lda, std::size_t n, std::size_t b,
                             const float* bt, std::size_t ldb, std::size_t l, float* y,
                             std::size_t ldy) noexcept;

void transpose_multiply(const double* z, std::size_t ldz, std::size_t n, std::size_t b,
                        const double* q, std::size_t ldq, std::size_t l, double* c,
                        std::size_t ldc) noexcept;

}  // namespace colflow::detail
