/// @file communicator.hpp
/// The processes an analysis runs on (docs/DESIGN.md §4.9).
///
/// An iterative analysis can split its samples among several processes (MPI ranks) at the
/// fixed sample blocks of kernels/sample_blocks_internal.hpp: each process computes the
/// partials of its own blocks, one collective per reduction gives every process every
/// block's partial, and every process adds them in block order. The sums are then the very
/// sums a single process adds, so the results are bit-identical at any number of processes.
///
/// The library itself knows no MPI: this interface is all it needs. colflow/mpi/mpi_session.hpp
/// implements it over MPI (the `colflow_mpi` library, built where MPI is found); an embedding
/// program may implement it over another transport. A null communicator, or one of size 1, is
/// the single process.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace colflow {

class communicator {
 public:
  virtual ~communicator() = default;
  /// This process, 0 <= rank() < size().
  virtual int rank() const noexcept = 0;
  virtual int size() const noexcept = 0;
  /// Every process calls it with its own part; each receives every process's part in rank
  /// order: `all` is the concatenation, `counts[r]` doubles from process r (counts has size()
  /// entries, and mine.size() == counts[rank()]). A collective: every process must call it,
  /// in the same order as the others; the calls of one process come from one thread at a time.
  virtual void all_gather(std::span<const double> mine, std::span<double> all,
                          std::span<const std::size_t> counts) = 0;
};

/// True when `c` splits work: a communicator of more than one process.
inline bool distributed(const communicator* c) noexcept { return c != nullptr && c->size() > 1; }

/// Where process `rank` of `size` starts when `n` items are split in contiguous shares as even
/// as whole items allow: it owns [even_share(n, rank, size), even_share(n, rank + 1, size)).
inline std::size_t even_share(std::size_t n, std::size_t rank, std::size_t size) noexcept {
  return rank * n / size;
}

/// Every process's `mine`, in rank order (one value from each).
inline std::vector<double> all_gather_one(communicator& c, double mine) {
  const auto size = static_cast<std::size_t>(c.size());
  std::vector<double> all(size);
  c.all_gather(std::span(&mine, 1), all, std::vector<std::size_t>(size, 1));
  return all;
}

/// Process 0's `values` to every process (the others' are overwritten).
inline void take_from_first(communicator& c, std::span<double> values) {
  std::vector<std::size_t> counts(static_cast<std::size_t>(c.size()), 0);
  counts[0] = values.size();
  const std::vector<double> sent(values.begin(), values.end());  // MPI forbids aliased buffers
  c.all_gather(c.rank() == 0 ? std::span<const double>(sent) : std::span<const double>(), values,
               counts);
}

}  // namespace colflow
