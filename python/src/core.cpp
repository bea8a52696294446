// colflow._core: the nanobind extension under the Python package. It holds only what must be
// native: opening a store, decoding selected cells into a numpy buffer that Python allocated,
// and the conversion of inputs into a store. Index resolution, dtype and order checks, DataFrames
// and the exception classes live in Python (colflow/__init__.py, colflow/_errors.py), where
// they can follow bed-reader and numpy exactly.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <sys/mman.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "colflow/analysis/assoc.hpp"
#include "colflow/analysis/bayesr.hpp"
#include "colflow/analysis/case_control.hpp"
#include "colflow/analysis/pca.hpp"
#include "colflow/analysis/penalized.hpp"
#include "colflow/analysis/phenotype.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/analysis/sex_chromosomes.hpp"
#include "colflow/analysis/stats.hpp"
#include "colflow/cancellation.hpp"
#include "colflow/codec/codec.hpp"
#include "colflow/codec/genotype_codec.hpp"
#include "colflow/error.hpp"
#include "colflow/kernels/genotype_kernels.hpp"
#include "colflow/preprocess/converter.hpp"
#include "colflow/preprocess/inputs.hpp"
#include "colflow/preprocess/matrix_source.hpp"
#include "colflow/store/store.hpp"
#include "colflow/store/store_writer.hpp"
#include "colflow/stream/column_stream.hpp"
#include "colflow/version.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace colflow::python {
namespace {

// Raises the Python class colflow._errors picks for the code, with the library's message
// (without std::system_error's category suffix) and the code's name as `kind`.
void raise_colflow_error(const error& e) {
  nb::object errors = nb::module_::import_("colflow._errors");
  const std::string kind(errc_name(e.kind()));
  nb::object cls = errors.attr("class_for")(kind);
  nb::object exc = cls(e.message());
  exc.attr("kind") = nb::str(kind.c_str());
  PyErr_SetObject(cls.ptr(), exc.ptr());
}

// Runs `f` in an arena of `threads` workers (0: oneTBB's default, every core).
template <typename F>
void in_arena(int threads, F&& f) {
  if (threads <= 0) {
    f();
    return;
  }
  tbb::task_arena arena(threads);
  arena.execute(f);
}

// A long call from Python (an analysis, a conversion): the work runs on a thread of its own,
// without the GIL, while the calling thread waits and wakes every 50 ms to run Python's signal
// handlers and to report progress. Ctrl-C thus raises KeyboardInterrupt from a handler there
// (or the progress callback raises); the library's process-wide stop request
// (cancellation.hpp) then ends the work at its next column, removing the outputs it was
// writing, and once it has ended the request is withdrawn and the Python exception raised.
class python_call {
 public:
  // `progress`: None, or a callable (label, done, total, unit) called on the calling thread
  // with the latest progress when it changed. `passes`: the labels of the passes to report
  // (empty: every one); the steps of an outer loop (BayesR's chain, a penalised path) always.
  python_call(nb::object progress, std::set<std::string> passes)
      : progress_(std::move(progress)), passes_(std::move(passes)) {}

  // The analysis options reporting progress to this call.
  analysis_options options() {
    analysis_options o;
    if (progress_.is_none()) return o;
    o.progress = [this](const std::string& label, const pass_progress& p) {
      if (passes_.empty() || passes_.count(label))
        note(label, p.columns_done, p.columns_total, "columns");
    };
    o.on_step = [this](const std::string& label, const loop_progress& p) {
      note(label, p.done, p.total, label == "chain" ? "iterations" : "lambda values");
    };
    return o;
  }

  // Reports progress from any thread (the latest report wins).
  void note(const std::string& label, std::uint64_t done, std::uint64_t total, const char* unit) {
    std::lock_guard lock(mutex_);
    label_ = label;
    unit_ = unit;
    done_ = done;
    total_ = total;
    fresh_ = true;
  }

  // Runs `work` in an arena of `threads` (0: every core) and returns when it has ended; called
  // with the GIL held. Rethrows the work's exception, or the Python one that stopped it.
  template <typename F>
  void run(int threads, F&& work) {
    std::exception_ptr failure;
    bool finished = false;
    std::thread worker([&] {
      try {
        in_arena(threads, work);
      } catch (...) {
        failure = std::current_exception();
      }
      std::lock_guard lock(mutex_);
      finished = true;
      ended_.notify_all();
    });
    std::exception_ptr interrupted;
    for (bool over = false; !over;) {
      {
        nb::gil_scoped_release unlocked;
        std::unique_lock lock(mutex_);
        over = ended_.wait_for(lock, std::chrono::milliseconds(50), [&] { return finished; });
      }
      try {
        report();
        if (PyErr_CheckSignals() != 0) throw nb::python_error();
      } catch (...) {
        interrupted = std::current_exception();
        request_stop();
        break;
      }
    }
    {
      nb::gil_scoped_release unlocked;
      worker.join();
    }
    if (interrupted) {
      clear_stop_request();
      std::rethrow_exception(interrupted);
    }
    if (failure) std::rethrow_exception(failure);
  }

 private:
  // Calls the progress callback with the latest report, if it is new (GIL held).
  void report() {
    if (progress_.is_none()) return;
    std::string label, unit;
    std::uint64_t done = 0, total = 0;
    {
      std::lock_guard lock(mutex_);
      if (!fresh_) return;
      fresh_ = false;
      label = label_;
      unit = unit_;
      done = done_;
      total = total_;
    }
    progress_(label, done, total, unit);
  }

