// BlockStream: a store's columns streamed to Python in blocks of numpy arrays, decoded ahead by
// the library's flow graph on a producer thread, with memory bounded whatever Python's pace.
#include <sys/mman.h>

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "colflow/stream/column_stream.hpp"
#include "python_call.hpp"
#include "read_request.hpp"

using namespace nb::literals;

namespace colflow::python {
namespace {

// The memory of the stream's blocks, given back when Python frees a block's array and used
// again for a later block: a fresh block would be faulted in page by page and zeroed by the
// kernel, which dominated a pass's time. Reused blocks are already mapped; fresh ones of 2 MiB
// or more are asked for huge pages, as numpy asks for its large arrays.
class block_pool {
 public:
  struct memory {
    void* data = nullptr;
    std::size_t bytes = 0;
  };

  explicit block_pool(std::size_t keep) : keep_(keep) {}
  ~block_pool() {
    for (const memory& m : free_) std::free(m.data);
  }
  block_pool(const block_pool&) = delete;
  block_pool& operator=(const block_pool&) = delete;

  // At least `bytes` of memory, not initialised.
  memory take(std::size_t bytes) {
    {
      std::lock_guard lock(mutex_);
      for (auto it = free_.begin(); it != free_.end(); ++it)
        if (it->bytes >= bytes) {
          const memory m = *it;
          free_.erase(it);
          return m;
        }
    }
    // Blocks of 2 MiB and more take whole huge pages; smaller ones their own size, so that a
    // caller keeping many narrow blocks holds what they hold, not a huge page each.
    constexpr std::size_t huge = std::size_t{2} << 20, line = 64;
    const std::size_t unit = bytes >= huge ? huge : line;
    const std::size_t size = std::max(unit, (bytes + unit - 1) / unit * unit);
    void* data = std::aligned_alloc(unit, size);
    if (!data) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    if (unit == huge) madvise(data, size, MADV_HUGEPAGE);  // advice only: works without them
#endif
    return {data, size};
  }

  // Memory of a block Python no longer holds; kept for a later block up to `keep` of them.
  void give_back(memory m) noexcept {
    std::lock_guard lock(mutex_);
    if (free_.size() < keep_) {
      free_.push_back(m);
      return;
    }
    std::free(m.data);
  }

 private:
  std::mutex mutex_;
  std::vector<memory> free_;
  std::size_t keep_;
};

// What a BlockStream streams, as Python gave it.
struct stream_request {
  std::vector<std::int64_t> cols, rows;
  bool float64 = false, standardize = false;
  std::size_t block_columns = 0, prefetch = 0;
  int threads = 0;
};

// A stream of blocks for Python: a producer thread runs the library's column_stream (the flow
// graph decodes ahead in parallel, with bounded buffers) and copies each column into the block
// being filled; full blocks wait in a queue of at most `prefetch` for the Python iterator. The
// queue's bound is what keeps memory bounded when Python is slower than the engine: the kernel
// then waits, the graph's limiter stops admitting columns, and decoding pauses. Python takes
// blocks with the GIL released while it waits, so its own per-block work overlaps decoding.
class py_block_stream {
 public:
  py_block_stream(std::shared_ptr<const store> s, stream_request q)
      : store_(std::move(s)),
        rows_(std::move(q.rows)),
        float64_(q.float64),
        block_columns_(q.block_columns),
        prefetch_(q.prefetch) {
    order_.reserve(q.cols.size());
    for (std::int64_t j : q.cols) order_.push_back(static_cast<std::size_t>(j));
    r_.standardize = q.standardize;
    r_.rows = {rows_.data(), rows_.size()};
    resolve_rows(r_, *store_);
    producer_ = std::thread([this, threads = q.threads] { run_producer(threads); });
  }

  py_block_stream(const py_block_stream&) = delete;
  py_block_stream& operator=(const py_block_stream&) = delete;
  // The producer never touches Python, so joining it with the GIL held cannot deadlock.
  ~py_block_stream() { stop(); }

  // Stops the producer (the pass ends at its next column) and waits for it; idempotent.
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      queue_.clear();
      room_.notify_all();
    }
    if (producer_.joinable()) producer_.join();
  }

  void close() {
    nb::gil_scoped_release unlocked;
    stop();
  }

