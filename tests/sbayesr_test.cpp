// SBayesR: the chain against an independent dense numpy implementation fed the same draws, its
// independence of the threads and processes, the LD columns computed in memory, and its errors.
#include "colflow/analysis/sbayesr.hpp"

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "analysis/models/random_draws_internal.hpp"
#include "colflow/analysis/ld_columns_in_memory.hpp"
#include "colflow/analysis/ld_matrix.hpp"
#include "colflow/analysis/ld_matrix_columns.hpp"
#include "colflow/error.hpp"
#include "colflow/store/store_writer.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

// A genotype store of n samples and m variants, without missing calls, A1 frequencies 0.05 to
// 0.5, neighbours in LD: variant j copies its left neighbour's calls on the samples i with
// i mod 3 = j mod 3, so that LD reaches the neighbours alone (a window of 12 holds it all).
std::vector<std::vector<std::uint8_t>> write_store(const std::filesystem::path& path, std::size_t n,
                                                   std::size_t m) {
  std::mt19937_64 rng(5);
  writer_options options;
  options.type = value_type::genotype;
  options.rows = n;
  options.source = "test";
  store_writer writer(path, options, test::numbered_samples(n));
  std::vector<std::vector<std::uint8_t>> all;
  for (std::size_t j = 0; j < m; ++j) {
    auto codes =
        test::random_genotype_codes(n, 0.05 + 0.45 * static_cast<double>(j % 5) / 4.0, 0.0, rng);
    if (j > 0)
      for (std::size_t i = j % 3; i < n; i += 3) {
        const int shift = static_cast<int>(2 * (i % 4));
        codes[i / 4] = static_cast<std::uint8_t>((codes[i / 4] & ~(3 << shift)) |
                                                 (all.back()[i / 4] & (3 << shift)));
      }
    writer.append(encode_genotype_column(codes, n, {codec_id::zstd, 3}), test::numbered_column(j));
    all.push_back(std::move(codes));
  }
  writer.finish();
  return all;
}

// That store with 2,000 samples and 200 variants, its LD in windows of 12 variants, and summary
// statistics of a phenotype simulated on it (effects on 10 variants).
struct small_problem {
  test::temp_dir dir;
  std::vector<std::vector<std::uint8_t>> codes;
  store s;
  gwas_summary gwas;

  explicit small_problem(std::size_t n = 2000, std::size_t m = 200)
      : codes(write_store(dir / "g.cf", n, m)), s(store::open(dir / "g.cf")) {
    std::mt19937_64 rng(17);
    std::normal_distribution<double> normal;
    std::vector<std::vector<double>> x(m, std::vector<double>(n));
    for (std::size_t j = 0; j < m; ++j)
      for (std::size_t i = 0; i < n; ++i) x[j][i] = test::dosage_at(codes[j], i);
    std::vector<double> y(n, 0.0);
    for (std::size_t j = 3; j < m; j += 20)
      for (std::size_t i = 0; i < n; ++i) y[i] += 0.25 * x[j][i];
    for (double& v : y) v += normal(rng);
    std::ostringstream ma;
    ma << "SNP A1 A2 freq b se p N\n";
    const double samples = static_cast<double>(n);
    for (std::size_t j = 0; j < m; ++j) {
      double mx = 0, my = 0;
      for (std::size_t i = 0; i < n; ++i) mx += x[j][i] / samples, my += y[i] / samples;
      double sxx = 0, sxy = 0, syy = 0;
      for (std::size_t i = 0; i < n; ++i) {
        sxx += (x[j][i] - mx) * (x[j][i] - mx);
        sxy += (x[j][i] - mx) * (y[i] - my);
        syy += (y[i] - my) * (y[i] - my);
      }
      const double b = sxy / sxx;
      const double se = std::sqrt((syy - b * sxy) / (samples - 2) / sxx);
      // Every fifth variant's alleles swapped: aligned back by flipping.
      const bool swap = j % 5 == 2;
      ma.precision(17);
      ma << "rs" << j << (swap ? " C A " : " A C ") << (swap ? 1 - mx / 2 : mx / 2) << ' '
         << (swap ? -b : b) << ' ' << se << " 0.5 " << n << '\n';
    }
    std::ofstream(dir / "g.ma") << ma.str();
    gwas = read_gwas_summary(dir / "g.ma");
  }

  ld_columns_in_memory ld(const analysis_options& analysis = {}) const {
    ld_options window;
    window.window = 12;
    return ld_columns_in_memory(s, selection::all(s), window, "g.cf in memory", analysis);
  }
};

