// Shared by the column_stream tests (column_stream*_test.cpp): the watchdog that fails a pass
// that hangs, the stores they stream (written once per process), the depth and block cases, and
// the helpers that compare what a kernel saw with the store.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "test_support.hpp"

namespace colflow::column_stream_tests {

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
inline std::vector<std::size_t> random_order(std::size_t length, std::size_t n,
                                             std::mt19937_64& rng) {
  std::uniform_int_distribution<std::size_t> pick(0, n - 1);
  std::vector<std::size_t> order(length);
  for (std::size_t& j : order) j = pick(rng);
  return order;
}

inline std::vector<std::size_t> shuffled_columns(std::size_t n, std::mt19937_64& rng) {
  std::vector<std::size_t> order = all_columns(n);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

// block_bytes that puts `per_block` columns of T in one message.
template <typename T>
std::size_t block_of(std::size_t per_block) {
  return per_block * rows * sizeof(T);
}

inline stream_options options_with(std::size_t depth, std::size_t per_block) {
  stream_options o;
  o.in_flight = depth;
  o.block_bytes = per_block == 1 ? 1 : block_of<double>(per_block);
  return o;
}

// What the kernel saw: (column, position) per call.
using calls = std::vector<std::pair<std::size_t, std::size_t>>;

inline calls expected_calls(std::span<const std::size_t> order) {
  calls c;
  for (std::size_t p = 0; p < order.size(); ++p) c.emplace_back(order[p], p);
  return c;
}

enum class mode { pipelined, sequential };

inline std::string mode_name(mode m) { return m == mode::pipelined ? "Run" : "RunSequential"; }

template <typename T>
pass_stats run_pass(column_stream<T>& stream, mode m, std::span<const std::size_t> order,
                    const column_kernel<T>& kernel) {
  return m == mode::pipelined ? stream.run(order, kernel) : stream.run_sequential(order, kernel);
}

// True when `message` names `what` followed by the number `n` as a whole word.
// (Plain search rather than std::regex, which GCC 12 -O2 flags with maybe-uninitialized.)
inline bool names(const std::string& message, const std::string& what, std::size_t n) {
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

inline const genotype_data& genotypes() {
  static const genotype_data data;
  return data;
}

using depth_case = std::tuple<std::size_t /*depth*/, std::size_t /*per_block*/>;

inline std::string depth_case_name(const testing::TestParamInfo<depth_case>& info) {
  return "Depth" + std::to_string(std::get<0>(info.param)) + "Block" +
         std::to_string(std::get<1>(info.param));
}

inline std::string depth_case_label(std::size_t depth, std::size_t per_block) {
  return "depth " + std::to_string(depth) + " block " + std::to_string(per_block);
}

const std::vector<std::pair<std::size_t, std::size_t>> every_depth_case = {
    {1, 1}, {1, 8}, {2, 1}, {2, 8}, {8, 1}, {8, 8}, {64, 1}, {64, 8}};

const auto depth_cases = testing::Combine(
    testing::Values(std::size_t{1}, std::size_t{2}, std::size_t{8}, std::size_t{64}),
    testing::Values(std::size_t{1}, std::size_t{8}));

// ==== The stores of the values tests (StreamValuesTest, StreamArgumentTest)

struct values_case {
  value_type type;
  column_encoding encoding;
};

inline std::string values_case_name(const values_case& c) {
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

inline const written_store& written(const values_case& c) {
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

}  // namespace colflow::column_stream_tests
