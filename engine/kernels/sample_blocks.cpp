// Sample blocks (sample_blocks_internal.hpp): the split of a column's rows, among processes and
// among the threads of a block_team.
#include "kernels/allowed_threads_internal.hpp"
#include "kernels/block_team_internal.hpp"
#include "kernels/sample_blocks_internal.hpp"

namespace colflow {

sample_blocks::sample_blocks(std::size_t rows, std::size_t parallel_from, communicator* processes)
    : rows_(rows), count_((rows + sample_block_rows - 1) / sample_block_rows), own_end_(count_) {
  if (distributed(processes)) {
    // Contiguous shares of whole blocks, as even as they can be: process r owns
    // [r·count/size, (r+1)·count/size). The split depends on the rows and the size only.
    processes_ = processes;
    const auto size = static_cast<std::size_t>(processes->size());
    const auto rank = static_cast<std::size_t>(processes->rank());
    own_begin_ = even_share(count_, rank, size);
    own_end_ = even_share(count_, rank + 1, size);
  }
  const std::size_t own_rows =
      own_end_ > own_begin_ ? std::min(rows_, first(own_end_)) - first(own_begin_) : 0;
  if (own_rows < parallel_from) return;
  const std::size_t threads = std::min(detail::allowed_threads(), own_end_ - own_begin_);
  if (threads > 1)
    team_ = std::make_unique<detail::block_team>(rows_, sample_block_rows, own_begin_,
                                                 own_end_ - own_begin_, threads);
}

void sample_blocks::exchange_partials(std::size_t k) {
  const auto size = static_cast<std::size_t>(processes_->size());
  counts_.resize(size);
  for (std::size_t r = 0; r < size; ++r)
    counts_[r] = k * (even_share(count_, r + 1, size) - even_share(count_, r, size));
  outgoing_.assign(partials_.begin() + static_cast<std::ptrdiff_t>(k * own_begin_),
                   partials_.begin() + static_cast<std::ptrdiff_t>(k * own_end_));
  processes_->all_gather(outgoing_, std::span<double>(partials_.data(), k * count_), counts_);
}

void sample_blocks::gather(std::span<double> v) {
  if (!distributed(processes_)) return;
  const auto size = static_cast<std::size_t>(processes_->size());
  const auto row_of = [&](std::size_t b) { return std::min(rows_, first(b)); };
  counts_.resize(size);
  for (std::size_t r = 0; r < size; ++r)
    counts_[r] = row_of(even_share(count_, r + 1, size)) - row_of(even_share(count_, r, size));
  outgoing_.assign(v.begin() + static_cast<std::ptrdiff_t>(row_of(own_begin_)),
                   v.begin() + static_cast<std::ptrdiff_t>(row_of(own_end_)));
  processes_->all_gather(outgoing_, v.first(rows_), counts_);
}

sample_blocks::~sample_blocks() = default;
sample_blocks::sample_blocks(sample_blocks&&) noexcept = default;
sample_blocks& sample_blocks::operator=(sample_blocks&&) noexcept = default;

void sample_blocks::run(block_function f, void* context) { team_->run(f, context); }

}  // namespace colflow
