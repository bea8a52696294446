// Tests of column_stream (include/colflow/stream/column_stream.hpp): the order the kernel sees, the
// values it gets, the memory bound, early stop, errors, determinism, nested parallelism, progress,
// stats.
//
// Every fixture runs a watchdog: a pass that hangs aborts the test binary with a message
// instead of leaving ctest waiting for its own timeout.
#include <gtest/gtest.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "test_support.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace colflow {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// 301 rows: not a multiple of 4, so the padding of the last code byte is exercised.
constexpr std::uint64_t rows = 301;
constexpr std::uint64_t columns = 60;

// ==== Watchdog

// Aborts the process if it is not destroyed within `limit`: a hung pass must fail loudly, not
// leave ctest waiting.
class watchdog {
 public:
  explicit watchdog(std::chrono::seconds limit) {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    name_ = info ? std::string(info->test_suite_name()) + "." + info->name() : "a test";
    thread_ = std::thread([this, limit] {
      std::unique_lock lock(mutex_);
      if (!cv_.wait_for(lock, limit, [this] { return done_; })) {
        std::fprintf(stderr, "watchdog: %s did not finish within %lld s: a pass hangs\n",
                     name_.c_str(), static_cast<long long>(limit.count()));
        std::fflush(stderr);
        std::abort();
      }
    });
  }
  ~watchdog() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  watchdog(const watchdog&) = delete;
  watchdog& operator=(const watchdog&) = delete;

 private:
  std::string name_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

constexpr std::chrono::seconds time_limit{60};

// ==== Helpers

template <typename T>
std::vector<std::vector<T>> read_all(const store& s, decode_as as) {
  std::vector<std::vector<T>> out(s.num_columns(), std::vector<T>(s.num_rows()));
  for (std::size_t j = 0; j < s.num_columns(); ++j) s.read_column(j, std::span<T>(out[j]), as);
  return out;
}

template <typename T>
bool same_bits(std::span<const T> a, std::span<const T> b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size_bytes()) == 0);
}

template <typename T, typename View>
std::span<const T> values_of(const View& v) {
  return {v.values.data(), static_cast<std::size_t>(v.values.size())};
}

// `length` positions drawn uniformly from [0, n): a random order with repeats.
std::vector<std::size_t> random_order(std::size_t length, std::size_t n, std::mt19937_64& rng) {
  std::uniform_int_distribution<std::size_t> pick(0, n - 1);
  std::vector<std::size_t> order(length);
  for (std::size_t& j : order) j = pick(rng);
  return order;
}

std::vector<std::size_t> shuffled_columns(std::size_t n, std::mt19937_64& rng) {
  std::vector<std::size_t> order = all_columns(n);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

// block_bytes that puts `per_block` columns of T in one message.
template <typename T>
std::size_t block_of(std::size_t per_block) {
  return per_block * rows * sizeof(T);
}

stream_options options_with(std::size_t depth, std::size_t per_block) {
  stream_options o;
  o.in_flight = depth;
  o.block_bytes = per_block == 1 ? 1 : block_of<double>(per_block);
  return o;
}

// What the kernel saw: (column, position) per call.
using calls = std::vector<std::pair<std::size_t, std::size_t>>;

calls expected_calls(std::span<const std::size_t> order) {
  calls c;
  for (std::size_t p = 0; p < order.size(); ++p) c.emplace_back(order[p], p);
  return c;
}

enum class mode { pipelined, sequential };

std::string mode_name(mode m) { return m == mode::pipelined ? "Run" : "RunSequential"; }

template <typename T>
pass_stats run_pass(column_stream<T>& stream, mode m, std::span<const std::size_t> order,
                    const column_kernel<T>& kernel) {
  return m == mode::pipelined ? stream.run(order, kernel) : stream.run_sequential(order, kernel);
}

// True when `message` names `what` followed by the number `n` as a whole word.
// (Plain search rather than std::regex, which GCC 12 -O2 flags with maybe-uninitialized.)
bool names(const std::string& message, const std::string& what, std::size_t n) {
  const std::string needle = what + " " + std::to_string(n);
  const auto is_word = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  };
  for (std::size_t at = message.find(needle); at != std::string::npos;
       at = message.find(needle, at + 1)) {
    const std::size_t end = at + needle.size();
    if ((at == 0 || !is_word(message[at - 1])) && (end == message.size() || !is_word(message[end])))
      return true;
  }
  return false;
}

std::uint64_t frame_bytes(const store& s, std::span<const std::size_t> order) {
  std::uint64_t sum = 0;
  for (std::size_t j : order) sum += s.entry(j).frame_size;
  return sum;
}

// A stream that has already run one (empty) pass, at the parallelism of the caller. The
// determinism and nested tests build their streams this way before limiting the threads: the
// first pass of a stream built under a one-thread limit is StreamThreadsTest's subject.
template <typename T>
column_stream<T> warmed_stream(const store& s, const stream_options& o) {
  column_stream<T> stream(s, o);
  stream.run({}, [](const column_view<T>&) { return true; });
  return stream;
}

// ==== Shared stores (written once per process, removed at exit)

struct genotype_data {
  test::temp_dir dir;
  std::vector<std::vector<std::uint8_t>> codes =
      test::write_genotype_store(dir / "g.cf", rows, columns, {codec_id::zstd, 3, false});
  store s = store::open(dir / "g.cf");
  std::vector<std::vector<double>> z = read_all<double>(s, decode_as::standardized);
};

const genotype_data& genotypes() {
  static const genotype_data data;
  return data;
}

using depth_case = std::tuple<std::size_t /*depth*/, std::size_t /*per_block*/>;

std::string depth_case_name(const testing::TestParamInfo<depth_case>& info) {
  return "Depth" + std::to_string(std::get<0>(info.param)) + "Block" +
         std::to_string(std::get<1>(info.param));
}

std::string depth_case_label(std::size_t depth, std::size_t per_block) {
  return "depth " + std::to_string(depth) + " block " + std::to_string(per_block);
}

const std::vector<std::pair<std::size_t, std::size_t>> every_depth_case = {
    {1, 1}, {1, 8}, {2, 1}, {2, 8}, {8, 1}, {8, 8}, {64, 1}, {64, 8}};

const auto depth_cases = testing::Combine(
    testing::Values(std::size_t{1}, std::size_t{2}, std::size_t{8}, std::size_t{64}),
    testing::Values(std::size_t{1}, std::size_t{8}));

// ==== Order: the kernel sees exactly the order, whatever the depth and block size

class StreamOrderTest : public testing::TestWithParam<depth_case> {
 protected:
  watchdog dog_{time_limit};
};