void expect_same_chain(const sbayesr_result& a, const sbayesr_result& b) {
  ASSERT_EQ(a.trace.size(), b.trace.size());
  for (std::size_t t = 0; t < a.trace.size(); ++t) {
    EXPECT_EQ(a.trace[t].sigma2_beta, b.trace[t].sigma2_beta) << t;
    EXPECT_EQ(a.trace[t].sigma2_e, b.trace[t].sigma2_e) << t;
    EXPECT_EQ(a.trace[t].h2, b.trace[t].h2) << t;
    EXPECT_EQ(a.trace[t].pi, b.trace[t].pi) << t;
  }
  EXPECT_EQ(a.beta, b.beta);
  EXPECT_EQ(a.beta_mean, b.beta_mean);
  EXPECT_EQ(a.pip, b.pip);
}

void write_rows(const std::filesystem::path& path, const std::vector<std::vector<double>>& rows) {
  std::ofstream out(path);
  out.precision(17);
  for (const auto& row : rows) {
    for (std::size_t k = 0; k < row.size(); ++k) out << (k ? " " : "") << row[k];
    out << '\n';
  }
}

std::vector<std::vector<double>> read_rows(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::vector<double>> rows;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    rows.emplace_back();
    for (double v; fields >> v;) rows.back().push_back(v);
  }
  return rows;
}

// The draws the chain takes, named as the sampler names them (random_draws), for the dense
// implementation: per iteration and variant a uniform and a normal (the class, the effect), the
// χ² of σ²_β and σ²_e, and the gamma draws of π, whose shapes come from the chain's counts.
void write_draws(const std::filesystem::path& dir, const sbayesr_options& o,
                 const sbayesr_result& chain, std::size_t m) {
  std::vector<std::vector<double>> uniform, normal, chisq, dirichlet;
  for (std::uint64_t t = 1; t <= o.iterations; ++t) {
    uniform.emplace_back();
    normal.emplace_back();
    for (std::size_t p = 0; p < m; ++p) {
      detail::random_draws d(o.seed, 3, t, static_cast<std::uint32_t>(p));
      uniform.back().push_back(d.uniform());
      normal.back().push_back(d.normal());
    }
    const sbayesr_sample& s = chain.trace[t - 1];
    detail::random_draws v(o.seed, 4, t, 0);
    const double x_beta = 2.0 * v.gamma((4.0 + static_cast<double>(s.nonzero)) / 2.0);
    const double x_e = 2.0 * v.gamma((4.0 + chain.sample_size) / 2.0);
    chisq.push_back({x_beta, x_e});
    detail::random_draws w(o.seed, 5, t, 0);
    dirichlet.emplace_back();
    for (double c : s.counts) dirichlet.back().push_back(w.gamma(c + 1.0));
  }
  write_rows(dir / "uniform.txt", uniform);
  write_rows(dir / "normal.txt", normal);
  write_rows(dir / "chisq.txt", chisq);
  write_rows(dir / "dirichlet.txt", dirichlet);
}

