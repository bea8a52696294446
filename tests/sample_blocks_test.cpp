// Sample blocks (kernels/sample_blocks_internal.hpp): their geometry, sums added in block order,
// and the iterative analyses computed on them giving the same bits at 1, 2 and 3 threads,
// pipelined or sequential, on columns of several blocks whose length is a multiple of neither
// the block nor 4 (docs/DESIGN.md §4.8, §7).
#include <gtest/gtest.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <cmath>
#include <numeric>
#include <random>
#include <thread>

#include "colflow/analysis/bayesr.hpp"
#include "colflow/analysis/penalized.hpp"
#include "colflow/kernels/genotype_kernels.hpp"
#include "kernels/sample_blocks_internal.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

// Runs f with exactly `threads` threads: an arena of that many slots, and the global cap
// raised or lowered to match (on a 2-core machine the default arena has 2).
template <typename F>
auto with_threads(int threads, F&& f) {
  tbb::global_control cap(tbb::global_control::max_allowed_parallelism,
                          static_cast<std::size_t>(threads));
  tbb::task_arena arena(threads);
  return arena.execute(std::forward<F>(f));
}

// Five full blocks, a partial one, and a last byte of codes holding 3 samples: long enough for
// the loops to run across threads.
constexpr std::size_t long_rows = 5 * sample_block_rows + 1234 + 3;
static_assert(long_rows > parallel_rows_threshold);

TEST(SampleBlocksTest, BlocksCoverTheRowsInFixedPiecesOfWholeBytes) {
  static_assert(sample_block_rows % 4 == 0);
  sample_blocks none(0), one(sample_block_rows), some(long_rows);
  EXPECT_EQ(none.count(), 0u);
  EXPECT_EQ(one.count(), 1u);
  EXPECT_EQ(one.size(0), sample_block_rows);
  ASSERT_EQ(some.count(), 6u);
  EXPECT_EQ(some.first(5), 5 * sample_block_rows);
  EXPECT_EQ(some.size(4), sample_block_rows);
  EXPECT_EQ(some.size(5), 1237u);
  // Short columns never go parallel, long ones may.
  with_threads(2, [&] {
    EXPECT_FALSE(sample_blocks(parallel_rows_threshold - 1).parallel());
    EXPECT_TRUE(sample_blocks(parallel_rows_threshold).parallel());
    EXPECT_TRUE(sample_blocks(long_rows).parallel());
    EXPECT_FALSE(sample_blocks(long_rows, sample_blocks::never).parallel());
    EXPECT_TRUE(sample_blocks(2 * sample_block_rows, 0).parallel());
    EXPECT_FALSE(sample_blocks(sample_block_rows, 0).parallel());  // one block: nothing to share
  });
  with_threads(1, [&] { EXPECT_FALSE(sample_blocks(long_rows).parallel()); });
}