// Both modes on one stream, in turn: run_sequential must work on a stream that ran the graph
// and the other way round.
TEST_P(StreamOrderTest, KernelSeesExactlyTheOrder) {
  const auto [depth, per_block] = GetParam();
  const genotype_data& g = genotypes();
  column_stream<double> stream(g.s, options_with(depth, per_block));
  ASSERT_EQ(stream.in_flight(), depth);
  ASSERT_EQ(stream.columns_per_block(), per_block);

  std::mt19937_64 rng(depth * 100 + per_block);
  std::vector<std::size_t> subset = all_columns(columns);
  std::shuffle(subset.begin(), subset.end(), rng);
  subset.resize(17);
  const std::vector<std::vector<std::size_t>> orders = {
      random_order(150, columns, rng),  // a permutation with repeats, not a multiple of 8
      shuffled_columns(columns, rng),
      subset,
      {},
      {42},
      {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7},  // one column, repeated across block boundaries
      all_columns(columns),
      random_order(3 * columns + 5, columns, rng),
  };
  for (const auto& order : orders) {
    for (mode m : {mode::pipelined, mode::sequential}) {
      SCOPED_TRACE(mode_name(m) + ", order of " + std::to_string(order.size()));
      calls seen;
      std::size_t wrong_values = 0;
      const pass_stats st = run_pass<double>(stream, m, order, [&](const column_view<double>& v) {
        seen.emplace_back(v.column, v.position);
        // The values travel with their column (no buffer mix-up between blocks).
        if (v.column >= columns || !same_bits<double>(values_of<double>(v), g.z[v.column]))
          ++wrong_values;
        return true;
      });
      EXPECT_EQ(seen, expected_calls(order));
      EXPECT_EQ(wrong_values, 0u);
      EXPECT_EQ(st.columns, order.size());
      EXPECT_FALSE(st.stopped_early);
    }
  }
  EXPECT_LE(stream.peak_buffers_in_use(), depth);
}

INSTANTIATE_TEST_SUITE_P(DepthsAndBlocks, StreamOrderTest, depth_cases, depth_case_name);

// ==== Values: pipelined == sequential == store::read_column, for every codec and store type

struct values_case {
  value_type type;
  column_encoding encoding;
};

std::string values_case_name(const values_case& c) {
  std::string type(value_type_name(c.type));
  type[0] = static_cast<char>(type[0] - 'a' + 'A');
  return type + test::encoding_name(c.encoding);
}

// The stores of the values tests, written once per case and shared by its tests.
struct written_store {
  test::temp_dir dir;
  fs::path path = dir / "s.cf";
  std::vector<std::vector<std::uint8_t>> codes;  // genotype stores
};

const written_store& written(const values_case& c) {
  static std::map<std::string, std::unique_ptr<written_store>> cache;
  std::unique_ptr<written_store>& w = cache[values_case_name(c)];
  if (!w) {
    w = std::make_unique<written_store>();
    if (c.type == value_type::genotype) {
      w->codes = test::write_genotype_store(w->path, rows, columns, c.encoding, 7);
    } else {
      test::write_float_store(w->path, c.type, rows, columns, c.encoding, 7);
    }
  }
  return *w;
}

class StreamValuesTest : public testing::TestWithParam<values_case> {
 protected:
  void SetUp() override {
    const written_store& w = written(GetParam());
    path_ = w.path;
    codes_ = w.codes;
  }

  // Every pass kind over one order: kernel values == read_column, and the genotype extras.
  template <typename T>
  void check(const store& s, decode_as as) {
    const auto expected = read_all<T>(s, as);
    const bool genotype = s.type() == value_type::genotype;
    std::mt19937_64 rng(11);
    const std::vector<std::size_t> order = random_order(90, columns, rng);
    for (std::size_t per_block : {std::size_t{1}, std::size_t{8}}) {
      stream_options o;
      o.in_flight = 4;
      o.values = as;
      o.block_bytes = per_block == 1 ? 1 : block_of<T>(per_block);
      column_stream<T> stream(s, o);
      for (mode m : {mode::pipelined, mode::sequential}) {
        SCOPED_TRACE(mode_name(m) + " block " + std::to_string(per_block));
        std::size_t seen = 0, bad_values = 0, bad_codes = 0, bad_lut_decode = 0;
        std::vector<T> decoded(rows);
        run_pass<T>(stream, m, order, [&](const column_view<T>& v) {
          ++seen;
          if (!same_bits<T>(values_of<T>(v), expected[v.column])) ++bad_values;
          if (genotype) {
            if (!std::equal(v.codes.begin(), v.codes.end(), codes_[v.column].begin(),
                            codes_[v.column].end()))
              ++bad_codes;
            // The codes and the table are what the values were decoded from.
            decode_genotypes(v.codes, v.lut, std::span<T>(decoded));
            if (!same_bits<T>(decoded, values_of<T>(v))) ++bad_lut_decode;
          } else if (!v.codes.empty()) {
            ++bad_codes;
          }
          return true;
        });
        EXPECT_EQ(seen, order.size());
        EXPECT_EQ(bad_values, 0u);
        EXPECT_EQ(bad_codes, 0u);
        EXPECT_EQ(bad_lut_decode, 0u);
      }
    }

    // decode_values = false: no values, but valid codes (genotype) that decode to them. One
    // column per message, and for genotype stores also the default block_bytes (a float store
    // without values has no decoded bytes to size its messages by: see StreamArgumentTest).
    std::vector<std::size_t> block_sizes = {1};
    if (genotype) block_sizes.push_back(stream_options{}.block_bytes);
    for (std::size_t block_bytes : block_sizes) {
      stream_options o;
      o.in_flight = 4;
      o.values = as;
      o.decode_values = false;
      o.block_bytes = block_bytes;
      column_stream<T> stream(s, o);
      for (mode m : {mode::pipelined, mode::sequential}) {
        SCOPED_TRACE(mode_name(m) + " without values, block_bytes " + std::to_string(block_bytes));
        std::size_t seen = 0, with_values = 0, bad_codes = 0;
        std::vector<T> decoded(rows);
        const pass_stats st = run_pass<T>(stream, m, order, [&](const column_view<T>& v) {
          ++seen;
          if (v.values.size() != 0) ++with_values;
          if (!genotype) {
            bad_codes += !v.codes.empty();
          } else if (v.codes.size() < genotype_column_bytes(rows)) {
            ++bad_codes;
          } else {
            decode_genotypes(v.codes, v.lut, std::span<T>(decoded));
            bad_codes += !same_bits<T>(decoded, expected[v.column]);
          }
          return true;
        });
        EXPECT_EQ(seen, order.size());
        EXPECT_EQ(with_values, 0u);
        EXPECT_EQ(bad_codes, 0u);
        EXPECT_EQ(st.bytes_decoded, 0u);
      }
    }
  }

  fs::path path_;
  std::vector<std::vector<std::uint8_t>> codes_;
  watchdog dog_{time_limit};
};

// One test per store kind and codec (each writes its store): every value type and decode_as,
// then pread access and checksum verification.
TEST_P(StreamValuesTest, PipelinedEqualsSequentialEqualsReadColumn) {
  const store s = store::open(path_);
  for (decode_as as : {decode_as::standardized, decode_as::stored}) {
    const std::string how = as == decode_as::standardized ? "standardized" : "stored";
    {
      SCOPED_TRACE("double, " + how);
      check<double>(s, as);
    }
    {
      SCOPED_TRACE("float, " + how);
      check<float>(s, as);
    }
  }
  {
    SCOPED_TRACE("pread access");
    check<double>(store::open(path_, {access_mode::pread, false}), decode_as::standardized);
  }
  // verify_checksums on a sound store changes nothing.
  const auto expected = read_all<double>(s, decode_as::standardized);
  stream_options o;
  o.in_flight = 3;
  o.verify_checksums = true;
  column_stream<double> stream(s, o);
  std::size_t wrong_values = 0;
  stream.run(all_columns(columns), [&](const column_view<double>& v) {
    wrong_values += !same_bits<double>(values_of<double>(v), expected[v.column]);
    return true;
  });
  EXPECT_EQ(wrong_values, 0u) << "with verify_checksums";
}