TEST(SBayesRTest, ChainMatchesDenseNumpyImplementationWithTheSameDraws) {
  small_problem p;
  ld_columns_in_memory ld = p.ld();
  const aligned_gwas aligned = align_gwas(p.gwas, ld.variants(), ld.description());
  ASSERT_EQ(aligned.matched, 200u);
  ASSERT_EQ(aligned.flipped, 40u);
  sbayesr_options o;
  o.iterations = 30;
  o.burnin = 10;
  o.seed = 7;
  const sbayesr_result chain = sbayesr(ld, aligned, o);
  ASSERT_EQ(chain.trace.size(), 30u);
  EXPECT_GT(chain.trace.back().nonzero, 0u);

  // The dense inputs: the whole matrix of r from the LD columns, the aligned statistics.
  const std::size_t m = aligned.matched;
  std::vector<std::vector<double>> r(m, std::vector<double>(m, 0.0)), window = r, gwas;
  ld.pass(aligned.variant, [&](const ld_column& c) {
    for (std::size_t i = 0; i < c.values.size(); ++i) {
      r[c.first + i][c.index] = c.values[i];
      window[c.first + i][c.index] = 1;
    }
  });
  for (std::size_t p2 = 0; p2 < m; ++p2)
    gwas.push_back({aligned.freq[p2], aligned.b[p2], aligned.se[p2], aligned.n[p2]});
  write_rows(p.dir / "ld.txt", r);
  write_rows(p.dir / "window.txt", window);
  write_rows(p.dir / "gwas.txt", gwas);
  {
    std::ofstream settings(p.dir / "settings.txt");
    settings.precision(17);
    settings << o.iterations << '\n';
    for (double g : o.gamma) settings << g << ' ';
    settings << '\n';
    for (double w : o.pi) settings << w << ' ';
    settings << '\n' << o.h2_start << '\n' << ld.variants()[0].samples << '\n';
  }
  write_draws(p.dir.path(), o, chain, m);
  std::string output;
  const int status = test::run_command("/usr/bin/python3 " + std::string(COLFLOW_TEST_SOURCE_DIR) +
                                           "/sbayesr/dense_sbayesr.py " + p.dir.path().string(),
                                       output);
  if (status == 127 || output.find("No module named 'numpy'") != std::string::npos)
    GTEST_SKIP() << "no /usr/bin/python3 with numpy (Debian package python3-numpy)";
  ASSERT_EQ(status, 0) << output;

  const auto trace = read_rows(p.dir / "trace.txt");
  const auto beta = read_rows(p.dir / "beta.txt");
  ASSERT_EQ(trace.size(), chain.trace.size());
  ASSERT_EQ(beta.size(), m);
  const auto close = [](double a, double b) { return std::abs(a - b) <= 1e-10 * std::abs(b); };
  for (std::size_t t = 0; t < trace.size(); ++t) {
    const sbayesr_sample& s = chain.trace[t];
    const std::size_t classes = s.pi.size();
    ASSERT_EQ(trace[t].size(), 4 + 2 * classes);
    EXPECT_PRED2(close, s.sigma2_beta, trace[t][0]) << "iteration " << t + 1;
    EXPECT_PRED2(close, s.sigma2_e, trace[t][1]) << "iteration " << t + 1;
    EXPECT_PRED2(close, s.sigma2_g, trace[t][2]) << "iteration " << t + 1;
    EXPECT_PRED2(close, s.h2, trace[t][3]) << "iteration " << t + 1;
    for (std::size_t k = 0; k < classes; ++k) {
      EXPECT_PRED2(close, s.pi[k], trace[t][4 + k]) << "iteration " << t + 1;
      EXPECT_EQ(s.counts[k], trace[t][4 + classes + k]) << "iteration " << t + 1;
    }
  }
  for (std::size_t j = 0; j < m; ++j)
    EXPECT_NEAR(chain.beta[j], beta[j][0], 1e-10 * (std::abs(beta[j][0]) + 1e-3)) << j;
}

TEST(SBayesRTest, ChainIsTheSameWhateverThreads) {
  small_problem p;
  sbayesr_options o;
  o.iterations = 20;
  o.burnin = 5;
  ld_columns_in_memory ld = p.ld();
  const aligned_gwas aligned = align_gwas(p.gwas, ld.variants(), ld.description());
  const sbayesr_result a = sbayesr(ld, aligned, o);
  tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
  analysis_options serial;
  serial.stream.in_flight = 1;
  ld_columns_in_memory ld_serial = p.ld(serial);
  expect_same_chain(a, sbayesr(ld_serial, aligned, o, serial));
}

// An LD source that reads through another and counts the columns asked for one by one, and
// says it does not hold them in memory, so the sampler keeps the columns it may need again.
class counted_columns final : public ld_columns {
 public:
  explicit counted_columns(ld_columns& inner) : inner_(inner) {}
  const std::vector<ld_variant>& variants() const override { return inner_.variants(); }
  std::string description() const override { return inner_.description(); }
  void pass(std::span<const std::size_t> indices, const ld_column_visitor& visit) override {
    inner_.pass(indices, visit);
  }
  ld_column column(std::size_t index) override {
    ++reads;
    return inner_.column(index);
  }
  std::size_t reads = 0;

 private:
  ld_columns& inner_;
};

TEST(SBayesRTest, ColumnsAreReadOnlyForChangedEffectsAndKeepingThemChangesNothing) {
  small_problem p;
  sbayesr_options o;
  o.iterations = 30;
  o.burnin = 5;
  ld_columns_in_memory ld = p.ld();
  const aligned_gwas aligned = align_gwas(p.gwas, ld.variants(), ld.description());
  const sbayesr_result whole = sbayesr(ld, aligned, o);
  const std::size_t m = aligned.variant.size();
  std::size_t changed = 0;  // effects that changed, from the chain's trace of non-zero counts
  for (const sbayesr_sample& s : whole.trace) changed += s.nonzero;
  std::vector<std::size_t> reads;
  // Every column kept, none (read at every change), and room for three.
  for (std::size_t budget : {std::size_t{1} << 30, std::size_t{0}, std::size_t{3 * 4 * 25}}) {
    counted_columns counted(ld);
    o.ld_cache_bytes = budget;
    expect_same_chain(whole, sbayesr(counted, aligned, o));
    reads.push_back(counted.reads);
  }
  // A read per changed effect at most (an effect that was and stays non-zero changes at every
  // draw; one that turns zero was non-zero the iteration before), far fewer than a pass each
  // iteration; kept columns are not read again.
  EXPECT_GT(reads[1], 0u);
  EXPECT_LE(reads[1], 2 * changed);
  EXPECT_LT(reads[1], o.iterations * m / 2);
  EXPECT_LT(reads[0], reads[2]);
  EXPECT_LE(reads[2], reads[1]);
}