  // The next block as a numpy array in order "F", or None at the end; rethrows the pass's error.
  nb::object next() {
    std::unique_ptr<block> b = wait_for_block();
    if (!b) {
      std::exception_ptr e;
      {
        std::lock_guard lock(mutex_);
        std::swap(e, error_);
      }
      if (e) std::rethrow_exception(e);
      return nb::none();
    }
    return to_array(std::move(b));
  }

  // For the tests of the memory bound: the most full blocks ever waiting at once (never above
  // prefetch), and the most column_stream buffers ever in use (never above its in_flight).
  nb::dict memory() const {
    std::lock_guard lock(mutex_);
    nb::dict d;
    d["prefetch"] = prefetch_;
    d["peak_queued"] = peak_queued_;
    d["blocks_made"] = blocks_made_;
    d["in_flight"] = in_flight_;
    d["peak_buffers_in_use"] = peak_buffers_;
    return d;
  }

 private:
  // A block's values live in memory of the pool, which the block keeps alive: Python may free
  // the array after the stream is gone.
  struct block {
    std::size_t columns = 0;
    block_pool::memory values;
    std::shared_ptr<block_pool> pool;
    block(std::shared_ptr<block_pool> p, std::size_t bytes, std::size_t k)
        : columns(k), values(p->take(bytes)), pool(std::move(p)) {}
    block(const block&) = delete;
    block& operator=(const block&) = delete;
    ~block() { pool->give_back(values); }
  };

  // ---- the consumer side (Python's thread) ----------------------------------------------------

