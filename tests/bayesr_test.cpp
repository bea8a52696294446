// BayesR: recovery of h² and causal variants on simulated data and on uk10k, bit-identical
// chains whatever the threads, in-flight depth, execution mode or resume point, the summary
// file against the trace, the standardised arithmetic on packed codes against the explicit
// matrix, checkpoint damage and bad requests, stop requests.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "analysis/models/bayesr_mixture_internal.hpp"
#include "analysis/shared/standardized_columns_internal.hpp"
#include "colflow/colflow.hpp"
#include "kernels/sample_blocks_internal.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

// The mixture alone, with a residual of the test's own: over many columns of the same r, the
// classes fall in the proportions of their posterior weights and each class's effects have the
// mean r / C_k and variance σ²_E / C_k, all computed here from the model's formulas.
TEST(BayesrMixtureTest, DrawsFollowThePosteriorOfEachClass) {
  const std::vector<double> gammas = {1e-4, 1e-3, 1e-2}, pi = {0.6, 0.2, 0.15, 0.05};
  const double a = 999, sigma2_g = 0.5, sigma2_e = 0.5, r = 12.0;
  detail::bayesr_mixture mixture(gammas, 11);
  mixture.prepare(1, a, sigma2_g, sigma2_e, pi);
  std::vector<double> weight(4), c(4);
  weight[0] = pi[0];
  for (std::size_t k = 1; k < 4; ++k) {
    const double v = gammas[k - 1] * sigma2_g;
    c[k] = a + sigma2_e / v;
    weight[k] = pi[k] / std::sqrt(v * c[k] / sigma2_e) * std::exp(r * r / (2 * sigma2_e * c[k]));
  }
  double total = 0;
  for (double w : weight) total += w;
  const std::size_t draws = 200000;
  std::vector<double> count(4), sum(4), square(4);
  for (std::size_t p = 0; p < draws; ++p) {
    const auto [k, beta] = mixture.draw(p, r);
    count[k] += 1;
    sum[k] += beta;
    square[k] += beta * beta;
    if (k == 0) {
      EXPECT_EQ(beta, 0.0);
    }
  }
  for (std::size_t k = 0; k < 4; ++k) {
    const double expected = weight[k] / total;
    EXPECT_NEAR(count[k] / draws, expected, 4 * std::sqrt(expected * (1 - expected) / draws))
        << "class " << k;
    if (k == 0 || count[k] < 1000) continue;
    const double mean = sum[k] / count[k], variance = square[k] / count[k] - mean * mean;
    EXPECT_NEAR(mean, r / c[k], 4 * std::sqrt(sigma2_e / c[k] / count[k])) << "class " << k;
    EXPECT_NEAR(variance / (sigma2_e / c[k]), 1.0, 0.05) << "class " << k;
  }
  // The same column and iteration draw the same class and effect.
  const auto once = mixture.draw(17, r), again = mixture.draw(17, r);
  EXPECT_EQ(once.component, again.component);
  EXPECT_EQ(once.beta, again.beta);
}

// The end of an iteration: the tally of classes and Σβ², σ²_G's scaled inverse χ² and π's
// Dirichlet, their means against the formulas over many iterations' draws.
TEST(BayesrMixtureTest, VarianceAndWeightsFollowTheirConditionals) {
  const std::vector<double> gammas = {1e-3, 1e-2};
  detail::bayesr_mixture mixture(gammas, 5);
  const std::vector<std::uint8_t> component = {0, 1, 2, 0, 2, 2, 0};
  const std::vector<double> beta = {0, 0.1, -0.3, 0, 0.2, 0.4, 0};
  const std::vector<std::size_t> visited = {0, 1, 2, 3, 4, 5, 6};
  const auto counted = mixture.count(visited, component, beta);
  EXPECT_EQ(counted.counts, (std::vector<double>{3, 1, 3}));
  EXPECT_EQ(counted.nonzero, 4);
  EXPECT_DOUBLE_EQ(counted.beta_squares, 0.01 + 0.09 + 0.04 + 0.16);
  const double df = 4, scale = 0.01, alpha = 1;
  const std::size_t iterations = 40000;
  double sigma_sum = 0;
  std::vector<double> pi(3), pi_sum(3);
  for (std::uint64_t t = 1; t <= iterations; ++t) {
    detail::random_draws d(5, detail::variances, t, 0);
    sigma_sum += detail::bayesr_mixture::draw_sigma2_g(d, counted, df, scale);
    mixture.draw_pi(t, counted, alpha, pi);
    EXPECT_NEAR(pi[0] + pi[1] + pi[2], 1.0, 1e-12);
    for (std::size_t k = 0; k < 3; ++k) pi_sum[k] += pi[k];
  }
  // Scaled inverse χ²(ν, s²) has mean ν s² / (ν − 2).
  const double nu = df + counted.nonzero;
  const double s2 = (counted.nonzero * counted.beta_squares + df * scale) / nu;
  EXPECT_NEAR(sigma_sum / iterations, nu * s2 / (nu - 2), 0.02 * nu * s2 / (nu - 2));
  // Dirichlet(counts + α) has mean (count_k + α) / Σ(count + α).
  for (std::size_t k = 0; k < 3; ++k)
    EXPECT_NEAR(pi_sum[k] / iterations, (counted.counts[k] + alpha) / (7 + 3 * alpha), 0.005);
}