TEST(SBayesRTest, WholeWindowsOnTheTeamAndSixteenBitColumnsChangeNothing) {
  // 600 variants, each column all of them: the sweep's blocks hand the residual's update to the
  // team while the next block is drawn, as on a real LD matrix. From an LD store of 16-bit
  // values, kept in 16 bits (updated four columns at a time) or read anew as float32 at every
  // change, on two threads or one: the same chain.
  small_problem p(1000, 600);
  ldm_options full;
  full.value_bits = 16;
  make_ld_matrix(p.s, selection::all(p.s), full, p.dir / "ld16");
  const auto open = [&] { return ld_matrix_columns(ld_matrix::open(p.dir / "ld16"), "ld16"); };
  ld_matrix_columns ld = open();
  const aligned_gwas aligned = align_gwas(p.gwas, ld.variants(), ld.description());
  sbayesr_options o;
  o.iterations = 12;
  o.burnin = 4;
  const sbayesr_result kept = sbayesr(ld, aligned, o);
  EXPECT_GT(kept.trace.front().nonzero, 10u);  // the test sees changes to update with
  o.ld_cache_bytes = 0;
  ld_matrix_columns unkept = open();
  expect_same_chain(kept, sbayesr(unkept, aligned, o));
  tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
  o.ld_cache_bytes = sbayesr_options{}.ld_cache_bytes;
  ld_matrix_columns serial = open();
  expect_same_chain(kept, sbayesr(serial, aligned, o));
}

TEST(SBayesRTest, ChainIsTheSameOnAnyNumberOfProcesses) {
  // 600 variants in 5 blocks of 128, dealt out in turn (on six processes one draws none),
  // every change sent to every process: the single process's chain and checkpoint, bit for
  // bit, whichever process writes it. Full LD in 16 bits, and a band of 200 variants in
  // float32 with every seventh variant missing from the statistics, whose windows cut across
  // the processes' blocks and whose updates look positions up.
  small_problem p(1000, 600);
  ldm_options full;
  full.value_bits = 16;
  make_ld_matrix(p.s, selection::all(p.s), full, p.dir / "full16");
  ldm_options band;
  band.kind = ldm_kind::band;
  band.window = 200;
  make_ld_matrix(p.s, selection::all(p.s), band, p.dir / "band32");
  std::ifstream all_lines(p.dir / "g.ma");
  std::ofstream gaps(p.dir / "gaps.ma");
  std::size_t line = 0;
  for (std::string text; std::getline(all_lines, text); ++line)
    if (line == 0 || line % 7 != 0) gaps << text << '\n';
  gaps.close();
  const gwas_summary with_gaps = read_gwas_summary(p.dir / "gaps.ma");
  for (const auto& [ld_name, gwas] :
       {std::pair<const char*, const gwas_summary*>{"full16", &p.gwas}, {"band32", &with_gaps}}) {
    const std::string name = ld_name;
    const auto open = [&] { return ld_matrix_columns(ld_matrix::open(p.dir / name), name); };
    ld_matrix_columns ld = open();
    const aligned_gwas aligned = align_gwas(*gwas, ld.variants(), ld.description());
    sbayesr_options o;
    o.iterations = 12;
    o.burnin = 4;
    o.checkpoint = p.dir / (name + "-one.checkpoint");
    const sbayesr_result one = sbayesr(ld, aligned, o);
    EXPECT_GT(one.trace.front().nonzero, 10u) << name;
    for (std::size_t size : {2u, 3u, 6u}) {
      SCOPED_TRACE(name + " on " + std::to_string(size) + " processes");
      std::vector<sbayesr_result> results(size);
      sbayesr_options on_ranks = o;
      on_ranks.checkpoint = p.dir / (name + "-" + std::to_string(size) + ".checkpoint");
      test::on_processes(size, [&](std::size_t r, analysis_options& analysis) {
        ld_matrix_columns own = open();
        results[r] = sbayesr(own, aligned, on_ranks, analysis);
      });
      for (std::size_t r = 0; r < size; ++r) expect_same_chain(one, results[r]);
      EXPECT_EQ(test::read_file(o.checkpoint), test::read_file(on_ranks.checkpoint));
    }
  }
}

