// The residual of the iterative solvers: one double per store row, in storage aligned to a
// cache line.
//
// The kernels read and update it 32 or 64 bytes at a time, a sample block after another. In a
// std::vector the storage is only 16-byte aligned, and where it lands depends on every
// allocation before it, so whether loads straddle two cache lines, and with it the time of an
// iteration, would depend on unrelated allocations (the length of an output path). Storage of
// 128 KiB or more comes from mmap at 16 bytes past a page, always the straddling case. Aligned
// to a cache line, a block's 32- or 64-byte loads never straddle two, wherever the storage is.
#pragma once

#include <tbb/cache_aligned_allocator.h>

#include <vector>

namespace colflow::detail {

using residual_vector = std::vector<double, tbb::cache_aligned_allocator<double>>;

}  // namespace colflow::detail