std::vector<values_case> every_store_kind() {
  std::vector<values_case> cases;
  for (value_type t : {value_type::genotype, value_type::float64, value_type::float32})
    for (const column_encoding& e : test::all_encodings()) cases.push_back({t, e});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, StreamValuesTest, testing::ValuesIn(every_store_kind()),
                         [](const testing::TestParamInfo<values_case>& param) {
                           return values_case_name(param.param);
                         });

// ==== Memory: never more buffers than in_flight()

constexpr std::uint64_t long_rows = 6000, long_columns = 24;

struct long_store {
  test::temp_dir dir;
  fs::path path = dir / "f.cf";
  store s = [this] {
    test::write_float_store(path, value_type::float64, long_rows, long_columns,
                            {codec_id::zlib, 6, true});
    return store::open(path);
  }();
};

std::string depth_name(const testing::TestParamInfo<std::size_t>& param) {
  return "Depth" + std::to_string(param.param);
}

class StreamMemoryTest : public testing::TestWithParam<std::size_t> {
 protected:
  watchdog dog_{time_limit};
};

TEST_P(StreamMemoryTest, SlowKernelNeverHoldsMoreThanInFlightBuffers) {
  const std::size_t depth = GetParam();
  const genotype_data& g = genotypes();
  column_stream<double> stream(g.s, options_with(depth, 1));
  ASSERT_EQ(stream.in_flight(), depth);
  std::set<const double*> buffers;
  const std::vector<std::size_t> order = all_columns(40);
  stream.run(order, [&](const column_view<double>& v) {
    buffers.insert(v.values.data());
    std::this_thread::sleep_for(1ms);  // compute-bound: decode runs as far ahead as it may
    return true;
  });
  EXPECT_LE(stream.peak_buffers_in_use(), depth);
  // An independent count: one column per block, so each distinct address is a pool buffer.
  EXPECT_LE(buffers.size(), depth);
  // The bound is reached, so the check above is not vacuous: decode did run ahead.
  if (tbb::this_task_arena::max_concurrency() > 1) {
    EXPECT_EQ(stream.peak_buffers_in_use(), depth);
  }
}

TEST_P(StreamMemoryTest, SlowDecodeNeverHoldsMoreThanInFlightBuffers) {
  const std::size_t depth = GetParam();
  // Long columns through zlib with shuffle: decoding costs far more than the kernel.
  static const long_store data;
  const store& s = data.s;
  const auto expected = read_all<double>(s, decode_as::standardized);
  for (std::size_t per_block : {std::size_t{1}, std::size_t{3}}) {
    stream_options o;
    o.in_flight = depth;
    o.block_bytes = per_block * long_rows * sizeof(double);
    column_stream<double> stream(s, o);
    ASSERT_EQ(stream.columns_per_block(), per_block);
    std::size_t seen = 0, wrong_values = 0;
    stream.run(all_columns(long_columns), [&](const column_view<double>& v) {
      ++seen;
      wrong_values += !same_bits<double>(values_of<double>(v), expected[v.column]);
      return true;
    });
    EXPECT_EQ(seen, long_columns);
    EXPECT_EQ(wrong_values, 0u);
    EXPECT_LE(stream.peak_buffers_in_use(), depth) << "block of " << per_block;
    EXPECT_GE(stream.peak_buffers_in_use(), 1u);
  }
}

INSTANTIATE_TEST_SUITE_P(Depths, StreamMemoryTest,
                         testing::Values(std::size_t{1}, std::size_t{2}, std::size_t{8}),
                         depth_name);

// ==== Early stop and errors, per depth and block size

class StreamEarlyStopTest : public testing::TestWithParam<depth_case> {
 protected:
  watchdog dog_{time_limit};
};

TEST_P(StreamEarlyStopTest, StopsRightAfterTheKernelSaysSo) {
  const auto [depth, per_block] = GetParam();
  const genotype_data& g = genotypes();
  column_stream<double> stream(g.s, options_with(depth, per_block));
  std::mt19937_64 rng(5);
  const std::vector<std::size_t> order = random_order(100, columns, rng);
  for (mode m : {mode::pipelined, mode::sequential}) {
    for (std::size_t k : {0, 1, 7, 8, 9, 33, 99}) {
      SCOPED_TRACE(mode_name(m) + " stop at " + std::to_string(k));
      calls seen;
      const pass_stats st = run_pass<double>(stream, m, order, [&](const column_view<double>& v) {
        seen.emplace_back(v.column, v.position);
        return v.position != k;
      });
      EXPECT_EQ(seen, expected_calls(std::span(order).first(k + 1)));
      EXPECT_TRUE(st.stopped_early);
      EXPECT_EQ(st.columns, k + 1);
      EXPECT_EQ(st.bytes_decoded, (k + 1) * rows * sizeof(double));

      // The next pass runs in full.
      seen.clear();
      const pass_stats full = run_pass<double>(stream, m, order, [&](const column_view<double>& v) {
        seen.emplace_back(v.column, v.position);
        return true;
      });
      EXPECT_EQ(seen, expected_calls(order));
      EXPECT_FALSE(full.stopped_early);
      EXPECT_EQ(full.columns, order.size());
    }
  }
  EXPECT_LE(stream.peak_buffers_in_use(), depth);
}

INSTANTIATE_TEST_SUITE_P(DepthsAndBlocks, StreamEarlyStopTest, depth_cases, depth_case_name);

class StreamErrorTest : public testing::TestWithParam<depth_case> {
 protected:
  watchdog dog_{time_limit};
};

TEST_P(StreamErrorTest, KernelExceptionNamesColumnAndPositionAndStreamRecovers) {
  const auto [depth, per_block] = GetParam();
  const genotype_data& g = genotypes();
  column_stream<double> stream(g.s, options_with(depth, per_block));
  std::mt19937_64 rng(depth * 31 + per_block);
  const std::vector<std::size_t> order = random_order(80, columns, rng);
  std::uniform_int_distribution<std::size_t> pick(0, order.size() - 1);
  // 4 depths x 2 block sizes x 40 = 320 failing passes, each followed by a full one.
  for (int attempt = 0; attempt < 40; ++attempt) {
    const std::size_t p = pick(rng);
    const bool as_colflow_error = attempt % 2 == 1;
    const mode m = attempt % 5 == 4 ? mode::sequential : mode::pipelined;
    SCOPED_TRACE(mode_name(m) + " attempt " + std::to_string(attempt) + " throws at position " +
                 std::to_string(p));
    std::size_t calls_made = 0;
    try {
      run_pass<double>(stream, m, order, [&](const column_view<double>& v) -> bool {
        ++calls_made;
        if (v.position == p) {
          if (as_colflow_error) throw error(errc::bad_input, "kernel says no");
          throw std::runtime_error("kernel says no");
        }
        return true;
      });
      ADD_FAILURE() << "run did not throw";
    } catch (const error& e) {
      EXPECT_EQ(e.kind(), as_colflow_error ? errc::bad_input : errc::kernel_error);
      EXPECT_TRUE(names(e.message(), "column", order[p])) << e.message();
      EXPECT_TRUE(names(e.message(), "position", p)) << e.message();
      EXPECT_NE(e.message().find("kernel says no"), std::string::npos) << e.message();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a colflow::error: " << e.what();
    }
    // A cancelled pass calls the kernel no more.
    EXPECT_EQ(calls_made, p + 1);

    calls seen;
    std::size_t wrong_values = 0;
    const pass_stats st = stream.run(order, [&](const column_view<double>& v) {
      seen.emplace_back(v.column, v.position);
      wrong_values += !same_bits<double>(values_of<double>(v), g.z[v.column]);
      return true;
    });
    EXPECT_EQ(seen, expected_calls(order));
    EXPECT_EQ(wrong_values, 0u);
    EXPECT_EQ(st.columns, order.size());
    if (HasFailure()) break;  // one failing attempt tells the story
  }
  EXPECT_LE(stream.peak_buffers_in_use(), depth);
}