TEST(SBayesRTest, ProcessesGivenOtherSettingsStopTogetherBeforeTheChain) {
  // Rank 1 with another seed would draw another chain and send other messages: every rank
  // stops with the same error before the first exchange, none waits for the others.
  small_problem p(500, 130);
  ld_matrix_columns ld = [&] {
    make_ld_matrix(p.s, selection::all(p.s), ldm_options{}, p.dir / "ld");
    return ld_matrix_columns(ld_matrix::open(p.dir / "ld"), "ld");
  }();
  const aligned_gwas aligned = align_gwas(p.gwas, ld.variants(), ld.description());
  std::vector<std::string> messages(2);
  test::on_processes(2, [&](std::size_t r, analysis_options& analysis) {
    ld_matrix_columns own(ld_matrix::open(p.dir / "ld"), "ld");
    sbayesr_options o;
    o.iterations = 3;
    o.burnin = 1;
    o.seed = 1 + r;
    try {
      sbayesr(own, aligned, o, analysis);
    } catch (const error& e) {
      messages[r] = e.what();
    }
  });
  for (const std::string& m : messages)
    EXPECT_NE(m.find("different summary statistics"), std::string::npos) << m;
}

// An LD source whose column() fails from its `fail_at`-th call on, as a disk that fails would.
class failing_columns final : public ld_columns {
 public:
  failing_columns(ld_columns& inner, std::size_t fail_at) : inner_(inner), fail_at_(fail_at) {}
  const std::vector<ld_variant>& variants() const override { return inner_.variants(); }
  std::string description() const override { return inner_.description(); }
  void pass(std::span<const std::size_t> indices, const ld_column_visitor& visit) override {
    inner_.pass(indices, visit);
  }
  ld_column column(std::size_t index) override {
    if (++reads_ >= fail_at_) throw error(errc::io_error, "the disk failed");
    return inner_.column(index);
  }

 private:
  ld_columns& inner_;
  std::size_t fail_at_, reads_ = 0;
};

TEST(SBayesRTest, AFailingReadInTheMiddleOfASweepLeavesWithItsError) {
  // Thrown while the team may be updating the residual for the block before: the error leaves
  // sbayesr() as it is, and nothing the team touches is gone before the team has stopped
  // (the sanitizers' runs check the second part).
  small_problem p(1000, 600);
  ld_options window;
  window.window = 600;
  window.window_kb = 1e9;
  ld_columns_in_memory ld(p.s, selection::all(p.s), window, "g.cf in memory");
  const aligned_gwas aligned = align_gwas(p.gwas, ld.variants(), ld.description());
  sbayesr_options o;
  o.iterations = 5;
  o.burnin = 1;
  for (const std::size_t fail_at : {std::size_t{5}, std::size_t{40}, std::size_t{150}}) {
    failing_columns failing(ld, fail_at);
    try {
      sbayesr(failing, aligned, o);
      FAIL() << "no error at read " << fail_at;
    } catch (const error& e) {
      EXPECT_EQ(e.kind(), errc::io_error);
      EXPECT_NE(e.message().find("the disk failed"), std::string::npos);
    }
  }
}

TEST(SBayesRTest, InMemoryColumnsAreTheSymmetricBandOfLd) {
  small_problem p;
  ld_columns_in_memory columns = p.ld();
  ld_options o;
  o.statistic = ld_statistic::r;
  o.shape = ld_shape::square;
  const ld_result full = ld(p.s, selection::all(p.s), o);
  std::vector<std::size_t> all(200);
  for (std::size_t j = 0; j < 200; ++j) all[j] = j;
  std::size_t visited = 0;
  columns.pass(all, [&](const ld_column& c) {
    EXPECT_EQ(c.index, visited++);
    EXPECT_EQ(c.first, c.index >= 11 ? c.index - 11 : 0);
    EXPECT_EQ(c.first + c.values.size(), std::min<std::size_t>(c.index + 12, 200));
    for (std::size_t i = 0; i < c.values.size(); ++i)
      EXPECT_EQ(c.values[i], static_cast<float>(full.matrix[(c.first + i) * 200 + c.index]));
  });
  EXPECT_EQ(visited, 200u);
  EXPECT_EQ(columns.variants()[4].id, "rs4");
  EXPECT_EQ(columns.variants()[4].a1, "A");
  EXPECT_EQ(columns.variants()[4].pos, 1004);
}

TEST(SBayesRTest, RefusesBadOptions) {
  sbayesr_options o;
  o.gamma = {0.001, 0.01};
  o.pi = {0.5, 0.5};
  EXPECT_THROW(check_sbayesr_options(o), error);
  o = {};
  o.pi = {0.9, 0.1};
  EXPECT_THROW(check_sbayesr_options(o), error);
  o = {};
  o.burnin = o.iterations;
  EXPECT_THROW(check_sbayesr_options(o), error);
  o = {};
  o.pi = {0.9, 0.05, 0.02, 0.02, 0.02};
  EXPECT_THROW(check_sbayesr_options(o), error);
  EXPECT_NO_THROW(check_sbayesr_options(sbayesr_options{}));
}

