// A team of threads for short parallel loops over blocks, thousands of them a second: the
// threads behind sample_blocks' loops (docs/DESIGN.md §4.8), and SBayesR's residual updates.
//
// Starting and joining a tbb::parallel_for for a loop of a few microseconds (waking threads,
// stealing) costs a sizeable share of its work. The team's helpers instead spin on a generation
// counter between loops, so a new loop reaches them without a wake-up (docs/SCALING.md has the
// measurements). They run as oneTBB tasks (so `--threads` and the arena bound them) and return
// their worker thread after a short idle spell, so that a pass waiting on decode does not keep
// the decoders off the cores.
//
// Claims: the blocks are cut into one stretch per thread; each stretch has a counter tagged
// with the generation of the loop, and a thread takes blocks from its own stretch first (so its
// share of the data stays in its cache, loop after loop), then from the others'. A helper still
// busy with an old generation can never take a block of the next one (its tag differs), and the
// calling thread claims whatever no helper took, so it never waits for a helper that has not
// started. Which thread computes a block is not fixed: a loop's blocks must give the same result
// whoever computes them.
#pragma once

#include <tbb/task_group.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

namespace colflow::detail {

class block_team {
 public:
  // f(context, block, first_row, rows): one block of a loop. It must not throw.
  using block_function = void (*)(void*, std::size_t, std::size_t, std::size_t) noexcept;

  // The team computes blocks [first_block, first_block + blocks) of `rows` rows cut every
  // `block_rows`, on `threads` threads, the calling one among them.
  block_team(std::size_t rows, std::size_t block_rows, std::size_t first_block, std::size_t blocks,
             std::size_t threads);
  ~block_team();
  block_team(const block_team&) = delete;
  block_team& operator=(const block_team&) = delete;

  // Calls f once for every block, on the team's threads, and returns when all have returned.
  void run(block_function f, void* context) {
    start(f, context);
    finish();
  }

  // run() in two halves, so that the calling thread can do other work between them while the
  // helpers start on the blocks: start() hands the loop to the helpers and returns at once;
  // finish() computes the blocks no helper has taken and returns when all have returned. The
  // context must stay valid, and the data the blocks touch untouched by the caller, until
  // finish() returns. One loop at a time: every start() is followed by its finish().
  void start(block_function f, void* context);
  void finish();

  // The same with a callable f(block, first_row, rows).
  template <typename F>
  void for_each(F&& f) {
    run(trampoline<std::remove_reference_t<F>>, &f);
  }

  // start() with a callable, which must outlive the finish() that follows.
  template <typename F>
  void start_each(F& f) {
    start(trampoline<F>, &f);
  }

 private:
  template <typename F>
  static void trampoline(void* context, std::size_t b, std::size_t first_row,
                         std::size_t rows) noexcept {
    (*static_cast<F*>(context))(b, first_row, rows);
  }

  struct alignas(64) stretch {
    std::atomic<std::uint64_t> next{0};  // generation tag << 32 | next block
    std::size_t end = 0;
  };

  std::size_t claim(std::size_t t, std::uint64_t gen) noexcept;
  void work(std::size_t home, std::uint64_t gen, block_function f, void* context) noexcept;
  void serve(std::size_t h);

  const std::size_t rows_, block_rows_, first_block_, blocks_, threads_;
  std::unique_ptr<stretch[]> stretches_;
  std::unique_ptr<std::atomic<bool>[]> running_;  // [0] (the caller) unused
  std::uint64_t last_generation_ = 0;             // the caller's own copy
  block_function started_ = nullptr;              // the loop start() began, for finish()
  void* started_context_ = nullptr;
  alignas(64) std::atomic<std::uint64_t> generation_{0};
  std::atomic<block_function> function_{nullptr};
  std::atomic<void*> context_{nullptr};
  alignas(64) std::atomic<std::size_t> done_{0};
  std::atomic<bool> quit_{false};
  tbb::task_group group_;
};

}  // namespace colflow::detail