  nb::object progress_;
  std::set<std::string> passes_;
  std::mutex mutex_;
  std::condition_variable ended_;
  std::string label_, unit_;
  std::uint64_t done_ = 0, total_ = 0;
  bool fresh_ = false;
};

using index_array = nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// What one read asks for, resolved once before the columns are decoded in parallel.
struct read_request {
  std::span<const std::int64_t> rows, cols;
  bool standardize = false;
  bool rows_identity = false;  // rows are 0, 1, ..., n-1: columns decode in place
  // Standardise over the distinct selected rows, not every row (docs/DESIGN.md §2 statistics
  // of a subset, as the analyses compute them after --keep/--remove).
  bool subset_stats = false;
  std::vector<std::uint8_t> kept;  // per store row, 1 if selected (subset_stats only)
  std::vector<std::uint8_t> mask;  // make_sample_mask(kept), genotype stores
  std::uint64_t kept_count = 0;
};

// Decodes store column j, every row, into `full`: stored values or values standardised with
// the index's statistics through the store's own decode, or standardised with the statistics
// of the selected rows.
template <typename T>
void decode_column(const store& s, const read_request& r, std::size_t j, std::span<T> full,
                   std::vector<std::uint8_t>& codes, std::vector<double>& scratch) {
  if (!r.subset_stats) {
    s.read_column(j, full, r.standardize ? decode_as::standardized : decode_as::stored);
    return;
  }
  const std::size_t n = full.size();
  if (s.type() == value_type::genotype) {
    // The counts of the selected samples on the packed codes, as selected_stats does, then
    // the store's own lookup-table decode with the resulting table.
    codes.resize(genotype_column_bytes(n));
    s.read_payload(j, std::as_writable_bytes(std::span<std::uint8_t>(codes)));
    const column_stats st = genotype_stats(count_genotypes(codes, n, r.mask), r.kept_count);
    if constexpr (std::is_same_v<T, float>)
      decode_genotypes(codes, standardized_lut_f32(st), full);
    else
      decode_genotypes(codes, standardized_lut(st), full);
    return;
  }
  // Dense and dosage columns: the statistics of the selected stored values (dense_stats, as the
  // analyses take them), each value standardised in binary64 then rounded to T.
  scratch.resize(n);
  s.read_column(j, std::span<double>(scratch), decode_as::stored);
  std::vector<double> selected;
  selected.reserve(r.kept_count);
  for (std::size_t i = 0; i < n; ++i)
    if (r.kept[i]) selected.push_back(scratch[i]);
  const column_stats st = dense_stats(selected);
  const bool constant = !(st.sd > 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const double x = scratch[i];
    full[i] = constant || std::isnan(x) ? T(0) : static_cast<T>((x - st.mean) / st.sd);
  }
}

// A decoded value as the output type: int8 outputs hold genotype counts, -127 for missing
// (bed-reader's convention).
template <typename Out, typename T>
inline Out convert(T x) {
  if constexpr (std::is_same_v<Out, std::int8_t>)
    return std::isnan(x) ? std::int8_t{-127} : static_cast<std::int8_t>(x);
  else
    return static_cast<Out>(x);
}

// Fills out[i * row_stride + k * col_stride] with row rows[i] of column cols[k]. Columns are
// spread over the threads in blocks; a block is decoded into a scratch buffer and then written
// a row at a time in order "C", so the writes are contiguous runs in either order.
template <typename Out>
void read_cells(const store& s, const read_request& r, Out* out, std::ptrdiff_t row_stride,
                std::ptrdiff_t col_stride) {
  // Values are decoded as float for float32 and int8 outputs (int8 from the stored float
  // counts), as double for float64.
  using T = std::conditional_t<std::is_same_v<Out, double>, double, float>;
  const std::size_t n = s.num_rows();
  const std::size_t m = r.cols.size();
  const std::size_t out_rows = r.rows.size();
  // Order "F" (unit row stride) with every row in order: each column decodes straight into
  // its place in the numpy buffer.
  const bool in_place = std::is_same_v<Out, T> && row_stride == 1 && r.rows_identity;
  // About 1 MiB of scratch per block in order "C", one column per block otherwise.
  const std::size_t block =
      row_stride == 1
          ? 1
          : std::clamp<std::size_t>((std::size_t{1} << 20) / (sizeof(T) * n + 1), 1, 64);
  const std::size_t blocks = (m + block - 1) / block;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks), [&](const auto& range) {
    std::vector<T> values;
    std::vector<std::uint8_t> codes;
    std::vector<double> scratch;
    for (std::size_t b = range.begin(); b != range.end(); ++b) {
      const std::size_t k0 = b * block, k1 = std::min(m, k0 + block);
      if (in_place) {
        for (std::size_t k = k0; k < k1; ++k) {
          if constexpr (std::is_same_v<Out, T>) {
            T* column = out + static_cast<std::ptrdiff_t>(k) * col_stride;
            decode_column<T>(s, r, static_cast<std::size_t>(r.cols[k]), {column, n}, codes,
                             scratch);
          }
        }
        continue;
      }
      values.resize((k1 - k0) * n);
      for (std::size_t k = k0; k < k1; ++k)
        decode_column<T>(s, r, static_cast<std::size_t>(r.cols[k]),
                         std::span<T>(values).subspan((k - k0) * n, n), codes, scratch);
      if (row_stride == 1) {
        for (std::size_t k = k0; k < k1; ++k) {
          const T* column = values.data() + (k - k0) * n;
          Out* dst = out + static_cast<std::ptrdiff_t>(k) * col_stride;
          for (std::size_t i = 0; i < out_rows; ++i) dst[i] = convert<Out>(column[r.rows[i]]);
        }
      } else {
        for (std::size_t i = 0; i < out_rows; ++i) {
          Out* dst = out + static_cast<std::ptrdiff_t>(i) * row_stride;
          const auto row = static_cast<std::size_t>(r.rows[i]);
          for (std::size_t k = k0; k < k1; ++k)
            dst[static_cast<std::ptrdiff_t>(k) * col_stride] =
                convert<Out>(values[(k - k0) * n + row]);
        }
      }
    }
  });
}

// An open store, shared with any read in progress so that close() from another thread never
// pulls it from under a decode running without the GIL.
class py_store {
 public:
  explicit py_store(const std::string& path)
      : path_(path), store_(std::make_shared<const store>(store::open(path))) {}

  std::shared_ptr<const store> get() const {
    if (!store_) throw nb::value_error("I/O operation on a closed colflow store");
    return store_;
  }
  void close() { store_.reset(); }
  bool closed() const { return !store_; }
  const std::string& path() const { return path_; }

  nb::dict samples() const {
    const auto s = get();
    const auto& samples = s->samples();
    std::vector<std::string> fields[6];
    for (auto& f : fields) f.reserve(samples.size());
    for (const sample_info& x : samples) {
      fields[0].push_back(x.fid);
      fields[1].push_back(x.iid);
      fields[2].push_back(x.father);
      fields[3].push_back(x.mother);
      fields[4].push_back(x.sex);
      fields[5].push_back(x.phenotype);
    }
    nb::dict d;
    const char* names[] = {"fid", "iid", "father", "mother", "sex", "phenotype"};
    for (int f = 0; f < 6; ++f) d[names[f]] = nb::cast(fields[f]);
    return d;
  }

  nb::dict columns() const {
    const auto s = get();
    const auto& columns = s->columns();
    std::vector<std::string> fields[6];
    for (auto& f : fields) f.reserve(columns.size());
    for (const column_info& x : columns) {
      fields[0].push_back(x.chrom);
      fields[1].push_back(x.id);
      fields[2].push_back(x.cm);
      fields[3].push_back(x.pos);
      fields[4].push_back(x.a1);
      fields[5].push_back(x.a2);
    }
    nb::dict d;
    const char* names[] = {"chrom", "id", "cm", "pos", "a1", "a2"};
    for (int f = 0; f < 6; ++f) d[names[f]] = nb::cast(fields[f]);
    return d;
  }

  // The keys and values of `colflow info --json` (cli/cmd_info.cpp).
  nb::dict info() const {
    const auto s = get();
    const store_summary sum = s->summary();
    nb::dict codecs;
    for (const codec_traits& t : all_codecs()) {
      const auto n = sum.columns_per_codec[static_cast<std::uint8_t>(t.id)];
      if (n != 0) codecs[nb::str(t.name.data(), t.name.size())] = n;
    }
    nb::dict d;
    d["path"] = path_;
    d["format_version"] =
        std::to_string(format_version_major) + "." + std::to_string(format_minor_for(sum.type));
    d["store_id"] = s->store_id_text();
    d["rows"] = sum.rows;
    d["columns"] = sum.columns;
    const std::string_view type = value_type_name(sum.type);
    d["value_type"] = nb::str(type.data(), type.size());
    d["codecs"] = codecs;
    d["data_bytes"] = sum.data_bytes;
    d["index_bytes"] = sum.index_bytes;
    d["decoded_bytes"] = sum.decoded_bytes;
    d["float64_bytes"] = static_cast<std::uint64_t>(sum.float64_bytes());
    d["compression_ratio"] = sum.compression_ratio();
    d["ratio_vs_float64"] = sum.ratio_vs_float64();
    d["source"] = sum.source;
    return d;
  }