std::vector<double> phenotype_column(const phenotype_table& ph) {
  return {ph.values.col(0).data(), ph.values.col(0).data() + ph.values.rows()};
}

double posterior_h2(const bayesr_result& r, std::size_t burnin) {
  double sum = 0;
  std::size_t k = 0;
  for (const bayesr_sample& t : r.trace)
    if (t.iteration > burnin) {
      sum += t.h2;
      ++k;
    }
  return sum / static_cast<double>(k);
}

void expect_same_chain(const bayesr_result& a, const bayesr_result& b) {
  ASSERT_EQ(a.trace.size(), b.trace.size());
  for (std::size_t i = 0; i < a.trace.size(); ++i) {
    const bayesr_sample &x = a.trace[i], &y = b.trace[i];
    EXPECT_EQ(x.iteration, y.iteration);
    EXPECT_EQ(x.mu, y.mu) << "iteration " << x.iteration;
    EXPECT_EQ(x.sigma2_g, y.sigma2_g) << "iteration " << x.iteration;
    EXPECT_EQ(x.sigma2_e, y.sigma2_e) << "iteration " << x.iteration;
    EXPECT_EQ(x.genetic_variance, y.genetic_variance) << "iteration " << x.iteration;
    EXPECT_EQ(x.nonzero, y.nonzero) << "iteration " << x.iteration;
    EXPECT_EQ(x.pi, y.pi) << "iteration " << x.iteration;
  }
  EXPECT_EQ(a.posterior_samples, b.posterior_samples);
  EXPECT_EQ(a.inclusion, b.inclusion);
  EXPECT_EQ(a.beta_mean, b.beta_mean);
  EXPECT_EQ(a.beta_sd, b.beta_sd);
}

// A simulated genotype store with missing calls and a phenotype with some missing values.
struct small_problem {
  test::temp_dir dir;
  store s;
  std::vector<double> y;
  static store make(const test::temp_dir& dir, std::uint64_t n, std::uint64_t m) {
    test::write_genotype_store(dir / "g.cf", n, m, column_encoding{codec_id::zstd, 1}, 11);
    return store::open(dir / "g.cf");
  }
  explicit small_problem(std::uint64_t n = 300, std::uint64_t m = 400) : s(make(dir, n, m)) {
    // y from a few columns' dosages plus noise, NaN for every 13th sample.
    std::mt19937_64 rng(3);
    std::normal_distribution<double> noise;
    y.assign(n, 0.0);
    column_stream<double> stream(s, stream_options{.values = decode_as::standardized});
    const std::vector<std::size_t> causal = {5, m / 8, m / 3, m - 7};
    stream.run(causal, [&](const column_view<double>& v) {
      for (std::uint64_t i = 0; i < n; ++i) y[i] += 0.6 * v.values[static_cast<Eigen::Index>(i)];
      return true;
    });
    for (std::uint64_t i = 0; i < n; ++i) y[i] = i % 13 == 4 ? std::nan("") : y[i] + noise(rng);
  }
};