TEST(SampleBlocksTest, SumsAddBlockPartialsInBlockOrderWhateverTheThreads) {
  // Blocks whose sums cancel (1e16, then -1e16), so that another order or grouping of the
  // block partials gives other bits.
  std::mt19937_64 rng(5);
  std::vector<double> v(5 * sample_block_rows + 77);
  for (double& x : v) x = std::normal_distribution<double>()(rng);
  const double big[] = {1e16, 1.5, -1e16, 1.25, 3.0, 1.0};
  for (std::size_t b = 0; b < 6; ++b) v[b * sample_block_rows] += big[b];
  std::vector<double> partials, partial_squares;
  for (std::size_t first = 0; first < v.size(); first += sample_block_rows) {
    double partial = 0, squares = 0;
    for (std::size_t i = first; i < std::min(v.size(), first + sample_block_rows); ++i) {
      partial += v[i];
      squares += v[i] * v[i];
    }
    partials.push_back(partial);
    partial_squares.push_back(squares);
  }
  const double expected = std::accumulate(partials.begin(), partials.end(), 0.0);
  const double expected_squares =
      std::accumulate(partial_squares.begin(), partial_squares.end(), 0.0);
  EXPECT_NE(expected, std::accumulate(partials.rbegin(), partials.rend(), 0.0));  // order shows
  EXPECT_NE(expected, std::accumulate(v.begin(), v.end(), 0.0));  // so does the grouping
  for (int threads : {1, 2, 3})
    with_threads(threads, [&] {
      sample_blocks blocks(v.size());
      std::vector<int> visits(blocks.count(), 0);
      const auto [sum, squares] =
          blocks.sums<2>([&](std::size_t b, std::size_t first, std::size_t n, double* out) {
            ++visits[b];
            out[0] = out[1] = 0;
            for (std::size_t i = first; i < first + n; ++i) {
              out[0] += v[i];
              out[1] += v[i] * v[i];
            }
          });
      EXPECT_EQ(sum, expected) << threads << " threads";
      EXPECT_EQ(squares, expected_squares) << threads << " threads";
      EXPECT_EQ(visits, std::vector<int>(blocks.count(), 1));
      if (threads == 1) return;
      // The blocks really are shared: within a few thousand loops another thread computes some.
      const auto caller = std::this_thread::get_id();
      std::atomic<int> elsewhere{0};
      for (int loop = 0; loop < 5000 && elsewhere.load() == 0; ++loop) {
        const double again = blocks.sum([&](std::size_t, std::size_t first, std::size_t n) {
          if (std::this_thread::get_id() != caller) elsewhere.fetch_add(1);
          return std::accumulate(v.begin() + static_cast<long>(first),
                                 v.begin() + static_cast<long>(first + n), 0.0);
        });
        ASSERT_EQ(again, expected) << threads << " threads, loop " << loop;
      }
      EXPECT_GT(elsewhere.load(), 0) << threads << " threads";
    });
}

TEST(SampleBlocksTest, PackedKernelsOnBlocksEqualTheDecodedColumn) {
  // A block of rows is a run of whole bytes: the packed-code kernels on each block, added in
  // block order, give the column's product up to rounding, and the axpy exactly.
  std::mt19937_64 rng(8);
  const std::vector<std::uint8_t> codes = test::random_genotype_codes(long_rows, 0.3, 0.02, rng);
  std::vector<double> w(long_rows);
  for (double& x : w) x = std::normal_distribution<double>()(rng);
  double plain = 0, plain_missing = 0;
  for (std::size_t i = 0; i < long_rows; ++i) {
    const int d = test::dosage_at(codes, i);
    if (d >= 0)
      plain += d * w[i];
    else
      plain_missing += w[i];
  }
  sample_blocks blocks(long_rows);
  const auto [dot, missing] =
      blocks.sums<2>([&](std::size_t, std::size_t first, std::size_t n, double* out) {
        const std::span<const std::uint8_t> block(codes.data() + first / 4, (n + 3) / 4);
        out[0] = dosage_dot(block, n, w.data() + first);
        out[1] = missing_sum(block, n, w.data() + first);
      });
  EXPECT_NEAR(dot, plain, 1e-9 * long_rows);
  EXPECT_NEAR(missing, plain_missing, 1e-9 * long_rows);
  std::vector<double> r(long_rows, 1.0), expected(long_rows, 1.0);
  blocks.for_each([&](std::size_t, std::size_t first, std::size_t n) {
    genotype_axpy({codes.data() + first / 4, (n + 3) / 4}, n, {}, 0.5, -1.0, r.data() + first);
  });
  for (std::size_t i = 0; i < long_rows; ++i) {
    const int d = test::dosage_at(codes, i);
    if (d >= 0) expected[i] = 1.0 + 0.5 * d - 1.0;
  }
  EXPECT_EQ(r, expected);
}