INSTANTIATE_TEST_SUITE_P(DepthsAndBlocks, StreamErrorTest, depth_cases, depth_case_name);

// A zstd genotype store whose column `bad` has a damaged frame (its magic number flipped),
// written once per process.
constexpr std::size_t bad = 23;

struct damaged_store {
  test::temp_dir dir;
  fs::path path = dir / "damaged.cf";
  bool damaged = [this] {
    test::write_genotype_store(path, rows, columns, {codec_id::zstd, 3, false}, 3);
    const std::uint64_t offset = store::open(path).entry(bad).offset;
    std::vector<char> data = test::read_file(path / "columns.dat");
    if (offset >= data.size()) return false;
    data[offset] = static_cast<char>(data[offset] ^ 0x5a);
    test::write_file(path / "columns.dat", data);
    return true;
  }();
};

class StreamCorruptFrameTest : public testing::Test {
 protected:
  void SetUp() override {
    static const damaged_store data;
    ASSERT_TRUE(data.damaged);
    path_ = data.path;
  }

  fs::path path_;
  watchdog dog_{time_limit};
};

TEST_F(StreamCorruptFrameTest, DecodeErrorNamesTheColumnAndOtherColumnsStillStream) {
  const store s = store::open(path_, {access_mode::mmap, false});
  std::vector<std::vector<double>> expected(columns, std::vector<double>(rows));
  for (std::size_t j = 0; j < columns; ++j)
    if (j != bad) s.read_column(j, expected[j]);
  std::vector<std::size_t> good = all_columns(columns);
  good.erase(good.begin() + bad);
  for (const auto& [depth, per_block] : every_depth_case) {
    column_stream<double> stream(s, options_with(depth, per_block));
    for (int attempt = 0; attempt < 2; ++attempt) {
      for (mode m : {mode::pipelined, mode::sequential}) {
        SCOPED_TRACE(depth_case_label(depth, per_block) + " " + mode_name(m));
        try {
          run_pass<double>(stream, m, all_columns(columns),
                           [](const column_view<double>&) { return true; });
          ADD_FAILURE() << "run did not throw";
        } catch (const error& e) {
          EXPECT_EQ(e.kind(), errc::corrupt_frame) << e.message();
          EXPECT_TRUE(names(e.message(), "column", bad)) << e.message();
          EXPECT_TRUE(names(e.message(), "position", bad)) << e.message();
        }
        std::size_t seen = 0, wrong_values = 0;
        const pass_stats st = run_pass<double>(stream, m, good, [&](const column_view<double>& v) {
          ++seen;
          wrong_values += !same_bits<double>(values_of<double>(v), expected[v.column]);
          return true;
        });
        EXPECT_EQ(seen, good.size());
        EXPECT_EQ(wrong_values, 0u);
        EXPECT_EQ(st.columns, good.size());
      }
    }
  }
}

TEST_F(StreamCorruptFrameTest,
       BatchesCoverTheOrderInOrderAndRaiseADecodeErrorAfterTheColumnsBefore) {
  const store s = store::open(path_, {access_mode::mmap, false});
  std::mt19937_64 rng(12);
  const std::vector<std::size_t> order = random_order(3 * columns, columns, rng);
  std::vector<std::size_t> good;
  for (std::size_t j : order)
    if (j != bad) good.push_back(j);
  for (const auto& [depth, per_block] : every_depth_case) {
    SCOPED_TRACE(depth_case_label(depth, per_block));
    column_stream<double> stream(s, options_with(depth, per_block));
    calls seen;
    std::size_t batches = 0, largest = 0;
    const pass_stats st = stream.run_batches(good, [&](std::span<const column_view<double>> b) {
      ++batches;
      largest = std::max(largest, b.size());
      for (const column_view<double>& v : b) seen.emplace_back(v.column, v.position);
      return true;
    });
    EXPECT_EQ(seen, expected_calls(good));  // every position once, in order
    EXPECT_EQ(st.columns, good.size());
    EXPECT_LE(largest, stream.columns_per_block());
    if (stream.columns_per_block() > 1 && good.size() >= 4 * depth * stream.columns_per_block()) {
      EXPECT_LT(batches, good.size());  // columns do travel together
    }
    // The damaged column: the columns before it are computed, then its error is raised.
    seen.clear();
    try {
      stream.run_batches(order, [&](std::span<const column_view<double>> b) {
        for (const column_view<double>& v : b) seen.emplace_back(v.column, v.position);
        return true;
      });
      ADD_FAILURE() << "run_batches did not throw";
    } catch (const error& e) {
      EXPECT_EQ(e.kind(), errc::corrupt_frame) << e.message();
      EXPECT_TRUE(names(e.message(), "column", bad)) << e.message();
    }
    const std::size_t first_bad =
        static_cast<std::size_t>(std::find(order.begin(), order.end(), bad) - order.begin());
    EXPECT_EQ(seen, expected_calls(std::span(order).first(first_bad)));
    // A kernel error names the batch's positions, and the stream stays usable.
    try {
      stream.run_batches(good, [&](std::span<const column_view<double>>) -> bool {
        throw std::runtime_error("boom");
      });
      ADD_FAILURE() << "run_batches did not throw";
    } catch (const error& e) {
      EXPECT_EQ(e.kind(), errc::kernel_error);
      EXPECT_NE(e.message().find("positions 0 to "), std::string::npos) << e.message();
      EXPECT_NE(e.message().find("boom"), std::string::npos) << e.message();
    }
    std::size_t again = 0;
    stream.run_batches(good, [&](std::span<const column_view<double>> b) {
      again += b.size();
      return again < 5;  // an early stop after the batch that reaches 5
    });
    EXPECT_GE(again, 5u);
    EXPECT_LT(again, 5u + stream.columns_per_block());
  }
}

TEST_F(StreamCorruptFrameTest, ChecksumVerificationReportsMismatch) {
  const store s = store::open(path_, {access_mode::mmap, false});
  const std::vector<std::size_t> order = {1, 2, bad, 4};
  for (const auto& [depth, per_block] : every_depth_case) {
    stream_options o = options_with(depth, per_block);
    o.verify_checksums = true;
    column_stream<double> stream(s, o);
    for (mode m : {mode::pipelined, mode::sequential}) {
      SCOPED_TRACE(depth_case_label(depth, per_block) + " " + mode_name(m));
      try {
        run_pass<double>(stream, m, order, [](const column_view<double>&) { return true; });
        ADD_FAILURE() << "run did not throw";
      } catch (const error& e) {
        EXPECT_EQ(e.kind(), errc::checksum_mismatch) << e.message();
        EXPECT_TRUE(names(e.message(), "column", bad)) << e.message();
        EXPECT_TRUE(names(e.message(), "position", 2)) << e.message();
      }
    }
  }
}