// The residual a streamed chain holds with the mean's part of each update deferred (and the
// columns' live bytes listed): every product is the one of full updates, and once settled the
// residual is too, up to rounding, over two sample blocks, unused samples and missing calls.
TEST(BayesRTest, DeferredMeanUpdatesKeepTheProductsAndResidualOfFullUpdates) {
  small_problem p(sample_block_rows + 300, 80);
  const selection all = selection::all(p.s);
  std::vector<std::uint8_t> used(p.y.size());
  for (std::size_t i = 0; i < used.size(); ++i) used[i] = !std::isnan(p.y[i]);
  detail::standardized_columns full(p.s, all, used), deferred(p.s, all, used);
  deferred.keep_live_lists(std::size_t{64} << 20);
  deferred.defer_mean_updates();
  column_stream<double> stream(p.s, stream_options{});
  stream.run(all.columns, [&](const column_view<double>& v) {
    full.learn(v.position, v);
    deferred.learn(v.position, v);
    return true;
  });
  std::vector<double> r(p.y.size(), 0.0);
  double r_sum = 0;
  for (std::size_t i = 0; i < r.size(); ++i)
    if (used[i]) r_sum += (r[i] = p.y[i]);
  std::vector<double> held = r;
  for (int pass = 0; pass < 3; ++pass) {
    stream.run(all.columns, [&](const column_view<double>& v) {
      const std::size_t c = v.position;
      if (full.constant(c)) return true;
      const double product = full.dot(c, v, r, r_sum);
      EXPECT_NEAR(deferred.dot(c, v, held, r_sum), product, 1e-10 * (1 + std::abs(product))) << c;
      const double delta = 0.01 * (static_cast<double>((c * 7 + pass) % 5) - 2.0);
      full.subtract(c, v, delta, r);
      deferred.subtract(c, v, delta, held);
      return true;
    });
    deferred.settle(held);
    for (std::size_t i = 0; i < r.size(); ++i)
      EXPECT_NEAR(held[i], r[i], 1e-12) << pass << " " << i;
  }
}

TEST(BayesRTest, ChainIsTheSameWhateverThreadsInFlightAndSequentialMode) {
  small_problem p;
  bayesr_options o;
  o.iterations = 40;
  o.burnin = 10;
  o.seed = 42;
  const bayesr_result a = bayesr(p.s, selection::all(p.s), p.y, o);
  EXPECT_EQ(a.execution, bayesr_execution::pipelined);  // automatic: zstd frames to decode
  EXPECT_EQ(a.trace.size(), 40u);
  EXPECT_EQ(a.posterior_samples, 30u);
  EXPECT_EQ(a.samples, 300u - 23u);
  {
    tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
    analysis_options serial;
    serial.stream.in_flight = 1;
    serial.stream.block_bytes = 64;
    expect_same_chain(a, bayesr(p.s, selection::all(p.s), p.y, o, serial));
  }
  analysis_options deep;
  deep.stream.in_flight = 16;
  expect_same_chain(a, bayesr(p.s, selection::all(p.s), p.y, o, deep));
  o.execution = bayesr_execution::sequential;
  expect_same_chain(a, bayesr(p.s, selection::all(p.s), p.y, o));
  // Uncompressed genotype frames: automatic runs sequentially, with the same chain.
  test::write_genotype_store(p.dir / "plain.cf", 300, 400, column_encoding{codec_id::none, 0}, 11);
  const store plain = store::open(p.dir / "plain.cf");
  o.execution = bayesr_execution::automatic;
  const bayesr_result automatic = bayesr(plain, selection::all(plain), p.y, o);
  EXPECT_EQ(automatic.execution, bayesr_execution::sequential);
  o.execution = bayesr_execution::pipelined;
  expect_same_chain(automatic, bayesr(plain, selection::all(plain), p.y, o));
  expect_same_chain(a, automatic);  // the same codes, whatever the codec
  // Another seed is another chain.
  o.seed = 43;
  const bayesr_result c = bayesr(p.s, selection::all(p.s), p.y, o);
  EXPECT_NE(a.trace.back().sigma2_e, c.trace.back().sigma2_e);
}