  // The next full block, waiting with the GIL released; null at the end or once stopped.
  std::unique_ptr<block> wait_for_block() {
    nb::gil_scoped_release unlocked;
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return !queue_.empty() || done_ || stopping_; });
    if (queue_.empty()) return nullptr;
    std::unique_ptr<block> b = std::move(queue_.front());
    queue_.pop_front();
    room_.notify_all();
    return b;
  }

  // A numpy array in order "F" owning `b`: its memory returns to the pool when Python frees it.
  nb::object to_array(std::unique_ptr<block> b) {
    const std::size_t rows = rows_.size(), k = b->columns;
    const std::int64_t strides[2] = {1, static_cast<std::int64_t>(rows)};
    const std::size_t shape[2] = {rows, k};
    block* raw = b.release();
    nb::capsule owner(raw, [](void* p) noexcept { delete static_cast<block*>(p); });
    if (float64_)
      return nb::cast(nb::ndarray<nb::numpy, double, nb::ndim<2>>(
          static_cast<double*>(raw->values.data), 2, shape, owner, strides));
    return nb::cast(nb::ndarray<nb::numpy, float, nb::ndim<2>>(
        static_cast<float*>(raw->values.data), 2, shape, owner, strides));
  }

  // ---- the producer side ----------------------------------------------------------------------

  // The producer thread's body: one pass, its error kept for next(), then the end marked.
  void run_producer(int threads) {
    try {
      in_arena(threads, [&] {
        // float64 blocks, and subset statistics of dense columns (which Store.read computes
        // from binary64 values), stream doubles; the rest floats.
        if (float64_ || (r_.subset_stats && store_->type() != value_type::genotype))
          produce<double>();
        else
          produce<float>();
      });
    } catch (...) {
      std::lock_guard lock(mutex_);
      error_ = std::current_exception();
    }
    std::lock_guard lock(mutex_);
    done_ = true;
    ready_.notify_all();
  }

  // Waits for room in the queue and adds `b`; false when the consumer has stopped the stream.
  bool push(std::unique_ptr<block> b) {
    std::unique_lock lock(mutex_);
    room_.wait(lock, [&] { return queue_.size() < prefetch_ || stopping_; });
    if (stopping_) return false;
    queue_.push_back(std::move(b));
    ++blocks_made_;
    peak_queued_ = std::max(peak_queued_, queue_.size());
    ready_.notify_all();
    return true;
  }

  // One pass over order_ with a column_stream<S>, filling blocks of the output type.
  template <typename S>
  void produce() {
    stream_options options;
    const bool genotype = store_->type() == value_type::genotype;
    // Subset statistics are computed here: genotype columns from their packed codes (no value
    // decode at all), dense ones from their stored values.
    options.values =
        r_.standardize && !r_.subset_stats ? decode_as::standardized : decode_as::stored;
    options.decode_values = !(r_.subset_stats && genotype);
    column_stream<S> stream(*store_, options);
    {
      std::lock_guard lock(mutex_);
      in_flight_ = stream.in_flight();
    }
    if (float64_)
      fill<S, double>(stream);
    else
      fill<S, float>(stream);
    std::lock_guard lock(mutex_);
    peak_buffers_ = stream.peak_buffers_in_use();
  }

  // The values a block takes from column `v`: the stream's, or, with subset statistics, the
  // column standardised over the selected rows in `full`.
  template <typename S>
  std::span<const S> column_values(const column_view<S>& v, std::vector<S>& full) const {
    std::span<const S> column(v.values.data(), static_cast<std::size_t>(v.values.size()));
    if (!r_.subset_stats) return column;
    full.resize(store_->num_rows());
    if (store_->type() == value_type::genotype)
      decode_subset_standardized<S>(v.codes, r_, std::span<S>(full));
    else
      standardize_subset<S, S>(column, r_, std::span<S>(full));
    return full;
  }

  // Copies the selected rows of `column` into `dst`.
  template <typename S, typename Out>
  void copy_rows(std::span<const S> column, Out* dst) const {
    const std::size_t rows = rows_.size();
    if (r_.rows_identity)
      for (std::size_t i = 0; i < rows; ++i) dst[i] = static_cast<Out>(column[i]);
    else
      for (std::size_t i = 0; i < rows; ++i)
        dst[i] = static_cast<Out>(column[static_cast<std::size_t>(rows_[i])]);
  }

  // Runs the pass, each column into its place in the current block; a full block goes to the
  // queue, and the pass ends early when the consumer has stopped the stream.
  template <typename S, typename Out>
  void fill(column_stream<S>& stream) {
    const std::size_t m = order_.size(), rows = rows_.size();
    std::unique_ptr<block> current;
    std::size_t filled = 0;  // columns of order_ already in blocks
    std::vector<S> full;     // a whole column, when the stream's values need work first
    auto start_block = [&] {
      const std::size_t k = std::min(block_columns_, m - filled);
      current = std::make_unique<block>(pool_, std::max<std::size_t>(1, rows * k) * sizeof(Out), k);
    };
    if (m == 0) return;
    start_block();
    stream.run(order_, [&](const column_view<S>& v) {
      const std::size_t k = v.position - filled;
      copy_rows<S, Out>(column_values(v, full), static_cast<Out*>(current->values.data) + k * rows);
      if (k + 1 < current->columns) return true;
      filled += current->columns;
      if (!push(std::move(current))) return false;  // the consumer stopped: end the pass
      if (filled < m) start_block();
      return true;
    });
  }

  std::shared_ptr<const store> store_;
  std::vector<std::size_t> order_;
  std::vector<std::int64_t> rows_;
  read_request r_;
  bool float64_;
  std::size_t block_columns_, prefetch_;

  mutable std::mutex mutex_;
  std::condition_variable ready_, room_;
  std::deque<std::unique_ptr<block>> queue_;
  bool done_ = false, stopping_ = false;
  std::exception_ptr error_;
  std::size_t peak_queued_ = 0, blocks_made_ = 0, in_flight_ = 0, peak_buffers_ = 0;
  // Blocks in the queue, the one being filled and the one Python works on can all be reused.
  std::shared_ptr<block_pool> pool_ = std::make_shared<block_pool>(prefetch_ + 2);
  std::thread producer_;  // last: started once every member above exists
};

void init_block_stream(py_block_stream* self, const py_store& s, index_array rows, index_array cols,
                       bool float64, bool standardize, std::size_t block_columns,
                       std::size_t prefetch, int threads) {
  if (block_columns == 0 || prefetch == 0)
    throw nb::value_error("block_columns and prefetch must be at least 1");
  stream_request q;
  q.cols.assign(cols.data(), cols.data() + cols.shape(0));
  q.rows.assign(rows.data(), rows.data() + rows.shape(0));
  q.float64 = float64;
  q.standardize = standardize;
  q.block_columns = block_columns;
  q.prefetch = prefetch;
  q.threads = threads;
  new (self) py_block_stream(s.get(), std::move(q));
}

}  // namespace

void bind_stream(nb::module_& m) {
  nb::class_<py_block_stream>(m, "BlockStream")
      .def("__init__", &init_block_stream, "store"_a, "rows"_a, "cols"_a, "float64"_a,
           "standardize"_a, "block_columns"_a, "prefetch"_a, "threads"_a)
      .def("next", &py_block_stream::next)
      .def("close", &py_block_stream::close)
      .def("memory", &py_block_stream::memory);
}

}  // namespace colflow::python