// A long problem: a genotype store with missing calls (zstd frames and uncompressed ones), a
// dense store with missing values, a phenotype with missing values, and a subset of samples.
struct long_problem {
  test::temp_dir dir;
  std::vector<double> y;
  selection sel;
  static constexpr std::size_t columns = 48;
  long_problem() {
    test::write_genotype_store(dir / "zstd.cf", long_rows, columns, {codec_id::zstd, 1}, 21);
    test::write_genotype_store(dir / "plain.cf", long_rows, columns, {codec_id::none, 0}, 21);
    test::write_float_store(dir / "dense.cf", value_type::float64, long_rows, columns,
                            {codec_id::lz4, 1, true}, 22);
    const store s = store::open(dir / "plain.cf");
    std::mt19937_64 rng(4);
    std::normal_distribution<double> noise;
    y.assign(long_rows, 0.0);
    column_stream<double> stream(s, stream_options{.values = decode_as::standardized});
    const std::vector<std::size_t> causal = {3, 17, 30, 41};
    stream.run(causal, [&](const column_view<double>& v) {
      for (std::size_t i = 0; i < long_rows; ++i)
        y[i] += 0.3 * v.values[static_cast<Eigen::Index>(i)];
      return true;
    });
    for (std::size_t i = 0; i < long_rows; ++i)
      y[i] = i % 17 == 5 ? std::nan("") : y[i] + noise(rng);
    sel = selection::all(s);
    for (std::size_t i = 0; i < long_rows; i += 11) sel.row_kept[i] = 0;  // as --remove would
    sel.rows.clear();
    for (std::size_t i = 0; i < long_rows; ++i)
      if (sel.row_kept[i]) sel.rows.push_back(i);
  }
};

void expect_same(const bayesr_result& a, const bayesr_result& b, const std::string& what) {
  ASSERT_EQ(a.trace.size(), b.trace.size()) << what;
  for (std::size_t i = 0; i < a.trace.size(); ++i) {
    EXPECT_EQ(a.trace[i].mu, b.trace[i].mu) << what << ", iteration " << i + 1;
    EXPECT_EQ(a.trace[i].sigma2_g, b.trace[i].sigma2_g) << what << ", iteration " << i + 1;
    EXPECT_EQ(a.trace[i].sigma2_e, b.trace[i].sigma2_e) << what << ", iteration " << i + 1;
    EXPECT_EQ(a.trace[i].h2, b.trace[i].h2) << what << ", iteration " << i + 1;
    EXPECT_EQ(a.trace[i].pi, b.trace[i].pi) << what << ", iteration " << i + 1;
  }
  EXPECT_EQ(a.beta_mean, b.beta_mean) << what;
  EXPECT_EQ(a.beta_sd, b.beta_sd) << what;
  EXPECT_EQ(a.inclusion, b.inclusion) << what;
}

TEST(SampleBlocksTest, BayesRChainIsBitIdenticalAtOneTwoAndThreeThreads) {
  long_problem p;
  bayesr_options o;
  o.iterations = 6;
  o.burnin = 2;
  o.seed = 7;
  for (const char* name : {"plain.cf", "zstd.cf", "dense.cf"}) {
    const store s = store::open(p.dir / name);
    o.execution = bayesr_execution::sequential;
    const bayesr_result reference = with_threads(1, [&] { return bayesr(s, p.sel, p.y, o); });
    EXPECT_GT(reference.trace.back().nonzero, 0u);  // effects were drawn, residuals updated
    for (int threads : {1, 2, 3})
      for (const bayesr_execution mode :
           {bayesr_execution::sequential, bayesr_execution::pipelined}) {
        o.execution = mode;
        analysis_options a;
        a.stream.in_flight = static_cast<std::size_t>(threads) + 1;
        const std::string what =
            std::string(name) + ", " + std::to_string(threads) + " threads, " +
            (mode == bayesr_execution::sequential ? "sequential" : "pipelined");
        expect_same(reference, with_threads(threads, [&] { return bayesr(s, p.sel, p.y, o, a); }),
                    what);
      }
    // In memory (decoded doubles, Eigen's products on the blocks): its own chain, last bits
    // apart from the streamed one, but the same at any thread count.
    o.execution = bayesr_execution::in_memory;
    const bayesr_result in_memory = with_threads(1, [&] { return bayesr(s, p.sel, p.y, o); });
    for (int threads : {2, 3})
      expect_same(in_memory, with_threads(threads, [&] { return bayesr(s, p.sel, p.y, o); }),
                  std::string(name) + ", in memory, " + std::to_string(threads) + " threads");
  }
}