TEST(BayesRTest, ResumingFromAnyCheckpointContinuesTheSameChain) {
  small_problem p;
  bayesr_options o;
  o.iterations = 30;
  o.burnin = 8;
  o.thin = 2;
  o.checkpoint = p.dir / "chain.ckpt";
  o.checkpoint_every = 10;
  const bayesr_result whole = bayesr(p.s, selection::all(p.s), p.y, o);
  ASSERT_EQ(whole.trace.size(), 15u);  // thinned
  EXPECT_EQ(whole.trace.front().iteration, 2u);
  EXPECT_EQ(whole.posterior_samples, 11u);  // iterations 10, 12, ..., 30

  // Stop at 10 (its final checkpoint), then resume to 30: the same chain.
  o.iterations = 10;
  const bayesr_result first = bayesr(p.s, selection::all(p.s), p.y, o);
  EXPECT_EQ(first.iterations_run, 10u);
  o.iterations = 30;
  o.resume = true;
  const bayesr_result resumed = bayesr(p.s, selection::all(p.s), p.y, o);
  EXPECT_EQ(resumed.resumed_from, 10u);
  EXPECT_EQ(resumed.iterations_run, 20u);
  expect_same_chain(whole, resumed);

  // A chain killed after iteration 17 finds the checkpoint of iteration 10 (with a stale
  // temporary beside it) and continues it from there, with another in-flight depth.
  o.resume = false;
  const std::filesystem::path killed = p.dir / "killed.ckpt";
  o.checkpoint = killed;
  o.iterations = 10;
  bayesr(p.s, selection::all(p.s), p.y, o);
  std::ofstream(p.dir / "killed.ckpt.partial") << "half a checkpoint";
  o.iterations = 30;
  o.resume = true;
  analysis_options other;
  other.stream.in_flight = 3;
  expect_same_chain(whole, bayesr(p.s, selection::all(p.s), p.y, o, other));

  // Resuming a finished chain with the same length only re-reports it.
  const bayesr_result again = bayesr(p.s, selection::all(p.s), p.y, o);
  EXPECT_EQ(again.iterations_run, 0u);
  expect_same_chain(whole, again);
}

std::string file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// The trace column `name` over the iterations after `burnin`, as the file gives them.
std::vector<double> kept_column(const test::text_table& trace, const std::string& name,
                                std::size_t burnin) {
  const std::size_t c = trace.column(name);
  std::vector<double> x;
  for (const auto& row : trace.rows)
    if (std::stoul(row[0]) > burnin) x.push_back(std::stod(row[c]));
  return x;
}

// A field of a table equal to `expected`: NA where it is NaN (a constant or short chain's).
void expect_same_number(const std::string& field, double expected, const std::string& row) {
  if (std::isnan(expected)) {
    EXPECT_EQ(field, "NA") << row;
  } else {
    EXPECT_DOUBLE_EQ(std::stod(field), expected) << row;
  }
}

// PREFIX.summary.tsv against the written trace (every digit of it): the mean and the SD
// computed here, the diagnostics of the kept column; the same bytes at 1 and 2 threads.
TEST(BayesRTest, SummaryFileSummarisesEachTraceQuantityAfterTheBurnIn) {
  small_problem p;
  bayesr_options o;
  o.iterations = 40;
  o.burnin = 12;
  const std::string d = p.dir.path().string() + "/";
  {
    tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
    write_bayesr(p.s, selection::all(p.s), bayesr(p.s, selection::all(p.s), p.y, o), d + "one", 17);
  }
  {
    tbb::global_control two(tbb::global_control::max_allowed_parallelism, 2);
    write_bayesr(p.s, selection::all(p.s), bayesr(p.s, selection::all(p.s), p.y, o), d + "two", 17);
  }
  EXPECT_EQ(file_bytes(d + "one.summary.tsv"), file_bytes(d + "two.summary.tsv"));

  const test::text_table trace = test::read_table(d + "one.trace.tsv");
  const test::text_table summary = test::read_table(d + "one.summary.tsv");
  EXPECT_EQ(summary.header,
            (std::vector<std::string>{"PARAMETER", "MEAN", "SD", "ESS", "GEWEKE_Z", "KEPT"}));
  ASSERT_EQ(summary.rows.size(), 4u);
  const char* names[] = {"H2", "SIGMA2_G", "SIGMA2_E", "NONZERO"};
  for (std::size_t q = 0; q < 4; ++q) {
    const std::vector<std::string>& row = summary.rows[q];
    const std::vector<double> x = kept_column(trace, names[q], o.burnin);
    ASSERT_EQ(x.size(), 28u);
    long double sum = 0, squares = 0;
    for (double v : x) sum += v;
    const long double mean = sum / x.size();
    for (double v : x) squares += (v - mean) * (v - mean);
    const double m = static_cast<double>(mean);
    const double sd = static_cast<double>(std::sqrt(squares / (x.size() - 1)));
    EXPECT_EQ(row[0], names[q]);
    EXPECT_NEAR(std::stod(row[1]), m, 1e-13 * std::abs(m)) << row[0];
    EXPECT_NEAR(std::stod(row[2]), sd, 1e-12 * sd) << row[0];
    expect_same_number(row[3], effective_sample_size(x), row[0]);
    expect_same_number(row[4], geweke_z(x), row[0]);
    EXPECT_EQ(row[5], "28");
  }

  // A chain whose thinning kept nothing: no summary, each quantity's row says so.
  o.iterations = 3;
  o.burnin = 0;
  o.thin = 5;
  write_bayesr(p.s, selection::all(p.s), bayesr(p.s, selection::all(p.s), p.y, o), d + "none");
  EXPECT_EQ(file_bytes(d + "none.summary.tsv"),
            "PARAMETER\tMEAN\tSD\tESS\tGEWEKE_Z\tKEPT\n"
            "H2\tNA\tNA\tNA\tNA\t0\nSIGMA2_G\tNA\tNA\tNA\tNA\t0\n"
            "SIGMA2_E\tNA\tNA\tNA\tNA\t0\nNONZERO\tNA\tNA\tNA\tNA\t0\n");
}