// The outcome of a pass depends only on the data, the order and the kernel
// (stream/column_stream.hpp), as with run_sequential: a damaged column after the kernel's stop must
// not fail the pass, and a kernel error before it is the one reported, whatever the depth (though
// decode, running ahead, may well have reached the damaged column first).
TEST_F(StreamCorruptFrameTest, DamagedColumnPastAnEarlyStopDoesNotFailThePass) {
  const store s = store::open(path_, {access_mode::mmap, false});
  for (const auto& [depth, per_block] : every_depth_case) {
    column_stream<double> stream(s, options_with(depth, per_block));
    for (mode m : {mode::pipelined, mode::sequential}) {
      SCOPED_TRACE(depth_case_label(depth, per_block) + " " + mode_name(m));
      std::size_t seen = 0;
      try {
        const pass_stats st =
            run_pass<double>(stream, m, all_columns(columns), [&](const column_view<double>& v) {
              ++seen;
              if (v.position == 0) std::this_thread::sleep_for(20ms);  // let decode run ahead
              return v.position < 2;
            });
        EXPECT_TRUE(st.stopped_early);
        EXPECT_EQ(seen, 3u);
      } catch (const error& e) {
        ADD_FAILURE() << "a pass stopped at position 2 failed on column " << bad << ": "
                      << e.message();
      }
    }
  }
}

TEST_F(StreamCorruptFrameTest, KernelErrorBeforeADamagedColumnIsTheOneReported) {
  const store s = store::open(path_, {access_mode::mmap, false});
  for (const auto& [depth, per_block] : every_depth_case) {
    column_stream<double> stream(s, options_with(depth, per_block));
    for (mode m : {mode::pipelined, mode::sequential}) {
      SCOPED_TRACE(depth_case_label(depth, per_block) + " " + mode_name(m));
      try {
        run_pass<double>(stream, m, all_columns(columns),
                         [&](const column_view<double>& v) -> bool {
                           if (v.position == 0) std::this_thread::sleep_for(20ms);
                           if (v.position == 2) throw std::runtime_error("kernel gives up");
                           return true;
                         });
        ADD_FAILURE() << "run did not throw";
      } catch (const error& e) {
        EXPECT_EQ(e.kind(), errc::kernel_error) << e.message();
        EXPECT_TRUE(names(e.message(), "position", 2)) << e.message();
      }
    }
  }
}

// ==== Invalid orders

class StreamArgumentTest : public testing::Test {
 protected:
  watchdog dog_{time_limit};
};

TEST_F(StreamArgumentTest, OrderIndexOutOfRangeIsRejectedBeforeAnythingRuns) {
  const genotype_data& g = genotypes();
  column_stream<double> stream(g.s, options_with(4, 1));
  const std::vector<std::vector<std::size_t>> bad_orders = {
      {0, 1, columns}, {columns + 100}, {3, static_cast<std::size_t>(-1), 4}};
  for (const auto& order : bad_orders) {
    for (mode m : {mode::pipelined, mode::sequential}) {
      std::size_t calls_made = 0;
      try {
        run_pass<double>(stream, m, order, [&](const column_view<double>&) {
          ++calls_made;
          return true;
        });
        ADD_FAILURE() << mode_name(m) << " accepted an out-of-range column";
      } catch (const error& e) {
        EXPECT_EQ(e.kind(), errc::invalid_argument) << e.message();
      }
      EXPECT_EQ(calls_made, 0u) << mode_name(m);
    }
  }
  std::size_t seen = 0;
  stream.run(all_columns(columns), [&](const column_view<double>&) { return ++seen, true; });
  EXPECT_EQ(seen, columns);
}

// Each stream below runs a pass before it is destroyed: StreamLifetimeTest covers streams
// that never ran one.
TEST_F(StreamArgumentTest, InFlightDefaultsToTwiceTheArenaConcurrency) {
  const genotype_data& g = genotypes();
  column_stream<double> stream(g.s);
  EXPECT_EQ(stream.in_flight(),
            2 * static_cast<std::size_t>(tbb::this_task_arena::max_concurrency()));
  EXPECT_EQ(&stream.source(), &g.s);
  EXPECT_EQ(stream.options().block_bytes, stream_options{}.block_bytes);
  std::size_t seen = 0;
  stream.run(all_columns(columns), [&](const column_view<double>&) { return ++seen, true; });
  EXPECT_EQ(seen, columns);
  EXPECT_LE(stream.peak_buffers_in_use(), stream.in_flight());
}

TEST_F(StreamArgumentTest, ColumnsPerBlockFollowsBlockBytes) {
  const genotype_data& g = genotypes();
  const std::vector<std::size_t> order = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 59, 58};
  const auto check = [&](auto& stream, std::size_t expected_per_block) {
    EXPECT_EQ(stream.columns_per_block(), expected_per_block);
    std::vector<std::size_t> seen;
    stream.run(order, [&](const auto& v) { return seen.push_back(v.column), true; });
    EXPECT_EQ(seen, order) << expected_per_block << " columns per block";
  };
  stream_options o;
  o.in_flight = 2;
  o.block_bytes = 1;
  column_stream<double> one(g.s, o);
  check(one, 1);
  o.block_bytes = 5 * rows * sizeof(double) + 7;
  column_stream<double> five(g.s, o);
  check(five, 5);
  column_stream<float> ten(g.s, o);
  check(ten, 10);
  // Without values, a genotype block is sized by its codes.
  o.decode_values = false;
  column_stream<double> codes_only(g.s, o);
  check(codes_only, o.block_bytes / genotype_column_bytes(rows));
}

// Messages are sized by what they carry: a float store's columns are no smaller for not
// being decoded, so switching values off must not make a message group more of them (each
// grouped column costs pool memory: in_flight x columns_per_block slots are allocated).
TEST_F(StreamArgumentTest, FloatStoreWithoutValuesGroupsNoMoreColumnsThanWithValues) {
  const written_store& w = written({value_type::float64, {codec_id::zstd, 3, false}});
  const store s = store::open(w.path);
  stream_options o;
  o.in_flight = 1;
  o.block_bytes = 10 * rows * sizeof(double);
  column_stream<double> with_values(s, o);
  o.decode_values = false;
  column_stream<double> without_values(s, o);
  EXPECT_EQ(with_values.columns_per_block(), 10u);
  EXPECT_LE(without_values.columns_per_block(), with_values.columns_per_block());
  std::vector<std::size_t> seen;
  for (auto* stream : {&with_values, &without_values}) {
    seen.clear();
    stream->run(all_columns(columns),
                [&](const column_view<double>& v) { return seen.push_back(v.column), true; });
    EXPECT_EQ(seen, all_columns(columns));
  }
}

TEST_F(StreamArgumentTest, MovedStreamStillRuns) {
  const genotype_data& g = genotypes();
  column_stream<double> first(g.s, options_with(3, 2));
  column_stream<double> second(std::move(first));
  calls seen;
  const std::vector<std::size_t> order = {5, 4, 3, 5};
  second.run(order, [&](const column_view<double>& v) {
    seen.emplace_back(v.column, v.position);
    return true;
  });
  EXPECT_EQ(seen, expected_calls(order));
}