  // Fills `out` (rows.size() x cols.size(), allocated by the caller in order "F" or "C") with
  // the selected cells. The indices must be in range: Python resolved them with numpy.
  void read_into(index_array rows, index_array cols, nb::ndarray<nb::ndim<2>, nb::device::cpu> out,
                 bool standardize, int threads) const {
    const auto s = get();
    read_request r;
    r.rows = {rows.data(), rows.shape(0)};
    r.cols = {cols.data(), cols.shape(0)};
    r.standardize = standardize;
    if (out.shape(0) != r.rows.size() || out.shape(1) != r.cols.size())
      throw nb::value_error("read_into: the output's shape does not match the selection");
    const std::uint64_t n = s->num_rows();
    for (std::int64_t i : r.rows)
      if (i < 0 || static_cast<std::uint64_t>(i) >= n)
        throw nb::index_error(("row index " + std::to_string(i) + " is out of bounds for " +
                               std::to_string(n) + " rows")
                                  .c_str());
    for (std::int64_t j : r.cols)
      if (j < 0 || static_cast<std::uint64_t>(j) >= s->num_columns())
        throw nb::index_error(("column index " + std::to_string(j) + " is out of bounds for " +
                               std::to_string(s->num_columns()) + " columns")
                                  .c_str());
    const bool is_float32 = out.dtype() == nb::dtype<float>();
    const bool is_float64 = out.dtype() == nb::dtype<double>();
    const bool is_int8 = out.dtype() == nb::dtype<std::int8_t>();
    if (!is_float32 && !is_float64 && !is_int8)
      throw nb::type_error("read_into: the output must be float32, float64 or int8");
    if (is_int8 && (standardize || s->type() != value_type::genotype))
      throw nb::value_error("int8 holds genotype counts: a genotype store, not standardised");
    if (r.rows.empty() || r.cols.empty()) return;

    r.rows_identity = r.rows.size() == n;
    for (std::size_t i = 0; r.rows_identity && i < n; ++i)
      r.rows_identity = static_cast<std::uint64_t>(r.rows[i]) == i;
    if (standardize && !r.rows_identity) {
      r.kept.assign(n, 0);
      for (std::int64_t i : r.rows) r.kept[static_cast<std::size_t>(i)] = 1;
      r.kept_count = static_cast<std::uint64_t>(std::count(r.kept.begin(), r.kept.end(), 1));
      // Every row selected (a permutation, repeats): the index's statistics are the subset's.
      r.subset_stats = r.kept_count != n;
      if (r.subset_stats && s->type() == value_type::genotype) r.mask = make_sample_mask(r.kept);
    }

    const auto rs = static_cast<std::ptrdiff_t>(out.stride(0));
    const auto cs = static_cast<std::ptrdiff_t>(out.stride(1));
    const bool f_order = rs == 1 && cs == static_cast<std::ptrdiff_t>(r.rows.size());
    const bool c_order = cs == 1 && rs == static_cast<std::ptrdiff_t>(r.cols.size());
    if (!f_order && !c_order)
      throw nb::value_error("read_into: the output must be a contiguous array, order F or C");

    void* data = out.data();
    nb::gil_scoped_release unlocked;
    in_arena(threads, [&] {
      if (is_float32)
        read_cells(*s, r, static_cast<float*>(data), rs, cs);
      else if (is_float64)
        read_cells(*s, r, static_cast<double*>(data), rs, cs);
      else
        read_cells(*s, r, static_cast<std::int8_t*>(data), rs, cs);
    });
  }

 private:
  std::string path_;
  std::shared_ptr<const store> store_;
};

// The memory of the stream's blocks, given back when Python frees a block's array and used
// again for a later block. A fresh block of 1,000 columns of 10,000 samples is 40 MB that the
// kernel would fault in page by page (4 KiB pages unless asked otherwise) and zero: three
// quarters of a pass's time in a profile. Reused blocks are already mapped; fresh ones are
// asked for huge pages, as numpy asks for its large arrays.
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
    constexpr std::size_t huge = std::size_t{2} << 20;
    const std::size_t size = std::max<std::size_t>(huge, (bytes + huge - 1) / huge * huge);
    void* data = std::aligned_alloc(huge, size);
    if (!data) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    madvise(data, size, MADV_HUGEPAGE);  // advice only: without huge pages it still works
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