TEST(BayesRTest, PackedCodesAgreeWithTheExplicitMatrixOnSubsetsAndMissingCalls) {
  small_problem p;
  selection sel = selection::all(p.s);
  sel.rows.clear();
  for (std::size_t i = 0; i < p.s.num_rows(); ++i) {
    sel.row_kept[i] = i % 5 != 1;
    if (sel.row_kept[i]) sel.rows.push_back(i);
  }
  sel.columns.erase(sel.columns.begin() + 100, sel.columns.begin() + 150);
  bayesr_options o;
  o.iterations = 4;
  o.burnin = 1;
  const bayesr_result streamed = bayesr(p.s, sel, p.y, o);
  o.execution = bayesr_execution::in_memory;
  const bayesr_result in_memory = bayesr(p.s, sel, p.y, o);
  ASSERT_EQ(streamed.trace.size(), in_memory.trace.size());
  for (std::size_t i = 0; i < streamed.trace.size(); ++i) {
    EXPECT_NEAR(streamed.trace[i].sigma2_e, in_memory.trace[i].sigma2_e, 1e-9);
    EXPECT_NEAR(streamed.trace[i].genetic_variance, in_memory.trace[i].genetic_variance, 1e-9);
    EXPECT_EQ(streamed.trace[i].nonzero, in_memory.trace[i].nonzero);
  }
  for (std::size_t j = 0; j < streamed.beta_mean.size(); ++j)
    EXPECT_NEAR(streamed.beta_mean[j], in_memory.beta_mean[j], 1e-9) << j;
  // The standardisation is over the samples used: kept and with a phenotype value.
  std::size_t used = 0;
  for (std::size_t i : sel.rows) used += !std::isnan(p.y[i]);
  EXPECT_EQ(streamed.samples, used);
  EXPECT_EQ(streamed.columns.size(), sel.columns.size());
}

TEST(BayesRTest, AStopRequestEndsTheChainAtTheNextIterationInEveryMode) {
  small_problem p;
  for (const bayesr_execution mode :
       {bayesr_execution::pipelined, bayesr_execution::sequential, bayesr_execution::in_memory}) {
    bayesr_options o;
    o.iterations = 50;
    o.burnin = 1;
    o.execution = mode;
    std::size_t last = 0;
    o.on_iteration = [&](std::size_t t, std::size_t, double) {
      last = t;
      if (t == 2) request_stop();
    };
    try {
      bayesr(p.s, selection::all(p.s), p.y, o);
      ADD_FAILURE() << "the chain ran to its end";
    } catch (const error& e) {
      EXPECT_EQ(e.kind(), errc::cancelled) << e.what();
    }
    clear_stop_request();
    EXPECT_EQ(last, 2u) << static_cast<int>(mode);
  }
}