// ==== Determinism: a Gibbs-like residual update gives the same bits whatever the threads

class StreamDeterminismTest : public testing::Test {
 protected:
  watchdog dog_{time_limit};
};

// y = z_0 + z_5 / 2 + noise, with a fixed seed.
std::vector<double> made_up_phenotype(const genotype_data& g) {
  std::mt19937_64 rng(2024);
  std::normal_distribution<double> noise(0, 1);
  std::vector<double> y(rows);
  for (std::size_t i = 0; i < rows; ++i) y[i] = g.z[0][i] + 0.5 * g.z[5][i] + noise(rng);
  return y;
}

// One residual update: b = z.r / (n - 1) / 2; r -= b z. Plain loops, a fixed summation order.
void update_residual(std::span<const double> z, std::vector<double>& r) {
  double dot = 0;
  for (std::size_t i = 0; i < r.size(); ++i) dot += z[i] * r[i];
  const double b = dot / static_cast<double>(rows - 1) * 0.5;
  for (std::size_t i = 0; i < r.size(); ++i) r[i] -= b * z[i];
}

constexpr int residual_passes = 5;

std::vector<double> residuals_by_stream(column_stream<double>& stream, mode m,
                                        const std::vector<double>& y) {
  std::vector<double> r = y;
  std::mt19937_64 rng(77);
  for (int pass = 0; pass < residual_passes; ++pass) {
    const std::vector<std::size_t> order = shuffled_columns(columns, rng);
    run_pass<double>(stream, m, order, [&](const column_view<double>& v) {
      update_residual(values_of<double>(v), r);
      return true;
    });
  }
  return r;
}

TEST_F(StreamDeterminismTest, ResidualsAreBitIdenticalForAnyThreadsAndDepth) {
  const genotype_data& g = genotypes();
  const std::vector<double> y = made_up_phenotype(g);

  // The oracle: the same computation straight from read_column, no stream.
  std::vector<double> reference = y;
  {
    std::mt19937_64 rng(77);
    for (int pass = 0; pass < residual_passes; ++pass)
      for (std::size_t j : shuffled_columns(columns, rng)) update_residual(g.z[j], reference);
  }
  // The computation depends on the order: a stream that reordered would not match.
  {
    std::vector<double> unshuffled = y;
    for (int pass = 0; pass < residual_passes; ++pass)
      for (std::size_t j = 0; j < columns; ++j) update_residual(g.z[j], unshuffled);
    ASSERT_FALSE(same_bits<double>(unshuffled, reference));
  }

  for (std::size_t threads : {1, 2, 8}) {
    std::vector<std::pair<std::string, column_stream<double>>> streams;
    for (std::size_t depth : {1, 32})
      for (std::size_t per_block : {1, 8})
        streams.emplace_back(depth_case_label(depth, per_block),
                             warmed_stream<double>(g.s, options_with(depth, per_block)));
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    for (auto& [label, stream] : streams) {
      for (mode m : {mode::pipelined, mode::sequential}) {
        const std::vector<double> r = residuals_by_stream(stream, m, y);
        EXPECT_TRUE(same_bits<double>(r, reference))
            << mode_name(m) << " threads " << threads << " " << label;
      }
    }
  }
}

// ==== Nested parallelism inside the kernel

class StreamNestedTest : public testing::Test {
 protected:
  watchdog dog_{time_limit};
};

// Sum over columns of the sum of squares of the values, computed with nested TBB algorithms.
struct nested_sums {
  double deterministic = 0;  // parallel_for + parallel_deterministic_reduce
  double plain = 0;          // parallel_reduce (summation order may vary)
};

nested_sums nested_pass(column_stream<double>& stream, mode m, std::span<const std::size_t> order) {
  nested_sums sums;
  std::vector<double> squares(rows);
  run_pass<double>(stream, m, order, [&](const column_view<double>& v) {
    const auto z = values_of<double>(v);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, z.size(), 16),
                      [&](const tbb::blocked_range<std::size_t>& r) {
                        for (std::size_t i = r.begin(); i < r.end(); ++i) squares[i] = z[i] * z[i];
                      });
    sums.deterministic += tbb::parallel_deterministic_reduce(
        tbb::blocked_range<std::size_t>(0, squares.size(), 16), 0.0,
        [&](const tbb::blocked_range<std::size_t>& r, double acc) {
          for (std::size_t i = r.begin(); i < r.end(); ++i) acc += squares[i];
          return acc;
        },
        std::plus<>());
    sums.plain += tbb::parallel_reduce(
        tbb::blocked_range<std::size_t>(0, z.size(), 16), 0.0,
        [&](const tbb::blocked_range<std::size_t>& r, double acc) {
          for (std::size_t i = r.begin(); i < r.end(); ++i) acc += z[i] * z[i];
          return acc;
        },
        std::plus<>());
    return true;
  });
  return sums;
}

TEST_F(StreamNestedTest, KernelWithNestedParallelAlgorithmsGetsTheRightSums) {
  const genotype_data& g = genotypes();
  std::mt19937_64 rng(9);
  const std::vector<std::size_t> order = random_order(120, columns, rng);
  double expected = 0;
  for (std::size_t j : order)
    for (double x : g.z[j]) expected += x * x;

  column_stream<double> baseline_stream(g.s, options_with(1, 1));
  nested_pass(baseline_stream, mode::pipelined, order);  // the stream ran the graph before
  const nested_sums baseline = nested_pass(baseline_stream, mode::sequential, order);
  EXPECT_NEAR(baseline.deterministic, expected, 1e-9 * expected);
  EXPECT_NEAR(baseline.plain, expected, 1e-9 * expected);

  for (std::size_t threads : {1, 2, 8}) {
    column_stream<double> shallow = warmed_stream<double>(g.s, options_with(1, 4));
    column_stream<double> deep = warmed_stream<double>(g.s, options_with(8, 4));
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    for (auto* stream : {&shallow, &deep}) {
      const std::size_t depth = stream->in_flight();
      const nested_sums s = nested_pass(*stream, mode::pipelined, order);
      EXPECT_EQ(std::bit_cast<std::uint64_t>(s.deterministic),
                std::bit_cast<std::uint64_t>(baseline.deterministic))
          << "threads " << threads << " depth " << depth;
      EXPECT_NEAR(s.plain, expected, 1e-9 * expected);
    }
  }
}

TEST_F(StreamNestedTest, ExceptionFromANestedParallelForReachesTheCaller) {
  const genotype_data& g = genotypes();
  const std::vector<std::size_t> order = all_columns(columns);
  for (std::size_t depth : {1, 8}) {
    column_stream<double> stream(g.s, options_with(depth, 1));
    for (std::size_t p : {0, 17, 59}) {
      SCOPED_TRACE("depth " + std::to_string(depth) + " throws at position " + std::to_string(p));
      try {
        stream.run(order, [&](const column_view<double>& v) {
          tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rows, 16),
                            [&](const tbb::blocked_range<std::size_t>& r) {
                              if (v.position == p && r.begin() == 0)
                                throw std::runtime_error("nested failure");
                            });
          return true;
        });
        ADD_FAILURE() << "run did not throw";
      } catch (const error& e) {
        EXPECT_EQ(e.kind(), errc::kernel_error) << e.message();
        EXPECT_TRUE(names(e.message(), "column", order[p])) << e.message();
        EXPECT_TRUE(names(e.message(), "position", p)) << e.message();
        EXPECT_NE(e.message().find("nested failure"), std::string::npos) << e.message();
      }
      const nested_sums sums = nested_pass(stream, mode::pipelined, order);
      double expected = 0;
      for (std::size_t j : order)
        for (double x : g.z[j]) expected += x * x;
      EXPECT_NEAR(sums.plain, expected, 1e-9 * expected);
    }
  }
}