// A stream of blocks for Python: a producer thread runs the library's column_stream (the flow
// graph decodes ahead in parallel, with bounded buffers) and copies each column into the block
// being filled; full blocks wait in a queue of at most `prefetch` for the Python iterator. The
// queue's bound is what keeps memory bounded when Python is slower than the engine: the kernel
// then waits, the graph's limiter stops admitting columns, and decoding pauses. Python takes
// blocks with the GIL released while it waits, so its own per-block work overlaps decoding.
class py_block_stream {
 public:
  py_block_stream(std::shared_ptr<const store> s, std::vector<std::int64_t> cols,
                  std::vector<std::int64_t> rows, bool float64, bool standardize,
                  std::size_t block_columns, std::size_t prefetch, int threads)
      : store_(std::move(s)),
        rows_(std::move(rows)),
        float64_(float64),
        block_columns_(block_columns),
        prefetch_(prefetch) {
    order_.reserve(cols.size());
    for (std::int64_t j : cols) order_.push_back(static_cast<std::size_t>(j));
    const std::size_t n = store_->num_rows();
    r_.standardize = standardize;
    r_.rows = {rows_.data(), rows_.size()};
    r_.rows_identity = rows_.size() == n;
    for (std::size_t i = 0; r_.rows_identity && i < n; ++i)
      r_.rows_identity = static_cast<std::uint64_t>(rows_[i]) == i;
    if (standardize && !r_.rows_identity && !rows_.empty()) {
      // The statistics of the selected rows, as Store.read takes them (each row once).
      r_.kept.assign(n, 0);
      for (std::int64_t i : rows_) r_.kept[static_cast<std::size_t>(i)] = 1;
      r_.kept_count = static_cast<std::uint64_t>(std::count(r_.kept.begin(), r_.kept.end(), 1));
      r_.subset_stats = r_.kept_count != n;
      if (r_.subset_stats && store_->type() == value_type::genotype)
        r_.mask = make_sample_mask(r_.kept);
    }
    producer_ = std::thread([this, threads] {
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
    });
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
    std::unique_ptr<block> b;
    {
      nb::gil_scoped_release unlocked;
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return !queue_.empty() || done_ || stopping_; });
      if (!queue_.empty()) {
        b = std::move(queue_.front());
        queue_.pop_front();
        room_.notify_all();
      }
    }
    if (!b) {
      std::exception_ptr e;
      {
        std::lock_guard lock(mutex_);
        std::swap(e, error_);
      }
      if (e) std::rethrow_exception(e);
      return nb::none();
    }
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

  template <typename S, typename Out>
  void fill(column_stream<S>& stream) {
    const std::size_t n = store_->num_rows(), m = order_.size(), rows = rows_.size();
    const bool genotype = store_->type() == value_type::genotype;
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
      std::span<const S> column(v.values.data(), static_cast<std::size_t>(v.values.size()));
      if (r_.subset_stats) {
        full.resize(n);
        if (genotype) {
          const column_stats st =
              genotype_stats(count_genotypes(v.codes, n, r_.mask), r_.kept_count);
          if constexpr (std::is_same_v<S, float>)
            decode_genotypes(v.codes, standardized_lut_f32(st), std::span<float>(full));
          else
            decode_genotypes(v.codes, standardized_lut(st), std::span<double>(full));
        } else {
          std::vector<double> selected;
          selected.reserve(r_.kept_count);
          for (std::size_t i = 0; i < n; ++i)
            if (r_.kept[i]) selected.push_back(static_cast<double>(column[i]));
          const column_stats st = dense_stats(selected);
          const bool constant = !(st.sd > 0.0);
          for (std::size_t i = 0; i < n; ++i) {
            const double x = static_cast<double>(column[i]);
            full[i] = constant || std::isnan(x) ? S(0) : static_cast<S>((x - st.mean) / st.sd);
          }
        }
        column = full;
      }
      const std::size_t k = v.position - filled;
      Out* dst = static_cast<Out*>(current->values.data) + k * rows;
      if (r_.rows_identity)
        for (std::size_t i = 0; i < rows; ++i) dst[i] = static_cast<Out>(column[i]);
      else
        for (std::size_t i = 0; i < rows; ++i)
          dst[i] = static_cast<Out>(column[static_cast<std::size_t>(rows_[i])]);
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

// The samples and columns an analysis uses, from indices Python resolved (any order, repeats):
// the library's selections are sets, in increasing order.
selection make_selection(const store& s, std::span<const std::int64_t> rows,
                         std::span<const std::int64_t> cols) {
  selection sel;
  sel.row_kept.assign(s.num_rows(), 0);
  for (std::int64_t i : rows) sel.row_kept[static_cast<std::size_t>(i)] = 1;
  for (std::size_t i = 0; i < sel.row_kept.size(); ++i)
    if (sel.row_kept[i]) sel.rows.push_back(i);
  std::vector<std::uint8_t> col_kept(s.num_columns(), 0);
  for (std::int64_t j : cols) col_kept[static_cast<std::size_t>(j)] = 1;
  for (std::size_t j = 0; j < col_kept.size(); ++j)
    if (col_kept[j]) sel.columns.push_back(j);
  if (sel.rows.empty()) throw nb::value_error("no sample selected");
  if (sel.columns.empty()) throw nb::value_error("no column selected");
  return sel;
}

// A new numpy array owning `v`.
template <typename T>
nb::object to_numpy(std::vector<T> v) {
  auto* owned = new std::vector<T>(std::move(v));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  const std::size_t shape[1] = {owned->size()};
  return nb::cast(nb::ndarray<nb::numpy, T, nb::ndim<1>>(owned->data(), 1, shape, owner));
}

// A column-major Eigen matrix as a new numpy array in order "F" (copied once, owned).
nb::object to_numpy(const Eigen::MatrixXd& m) {
  auto* owned = new Eigen::MatrixXd(m);
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<Eigen::MatrixXd*>(p); });
  const std::size_t shape[2] = {static_cast<std::size_t>(owned->rows()),
                                static_cast<std::size_t>(owned->cols())};
  const std::int64_t strides[2] = {1, static_cast<std::int64_t>(owned->rows())};
  return nb::cast(
      nb::ndarray<nb::numpy, double, nb::ndim<2>>(owned->data(), 2, shape, owner, strides));
}

// `colflow stats`: the column_summaries of the selection, a numpy array per field, and the
// selected columns (increasing).
nb::dict stats(const py_store& ps, index_array rows, index_array cols, int threads,
               nb::object progress) {
  const auto s = ps.get();
  const selection sel =
      make_selection(*s, {rows.data(), rows.shape(0)}, {cols.data(), cols.shape(0)});
  std::vector<column_summary> sums;
  python_call call(std::move(progress), {});
  const analysis_options options = call.options();
  call.run(threads, [&] { sums = column_summaries(*s, sel, options); });
  const std::size_t m = sums.size();
  std::vector<std::uint64_t> observed(m), missing(m);
  std::vector<double> a1_freq(m), mean(m), sd(m), min(m), max(m);
  for (std::size_t k = 0; k < m; ++k) {
    observed[k] = sums[k].observed;
    missing[k] = sums[k].missing;
    a1_freq[k] = sums[k].a1_freq;
    mean[k] = sums[k].mean;
    sd[k] = sums[k].sd;
    min[k] = sums[k].min;
    max[k] = sums[k].max;
  }
  std::vector<std::int64_t> columns(sel.columns.begin(), sel.columns.end());
  nb::dict d;
  d["column"] = to_numpy(std::move(columns));
  d["observed"] = to_numpy(std::move(observed));
  d["missing"] = to_numpy(std::move(missing));
  d["a1_freq"] = to_numpy(std::move(a1_freq));
  d["mean"] = to_numpy(std::move(mean));
  d["sd"] = to_numpy(std::move(sd));
  d["min"] = to_numpy(std::move(min));
  d["max"] = to_numpy(std::move(max));
  return d;
}

using table_array = nb::ndarray<const double, nb::ndim<2>, nb::f_contig, nb::device::cpu>;

// Store rows x names of values (NaN missing), as read_phenotypes makes them from a file.
phenotype_table make_table(table_array values, const std::vector<std::string>& names,
                           std::size_t n) {
  if (values.shape(0) != n || values.shape(1) != names.size())
    throw nb::value_error("a table of values must have one row per store sample");
  phenotype_table t;
  t.names = names;
  t.values = Eigen::Map<const Eigen::MatrixXd>(values.data(), static_cast<Eigen::Index>(n),
                                               static_cast<Eigen::Index>(names.size()));
  t.file_samples = t.matched_samples = n;
  return t;
}

// The samples' sexes: the store's, replaced where `codes` (one per store sample, or none) has
// a code, read as plink2 --update-sex reads one (the command's --sex FILE).
std::vector<sample_sex> sexes_with(const store& s,
                                   const std::optional<std::vector<std::string>>& codes) {
  std::vector<sample_sex> sexes = sexes_of(s.samples());
  if (!codes) return sexes;
  if (codes->size() != sexes.size()) throw nb::value_error("one sex per store sample");
  for (std::size_t i = 0; i < sexes.size(); ++i) {
    const std::string& code = (*codes)[i];
    if (code.empty()) continue;
    const std::optional<sample_sex> sex = sex_of_code(code);
    if (!sex)
      throw nb::value_error(("sample " + s.samples()[i].iid + ": '" + code +
                             "' is not a sex code (1/M male, 2/F female, 0/NA unknown)")
                                .c_str());
    sexes[i] = *sex;
  }
  return sexes;
}