TEST(BayesRTest, DenseStoreOfTheSameValuesGivesTheSameChain) {
  // A float64 store of the dosages (NaN for missing calls) is standardised by the same
  // statistics: the chain agrees with the genotype store's to rounding.
  small_problem p(200, 120);
  const std::uint64_t n = p.s.num_rows(), m = p.s.num_columns();
  {
    writer_options wo;
    wo.type = value_type::float64;
    wo.rows = n;
    store_writer w(p.dir / "d.cf", wo, p.s.samples());
    column_stream<double> stream(p.s, stream_options{.values = decode_as::stored});
    stream.run(all_columns(m), [&](const column_view<double>& v) {
      const std::vector<double> x(v.values.data(), v.values.data() + v.values.size());
      w.append(encode_float_column(x, value_type::float64, dense_stats(x), 0,
                                   column_encoding{codec_id::lz4, 1}),
               p.s.columns()[v.column]);
      return true;
    });
    w.finish();
  }
  const store d = store::open(p.dir / "d.cf");
  bayesr_options o;
  o.iterations = 3;
  o.burnin = 1;
  const bayesr_result g = bayesr(p.s, selection::all(p.s), p.y, o);
  const bayesr_result f = bayesr(d, selection::all(d), p.y, o);
  ASSERT_EQ(g.trace.size(), f.trace.size());
  for (std::size_t i = 0; i < g.trace.size(); ++i) {
    EXPECT_NEAR(g.trace[i].sigma2_e, f.trace[i].sigma2_e, 1e-9);
    EXPECT_EQ(g.trace[i].nonzero, f.trace[i].nonzero);
  }
}

TEST(BayesRTest, SimulatedHeritabilityAndCausalVariantsAreRecovered) {
  test::temp_dir dir;
  const std::string d = dir.path().string() + "/";
  std::string out;
  ASSERT_EQ(test::run_cli("simulate --quiet --samples 2000 --variants 10000 --causal 50 --h2 0.5 "
                          "--missing 0.01 --seed 7 --out " +
                              d + "sim",
                          out),
            0)
      << out;
  ASSERT_EQ(test::run_cli("preprocess --quiet --bed " + d + "sim --out " + d + "sim.cf", out), 0)
      << out;
  ASSERT_EQ(test::run_cli("bayesr " + d + "sim.cf --pheno " + d +
                              "sim.phen --iterations 400 "
                              "--burnin 100 --seed 3 --digits 10 --out " +
                              d + "b",
                          out),
            0)
      << out;
  EXPECT_NE(out.find("posterior mean h2"), std::string::npos) << out;
  std::set<std::string> causal;
  {
    std::ifstream truth(d + "sim.truth.tsv");
    std::string line;
    bool header = false;
    while (std::getline(truth, line)) {
      if (line.empty() || line[0] == '#') continue;
      if (!header) {
        header = true;
        continue;
      }
      causal.insert(line.substr(0, line.find('\t')));
    }
  }
  ASSERT_EQ(causal.size(), 50u);
  const test::text_table trace = test::read_table(d + "b.trace.tsv");
  ASSERT_EQ(trace.rows.size(), 400u);
  double h2 = 0;
  for (const auto& row : trace.rows)
    if (std::stoul(row[0]) > 100) h2 += std::stod(row[4]) / 300.0;
  EXPECT_NEAR(h2, 0.5, 0.1);
  const test::text_table summary = test::read_table(d + "b.summary.tsv");
  ASSERT_EQ(summary.rows.size(), 4u);
  EXPECT_EQ(summary.rows[0][0], "H2");
  EXPECT_NEAR(std::stod(summary.rows[0][1]), h2, 1e-8);
  EXPECT_EQ(summary.rows[0][5], "300");
  // The highest inclusion probabilities are causal variants.
  const test::text_table effects = test::read_table(d + "b.effects.tsv");
  ASSERT_EQ(effects.rows.size(), 10000u);
  std::vector<std::pair<double, std::string>> pip;
  double causal_pip = 0, other_pip = 0;
  for (const auto& row : effects.rows) {
    pip.emplace_back(std::stod(row[2]), row[0]);
    (causal.count(row[0]) ? causal_pip : other_pip) += std::stod(row[2]);
  }
  std::sort(pip.rbegin(), pip.rend());
  for (std::size_t k = 0; k < 15; ++k)
    EXPECT_TRUE(causal.count(pip[k].second)) << "rank " << k << " " << pip[k].second;
  EXPECT_GT(causal_pip / 50.0, 10.0 * other_pip / 9950.0);
}