// ==== Progress and stats

class StreamProgressTest : public testing::Test {
 protected:
  watchdog dog_{time_limit};
};

TEST_F(StreamProgressTest, CalledEveryPassAndEndsAtTheOrderSize) {
  const genotype_data& g = genotypes();
  column_stream<double> stream(g.s, options_with(4, 1));
  std::vector<pass_progress> reports;
  stream.on_progress([&](const pass_progress& p) { reports.push_back(p); });
  std::mt19937_64 rng(4);
  for (mode m : {mode::pipelined, mode::sequential}) {
    for (const std::vector<std::size_t>& order :
         {random_order(70, columns, rng), std::vector<std::size_t>{3}, all_columns(columns)}) {
      reports.clear();
      run_pass<double>(stream, m, order, [](const column_view<double>&) { return true; });
      ASSERT_FALSE(reports.empty()) << mode_name(m) << " order of " << order.size();
      EXPECT_EQ(reports.back().columns_done, order.size());
      EXPECT_EQ(reports.back().columns_total, order.size());
      EXPECT_EQ(reports.back().bytes_read, frame_bytes(g.s, order));
      for (std::size_t i = 1; i < reports.size(); ++i) {
        EXPECT_LE(reports[i - 1].columns_done, reports[i].columns_done);
        EXPECT_LE(reports[i - 1].seconds, reports[i].seconds);
      }
    }
  }
}

TEST_F(StreamProgressTest, ReportsDuringALongPass) {
  const genotype_data& g = genotypes();
  column_stream<double> stream(g.s, options_with(4, 1));
  std::vector<std::uint64_t> done;
  stream.on_progress([&](const pass_progress& p) { done.push_back(p.columns_done); });
  // 60 columns x 6 ms: well over the tenth of a second between reports.
  stream.run(all_columns(columns), [](const column_view<double>&) {
    std::this_thread::sleep_for(6ms);
    return true;
  });
  ASSERT_GE(done.size(), 2u);
  EXPECT_LT(done.front(), columns);
  EXPECT_EQ(done.back(), columns);
}

class StreamStatsTest : public testing::Test {
 protected:
  watchdog dog_{time_limit};
};

TEST_F(StreamStatsTest, CountsColumnsBytesAndTime) {
  const genotype_data& g = genotypes();
  std::mt19937_64 rng(8);
  const std::vector<std::size_t> order = random_order(90, columns, rng);
  for (std::size_t per_block : {1, 8}) {
    column_stream<double> stream(g.s, options_with(4, per_block));
    column_stream<float> stream_f(g.s, options_with(4, per_block));
    for (mode m : {mode::pipelined, mode::sequential}) {
      SCOPED_TRACE(mode_name(m) + " block " + std::to_string(per_block));
      const pass_stats st = run_pass<double>(stream, m, order, [](const column_view<double>&) {
        std::this_thread::sleep_for(200us);
        return true;
      });
      EXPECT_EQ(st.columns, order.size());
      EXPECT_EQ(st.bytes_read, frame_bytes(g.s, order));
      EXPECT_EQ(st.bytes_decoded, order.size() * rows * sizeof(double));
      EXPECT_GE(st.wall_seconds, st.compute_busy_seconds);
      EXPECT_GE(st.compute_busy_seconds, 90 * 200e-6);
      EXPECT_GE(st.compute_wait_seconds, 0.0);
      EXPECT_NEAR(st.compute_busy_seconds + st.compute_wait_seconds, st.wall_seconds, 1e-9);
      EXPECT_FALSE(st.stopped_early);

      const pass_stats sf =
          run_pass<float>(stream_f, m, order, [](const column_view<float>&) { return true; });
      EXPECT_EQ(sf.columns, order.size());
      EXPECT_EQ(sf.bytes_read, frame_bytes(g.s, order));
      EXPECT_EQ(sf.bytes_decoded, order.size() * rows * sizeof(float));
      EXPECT_GE(sf.wall_seconds, sf.compute_busy_seconds);
    }
  }
  // An empty pass did nothing.
  column_stream<double> stream(g.s, options_with(2, 1));
  const pass_stats none = stream.run({}, [](const column_view<double>&) { return true; });
  EXPECT_EQ(none.columns, 0u);
  EXPECT_EQ(none.bytes_read, 0u);
  EXPECT_EQ(none.bytes_decoded, 0u);
  EXPECT_FALSE(none.stopped_early);
}

// ==== Lifetime and threads (last in the file: a crash here must not hide the tests above)

// Runs `body` in this child process (gtest's death-test machinery re-executes this binary for
// the test), then exits 0 after printing "child done". A crash or a hang (reported after 10 s)
// fails the calling test only.
template <typename Body>
[[noreturn]] void child_main(Body body) {
  std::thread([] {
    std::this_thread::sleep_for(10s);
    std::fprintf(stderr, "child hung for 10 s\n");
    std::_Exit(3);
  }).detach();
  body();
  std::fprintf(stderr, "child done\n");
  std::exit(0);
}

// Calls `body(depth, k)` for in-flight depths 1, 2, 8, 64 and k = 0..9.
template <typename Body>
void for_each_depth(Body body) {
  for (std::size_t depth : {1, 2, 8, 64})
    for (std::size_t k = 0; k < 10; ++k) body(depth, k);
}

// One thread (no TBB worker can run anything behind the test's back, which makes a problem
// show every time), then the default parallelism.
template <typename Body>
void on_one_thread_then_all(Body body) {
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
    body();
  }
  body();
}

// A stream is destroyed safely whatever it did before: nothing at all, only sequential passes,
// or a pass rejected before it began.
class StreamLifetimeTest : public testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
  watchdog dog_{time_limit};
};

TEST_F(StreamLifetimeTest, DestroyedWithoutEverRunning) {
  const auto body = [] {
    on_one_thread_then_all([] {
      for_each_depth([](std::size_t depth, std::size_t k) {
        column_stream<double> stream(genotypes().s, options_with(depth, 1 + k % 2 * 7));
      });
    });
  };
  EXPECT_EXIT(child_main(body), testing::ExitedWithCode(0), "child done");
}

TEST_F(StreamLifetimeTest, DestroyedAfterOnlySequentialPasses) {
  // The baseline of the benchmarks: a stream that only ever runs run_sequential.
  const auto body = [] {
    on_one_thread_then_all([] {
      for_each_depth([](std::size_t depth, std::size_t k) {
        column_stream<double> stream(genotypes().s, options_with(depth, 1));
        stream.run_sequential(std::vector<std::size_t>{k, k + 1},
                              [](const column_view<double>&) { return true; });
      });
    });
  };
  EXPECT_EXIT(child_main(body), testing::ExitedWithCode(0), "child done");
}