// The small problem's statistics changed by `change`, run for 50 iterations: the bad_input the
// chain stops with ("" and a test failure when it runs through).
template <typename Change>
std::string bad_input_of_chain(Change&& change) {
  small_problem p;
  ld_columns_in_memory ld = p.ld();
  aligned_gwas aligned = align_gwas(p.gwas, ld.variants(), ld.description());
  change(aligned);
  sbayesr_options o;
  o.iterations = 50;
  o.burnin = 0;
  try {
    sbayesr(ld, aligned, o);
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::bad_input);
    return e.what();
  }
  ADD_FAILURE() << "the chain went on";
  return {};
}

TEST(SBayesRTest, ExplainsAResidualVarianceTurningNegative) {
  // Summary statistics that no LD can explain: perfectly correlated variants with opposite
  // marginal effects of a size the GWAS's phenotypic variance cannot hold.
  const std::string m = bad_input_of_chain([](aligned_gwas& a) {
    for (std::size_t j = 0; j < a.matched; ++j) {
      a.b[j] = (j % 2 ? 1.0 : -1.0) * 5.0;
      a.se[j] = 0.001;
    }
  });
  EXPECT_NE(m.find("residual variance turned negative"), std::string::npos) << m;
}

TEST(SBayesRTest, RefusesAMonomorphicVariantNamingItsFileAndLine) {
  std::size_t line = 0;
  const std::string m = bad_input_of_chain([&](aligned_gwas& a) {
    a.freq[3] = 0.0;
    line = a.line[3];
  });
  EXPECT_NE(m.find("g.ma:" + std::to_string(line) + ": the A1 frequency is 0"), std::string::npos)
      << m;
}

