// The streaming engine: the only file that includes the flow graph.
#include "colflow/stream/column_stream.hpp"

#include <tbb/concurrent_queue.h>
#include <tbb/flow_graph.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <exception>
#include <mutex>
#include <numeric>

#include "colflow/cancellation.hpp"
#include "colflow/error.hpp"

namespace colflow {

std::vector<std::size_t> all_columns(std::size_t n) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  return order;
}

template <typename T>
struct column_stream<T>::impl {
  using clock = std::chrono::steady_clock;

  // What decode leaves for compute about one column of a block.
  struct decoded {
    std::size_t column = 0, position = 0;
    column_stats stats;
    const T* values = nullptr;
    std::span<const std::uint8_t> codes;
    genotype_lut<T> lut{};
    // A decode failure, raised only if the kernel reaches this position: decoding runs
    // ahead, and a pass that stops earlier must not fail because of a column it never used.
    std::exception_ptr failure;
  };

  // One pooled buffer: room for a block of decoded columns and, for genotype stores, their codes.
  struct buffer {
    std::vector<T> values;
    std::vector<std::uint8_t> codes;
    std::vector<decoded> columns;  // filled by decode, read by compute
  };

  // A message: consecutive positions [first, first + count) of the order, and their buffer.
  struct block {
    std::size_t seq = 0, first = 0, count = 0;
    buffer* buf = nullptr;
  };

  const store& src;
  stream_options opt;
  std::uint64_t rows;
  std::size_t code_bytes, per_block, depth;
  bool genotype;

  std::vector<buffer> pool;
  tbb::concurrent_queue<buffer*> free_buffers;
  std::atomic<std::size_t> in_use{0}, peak_in_use{0};

  // The state of the running pass, read by the nodes.
  std::span<const std::size_t> order;
  const column_kernel<T>* kernel = nullptr;
  const batch_kernel<T>* batch = nullptr;  // instead of kernel, for run_batches
  std::vector<column_view<T>> views;       // a batch's views (compute is serial)
  std::atomic<bool> stop{false};
  std::size_t next_seq = 0, pass_block = 1;
  bool prefetching = false;  // the store asked for each column to be prefetched (prepare_pass)
  std::atomic<std::uint64_t> bytes_read{0};
  std::uint64_t columns_done = 0;
  double busy = 0;
  clock::time_point start, last_progress;
  std::function<void(const pass_progress&)> progress;

  tbb::flow::graph g;
  tbb::flow::input_node<block> source;
  tbb::flow::limiter_node<block> limiter;
  tbb::flow::function_node<block, block> decode;
  tbb::flow::sequencer_node<block> reorder;
  tbb::flow::function_node<block, tbb::flow::continue_msg> compute;

  impl(const store& s, const stream_options& o)
      : src(s),
        opt(o),
        rows(s.num_rows()),
        code_bytes(s.type() == value_type::genotype ? genotype_column_bytes(s.num_rows()) : 0),
        // Grouped by the bytes a block holds: values, or only codes for a genotype stream
        // that does not decode values.
        per_block(std::max<std::size_t>(
            1, o.block_bytes /
                   std::max<std::size_t>(1, s.type() == value_type::genotype && !o.decode_values
                                                ? genotype_column_bytes(s.num_rows())
                                                : rows * sizeof(T)))),
        depth(o.in_flight ? o.in_flight
                          : 2 * static_cast<std::size_t>(tbb::this_task_arena::max_concurrency())),
        genotype(s.type() == value_type::genotype),
        pool(depth),
        // In order, and pulled by the limiter only when it has room: this is the first
        // sequencer's job (no out-of-order message can fill the limiter and leave the second
        // sequencer waiting for a missing one), without buffering the whole order up front.
        source(g, [this](tbb::flow_control& fc) { return next_block(fc); }),
        limiter(g, depth),
        decode(g, o.decode_concurrency ? o.decode_concurrency : std::size_t{tbb::flow::unlimited},
               [this](block b) {
                 decode_block(b);
                 return b;
               }),
        reorder(g, [](const block& b) { return b.seq; }),
        // Serial: each kernel call reads the state (residuals) the previous column left.
        compute(g, tbb::flow::serial, [this](const block& b) {
          compute_block(b);
          return tbb::flow::continue_msg();
        }) {
    if (depth == 0) throw error(errc::invalid_argument, "in-flight depth must be at least 1");
    // A genotype buffer's codes are made on its first compressed frame (decode_column): the
    // frames of a store without compression are read where they are mapped.
    for (buffer& b : pool) {
      if (opt.decode_values) b.values.resize(per_block * rows);
      b.columns.resize(per_block);
    }
    tbb::flow::make_edge(source, limiter);
    tbb::flow::make_edge(limiter, decode);
    tbb::flow::make_edge(decode, reorder);
    tbb::flow::make_edge(reorder, compute);
    // The feedback edge: a finished block lets the limiter admit the next one.
    tbb::flow::make_edge(compute, limiter.decrementer());
    // Making the edges spawned forwarding tasks (the limiter offers itself to its new
    // successor). Finish them now: with no worker thread nobody else would, and the reset
    // before the first pass would drop them and leave that pass waiting forever.
    g.wait_for_all();
  }

