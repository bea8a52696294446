// The team of threads behind short parallel loops (block_team_internal.hpp).
#include <algorithm>
#include <chrono>
#include <thread>

#include "kernels/block_team_internal.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace colflow::detail {
namespace {

void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// How long a helper waits for the next loop before it gives its worker thread back: several
// loops' worth on a busy analysis, and short against a decode that keeps compute waiting, so
// that a decode-bound pass does not lose a decoder's core to a helper spinning for a loop that
// is not coming.
constexpr auto idle_limit = std::chrono::microseconds(10);

constexpr std::size_t none = ~std::size_t{0};

}  // namespace

block_team::block_team(std::size_t rows, std::size_t block_rows, std::size_t first_block,
                       std::size_t blocks, std::size_t threads)
    : rows_(rows),
      block_rows_(block_rows),
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

block_team::~block_team() {
  quit_.store(true, std::memory_order_release);
  group_.wait();
}

void block_team::start(block_function f, void* context) {
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
  started_ = f;
  started_context_ = context;
}

void block_team::finish() {
  work(0, last_generation_, started_, started_context_);
  while (done_.load(std::memory_order_acquire) != blocks_) cpu_relax();
}

std::size_t block_team::claim(std::size_t t, std::uint64_t gen) noexcept {
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
// It reports the blocks it computed once, when it has no more to claim: a count shared by the
// threads costs a transfer of its cache line between cores at every update.
void block_team::work(std::size_t home, std::uint64_t gen, block_function f,
                      void* context) noexcept {
  std::size_t computed = 0;
  for (std::size_t k = 0; k < threads_; ++k) {
    const std::size_t t = (home + k) % threads_;
    for (std::size_t b; (b = claim(t, gen)) != none; ++computed) {
      const std::size_t first = b * block_rows_;
      f(context, b, first, std::min(block_rows_, rows_ - first));
    }
  }
  if (computed > 0) done_.fetch_add(computed, std::memory_order_acq_rel);
}

// A helper's life: every new generation it sees, until it has waited idle_limit for one.
void block_team::serve(std::size_t h) {
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
    // A loop published just now may have seen this helper as running: take it back up, unless
    // the caller has started another helper for it meanwhile.
    bool idle = false;
    if (generation_.load(std::memory_order_acquire) != seen &&
        running_[h].compare_exchange_strong(idle, true, std::memory_order_acq_rel))
      continue;
    return;
  }
  running_[h].store(false, std::memory_order_release);
}

}  // namespace colflow::detail