// `colflow assoc`: per phenotype, the model, the results of every selected column (numpy
// arrays) and the samples it used. `kinds` per phenotype: "auto" (PLINK's case/control
// detection on the selected rows, as the command), "binary" or "quantitative". `sex`: the
// codes of sexes_with(); the two flags the command's --pheno-quantile-normalize (quantitative
// phenotypes) and --covar-variance-standardize.
nb::list assoc(const py_store& ps, index_array rows, index_array cols, table_array pheno,
               const std::vector<std::string>& names, std::optional<table_array> covar,
               const std::vector<std::string>& covar_names, const std::vector<std::string>& kinds,
               bool zero_one, const std::string& firth,
               const std::optional<std::vector<std::string>>& sex, bool quantile,
               bool covar_standardize, int threads, nb::object progress) {
  const auto s = ps.get();
  const selection sel =
      make_selection(*s, {rows.data(), rows.shape(0)}, {cols.data(), cols.shape(0)});
  const std::size_t n = s->num_rows();
  const phenotype_table all = make_table(pheno, names, n);
  std::optional<phenotype_table> covariates;
  if (covar) covariates = make_table(*covar, covar_names, n);
  if (covar_standardize) {
    if (!covariates) throw nb::value_error("covar_variance_standardize needs covariates");
    variance_standardize(*covariates, sel.row_kept);
  }
  const std::vector<sample_sex> sexes = sexes_with(*s, sex);
  python_call call(std::move(progress), {});
  const analysis_options options = call.options();
  if (kinds.size() != names.size()) throw nb::value_error("one kind per phenotype");
  const firth_mode mode =
      firth == "always"  ? firth_mode::always
      : firth == "never" ? firth_mode::never
      : firth == "fallback"
          ? firth_mode::fallback
          : throw nb::value_error(
                ("firth '" + firth + "' not known: fallback, always or never").c_str());
  const case_control_codes codes =
      zero_one ? case_control_codes::zero_one : case_control_codes::one_two;
  std::vector<std::size_t> binary, quantitative;
  for (std::size_t p = 0; p < names.size(); ++p) {
    const bool b = kinds[p] == "binary" ||
                   (kinds[p] == "auto" && is_case_control(all, p, sel.row_kept, codes));
    (b ? binary : quantitative).push_back(p);
  }
  // The results of one model's phenotypes, filled by the sink column after column.
  struct columns_of {
    std::vector<std::uint64_t> n_obs;
    std::vector<double> beta, se, stat, p;
    std::vector<std::string> note;
    std::vector<bool> firth;
  };
  const std::size_t m = sel.columns.size();
  auto scan = [&](const std::vector<std::size_t>& which, bool logistic) {
    phenotype_table t = select_phenotypes(all, which);
    if (quantile && !logistic) quantile_normalize(t, sel.row_kept);
    std::vector<columns_of> out(which.size());
    for (auto& o : out) {
      o.n_obs.reserve(m);
      o.beta.reserve(m);
      o.se.reserve(m);
      o.stat.reserve(m);
      o.p.reserve(m);
      o.note.reserve(m);
      o.firth.reserve(m);
    }
    assoc_summary summary;
    if (!which.empty()) {
      const auto sink = [&](std::size_t, std::size_t, std::span<const assoc_result> results) {
        for (std::size_t q = 0; q < results.size(); ++q) {
          const assoc_result& r = results[q];
          columns_of& o = out[q];
          o.n_obs.push_back(r.n_obs);
          o.beta.push_back(r.beta);
          o.se.push_back(r.se);
          o.stat.push_back(r.t_stat);
          o.p.push_back(r.p);
          o.note.emplace_back(assoc_status_name(r.status));
          o.firth.push_back(r.firth);
        }
      };
      call.run(threads, [&] {
        if (logistic) {
          code_case_control(t, codes);
          summary = logistic_association(*s, sel, t, covariates ? &*covariates : nullptr, sink,
                                         mode, options, sexes);
        } else {
          summary = linear_association(*s, sel, t, covariates ? &*covariates : nullptr, sink,
                                       options, sexes);
        }
      });
    }
    nb::list results;
    for (std::size_t q = 0; q < which.size(); ++q) {
      columns_of& o = out[q];
      nb::dict d;
      d["name"] = names[which[q]];
      d["model"] = logistic ? "logistic" : "linear";
      d["samples_used"] = summary.samples_used.empty() ? 0 : summary.samples_used[q];
      d["n_obs"] = to_numpy(std::move(o.n_obs));
      if (logistic) {
        // The odds ratios as the command's file has them (std::exp, not numpy's exp, whose
        // last bit can differ).
        std::vector<double> odds(o.beta.size());
        for (std::size_t k = 0; k < odds.size(); ++k) odds[k] = std::exp(o.beta[k]);
        d["odds_ratio"] = to_numpy(std::move(odds));
      }
      d["beta"] = to_numpy(std::move(o.beta));
      d["se"] = to_numpy(std::move(o.se));
      d["stat"] = to_numpy(std::move(o.stat));
      d["p"] = to_numpy(std::move(o.p));
      d["note"] = nb::cast(o.note);
      std::vector<std::uint8_t> f(o.firth.begin(), o.firth.end());
      d["firth"] = to_numpy(std::move(f));
      results.append(d);
    }
    return results;
  };
  nb::list results;
  for (nb::handle r : scan(quantitative, false)) results.append(r);
  for (nb::handle r : scan(binary, true)) results.append(r);
  std::vector<std::int64_t> columns(sel.columns.begin(), sel.columns.end());
  nb::object column_array = to_numpy(std::move(columns));
  for (nb::handle r : results) r.attr("__setitem__")("column", column_array);
  return results;
}

// `colflow pca`: the principal_components of the selection, as numpy arrays.
nb::dict pca(const py_store& ps, index_array rows, index_array cols, std::size_t k,
             std::size_t oversampling, std::size_t power_iterations, const std::string& scaling,
             std::uint64_t seed, bool loadings, int threads, nb::object progress) {
  const auto s = ps.get();
  const selection sel =
      make_selection(*s, {rows.data(), rows.shape(0)}, {cols.data(), cols.shape(0)});
  pca_options o;
  o.components = k;
  o.oversampling = oversampling;
  o.power_iterations = power_iterations;
  if (scaling == "hwe")
    o.scaling = pca_scaling::hwe;
  else if (scaling != "standardized")
    throw nb::value_error(("scaling '" + scaling + "' not known: standardized or hwe").c_str());
  o.seed = seed;
  o.loadings = loadings;
  pca_result r;
  python_call call(std::move(progress), {});
  const analysis_options options = call.options();
  call.run(threads, [&] { r = principal_components(*s, sel, o, options); });
  nb::dict d;
  d["eigenvalues"] = to_numpy(
      std::vector<double>(r.eigenvalues.data(), r.eigenvalues.data() + r.eigenvalues.size()));
  d["eigenvectors"] = to_numpy(r.eigenvectors);
  d["loadings"] = loadings ? to_numpy(r.loadings) : nb::none();
  d["rows"] = to_numpy(std::vector<std::int64_t>(sel.rows.begin(), sel.rows.end()));
  d["column"] = to_numpy(std::vector<std::int64_t>(sel.columns.begin(), sel.columns.end()));
  d["columns_used"] = r.columns_used;
  d["passes"] = r.passes;
  return d;
}

using phenotype_array = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// One phenotype value per store row (NaN missing), as the commands take the first column of
// read_phenotypes' table.
std::span<const double> phenotype_of(phenotype_array pheno, const store& s) {
  if (pheno.shape(0) != s.num_rows())
    throw nb::value_error("a phenotype must have one value per store sample");
  return {pheno.data(), pheno.shape(0)};
}