TEST(SBayesRTest, CommandWritesGctbTablesAndRefusesABadMaWritingNothing) {
  small_problem p;
  std::string output;
  const std::string base = "sbayesr --gwas " + (p.dir / "g.ma").string() + " --ldm " +
                           (p.dir / "g.cf").string() + " --ld-window 12 --iterations 20 " +
                           "--burnin 5 --quiet --out ";
  ASSERT_EQ(test::run_cli(base + (p.dir / "fit").string(), output), 0) << output;
  std::ifstream par(p.dir / "fit.parRes");
  std::string text((std::istreambuf_iterator<char>(par)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("       hsq    "), std::string::npos) << text;
  EXPECT_NE(text.find("   NumSnp5    "), std::string::npos) << text;
  const auto effects = read_rows(p.dir / "fit.snpRes");  // the header reads as an empty row
  EXPECT_EQ(effects.size(), 201u);

  std::ofstream(p.dir / "bad.ma") << "SNP A1 A2 freq b p N\nrs1 A C 0.2 0.1 0.5 100\n";
  const std::string bad = "sbayesr --gwas " + (p.dir / "bad.ma").string() + " --ldm " +
                          (p.dir / "g.cf").string() + " --out " + (p.dir / "bad").string();
  EXPECT_NE(test::run_cli(bad, output), 0);
  EXPECT_NE(output.find("bad.ma:1: the header has no column 'se'"), std::string::npos) << output;
  EXPECT_FALSE(std::filesystem::exists(p.dir / "bad.parRes"));
  EXPECT_FALSE(std::filesystem::exists(p.dir / "bad.snpRes"));
}

TEST(SBayesRTest, ResumingFromAnyCheckpointContinuesTheSameChain) {
  small_problem p;
  ld_columns_in_memory ld = p.ld();
  const aligned_gwas aligned = align_gwas(p.gwas, ld.variants(), ld.description());
  sbayesr_options o;
  o.iterations = 30;
  o.burnin = 8;
  o.checkpoint = p.dir / "chain.ckpt";
  o.checkpoint_every = 7;
  const sbayesr_result whole = sbayesr(ld, aligned, o);
  EXPECT_EQ(whole.iterations_run, 30u);
  EXPECT_EQ(whole.posterior_samples, 22u);
  const auto expect_whole = [&](const sbayesr_result& r) {
    expect_same_chain(whole, r);
    EXPECT_EQ(r.posterior_samples, whole.posterior_samples);
    EXPECT_EQ(r.beta_sd, whole.beta_sd);
    EXPECT_EQ(r.a1_effect, whole.a1_effect);
    for (std::size_t t = 0; t < r.trace.size(); ++t) {
      EXPECT_EQ(r.trace[t].iteration, whole.trace[t].iteration);
      EXPECT_EQ(r.trace[t].counts, whole.trace[t].counts);
      EXPECT_EQ(r.trace[t].sigma2_g, whole.trace[t].sigma2_g);
    }
  };

  // Stopped after the burn-in (the run's last iteration is checkpointed), then resumed to the
  // end: the same chain.
  o.iterations = 12;
  EXPECT_EQ(sbayesr(ld, aligned, o).iterations_run, 12u);
  o.iterations = 30;
  o.resume = true;
  const sbayesr_result resumed = sbayesr(ld, aligned, o);
  EXPECT_EQ(resumed.resumed_from, 12u);
  EXPECT_EQ(resumed.iterations_run, 18u);
  expect_whole(resumed);

  // Chains killed during iteration 6 (in the burn-in) and 17 find the checkpoints of
  // iterations 5 and 14 (with a stale temporary beside them) and continue them from there,
  // with another in-flight depth.
  for (const std::size_t kill : {std::size_t{6}, std::size_t{17}}) {
    o.checkpoint_every = kill == 6 ? 5 : 7;
    o.resume = false;
    o.on_iteration = [kill](std::size_t t, std::size_t, double) {
      if (t == kill) throw std::runtime_error("killed");
    };
    EXPECT_THROW(sbayesr(ld, aligned, o), std::runtime_error);
    o.on_iteration = nullptr;
    std::ofstream(p.dir / "chain.ckpt.partial") << "half a checkpoint";
    o.resume = true;
    analysis_options other;
    other.stream.in_flight = 1;
    ld_columns_in_memory ld_other = p.ld(other);
    const sbayesr_result after_kill = sbayesr(ld_other, aligned, o, other);
    EXPECT_EQ(after_kill.resumed_from, kill == 6 ? 5u : 14u);
    expect_whole(after_kill);
  }

  // Resuming a finished chain with the same length only re-reports it.
  const sbayesr_result again = sbayesr(ld, aligned, o);
  EXPECT_EQ(again.iterations_run, 0u);
  expect_whole(again);
}

TEST(SBayesRTest, ResumedBeforeTheLearntPriorScaleTakesOverContinuesTheSameChain) {
  // GCTB's prior scale of sigma2_beta is learnt over 2,000 iterations and used from then on: a
  // chain stopped before that and resumed after it must carry the learnt mean. 20 variants,
  // so that the 2,004 iterations take a fraction of a second.
  small_problem p;
  ld_columns_in_memory ld = p.ld();
  aligned_gwas aligned = align_gwas(p.gwas, ld.variants(), ld.description());
  const std::size_t m = 20;
  aligned.variant.resize(m);
  for (std::vector<double>* v : {&aligned.freq, &aligned.b, &aligned.se, &aligned.n}) v->resize(m);
  aligned.line.resize(m);
  sbayesr_options o;
  o.iterations = 2004;
  o.burnin = 1990;
  o.checkpoint = p.dir / "long.ckpt";
  const sbayesr_result whole = sbayesr(ld, aligned, o);
  o.iterations = 1998;
  sbayesr(ld, aligned, o);
  o.iterations = 2004;
  o.resume = true;
  const sbayesr_result resumed = sbayesr(ld, aligned, o);
  EXPECT_EQ(resumed.resumed_from, 1998u);
  expect_same_chain(whole, resumed);
  EXPECT_EQ(resumed.trace.back().sigma2_beta, whole.trace.back().sigma2_beta);
}

TEST(SBayesRTest, DamagedOrForeignCheckpointsAreRefusedByName) {
  small_problem p;
  ld_columns_in_memory ld = p.ld();
  aligned_gwas aligned = align_gwas(p.gwas, ld.variants(), ld.description());
  sbayesr_options o;
  o.iterations = 5;
  o.burnin = 1;
  o.checkpoint = p.dir / "c.ckpt";
  sbayesr(ld, aligned, o);
  o.resume = true;
  o.iterations = 6;
  const auto expect_refused = [&](errc code, const std::string& what) {
    try {
      sbayesr(ld, aligned, o);
      ADD_FAILURE() << "accepted: " << what;
    } catch (const error& e) {
      EXPECT_EQ(e.code(), code) << what << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("c.ckpt"), std::string::npos) << e.what();
    }
  };
  test::expect_damaged_checkpoint_refused(o.checkpoint, 61, [&] { sbayesr(ld, aligned, o); });
  o.seed = 99;  // another run's settings
  expect_refused(errc::invalid_argument, "another seed");
  o.seed = 1;
  o.burnin = 2;
  expect_refused(errc::invalid_argument, "another burn-in");
  o.burnin = 1;
  const double b = aligned.b[7];
  aligned.b[7] = b * 1.5;  // other summary statistics
  expect_refused(errc::invalid_argument, "another GWAS");
  aligned.b[7] = b;
  o.iterations = 4;  // the checkpoint is already past this
  expect_refused(errc::invalid_argument, "past the end");
  o.iterations = 6;
  EXPECT_NO_THROW(sbayesr(ld, aligned, o));
  std::filesystem::remove(o.checkpoint);
  expect_refused(errc::not_found, "absent");
  // Another LD reference: the same variants, a window one narrower.
  sbayesr_options fresh = o;
  fresh.resume = false;
  fresh.iterations = 5;
  sbayesr(ld, aligned, fresh);
  ld_options window;
  window.window = 11;
  ld_columns_in_memory narrower(p.s, selection::all(p.s), window, "g.cf in memory");
  try {
    sbayesr(narrower, aligned, o);
    ADD_FAILURE() << "resumed the chain of another LD reference";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument) << e.what();
    EXPECT_NE(std::string(e.what()).find("c.ckpt: the checkpoint belongs to another run"),
              std::string::npos)
        << e.what();
  }
  // Another chain's checkpoint (BayesR's magic) is not an SBayesR one.
  std::vector<char> bayesr_file = test::read_file(o.checkpoint);
  std::memcpy(bayesr_file.data(), "CFBAYESR", 8);
  test::write_file(o.checkpoint, bayesr_file);
  expect_refused(errc::bad_magic, "a BayesR checkpoint");
}

