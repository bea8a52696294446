// The residual of the iterative solvers: one double per store row, in storage aligned to a
// cache line.
//
// The kernels read and update it 32 or 64 bytes at a time, a sample block after another. In a
// std::vector the storage is 16-byte aligned, and where it lands depends on every allocation
// before it: every other load could straddle two cache lines or none, and BayesR's time per
// iteration on uk10k moved by ±10% with the length of the --out path. Storage of 128 KiB or
// more comes from mmap at 16 bytes past a page, always the straddling case: aligned, a BayesR
// iteration on 100,000 samples took 5% less at 1 and at 2 threads.
#pragma once

#include <tbb/cache_aligned_allocator.h>

#include <vector>

namespace colflow::detail {

using residual_vector = std::vector<double, tbb::cache_aligned_allocator<double>>;

}  // namespace colflow::detail