TEST(BayesRTest, Uk10kHeritabilityAndGeneticValues) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  const store s = store::open(test::uk10k_store(dir.path()));
  const std::vector<double> y =
      phenotype_column(read_phenotypes(test::dataset("uk10k/test.phen"), s.samples()));
  bayesr_options o;
  o.iterations = 600;
  o.burnin = 200;
  const bayesr_result r = bayesr(s, selection::all(s), y, o);
  const double h2 = posterior_h2(r, o.burnin);
  // The realised h² of test.phen is 0.493 (GCTB 2.05: 0.495 ± 0.011).
  EXPECT_NEAR(h2, 0.493, 0.05);

  // Genetic values: ours, Σ β_per_allele · dosage, against the truth from test.par.
  std::map<std::string, std::size_t> column_of;
  for (std::size_t j = 0; j < s.num_columns(); ++j) column_of[s.columns()[j].id] = j;
  std::vector<double> true_effect(s.num_columns(), 0.0);  // per A1 allele
  {
    std::ifstream par(test::dataset("uk10k/test.par"));
    std::string id, allele, freq, effect;
    std::getline(par, id);
    while (par >> id >> allele >> freq >> effect) {
      const std::size_t j = column_of.at(id);
      // test.par holds effects on the genotype of RefAllele standardised by its frequency
      // f (GCTA's --simu-qt): per allele, effect / sqrt(2f(1 − f)); the realised h² checks it.
      const double f = std::stod(freq);
      true_effect[j] = (allele == s.columns()[j].a1 ? 1.0 : -1.0) * std::stod(effect) /
                       std::sqrt(2 * f * (1 - f));
    }
  }
  Eigen::VectorXd g_true = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(s.num_rows())),
                  g_hat = g_true;
  column_stream<double> stream(s, stream_options{.values = decode_as::stored});
  stream.run(all_columns(s.num_columns()), [&](const column_view<double>& v) {
    const double hat = r.beta_mean[v.column] * r.phenotype_sd / r.columns[v.column].sd;
    for (Eigen::Index i = 0; i < v.values.size(); ++i) {
      g_true[i] += true_effect[v.column] * v.values[i];
      if (r.columns[v.column].sd > 0) g_hat[i] += hat * v.values[i];
    }
    return true;
  });
  const auto centred = [](const Eigen::VectorXd& x) { return (x.array() - x.mean()).matrix(); };
  const double corr =
      centred(g_true).dot(centred(g_hat)) / (centred(g_true).norm() * centred(g_hat).norm());
  EXPECT_GT(corr, 0.9);
  std::cout << "uk10k: posterior mean h2 " << h2 << ", corr(genetic values, truth) " << corr
            << "\n";
}

TEST(BayesRTest, DamagedOrForeignCheckpointsAreRefusedByName) {
  small_problem p(120, 60);
  bayesr_options o;
  o.iterations = 5;
  o.burnin = 1;
  o.checkpoint = p.dir / "c.ckpt";
  bayesr(p.s, selection::all(p.s), p.y, o);
  o.resume = true;
  o.iterations = 6;
  const auto expect_refused = [&](errc code, const std::string& what) {
    try {
      bayesr(p.s, selection::all(p.s), p.y, o);
      ADD_FAILURE() << "accepted: " << what;
    } catch (const error& e) {
      EXPECT_EQ(e.kind(), code) << what << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("c.ckpt"), std::string::npos) << e.what();
    }
  };
  test::expect_damaged_checkpoint_refused(o.checkpoint, 97,
                                          [&] { bayesr(p.s, selection::all(p.s), p.y, o); });
  o.seed = 99;  // another run's settings
  expect_refused(errc::invalid_argument, "another seed");
  o.seed = 1;
  o.iterations = 4;  // the checkpoint is already past this
  expect_refused(errc::invalid_argument, "past the end");
  o.iterations = 6;
  EXPECT_NO_THROW(bayesr(p.s, selection::all(p.s), p.y, o));
  std::filesystem::remove(o.checkpoint);
  expect_refused(errc::not_found, "absent");
}