TEST(SampleBlocksTest, PenalizedPathsAreBitIdenticalAtOneTwoAndThreeThreads) {
  long_problem p;
  for (const char* name : {"plain.cf", "zstd.cf", "dense.cf"})
    for (double alpha : {1.0, 0.5}) {
      const store s = store::open(p.dir / name);
      penalized_options o;
      o.alpha = alpha;
      o.n_lambda = 5;
      o.lambda_min_ratio = 0.05;
      const penalized_result reference =
          with_threads(1, [&] { return penalized_regression(s, p.sel, p.y, o); });
      EXPECT_GT(reference.coefficients.back().size(), 2u) << name;
      for (int threads : {2, 3}) {
        const penalized_result r =
            with_threads(threads, [&] { return penalized_regression(s, p.sel, p.y, o); });
        ASSERT_EQ(r.path.size(), reference.path.size());
        for (std::size_t k = 0; k < r.path.size(); ++k) {
          const std::string what = std::string(name) + ", alpha " + std::to_string(alpha) + ", " +
                                   std::to_string(threads) + " threads, lambda " +
                                   std::to_string(k);
          EXPECT_EQ(r.path[k].lambda, reference.path[k].lambda) << what;
          EXPECT_EQ(r.path[k].objective, reference.path[k].objective) << what;
          EXPECT_EQ(r.path[k].r_squared, reference.path[k].r_squared) << what;
          EXPECT_EQ(r.path[k].sweeps, reference.path[k].sweeps) << what;
          EXPECT_EQ(r.coefficients[k], reference.coefficients[k]) << what;
        }
      }
    }
}

// The commands, as a user runs them: every output file byte-identical at --threads 1, 2 and 3
// (on a 2-core machine 3 is capped at 2), pipelined or sequential, on a simulated study of
// several blocks with missing calls.
TEST(SampleBlocksTest, CommandOutputsAreByteIdenticalWhateverTheThreads) {
  test::temp_dir dir;
  const std::string d = dir.path().string();
  std::string out;
  ASSERT_EQ(
      test::run_cli("simulate --quiet --samples " + std::to_string(long_rows) +
                        " --variants 120 --causal 10 --missing 0.01 --seed 3 --out " + d + "/sim",
                    out),
      0)
      << out;
  ASSERT_EQ(test::run_cli("preprocess --quiet --bed " + d + "/sim --out " + d + "/g.cf", out), 0)
      << out;
  // Every number printed in full, so that a last-bit difference shows.
  const std::string common = d + "/g.cf --quiet --digits 17 --pheno " + d + "/sim.phen";
  const std::vector<std::pair<std::string, std::vector<std::string>>> runs = {
      {"bayesr " + common + " --iterations 5 --burnin 1 --mode sequential",
       {".trace.tsv", ".effects.tsv", ".summary.tsv"}},
      {"bayesr " + common + " --iterations 5 --burnin 1 --mode pipelined",
       {".trace.tsv", ".effects.tsv", ".summary.tsv"}},
      {"lasso " + common + " --nlambda 6", {".path.tsv", ".coef.tsv"}},
      {"enet " + common + " --nlambda 4", {".path.tsv", ".coef.tsv"}},
      {"assoc " + common, {".PHENO1.assoc.tsv"}},
      {"pca " + d + "/g.cf --quiet --digits 17 --k 3", {".eigenval", ".eigenvec"}},
  };
  for (const auto& [command, files] : runs) {
    std::vector<std::vector<std::vector<char>>> outputs;
    for (int threads : {1, 2, 3}) {
      const std::string prefix = d + "/t" + std::to_string(threads);
      ASSERT_EQ(test::run_cli(
                    command + " --threads " + std::to_string(threads) + " --out " + prefix, out),
                0)
          << command << "\n"
          << out;
      outputs.emplace_back();
      for (const std::string& f : files) outputs.back().push_back(test::read_file(prefix + f));
    }
    for (std::size_t k = 0; k < files.size(); ++k) {
      EXPECT_FALSE(outputs[0][k].empty()) << command << files[k];
      EXPECT_EQ(outputs[0][k], outputs[1][k]) << command << files[k] << ": 1 and 2 threads";
      EXPECT_EQ(outputs[0][k], outputs[2][k]) << command << files[k] << ": 1 and 3 threads";
    }
  }
}

}  // namespace
}  // namespace colflow
