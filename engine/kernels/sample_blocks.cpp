// The team behind sample_blocks' parallel loops (docs/DESIGN.md §4.8).
//
// An iterative analysis runs one short loop per column: at 100,000 samples, a column's product
// is microseconds of work on one core, and starting and joining a tbb::parallel_for (waking
// threads, stealing) costs a sizeable share of that. The team's helpers instead spin on a
// generation counter between columns, so a new column reaches them without a wake-up
// (docs/SCALING.md has the measurements). They run as oneTBB tasks (so `--threads` and the
// arena bound them) and return their worker thread after a short idle spell, so that a pass
// waiting on decode does not keep the decoders off the cores.
//
// Claims: the blocks are cut into one stretch per thread; each stretch has a counter tagged
// with the generation of the loop, and a thread takes blocks from its own stretch first, then
// from the others'. A helper still busy with an old generation can never take a block of the
// next one (its tag differs), and the calling thread claims whatever no helper took, so it
// never waits for a helper that has not started. Which thread computes a block does not matter
// for the result: a block's output is the same whoever computes it.
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "kernels/allowed_threads_internal.hpp"
#include "kernels/sample_blocks_internal.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace colflow {
namespace detail {
namespace {

void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// How long a helper waits for the next column before it gives its worker thread back: several
// columns' worth on a busy loop, and short against a decode that keeps compute waiting, so that
// a decode-bound pass does not lose a decoder's core to a helper spinning for a column that is
// not coming.
constexpr auto idle_limit = std::chrono::microseconds(10);

}  // namespace

class block_team {
 public:
  using block_function = void (*)(void*, std::size_t, std::size_t, std::size_t) noexcept;

  // The team computes blocks [first_block, first_block + blocks): a process's own share.
  block_team(std::size_t rows, std::size_t first_block, std::size_t blocks, std::size_t threads)
      : rows_(rows),
        first_block_(first_block),
        blocks_(blocks),
        threads_(threads),
        stretches_(std::make_unique<stretch[]>(threads)),
        running_(std::make_unique<std::atomic<bool>[]>(threads)) {
    for (std::size_t t = 0; t < threads_; ++t) {
      stretches_[t].end = first_block_ + (t + 1) * blocks_ / threads_;
      running_[t].store(false, std::memory_order_relaxed);
    }
  }

  ~block_team() {
    quit_.store(true, std::memory_order_release);
    group_.wait();
  }

  void run(block_function f, void* context) {
    const std::uint64_t gen = ++last_generation_;
    const std::uint64_t tag = (gen & 0xffffffffu) << 32;
    done_.store(0, std::memory_order_relaxed);
    for (std::size_t t = 0; t < threads_; ++t)
      stretches_[t].next.store(tag | (first_block_ + t * blocks_ / threads_),
                               std::memory_order_relaxed);
    function_.store(f, std::memory_order_relaxed);
    context_.store(context, std::memory_order_relaxed);
    generation_.store(gen, std::memory_order_release);
    // Helpers that gave their thread back are started again (they pick up this generation).
    for (std::size_t h = 1; h < threads_; ++h) {
      bool idle = false;
      if (!running_[h].load(std::memory_order_acquire) &&
          running_[h].compare_exchange_strong(idle, true, std::memory_order_acq_rel))
        group_.run([this, h] { serve(h); });
    }
    work(0, gen, f, context);
    while (done_.load(std::memory_order_acquire) != blocks_) cpu_relax();
  }

 private:
  struct alignas(64) stretch {
    std::atomic<std::uint64_t> next{0};  // generation tag << 32 | next block
    std::size_t end = 0;
  };

  static constexpr std::size_t none = ~std::size_t{0};

  std::size_t claim(std::size_t t, std::uint64_t gen) noexcept {
    stretch& s = stretches_[t];
    std::uint64_t v = s.next.load(std::memory_order_acquire);
    while (true) {
      if ((v >> 32) != (gen & 0xffffffffu)) return none;  // another loop's counter
      const std::size_t b = v & 0xffffffffu;
      if (b >= s.end) return none;
      if (s.next.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel)) return b;
    }
  }

  // Thread `home` computes blocks of generation `gen`: its own stretch first, then the others'.
  // It reports the blocks it computed once, when it has no more to claim: a count shared by
  // the threads costs a transfer of its cache line between cores at every update.
  void work(std::size_t home, std::uint64_t gen, block_function f, void* context) noexcept {
    std::size_t computed = 0;
    for (std::size_t k = 0; k < threads_; ++k) {
      const std::size_t t = (home + k) % threads_;
      for (std::size_t b; (b = claim(t, gen)) != none; ++computed) {
        const std::size_t first = b * sample_block_rows;
        f(context, b, first, std::min(sample_block_rows, rows_ - first));
      }
    }
    if (computed > 0) done_.fetch_add(computed, std::memory_order_acq_rel);
  }

  // A helper's life: every new generation it sees, until it has waited idle_limit for one.
  void serve(std::size_t h) {
    std::uint64_t seen = 0;  // no generation yet: the one that started it is new to it
    auto idle_since = std::chrono::steady_clock::now();
    for (unsigned spins = 0; !quit_.load(std::memory_order_acquire);) {
      const std::uint64_t gen = generation_.load(std::memory_order_acquire);
      if (gen != seen) {
        seen = gen;
        work(h, gen, function_.load(std::memory_order_relaxed),
             context_.load(std::memory_order_relaxed));
        idle_since = std::chrono::steady_clock::now();
        spins = 0;
        continue;
      }
      cpu_relax();
      if (++spins % 64 != 0 || std::chrono::steady_clock::now() - idle_since < idle_limit) continue;
      running_[h].store(false, std::memory_order_release);
      // A loop published just now may have seen this helper as running: take it back up,
      // unless the caller has started another helper for it meanwhile.
      bool idle = false;
      if (generation_.load(std::memory_order_acquire) != seen &&
          running_[h].compare_exchange_strong(idle, true, std::memory_order_acq_rel))
        continue;
      return;
    }
    running_[h].store(false, std::memory_order_release);
  }

  const std::size_t rows_, first_block_, blocks_, threads_;
  std::unique_ptr<stretch[]> stretches_;
  std::unique_ptr<std::atomic<bool>[]> running_;  // [0] (the caller) unused
  std::uint64_t last_generation_ = 0;             // the caller's own copy
  alignas(64) std::atomic<std::uint64_t> generation_{0};
  std::atomic<block_function> function_{nullptr};
  std::atomic<void*> context_{nullptr};
  alignas(64) std::atomic<std::size_t> done_{0};
  std::atomic<bool> quit_{false};
  tbb::task_group group_;
};

}  // namespace detail

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
    team_ = std::make_unique<detail::block_team>(rows_, own_begin_, own_end_ - own_begin_, threads);
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