TEST_F(StreamLifetimeTest, DestroyedAfterARejectedOrder) {
  const auto body = [] {
    on_one_thread_then_all([] {
      for_each_depth([](std::size_t depth, std::size_t k) {
        column_stream<double> stream(genotypes().s, options_with(depth, 1));
        try {
          stream.run(std::vector<std::size_t>{k, columns + k},
                     [](const column_view<double>&) { return true; });
        } catch (const error&) {
        }
      });
    });
  };
  EXPECT_EXIT(child_main(body), testing::ExitedWithCode(0), "child done");
}

TEST_F(StreamLifetimeTest, DestroyedAfterAFailedOrStoppedPass) {
  // After a pass through the graph, however it ended. (Default parallelism only: a first pass
  // on one thread is StreamThreadsTest's subject.)
  const auto body = [] {
    for_each_depth([](std::size_t depth, std::size_t k) {
      column_stream<double> stream(genotypes().s, options_with(depth, 1));
      try {
        stream.run(all_columns(columns), [&](const column_view<double>& v) -> bool {
          if (k % 2 == 0 && v.position == 7) throw std::runtime_error("stop here");
          return v.position < 7;
        });
      } catch (const error&) {
      }
    });
  };
  EXPECT_EXIT(child_main(body), testing::ExitedWithCode(0), "child done");
}

// A field of /proc/self/status ("Threads", "VmRSS" in kB).
long status_field(const std::string& name) {
  FILE* f = std::fopen("/proc/self/status", "r");
  char line[256];
  long value = -1;
  while (f && std::fgets(line, sizeof line, f))
    if (std::strncmp(line, name.c_str(), name.size()) == 0 && line[name.size()] == ':')
      value = std::strtol(line + name.size() + 1, nullptr, 10);
  if (f) std::fclose(f);
  return value;
}

TEST_F(StreamLifetimeTest, TenThousandFailedCancelledOrStoppedPassesLeakNothing) {
  // Kernel exceptions, cancellations and early stops at random positions, on one stream and on
  // fresh ones: afterwards no thread, buffer or memory is left behind and the stream still runs.
  column_stream<double> stream(genotypes().s, options_with(4, 1));
  std::mt19937_64 rng(12);
  std::uint64_t failed = 0, stopped = 0;
  const auto passes = [&](int count) {
    for (int k = 0; k < count; ++k) {
      const std::size_t at = rng() % columns;
      const auto how = rng() % 3;
      const auto kernel = [&](const column_view<double>& v) -> bool {
        if (v.position == at && how == 0) throw std::runtime_error("kernel failure");
        if (v.position == at && how == 1) throw error(errc::cancelled, "cancelled by the test");
        return !(how == 2 && v.position == at);
      };
      try {
        if (k % 16 == 0) {
          column_stream<double> fresh(genotypes().s, options_with(1 + k % 5, 1 + k % 3));
          stopped += fresh.run(all_columns(columns), kernel).stopped_early;
        } else {
          stopped += stream.run(all_columns(columns), kernel).stopped_early;
        }
      } catch (const error&) {
        ++failed;
      }
    }
  };
  passes(500);  // the steady state: TBB's workers started, pools allocated
  const long threads = status_field("Threads"), rss = status_field("VmRSS");
  passes(10000);
  EXPECT_GT(failed, 6000u);
  EXPECT_GT(stopped, 3000u);
  EXPECT_EQ(status_field("Threads"), threads);
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer keeps freed memory in quarantine, so RSS grows without any leak; its
  // leak checker looks for unreachable blocks instead.
  (void)rss;
  EXPECT_EQ(__lsan_do_recoverable_leak_check(), 0) << "leaks after 10,000 passes";
#else
  EXPECT_LT(status_field("VmRSS") - rss, 4096) << "kB grown over 10,000 passes";
#endif
  EXPECT_LE(stream.peak_buffers_in_use(), stream.in_flight());
  // Still usable: a whole pass sees every column, in order.
  std::size_t seen = 0;
  stream.run(all_columns(columns), [&](const column_view<double>& v) {
    EXPECT_EQ(v.position, seen++);
    return true;
  });
  EXPECT_EQ(seen, columns);
}

// The calling thread alone can run a pass: nothing may wait for a TBB worker thread to exist
// (tbb::global_control max_allowed_parallelism 1, e.g. colflow bench --threads 1).
class StreamThreadsTest : public testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
  watchdog dog_{time_limit};
};

TEST_F(StreamThreadsTest, FirstPassOnOneThreadCompletes) {
  const auto body = [] {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
    for (std::size_t depth : {1, 2, 8}) {
      for (std::size_t per_block : {1, 8}) {
        column_stream<double> stream(genotypes().s, options_with(depth, per_block));
        std::size_t seen = 0;
        const auto count = [&](const column_view<double>&) { return ++seen, true; };
        for (int pass = 0; pass < 2; ++pass) stream.run(all_columns(columns), count);
        if (seen != 2 * columns) {
          std::fprintf(stderr, "depth %zu: %zu calls\n", depth, seen);
          std::_Exit(4);
        }
      }
    }
  };
  EXPECT_EXIT(child_main(body), testing::ExitedWithCode(0), "child done");
}

TEST_F(StreamThreadsTest, StreamBuiltWithWorkersRunsOnOneThread) {
  // The control: the stream ran its first pass with workers about; then one thread is enough.
  const auto body = [] {
    for (std::size_t depth : {1, 2, 8}) {
      column_stream<double> stream = warmed_stream<double>(genotypes().s, options_with(depth, 1));
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
      std::size_t seen = 0;
      stream.run(all_columns(columns), [&](const column_view<double>&) { return ++seen, true; });
      if (seen != columns) std::_Exit(4);
    }
  };
  EXPECT_EXIT(child_main(body), testing::ExitedWithCode(0), "child done");
}

}  // namespace
}  // namespace colflow

namespace colflow {
namespace {

// A data file truncated by another program during a pass: in mmap mode the reads past the new
// end would raise SIGBUS; the pass must fail with an error naming the file instead, and the
// process live on. In pread mode the short read fails the same way.
TEST(StreamTruncationTest, DataFileShrinkingDuringAPassFailsThePassNotTheProcess) {
  for (const access_mode access : {access_mode::mmap, access_mode::pread})
    for (const codec_id codec : {codec_id::none, codec_id::zstd}) {
      SCOPED_TRACE(std::string(access == access_mode::mmap ? "mmap " : "pread ") +
                   std::string(traits_of(codec).name));
      test::temp_dir dir;
      test::write_genotype_store(dir / "g.cf", 5000, 300,
                                 column_encoding{codec, codec == codec_id::none ? 0 : 1}, 4);
      const store s = store::open(dir / "g.cf", {access, false});
      stream_options o;
      o.in_flight = 2;
      o.block_bytes = 1;  // one column per message: most columns are read after the cut
      column_stream<double> stream(s, o);
      std::size_t seen = 0;
      try {
        stream.run(all_columns(300), [&](const column_view<double>& v) {
          if (v.position == 20)
            std::filesystem::resize_file(dir / "g.cf" / "columns.dat", 64 + 100);
          ++seen;
          return true;
        });
        ADD_FAILURE() << "the pass over a shrunk file succeeded";
      } catch (const error& e) {
        EXPECT_NE(std::string(e.what()).find("columns.dat"), std::string::npos) << e.what();
      }
      EXPECT_LT(seen, 300u);
      // Later reads fail cleanly too.
      std::vector<double> values(s.num_rows());
      EXPECT_THROW(s.read_column(299, values), error);
    }
}

}  // namespace
}  // namespace colflow