  // Nothing may still run in the graph when the nodes it points to are destroyed.
  ~impl() { g.wait_for_all(); }

  block next_block(tbb::flow_control& fc) {
    const std::size_t first = next_seq * pass_block;
    if (stop.load(std::memory_order_relaxed) || first >= order.size()) {
      fc.stop();
      return {};
    }
    prefetch_ahead(first);
    return {next_seq++, first, std::min(pass_block, order.size() - first), nullptr};
  }

  // Positions [first, last) of the order start loading into the page cache.
  void prefetch(std::size_t first, std::size_t last) const {
    for (std::size_t pos = first; pos < std::min(last, order.size()); ++pos)
      src.prefetch(order[pos]);
  }

  // When prefetching, the block `depth` blocks after the one at position `first` starts
  // loading as that one is read: the frames arrive while the blocks between are computed.
  void prefetch_ahead(std::size_t first) const {
    if (!prefetching) return;
    const std::size_t ahead = first + depth * pass_block;
    prefetch(ahead, ahead + pass_block);
  }

  static error stopped_at(std::size_t pos) {
    return error(errc::cancelled, "stopped on request before position " + std::to_string(pos));
  }

  buffer* acquire() {
    buffer* b = nullptr;
    // The limiter admits at most `depth` blocks and the pool holds `depth` buffers, so one is
    // always free here.
    if (!free_buffers.try_pop(b)) throw error(errc::invalid_argument, "buffer pool exhausted");
    const std::size_t now = in_use.fetch_add(1) + 1;
    std::size_t peak = peak_in_use.load();
    while (now > peak && !peak_in_use.compare_exchange_weak(peak, now)) {
    }
    return b;
  }

  void release(buffer* b) {
    in_use.fetch_sub(1);
    free_buffers.push(b);
  }

  void decode_block(block& b) {
    b.buf = acquire();
    if (stop.load(std::memory_order_relaxed)) return;  // compute will skip it
    // Counted once a block: a locked add per column stalls a pass of short columns.
    std::uint64_t bytes = 0;
    struct count_on_exit {
      std::atomic<std::uint64_t>& total;
      const std::uint64_t& bytes;
      ~count_on_exit() { total.fetch_add(bytes, std::memory_order_relaxed); }
    } counted{bytes_read, bytes};
    for (std::size_t k = 0; k < b.count; ++k) {
      const std::size_t pos = b.first + k, j = order[pos];
      decoded& d = b.buf->columns[k];
      d.failure = nullptr;
      // A stop request ends decoding here (no point reading what will not be computed);
      // compute raises it on reaching this position, even if the request was withdrawn since.
      if (stop_requested()) {
        d.column = j;
        d.position = pos;
        d.failure = std::make_exception_ptr(stopped_at(pos));
        return;
      }
      try {
        bytes += decode_column(j, pos, *b.buf, k);
      } catch (const error& e) {
        d.column = j;
        d.position = pos;
        d.failure = std::make_exception_ptr(
            error(e.kind(), "position " + std::to_string(pos) + ": " + e.message()));
        return;  // the rest of the block is never reached
      } catch (...) {
        d.column = j;
        d.position = pos;
        d.failure = std::current_exception();
        return;
      }
    }
  }

  // Returns the bytes of the column's frame.
  std::uint64_t decode_column(std::size_t j, std::size_t pos, buffer& buf, std::size_t k) {
    const column_entry e = src.entry(j);
    decoded& v = buf.columns[k];
    v.column = j;
    v.position = pos;
    v.stats = e.stats;
    T* values = opt.decode_values ? buf.values.data() + k * rows : nullptr;
    if (genotype) {
      if (opt.verify_checksums) src.verify_checksum(j);
      std::span<const std::byte> mapped =
          e.codec == codec_id::none ? src.mapped_frame(j) : std::span<const std::byte>{};
      std::span<const std::uint8_t> codes;
      if (!mapped.empty()) {
        codes = {reinterpret_cast<const std::uint8_t*>(mapped.data()), mapped.size()};
      } else {
        if (buf.codes.empty()) buf.codes.resize(per_block * code_bytes);  // the block's own buffer
        std::uint8_t* dst = buf.codes.data() + k * code_bytes;
        src.read_payload(j, std::as_writable_bytes(std::span(dst, code_bytes)));
        codes = {dst, code_bytes};
      }
      v.codes = codes;
      if constexpr (std::is_same_v<T, double>) {
        v.lut = opt.values == decode_as::standardized ? standardized_lut(e.stats) : dosage_lut();
      } else {
        v.lut = opt.values == decode_as::standardized ? standardized_lut_f32(e.stats)
                                                      : dosage_lut_f32();
      }
      if (values) decode_genotypes(codes, v.lut, std::span(values, rows));
    } else if (values) {
      if (opt.verify_checksums) src.verify_checksum(j);
      src.read_column(j, std::span(values, rows), opt.values);
    }
    v.values = values;
    return e.frame_size;
  }