// `colflow ridge | lasso | enet`: the path and coefficient tables (numpy arrays of the fields
// of PREFIX.path.tsv and PREFIX.coef.tsv, rows as write_penalized writes them: the non-zero
// coefficients per λ, or every coefficient with `all_coefficients`), and with `target` the
// predictions of its samples (PREFIX.pred.tsv).
nb::dict penalized(const py_store& ps, index_array rows, index_array cols, phenotype_array pheno,
                   double alpha, const std::vector<double>& lambdas, std::size_t n_lambda,
                   double lambda_min_ratio, double tolerance, std::size_t max_sweeps,
                   bool all_coefficients, const py_store* target, int threads,
                   nb::object progress) {
  const auto s = ps.get();
  const selection sel =
      make_selection(*s, {rows.data(), rows.shape(0)}, {cols.data(), cols.shape(0)});
  const std::span<const double> y = phenotype_of(pheno, *s);
  penalized_options o;
  o.alpha = alpha;
  o.lambdas = lambdas;
  o.n_lambda = n_lambda;
  o.lambda_min_ratio = lambda_min_ratio;
  o.tolerance = tolerance;
  o.max_sweeps = max_sweeps;
  const std::shared_ptr<const store> other = target ? target->get() : nullptr;
  penalized_result fit;
  Eigen::MatrixXd predictions;
  std::size_t target_missing = 0;
  // As the command shows them: the statistics pass, the path in λ values, the predictions.
  python_call call(std::move(progress), {"statistics", "predict"});
  const analysis_options options = call.options();
  call.run(threads, [&] {
    fit = penalized_regression(*s, sel, y, o, options);
    if (other) {
      const column_match match = match_columns(*s, sel, *other);
      target_missing = match.missing;
      predictions = predict(*other, fit, match, options);
    }
  });
  const std::size_t steps = fit.path.size();
  std::vector<double> lambda(steps), r2(steps), objective(steps);
  std::vector<std::uint64_t> nonzero(steps), sweeps(steps), full_passes(steps);
  std::vector<std::uint8_t> converged(steps);
  for (std::size_t k = 0; k < steps; ++k) {
    const penalized_step& st = fit.path[k];
    lambda[k] = st.lambda;
    nonzero[k] = st.nonzero;
    r2[k] = st.r_squared;
    objective[k] = st.objective;
    sweeps[k] = st.sweeps;
    full_passes[k] = st.full_passes;
    converged[k] = st.converged;
  }
  // The coefficient table's rows, as write_penalized orders them.
  std::vector<std::int64_t> step_of, column_of;
  std::vector<double> beta, per_unit;
  std::vector<double> every;
  for (std::size_t k = 0; k < steps; ++k) {
    const auto add = [&](std::size_t p, double b) {
      step_of.push_back(static_cast<std::int64_t>(k));
      column_of.push_back(static_cast<std::int64_t>(sel.columns[p]));
      beta.push_back(b);
      per_unit.push_back(per_unit_coefficient(fit, p, b));
    };
    if (all_coefficients) {
      every.assign(sel.columns.size(), 0.0);
      for (const auto& [p, b] : fit.coefficients[k]) every.at(p) = b;
      for (std::size_t p = 0; p < every.size(); ++p) add(p, every[p]);
    } else {
      for (const auto& [p, b] : fit.coefficients[k]) add(p, b);
    }
  }
  nb::dict d;
  d["samples"] = fit.samples;
  d["intercept"] = fit.intercept;
  d["lambda_max"] = fit.lambda_max;
  d["lambda"] = to_numpy(std::move(lambda));
  d["nonzero"] = to_numpy(std::move(nonzero));
  d["r2"] = to_numpy(std::move(r2));
  d["objective"] = to_numpy(std::move(objective));
  d["sweeps"] = to_numpy(std::move(sweeps));
  d["full_passes"] = to_numpy(std::move(full_passes));
  d["converged"] = to_numpy(std::move(converged));
  d["coef_step"] = to_numpy(std::move(step_of));
  d["coef_column"] = to_numpy(std::move(column_of));
  d["coef_beta"] = to_numpy(std::move(beta));
  d["coef_per_unit"] = to_numpy(std::move(per_unit));
  d["column"] = to_numpy(std::vector<std::int64_t>(sel.columns.begin(), sel.columns.end()));
  d["predictions"] = other ? to_numpy(predictions) : nb::none();
  d["target_missing"] = target_missing;
  return d;
}

// `colflow bayesr`: the trace and effect tables (numpy arrays of the fields of PREFIX.trace.tsv
// and PREFIX.effects.tsv) and the figures the command logs.
nb::dict bayesr_chain(const py_store& ps, index_array rows, index_array cols, phenotype_array pheno,
                      std::size_t iterations, std::size_t burnin, std::size_t thin,
                      std::uint64_t seed, const std::vector<double>& mixture,
                      double dirichlet_prior, double g_df, double g_scale, double e_df,
                      double e_scale, const std::string& checkpoint, std::size_t checkpoint_every,
                      bool resume, const std::string& mode, int threads, nb::object progress) {
  bayesr_options o;
  o.iterations = iterations;
  o.burnin = burnin;
  o.thin = thin;
  o.seed = seed;
  o.mixture = mixture;
  o.dirichlet_alpha = dirichlet_prior;
  o.sigma2_g_df = g_df;
  o.sigma2_g_scale = g_scale;
  o.sigma2_e_df = e_df;
  o.sigma2_e_scale = e_scale;
  o.checkpoint = checkpoint;
  o.checkpoint_every = checkpoint.empty() ? 0 : checkpoint_every;
  o.resume = resume;
  if (mode == "auto")
    o.execution = bayesr_execution::automatic;
  else if (mode == "pipelined")
    o.execution = bayesr_execution::pipelined;
  else if (mode == "sequential")
    o.execution = bayesr_execution::sequential;
  else if (mode == "in-memory")
    o.execution = bayesr_execution::in_memory;
  else
    throw nb::value_error(
        ("mode '" + mode + "' not known: auto, pipelined, sequential or in-memory").c_str());
  check_bayesr_options(o);
  const auto s = ps.get();
  const selection sel =
      make_selection(*s, {rows.data(), rows.shape(0)}, {cols.data(), cols.shape(0)});
  const std::span<const double> y = phenotype_of(pheno, *s);
  bayesr_result r;
  // As the command shows them: the statistics pass, then the chain in iterations.
  python_call call(std::move(progress), {"statistics"});
  const analysis_options options = call.options();
  call.run(threads, [&] { r = bayesr(*s, sel, y, o, options); });
  const std::size_t kept = r.trace.size(), classes = r.classes;
  std::vector<std::uint64_t> iteration(kept), nonzero(kept);
  std::vector<double> mu(kept), sigma2_g(kept), sigma2_e(kept), h2(kept), var_g(kept);
  Eigen::MatrixXd pi(static_cast<Eigen::Index>(kept), static_cast<Eigen::Index>(classes));
  for (std::size_t t = 0; t < kept; ++t) {
    const bayesr_sample& x = r.trace[t];
    iteration[t] = x.iteration;
    mu[t] = x.mu;
    sigma2_g[t] = x.sigma2_g;
    sigma2_e[t] = x.sigma2_e;
    h2[t] = x.h2;
    var_g[t] = x.genetic_variance;
    nonzero[t] = x.nonzero;
    for (std::size_t k = 0; k < classes && k < x.pi.size(); ++k)
      pi(static_cast<Eigen::Index>(t), static_cast<Eigen::Index>(k)) = x.pi[k];
  }
  bayesr_per_unit_effects unit = per_unit_effects(r);
  const bayesr_summary summary = summarize(r);
  nb::dict d;
  d["samples"] = r.samples;
  d["phenotype_mean"] = r.phenotype_mean;
  d["phenotype_sd"] = r.phenotype_sd;
  d["iteration"] = to_numpy(std::move(iteration));
  d["mu"] = to_numpy(std::move(mu));
  d["sigma2_g"] = to_numpy(std::move(sigma2_g));
  d["sigma2_e"] = to_numpy(std::move(sigma2_e));
  d["h2"] = to_numpy(std::move(h2));
  d["var_g"] = to_numpy(std::move(var_g));
  d["nonzero"] = to_numpy(std::move(nonzero));
  d["pi"] = to_numpy(pi);
  d["column"] = to_numpy(std::vector<std::int64_t>(sel.columns.begin(), sel.columns.end()));
  d["pip"] = to_numpy(std::move(r.inclusion));
  d["beta"] = to_numpy(std::move(r.beta_mean));
  d["beta_sd"] = to_numpy(std::move(r.beta_sd));
  d["beta_per_unit"] = to_numpy(std::move(unit.beta_mean));
  d["beta_per_unit_sd"] = to_numpy(std::move(unit.beta_sd));
  d["posterior_samples"] = r.posterior_samples;
  d["kept"] = summary.kept;
  d["h2_mean"] = summary.h2_mean;
  d["h2_sd"] = summary.h2_sd;
  d["nonzero_mean"] = summary.nonzero_mean;
  d["resumed_from"] = r.resumed_from;
  d["iterations_run"] = r.iterations_run;
  d["seconds"] = r.seconds;
  d["compute_busy_seconds"] = r.compute_busy_seconds;
  d["mode"] = r.execution == bayesr_execution::sequential  ? "sequential"
              : r.execution == bayesr_execution::in_memory ? "in-memory"
                                                           : "pipelined";
  return d;
}