TEST(SBayesRTest, CommandResumedGivesTheUninterruptedFilesAndRefusesAnotherRunsCheckpoint) {
  small_problem p;
  std::string output;
  const std::string base = "sbayesr --gwas " + (p.dir / "g.ma").string() + " --ldm " +
                           (p.dir / "g.cf").string() + " --ld-window 12 --burnin 5 --quiet";
  const auto run = [&](const std::string& args, const std::string& out) {
    return test::run_cli(base + " " + args + " --out " + (p.dir / out).string(), output);
  };
  ASSERT_EQ(run("--iterations 20", "whole"), 0) << output;
  EXPECT_TRUE(std::filesystem::exists(p.dir / "whole.checkpoint"));
  ASSERT_EQ(run("--iterations 9 --checkpoint-every 4", "parts"), 0) << output;
  ASSERT_EQ(run("--iterations 20 --resume", "parts"), 0) << output;
  const auto text = [&](const std::string& name) { return test::read_file(p.dir / name); };
  EXPECT_EQ(text("parts.parRes"), text("whole.parRes"));
  EXPECT_EQ(text("parts.snpRes"), text("whole.snpRes"));
  EXPECT_EQ(text("parts.checkpoint"), text("whole.checkpoint"));

  EXPECT_NE(run("--iterations 20 --seed 2 --resume", "whole"), 0);
  EXPECT_NE(output.find("whole.checkpoint: the checkpoint belongs to another run"),
            std::string::npos)
      << output;
  EXPECT_NE(run("--iterations 20 --resume", "nothing"), 0);
  EXPECT_NE(output.find("nothing.checkpoint: no checkpoint to resume from"), std::string::npos)
      << output;
}

}  // namespace
TEST(SBayesRTest, ChainIsTheSameFromAnLdStoreGctbFilesAndLdInMemory) {
  // The same band of the same samples, as float32 each way: the chain must not tell them apart.
  small_problem p;
  std::string output;
  const std::string band = (p.dir / "band").string();
  ASSERT_EQ(test::run_cli("ld " + (p.dir / "g.cf").string() +
                              " --make-ldm band --ld-window 12 --ld-window-kb 1000 --ldm-gctb "
                              "--quiet --out " +
                              band,
                          output),
            0)
      << output;
  const auto run = [&](const std::string& ldm, const std::string& window, const std::string& out) {
    return test::run_cli("sbayesr --gwas " + (p.dir / "g.ma").string() + " --ldm " + ldm + window +
                             " --iterations 20 --burnin 5 --quiet --out " + (p.dir / out).string(),
                         output);
  };
  ASSERT_EQ(run((p.dir / "g.cf").string(), " --ld-window 12", "memory"), 0) << output;
  ASSERT_EQ(run(band, "", "store"), 0) << output;
  ASSERT_EQ(run(band + ".ldm.band", "", "gctb"), 0) << output;
  // A matrix on disk has its own windows: one given for it is refused, not ignored.
  EXPECT_EQ(run(band, " --ld-window 12", "ignored"), 1);
  EXPECT_NE(output.find("--ld-window: applies to a genotype or dosage store"), std::string::npos)
      << output;
  const auto text = [&](const std::string& name) { return test::read_file(p.dir / name); };
  EXPECT_EQ(text("store.parRes"), text("memory.parRes"));
  EXPECT_EQ(text("gctb.parRes"), text("memory.parRes"));
  EXPECT_EQ(text("store.snpRes"), text("memory.snpRes"));
  EXPECT_EQ(text("gctb.snpRes"), text("memory.snpRes"));
}

}  // namespace colflow