  // `next`: the codes of the column the kernel gets after this one, when known.
  column_view<T> view_of(const decoded& d, std::span<const std::uint8_t> next = {}) const {
    const auto values = static_cast<Eigen::Index>(d.values ? rows : 0);
    return {d.column, d.position, d.stats, {d.values, values}, d.codes, d.lut, next};
  }

  static error kernel_failure(const std::string& where, const std::exception& e) {
    if (const auto* ce = dynamic_cast<const error*>(&e))
      return error(ce->kind(), "kernel failed at " + where + ": " + ce->message());
    return error(errc::kernel_error, "kernel failed at " + where + ": " + e.what());
  }

  // Asks for the first cache lines of a column's codes without waiting: requested while the
  // column before it is computed, they spare the kernel a wait on each short frame that a
  // shuffled order reads from the mapping.
  static void cache_codes(const decoded& d) noexcept {
    const std::size_t bytes = std::min<std::size_t>(d.codes.size(), 4096);
    for (std::size_t at = 0; at < bytes; at += 64) __builtin_prefetch(d.codes.data() + at, 0, 3);
  }

  // The columns of a block one by one through the kernel; returns how many it computed.
  std::size_t compute_columns(const block& b) {
    for (std::size_t k = 0; k < b.count; ++k) {
      const decoded& d = b.buf->columns[k];
      if (k + 1 < b.count) cache_codes(b.buf->columns[k + 1]);
      // Between columns (one relaxed load): the pass fails with errc::cancelled through the
      // same path as a kernel error, which leaves the stream ready for the next pass.
      if (stop_requested()) throw stopped_at(b.first + k);
      if (d.failure) std::rethrow_exception(d.failure);
      bool go;
      // A failed pass leaves its buffers to begin(), which reclaims all of them.
      try {
        go = (*kernel)(view_of(
            d, k + 1 < b.count ? b.buf->columns[k + 1].codes : std::span<const std::uint8_t>()));
      } catch (const std::exception& e) {
        throw kernel_failure(
            "column " + std::to_string(d.column) + " (position " + std::to_string(d.position) + ")",
            e);
      }
      if (!go) {
        stop.store(true);
        return k + 1;
      }
    }
    return b.count;
  }

  // The block's columns in one batch-kernel call: those before the first that failed to
  // decode, whose failure is raised after them.
  std::size_t compute_batch(const block& b) {
    if (stop_requested()) throw stopped_at(b.first);
    views.clear();
    std::size_t usable = 0;
    for (; usable < b.count && !b.buf->columns[usable].failure; ++usable)
      views.push_back(view_of(b.buf->columns[usable]));
    if (usable > 0) {
      bool go;
      try {
        go = (*batch)(std::span<const column_view<T>>(views));
      } catch (const std::exception& e) {
        throw kernel_failure(
            "positions " + std::to_string(b.first) + " to " + std::to_string(b.first + usable - 1),
            e);
      }
      if (!go) {
        stop.store(true);
        return usable;
      }
    }
    if (usable < b.count) std::rethrow_exception(b.buf->columns[usable].failure);
    return b.count;
  }

  void compute_block(const block& b) {
    if (!stop.load(std::memory_order_relaxed)) {
      const auto t0 = clock::now();
      const std::size_t k = batch ? compute_batch(b) : compute_columns(b);
      // Codes of uncompressed genotype frames are read straight from the mapping by the
      // kernel: if the file shrank meanwhile they were zeros, and the pass must fail.
      src.check_mapping();
      const auto t1 = clock::now();
      busy += std::chrono::duration<double>(t1 - t0).count();
      columns_done += k;
      report(t1, false);
    }
    release(b.buf);
  }

  void report(clock::time_point now, bool final) {
    if (!progress) return;
    if (!final && now - last_progress < std::chrono::milliseconds(100)) return;
    last_progress = now;
    progress({columns_done, order.size(), bytes_read.load(),
              std::chrono::duration<double>(now - start).count()});
  }