// The conversion options as Python gives them, None for the command's default (what the
// library's make_convert_options fills in for the input's kind).
preprocess::conversion_choices conversion_choices_of(const std::optional<std::string>& codec,
                                                     std::optional<int> level,
                                                     const std::optional<std::string>& dtype,
                                                     std::optional<double> hard_call_threshold,
                                                     std::optional<bool> shuffle,
                                                     std::optional<bool> standardize,
                                                     const std::string& sex, bool force) {
  preprocess::conversion_choices c;
  if (codec) {
    c.codec = preprocess::codec_choice_from_name(*codec);
    if (!c.codec)
      throw nb::value_error(
          ("unknown codec '" + *codec + "': genotype, genotype-zstd, auto, none, zlib, lz4 or zstd")
              .c_str());
  }
  c.level = level;
  if (dtype) {
    if (*dtype != "f64" && *dtype != "f32")
      throw nb::value_error(("unknown dtype '" + *dtype + "': f64 or f32").c_str());
    c.dtype = *dtype == "f32" ? value_type::float32 : value_type::float64;
  }
  c.hard_call_threshold = hard_call_threshold;
  c.shuffle = shuffle;
  c.standardize = standardize;
  c.sex_file = sex;
  c.overwrite = force;
  return c;
}

// `colflow preprocess` of the source `open` makes, with the command's options: the source is
// opened (validated) and converted on python_call's worker, so that Ctrl-C stops either step.
template <typename Open>
nb::dict convert_source(Open&& open, const preprocess::conversion_choices& choices,
                        const std::string& out, int threads, nb::object progress) {
  preprocess::convert_result result;
  preprocess::convert_options co;
  std::string kind;
  const bool report = !progress.is_none();
  python_call call(std::move(progress), {});
  call.run(threads, [&] {
    const std::unique_ptr<preprocess::column_source> source = open();
    kind = value_type_name(source->kind());
    co = preprocess::make_convert_options(source->kind(), choices, out);
    result = preprocess::convert(*source, co, [&](const preprocess::convert_progress& p) {
      if (report) call.note("preprocess", p.columns_done, p.columns_total, "columns");
    });
  });
  nb::dict d;
  d["rows"] = result.rows;
  d["columns"] = result.columns;
  d["input_bytes"] = result.input_bytes;
  d["frame_bytes"] = result.frame_bytes;
  d["seconds"] = result.seconds;
  d["input_kind"] = kind;
  d["codec"] = preprocess::codec_choice_name(co.codec);
  return d;
}

// A name the library's *_from_name knows, or ValueError listing the names.
template <typename T>
T named(const std::optional<T>& value, const char* what, const std::string& name,
        const char* names) {
  if (!value)
    throw nb::value_error((std::string("unknown ") + what + " '" + name + "': " + names).c_str());
  return *value;
}

// `colflow preprocess` of files: `format` "plink" (PLINK prefixes, or one .bed with `bim` and
// `fam`: --bed-file/--bim/--fam), "bgen", "vcf", "npy", "csv" or "inputs" (a list file,
// --inputs), with the command's options for them.
nb::dict preprocess_files(const std::string& format, const std::vector<std::string>& paths,
                          const std::string& bim, const std::string& fam, const std::string& sample,
                          bool ref_first, const std::optional<std::string>& dosage,
                          bool split_multiallelic, const std::string& half_call,
                          const std::string& csv_header, const std::string& csv_ids,
                          const std::string& out, const std::optional<std::string>& codec,
                          std::optional<int> level, const std::optional<std::string>& dtype,
                          std::optional<double> hard_call_threshold, std::optional<bool> shuffle,
                          std::optional<bool> standardize, const std::string& sex, bool force,
                          int threads, nb::object progress) {
  preprocess::input_options in;
  const std::vector<std::filesystem::path> files(paths.begin(), paths.end());
  const auto one_file = [&]() -> const std::filesystem::path& {
    if (files.size() != 1)
      throw nb::value_error(
          ("one " + format + " file makes a store, not " + std::to_string(files.size())).c_str());
    return files.front();
  };
  if (format == "plink") {
    if (!bim.empty() || !fam.empty()) {
      if (bim.empty() || fam.empty()) throw nb::value_error("bim and fam go together");
      in.bed_files = preprocess::plink_paths{one_file(), bim, fam};
    } else {
      in.bed = files;
    }
  } else if (format == "bgen") {
    in.bgen = files;
  } else if (format == "vcf") {
    in.vcf = files;
  } else if (format == "npy") {
    in.npy = one_file();
  } else if (format == "csv") {
    in.csv = one_file();
  } else if (format == "inputs") {
    in.inputs_list = one_file();
  } else {
    throw nb::value_error(("unknown format '" + format + "'").c_str());
  }
  if ((!bim.empty() || !fam.empty()) && format != "plink")
    throw nb::value_error("bim and fam apply to a PLINK .bed");
  in.sample = sample;
  in.ref_first = ref_first;
  if (dosage)
    in.dosage =
        named(preprocess::dosage_field_from_name(*dosage), "dosage field", *dosage, "DS or GP");
  in.split_multiallelic = split_multiallelic;
  in.half_call = named(preprocess::half_call_from_name(half_call), "half_call", half_call,
                       "error, missing, haploid or reference");
  in.csv_format.header = named(preprocess::csv_presence_from_name(csv_header), "csv_header",
                               csv_header, "auto, yes or no");
  in.csv_format.ids =
      named(preprocess::csv_presence_from_name(csv_ids), "csv_ids", csv_ids, "auto, yes or no");
  in.threads = threads > 0 ? static_cast<unsigned>(threads) : 0;
  const preprocess::conversion_choices choices = conversion_choices_of(
      codec, level, dtype, hard_call_threshold, shuffle, standardize, sex, force);
  return convert_source([&] { return preprocess::open_inputs(in); }, choices, out, threads,
                        std::move(progress));
}