// A checkpoint as an earlier build wrote it: the same bytes with format `version` (and the
// checksum that goes with them).
void make_version(const std::filesystem::path& checkpoint, std::uint32_t version) {
  std::vector<char> bytes = test::read_file(checkpoint);
  std::memcpy(bytes.data() + 8, &version, sizeof version);
  const std::uint64_t sum = checksum64(std::as_bytes(std::span(bytes.data(), bytes.size() - 8)));
  std::memcpy(bytes.data() + bytes.size() - 8, &sum, sizeof sum);
  test::write_file(checkpoint, bytes);
}

// Versions 1 (before sample blocks) and 2 (before deferred mean updates): chains whose products
// round otherwise, which no chain of this build continues bit for bit; refused by name and cause.
TEST(BayesRTest, CheckpointsOfEarlierArithmeticAreRefusedSayingWhy) {
  bayesr_options o;
  o.burnin = 1;
  small_problem p(120, 60);
  o.checkpoint = p.dir / "old.ckpt";
  o.iterations = 2;
  bayesr(p.s, selection::all(p.s), p.y, o);
  o.iterations = 4;
  o.resume = true;
  for (const std::uint32_t version : {1u, 2u}) {
    make_version(o.checkpoint, version);
    try {
      bayesr(p.s, selection::all(p.s), p.y, o);
      ADD_FAILURE() << "resumed a version-" << version << " checkpoint";
    } catch (const error& e) {
      EXPECT_EQ(e.kind(), errc::unsupported_version);
      const std::string what = e.what();
      EXPECT_NE(what.find("old.ckpt"), std::string::npos) << what;
      EXPECT_NE(what.find("format version " + std::to_string(version)), std::string::npos) << what;
      EXPECT_NE(what.find("deferred each column's mean"), std::string::npos) << what;
      EXPECT_NE(what.find("without --resume"), std::string::npos) << what;
    }
  }
  make_version(o.checkpoint, 3);
  EXPECT_NO_THROW(bayesr(p.s, selection::all(p.s), p.y, o));
}

TEST(BayesRTest, BadRequestsAreRefused) {
  small_problem p(60, 20);
  const auto refused = [&](const std::function<void(bayesr_options&)>& change) {
    bayesr_options o;
    o.iterations = 5;
    o.burnin = 1;
    change(o);
    EXPECT_THROW(bayesr(p.s, selection::all(p.s), p.y, o), error);
  };
  refused([](bayesr_options& o) { o.burnin = 5; });
  refused([](bayesr_options& o) { o.thin = 0; });
  refused([](bayesr_options& o) { o.mixture = {1e-3, 1e-4}; });
  refused([](bayesr_options& o) { o.mixture = {}; });
  refused([](bayesr_options& o) { o.mixture = {-1e-3}; });
  refused([](bayesr_options& o) { o.dirichlet_alpha = 0; });
  refused([](bayesr_options& o) { o.sigma2_e_scale = -1; });
  refused([](bayesr_options& o) { o.checkpoint_every = 2; });  // no path
  std::vector<double> constant(p.s.num_rows(), 1.0);
  EXPECT_THROW(bayesr(p.s, selection::all(p.s), constant, bayesr_options{}), error);

  std::string out;
  const std::string store = (p.dir / "g.cf").string();
  EXPECT_NE(
      test::run_cli("bayesr " + store + " --pheno x --out y --iterations 10 --burnin 10", out), 0);
  EXPECT_NE(out.find("burn-in"), std::string::npos) << out;
  EXPECT_NE(test::run_cli("bayesr " + store + " --pheno x --out y --mixture 0.01,0.001", out), 0);
  EXPECT_NE(test::run_cli("bayesr " + store + " --pheno " + (p.dir / "none.phen").string() +
                              " --out " + (p.dir / "o").string() + " --resume",
                          out),
            0);
  EXPECT_NE(out.find("none.phen"), std::string::npos) << out;
  EXPECT_EQ(test::run_cli("bayesr --help", out), 0);
  EXPECT_NE(out.find("--checkpoint-every"), std::string::npos);
}

}  // namespace
}  // namespace colflow