  void begin(std::span<const std::size_t> o, const column_kernel<T>* k, const batch_kernel<T>* bk) {
    const std::size_t n = src.num_columns();
    for (std::size_t pos = 0; pos < o.size(); ++pos)
      if (o[pos] >= n)
        throw error(errc::invalid_argument, "order position " + std::to_string(pos) +
                                                " names column " + std::to_string(o[pos]) +
                                                ", past the last of " + std::to_string(n));
    order = o;
    kernel = k;
    batch = bk;
    // Short passes still pipeline: at least two blocks per buffer when the order allows.
    pass_block =
        std::max<std::size_t>(1, std::min(per_block, (o.size() + 2 * depth - 1) / (2 * depth)));
    prefetching = src.prepare_pass(o);
    if (prefetching) prefetch(0, depth * pass_block);
    stop = false;
    next_seq = 0;
    bytes_read = 0;
    columns_done = 0;
    busy = 0;
    // Every buffer is free at the start of a pass, whatever the last one did.
    buffer* b;
    while (free_buffers.try_pop(b)) {
    }
    for (buffer& buf : pool) free_buffers.push(&buf);
    in_use = 0;
    start = last_progress = clock::now();
  }

  pass_stats finish() {
    const auto end = clock::now();
    report(end, true);
    pass_stats s;
    s.columns = columns_done;
    s.bytes_read = bytes_read.load();
    s.bytes_decoded = opt.decode_values ? columns_done * rows * sizeof(T) : 0;
    s.wall_seconds = std::chrono::duration<double>(end - start).count();
    s.compute_busy_seconds = busy;
    s.compute_wait_seconds = std::max(0.0, s.wall_seconds - busy);
    s.stopped_early = stop.load();
    return s;
  }

  pass_stats run(std::span<const std::size_t> o, const column_kernel<T>* k,
                 const batch_kernel<T>* bk) {
    begin(o, k, bk);
    // A reset graph starts clean: limiter count 0, sequencer expecting block 0, source idle.
    g.reset();
    source.activate();
    try {
      g.wait_for_all();
    } catch (...) {
      g.reset();  // drop what the cancelled pass left in the nodes
      throw;
    }
    return finish();
  }

  pass_stats run_sequential(std::span<const std::size_t> o, const column_kernel<T>* k,
                            const batch_kernel<T>* bk) {
    begin(o, k, bk);
    for (std::size_t pos = 0; pos < o.size() && !stop; pos += pass_block) {
      block b{pos / pass_block, pos, std::min(pass_block, o.size() - pos), nullptr};
      prefetch_ahead(pos);
      decode_block(b);
      compute_block(b);
    }
    return finish();
  }
};

template <typename T>
column_stream<T>::column_stream(const store& source, const stream_options& options)
    : impl_(std::make_unique<impl>(source, options)) {}
template <typename T>
column_stream<T>::column_stream(column_stream&&) noexcept = default;
template <typename T>
column_stream<T>& column_stream<T>::operator=(column_stream&&) noexcept = default;
template <typename T>
column_stream<T>::~column_stream() = default;

template <typename T>
pass_stats column_stream<T>::run(std::span<const std::size_t> order,
                                 const column_kernel<T>& kernel) {
  return impl_->run(order, &kernel, nullptr);
}

template <typename T>
pass_stats column_stream<T>::run_batches(std::span<const std::size_t> order,
                                         const batch_kernel<T>& kernel) {
  return impl_->run(order, nullptr, &kernel);
}

template <typename T>
pass_stats column_stream<T>::run_sequential(std::span<const std::size_t> order,
                                            const column_kernel<T>& kernel) {
  return impl_->run_sequential(order, &kernel, nullptr);
}

template <typename T>
pass_stats column_stream<T>::run_batches_sequential(std::span<const std::size_t> order,
                                                    const batch_kernel<T>& kernel) {
  return impl_->run_sequential(order, nullptr, &kernel);
}

template <typename T>
void column_stream<T>::on_progress(std::function<void(const pass_progress&)> callback) {
  impl_->progress = std::move(callback);
}

template <typename T>
const store& column_stream<T>::source() const noexcept {
  return impl_->src;
}
template <typename T>
const stream_options& column_stream<T>::options() const noexcept {
  return impl_->opt;
}
template <typename T>
std::size_t column_stream<T>::in_flight() const noexcept {
  return impl_->depth;
}
template <typename T>
std::size_t column_stream<T>::columns_per_block() const noexcept {
  return impl_->per_block;
}
template <typename T>
std::size_t column_stream<T>::peak_buffers_in_use() const noexcept {
  return impl_->peak_in_use.load();
}

template class column_stream<double>;
template class column_stream<float>;

}  // namespace colflow