using matrix_array = nb::ndarray<nb::ro, nb::ndim<2>, nb::device::cpu>;

// `colflow preprocess` of a float32 or float64 matrix in memory, samples in rows, read where
// it is (matrix_source, any strides) while the conversion runs: as the command converts the
// same matrix saved as a .npy file, with the samples (FID IID father mother sex phenotype) and
// column names given, if any.
nb::dict preprocess_array(matrix_array matrix,
                          const std::optional<std::vector<std::vector<std::string>>>& samples,
                          const std::optional<std::vector<std::string>>& column_ids,
                          const std::string& out, const std::optional<std::string>& codec,
                          std::optional<int> level, const std::optional<std::string>& dtype,
                          std::optional<double> hard_call_threshold, std::optional<bool> shuffle,
                          std::optional<bool> standardize, const std::string& sex, bool force,
                          int threads, nb::object progress) {
  const bool f64 = matrix.dtype() == nb::dtype<double>();
  if (!f64 && matrix.dtype() != nb::dtype<float>())
    throw nb::type_error("the matrix holds float32 or float64 values");
  preprocess::matrix_view view;
  view.data = static_cast<const std::byte*>(matrix.data());
  view.rows = matrix.shape(0);
  view.columns = matrix.shape(1);
  view.item_size = f64 ? 8 : 4;
  // nanobind's strides count items.
  view.row_stride =
      static_cast<std::ptrdiff_t>(matrix.stride(0)) * static_cast<std::ptrdiff_t>(view.item_size);
  view.column_stride =
      static_cast<std::ptrdiff_t>(matrix.stride(1)) * static_cast<std::ptrdiff_t>(view.item_size);
  preprocess::matrix_options mo;
  if (samples)
    for (const std::vector<std::string>& s : *samples) {
      if (s.size() != 6) throw nb::value_error("a sample has 6 fields");
      mo.samples.push_back({s[0], s[1], s[2], s[3], s[4], s[5]});
    }
  if (column_ids) mo.column_ids = *column_ids;
  const preprocess::conversion_choices choices = conversion_choices_of(
      codec, level, dtype, hard_call_threshold, shuffle, standardize, sex, force);
  return convert_source(
      [&] { return std::make_unique<preprocess::matrix_source>(view, std::move(mo)); }, choices,
      out, threads, std::move(progress));
}

}  // namespace
}  // namespace colflow::python

NB_MODULE(_core, m) {
  using namespace colflow::python;
  m.doc() = "The native half of the colflow package (see colflow/__init__.py).";
  m.attr("library_version") = std::string(colflow::version());

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const colflow::error& e) {
      raise_colflow_error(e);
    }
  });

  nb::class_<py_store>(m, "Store")
      .def(nb::init<const std::string&>(), "path"_a)
      .def("close", &py_store::close)
      .def_prop_ro("closed", &py_store::closed)
      .def_prop_ro("path", &py_store::path)
      .def_prop_ro("rows", [](const py_store& s) { return s.get()->num_rows(); })
      .def_prop_ro("num_columns", [](const py_store& s) { return s.get()->num_columns(); })
      .def_prop_ro(
          "value_type",
          [](const py_store& s) { return std::string(colflow::value_type_name(s.get()->type())); })
      .def("samples", &py_store::samples)
      .def("columns", &py_store::columns)
      .def("info", &py_store::info)
      .def("read_into", &py_store::read_into, "rows"_a, "cols"_a, "out"_a, "standardize"_a,
           "threads"_a);

  nb::class_<py_block_stream>(m, "BlockStream")
      .def(
          "__init__",
          [](py_block_stream* self, const py_store& s, index_array rows, index_array cols,
             bool float64, bool standardize, std::size_t block_columns, std::size_t prefetch,
             int threads) {
            if (block_columns == 0 || prefetch == 0)
              throw nb::value_error("block_columns and prefetch must be at least 1");
            new (self) py_block_stream(
                s.get(), std::vector<std::int64_t>(cols.data(), cols.data() + cols.shape(0)),
                std::vector<std::int64_t>(rows.data(), rows.data() + rows.shape(0)), float64,
                standardize, block_columns, prefetch, threads);
          },
          "store"_a, "rows"_a, "cols"_a, "float64"_a, "standardize"_a, "block_columns"_a,
          "prefetch"_a, "threads"_a)
      .def("next", &py_block_stream::next)
      .def("close", &py_block_stream::close)
      .def("memory", &py_block_stream::memory);

  m.def("stats", &stats, "store"_a, "rows"_a, "cols"_a, "threads"_a, "progress"_a.none());
  m.def("assoc", &assoc, "store"_a, "rows"_a, "cols"_a, "pheno"_a, "names"_a, "covar"_a.none(),
        "covar_names"_a, "kinds"_a, "zero_one"_a, "firth"_a, "sex"_a.none(), "quantile"_a,
        "covar_standardize"_a, "threads"_a, "progress"_a.none());

  m.def("pca", &pca, "store"_a, "rows"_a, "cols"_a, "k"_a, "oversampling"_a, "power_iterations"_a,
        "scaling"_a, "seed"_a, "loadings"_a, "threads"_a, "progress"_a.none());

  m.def("penalized", &penalized, "store"_a, "rows"_a, "cols"_a, "pheno"_a, "alpha"_a, "lambdas"_a,
        "n_lambda"_a, "lambda_min_ratio"_a, "tolerance"_a, "max_sweeps"_a, "all_coefficients"_a,
        "target"_a.none(), "threads"_a, "progress"_a.none());
  m.def("bayesr", &bayesr_chain, "store"_a, "rows"_a, "cols"_a, "pheno"_a, "iterations"_a,
        "burnin"_a, "thin"_a, "seed"_a, "mixture"_a, "dirichlet_prior"_a, "g_df"_a, "g_scale"_a,
        "e_df"_a, "e_scale"_a, "checkpoint"_a, "checkpoint_every"_a, "resume"_a, "mode"_a,
        "threads"_a, "progress"_a.none());

  m.def("input_format", [](const std::string& path) {
    using namespace colflow::preprocess;
    return std::string(input_format_name(input_format_of(path)));
  });
  m.def("preprocess_files", &preprocess_files, "format"_a, "paths"_a, "bim"_a, "fam"_a, "sample"_a,
        "ref_first"_a, "dosage"_a.none(), "split_multiallelic"_a, "half_call"_a, "csv_header"_a,
        "csv_ids"_a, "out"_a, "codec"_a.none(), "level"_a.none(), "dtype"_a.none(),
        "hard_call_threshold"_a.none(), "shuffle"_a.none(), "standardize"_a.none(), "sex"_a,
        "force"_a, "threads"_a, "progress"_a.none());
  m.def("preprocess_array", &preprocess_array, "matrix"_a, "samples"_a.none(),
        "column_ids"_a.none(), "out"_a, "codec"_a.none(), "level"_a.none(), "dtype"_a.none(),
        "hard_call_threshold"_a.none(), "shuffle"_a.none(), "standardize"_a.none(), "sex"_a,
        "force"_a, "threads"_a, "progress"_a.none());
}
