// colflow simulate: the PLINK files it writes, its determinism, and that the data follow the
// model it documents (frequencies, missingness, variance decomposition, effects).
#include "colflow/preprocess/simulate.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "colflow/cancellation.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

namespace fs = std::filesystem;
using preprocess::simulate_options;
using preprocess::simulate_result;

const std::string cli = COLFLOW_CLI_PATH;

std::vector<std::vector<std::string>> read_table(const fs::path& p) {
  std::ifstream in(p);
  EXPECT_TRUE(in) << p;
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::vector<std::string> row;
    for (std::string f; fields >> f;) row.push_back(f);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const auto tab = line.find('\t', start);
    out.push_back(line.substr(start, tab - start));
    if (tab == std::string::npos) return out;
    start = tab + 1;
  }
}

// PREFIX.truth.tsv: "# key value" lines, a header, then one row per causal variant.
struct truth_file {
  std::map<std::string, std::string> scalars;
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
  double scalar(const std::string& key) const { return std::stod(scalars.at(key)); }
};

truth_file read_truth(const fs::path& p) {
  std::ifstream in(p);
  EXPECT_TRUE(in) << p;
  truth_file t;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# ", 0) == 0) {
      const auto space = line.find(' ', 2);
      t.scalars[line.substr(2, space - 2)] =
          space == std::string::npos ? "" : line.substr(space + 1);
    } else if (t.header.empty()) {
      t.header = split_tabs(line);
    } else {
      const auto f = split_tabs(line);
      EXPECT_EQ(f.size(), t.header.size()) << line;
      std::map<std::string, std::string> row;
      for (std::size_t k = 0; k < f.size() && k < t.header.size(); ++k) row[t.header[k]] = f[k];
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

// The .bed as written, with the dosage (count of A1, -1 when missing) of sample i, variant j.
struct bed_file {
  std::vector<char> bytes;
  std::uint64_t n = 0, m = 0;
  std::uint64_t stride() const { return (n + 3) / 4; }
  unsigned code(std::uint64_t i, std::uint64_t j) const {
    const auto byte = static_cast<unsigned char>(bytes[3 + j * stride() + i / 4]);
    return (byte >> (2 * (i % 4))) & 3u;
  }
  int dosage(std::uint64_t i, std::uint64_t j) const {
    static constexpr int from_code[4] = {2, -1, 1, 0};
    return from_code[code(i, j)];
  }
  // A1 frequency among observed calls, and the number of observed calls.
  std::pair<double, std::uint64_t> a1_freq(std::uint64_t j) const {
    std::uint64_t a1 = 0, obs = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      const int d = dosage(i, j);
      if (d >= 0) a1 += static_cast<std::uint64_t>(d), ++obs;
    }
    return {obs ? static_cast<double>(a1) / (2.0 * static_cast<double>(obs)) : NAN, obs};
  }
};

bed_file read_bed(const fs::path& p, std::uint64_t n, std::uint64_t m) {
  bed_file b{test::read_file(p), n, m};
  EXPECT_EQ(b.bytes.size(), 3 + m * b.stride());
  return b;
}

std::vector<double> read_phen(const fs::path& p) {
  std::vector<double> y;
  for (const auto& row : read_table(p)) {
    EXPECT_EQ(row.size(), 3u);
    y.push_back(std::stod(row.at(2)));
  }
  return y;
}

double mean(const std::vector<double>& x) {
  return std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
}
double covariance(const std::vector<double>& x, const std::vector<double>& y) {
  const double mx = mean(x), my = mean(y);
  double s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) s += (x[i] - mx) * (y[i] - my);
  return s / static_cast<double>(x.size() - 1);
}
double variance(const std::vector<double>& x) { return covariance(x, x); }

// Variant index of an ID "snp{j+1}".
std::uint64_t variant_index(const std::string& id) {
  EXPECT_EQ(id.rfind("snp", 0), 0u) << id;
  return std::stoull(id.substr(3)) - 1;
}

// g rebuilt from the .bed and the truth alone, as the truth's model line documents.
std::vector<double> genetic_values(const bed_file& bed, const truth_file& truth) {
  std::vector<double> g(bed.n, 0.0);
  for (const auto& row : truth.rows) {
    const std::uint64_t j = variant_index(row.at("ID"));
    const double beta = std::stod(row.at("BETA")), freq = std::stod(row.at("A1_FREQ"));
    for (std::uint64_t i = 0; i < bed.n; ++i) {
      const int d = bed.dosage(i, j);
      g[i] += beta * ((d < 0 ? 2 * freq : d) - 2 * freq);
    }
  }
  return g;
}

simulate_options options(const fs::path& out, std::uint64_t n, std::uint64_t m) {
  simulate_options o;
  o.samples = n;
  o.variants = m;
  o.out = out;
  return o;
}

// A staged output's temporary (.NAME.tmp-HOST-PID-RANDOM, colflow/io/staged_output.hpp), or a
// NAME.tmp of older versions.
bool has_temporaries(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() == ".tmp" || name.find(".tmp-") != std::string::npos) return true;
  }
  return false;
}

const char* const extensions[] = {".bed", ".bim", ".fam", ".phen", ".truth.tsv"};

TEST(SimulateTest, WritesPlinkFilesOfTheDocumentedShape) {
  test::temp_dir dir;
  simulate_options o = options(dir / "sim", 2001, 300);  // N % 4 = 1: three padding codes
  o.missing_rate = 0.05;
  const simulate_result r = preprocess::simulate(o);
  const fs::path p = dir / "sim";

  const bed_file bed = read_bed(p.string() + ".bed", 2001, 300);
  ASSERT_EQ(fs::file_size(p.string() + ".bed"), 3u + 300u * 501u);
  EXPECT_EQ(r.bed_bytes, 3u + 300u * 501u);
  EXPECT_EQ(bed.bytes[0], 0x6c);
  EXPECT_EQ(bed.bytes[1], 0x1b);
  EXPECT_EQ(bed.bytes[2], 0x01);
  for (std::uint64_t j = 0; j < 300; ++j)
    ASSERT_EQ(static_cast<unsigned char>(bed.bytes[3 + j * 501 + 500]) & 0xfc, 0)
        << "padding bits of variant " << j;

  const auto fam = read_table(p.string() + ".fam");
  ASSERT_EQ(fam.size(), 2001u);
  for (std::size_t i = 0; i < fam.size(); ++i) {
    std::string id = "s";
    id += std::to_string(i + 1);
    ASSERT_EQ(fam[i], (std::vector<std::string>{id, id, "0", "0", "0", "-9"}));
  }

  const auto bim = read_table(p.string() + ".bim");
  ASSERT_EQ(bim.size(), 300u);
  long previous = 0;
  for (std::size_t j = 0; j < bim.size(); ++j) {
    const auto& f = bim[j];
    ASSERT_EQ(f.size(), 6u);
    EXPECT_EQ(f[0], "1");
    EXPECT_EQ(f[1], "snp" + std::to_string(j + 1));
    EXPECT_EQ(f[2], "0");
    const long pos = std::stol(f[3]);
    EXPECT_GT(pos, previous);
    previous = pos;
    ASSERT_EQ(f[4].size(), 1u);
    ASSERT_EQ(f[5].size(), 1u);
    EXPECT_NE(std::string("ACGT").find(f[4]), std::string::npos);
    EXPECT_NE(std::string("ACGT").find(f[5]), std::string::npos);
    EXPECT_NE(f[4], f[5]);
    const auto v = preprocess::describe_variant(o, j);
    EXPECT_EQ(f[1], v.id);
    EXPECT_EQ(pos, v.position);
    EXPECT_EQ(f[4], std::string(1, v.a1));
    EXPECT_EQ(f[5], std::string(1, v.a2));
  }

  const auto phen = read_table(p.string() + ".phen");
  ASSERT_EQ(phen.size(), 2001u);
  for (std::size_t i = 0; i < phen.size(); ++i) {
    ASSERT_EQ(phen[i].size(), 3u);
    EXPECT_EQ(phen[i][0], fam[i][0]);
    EXPECT_EQ(phen[i][1], fam[i][1]);
    EXPECT_TRUE(std::isfinite(std::stod(phen[i][2])));
  }

  const truth_file truth = read_truth(p.string() + ".truth.tsv");
  EXPECT_EQ(truth.header, (std::vector<std::string>{"ID", "A1", "BETA", "A1_FREQ", "A2", "STD_BETA",
                                                    "A1_FREQ_OBSERVED"}));
  ASSERT_EQ(truth.rows.size(), 100u);  // default K = min(100, M)
  ASSERT_EQ(r.causal.size(), 100u);
  for (const char* key : {"samples", "variants", "causal", "seed", "h2_target", "h2_realised",
                          "var_g", "var_e", "var_y", "missing_rate", "missing_rate_observed"})
    EXPECT_TRUE(truth.scalars.count(key)) << key;
  EXPECT_EQ(truth.scalars.at("samples"), "2001");
  EXPECT_EQ(truth.scalars.at("causal"), "100");
  EXPECT_DOUBLE_EQ(truth.scalar("h2_target"), 0.5);
  EXPECT_FALSE(has_temporaries(dir.path()));
}

TEST(SimulateTest, IsReproducibleWhateverTheThreadsAndBlocks) {
  test::temp_dir dir;
  const auto run = [&](const std::string& name, std::uint64_t seed, unsigned threads,
                       std::size_t block_bytes) {
    simulate_options o = options(dir / name, 1003, 800);
    o.seed = seed;
    o.threads = threads;
    o.block_bytes = block_bytes;
    o.missing_rate = 0.01;
    o.causal = 300;
    preprocess::simulate(o);
  };
  run("a", 42, 1, 1 << 20);
  run("b", 42, 2, 2520);  // ten variants per block: many blocks in flight at once
  run("c", 43, 2, 2520);
  const auto file = [&](const char* name, const char* ext) {
    return test::read_file((dir / name).string() + ext);
  };
  for (const char* ext : extensions) EXPECT_EQ(file("a", ext), file("b", ext)) << ext;
  EXPECT_NE(file("a", ".bed"), file("c", ".bed"));
  EXPECT_NE(file("a", ".phen"), file("c", ".phen"));
}

TEST(SimulateTest, SumsGeneticValuesOfLargeSamplesInParallelCorrectly) {
  // N above the size from which genetic values are summed in parallel over samples; each
  // sample is still summed by one thread in variant order.
  test::temp_dir dir;
  simulate_options o = options(dir / "big", 70001, 3);
  o.causal = 3;
  o.missing_rate = 0.01;
  o.threads = 2;
  const simulate_result r = preprocess::simulate(o);
  const bed_file bed = read_bed((dir / "big").string() + ".bed", 70001, 3);
  const truth_file truth = read_truth((dir / "big").string() + ".truth.tsv");
  const double var_g = variance(genetic_values(bed, truth));
  EXPECT_NEAR(var_g, r.var_g, 1e-9 * var_g);
  for (std::size_t c = 0; c < 3; ++c)
    EXPECT_EQ(r.causal[c].a1_freq_observed, bed.a1_freq(r.causal[c].variant.index).first);
}

TEST(SimulateTest, GenotypesFollowTheDrawnFrequenciesAndMissingRate) {
  test::temp_dir dir;
  simulate_options o = options(dir / "f", 2000, 500);
  o.missing_rate = 0.1;
  const simulate_result r = preprocess::simulate(o);
  const bed_file bed = read_bed((dir / "f").string() + ".bed", 2000, 500);

  std::uint64_t missing = 0, below_005 = 0, a1_minor = 0;
  double z2 = 0, het = 0, het_expected = 0;
  for (std::uint64_t j = 0; j < 500; ++j) {
    const double p = preprocess::describe_variant(o, j).a1_freq;
    const double maf = std::min(p, 1 - p);
    ASSERT_GE(maf, 0.005);
    ASSERT_LE(maf, 0.5);
    below_005 += maf < 0.05;
    a1_minor += p < 0.5;
    const auto [observed_p, obs] = bed.a1_freq(j);
    missing += 2000 - obs;
    // Binomial sampling of 2 * obs alleles.
    const double z = (observed_p - p) / std::sqrt(p * (1 - p) / (2.0 * static_cast<double>(obs)));
    EXPECT_LT(std::abs(z), 5.5) << "variant " << j << " p " << p << " observed " << observed_p;
    z2 += z * z;
    for (std::uint64_t i = 0; i < 2000; ++i) het += bed.dosage(i, j) == 1;
    het_expected += 2 * p * (1 - p) * static_cast<double>(obs);
  }
  // The z^2 average 1 (SD 0.063 over 500 variants) when the spread is binomial as drawn.
  EXPECT_NEAR(z2 / 500, 1.0, 0.2);
  // Hardy-Weinberg: heterozygotes as expected (relative SE about 0.5%).
  EXPECT_NEAR(het / het_expected, 1.0, 0.03);
  // Log-uniform on [0.005, 0.5]: half below 0.05; A1 minor half the time (binomial SD 0.022).
  EXPECT_NEAR(static_cast<double>(below_005) / 500, 0.5, 0.1);
  EXPECT_NEAR(static_cast<double>(a1_minor) / 500, 0.5, 0.1);
  // Missing calls: 10% of 1e6 (SE 0.0003).
  EXPECT_EQ(missing, r.missing_calls);
  EXPECT_NEAR(static_cast<double>(missing) / 1e6, 0.1, 0.003);
  const truth_file truth = read_truth((dir / "f").string() + ".truth.tsv");
  EXPECT_NEAR(truth.scalar("missing_rate_observed"), static_cast<double>(missing) / 1e6, 1e-9);

  // Without --missing there is no missing call at all.
  o.missing_rate = 0;
  o.variants = 50;
  EXPECT_EQ(preprocess::simulate(o).missing_calls, 0u);
  const bed_file full = read_bed((dir / "f").string() + ".bed", 2000, 50);
  for (std::uint64_t j = 0; j < 50; ++j) ASSERT_EQ(full.a1_freq(j).second, 2000u);
}

TEST(SimulateTest, PhenotypeIsGeneticValuePlusNoiseAtTheTargetHeritability) {
  test::temp_dir dir;
  simulate_options o = options(dir / "h", 2000, 400);
  o.causal = 20;
  o.h2 = 0.6;
  o.missing_rate = 0.02;
  o.seed = 7;
  const simulate_result r = preprocess::simulate(o);
  const fs::path p = dir / "h";
  const bed_file bed = read_bed(p.string() + ".bed", 2000, 400);
  const truth_file truth = read_truth(p.string() + ".truth.tsv");
  const std::vector<double> y = read_phen(p.string() + ".phen");
  ASSERT_EQ(y.size(), 2000u);
  ASSERT_EQ(truth.rows.size(), 20u);

  const auto bim = read_table(p.string() + ".bim");
  std::int64_t previous = -1;
  for (const auto& row : truth.rows) {
    const std::uint64_t j = variant_index(row.at("ID"));
    ASSERT_LT(j, 400u);
    EXPECT_GT(static_cast<std::int64_t>(j), previous) << "causal variants in variant order";
    previous = static_cast<std::int64_t>(j);
    EXPECT_EQ(row.at("A1"), bim[j][4]);
    EXPECT_EQ(row.at("A2"), bim[j][5]);
    const double beta = std::stod(row.at("BETA")), freq = std::stod(row.at("A1_FREQ"));
    EXPECT_NEAR(freq, preprocess::describe_variant(o, j).a1_freq, 1e-11);
    EXPECT_NEAR(beta, std::stod(row.at("STD_BETA")) / std::sqrt(2 * freq * (1 - freq)),
                1e-10 * std::abs(beta));
    EXPECT_NEAR(std::stod(row.at("A1_FREQ_OBSERVED")), bed.a1_freq(j).first, 1e-9);
  }
  const std::vector<double> g = genetic_values(bed, truth);
  const double var_g = variance(g), var_y = variance(y);
  EXPECT_NEAR(var_g, truth.scalar("var_g"), 1e-9 * var_g);
  EXPECT_NEAR(var_g, r.var_g, 1e-9 * var_g);
  EXPECT_NEAR(var_y, truth.scalar("var_y"), 1e-6 * var_y);
  EXPECT_NEAR(truth.scalar("var_e"), var_g * (1 - 0.6) / 0.6, 1e-9 * var_g);
  EXPECT_NEAR(truth.scalar("h2_realised"), var_g / var_y, 1e-6);
  // Sampling error of the realised h2 with N = 2000 is about 0.015.
  EXPECT_NEAR(var_g / var_y, 0.6, 0.06);
  // y = g + e with e independent of g: regressing y on g gives slope 1 (SE about 0.02), and the
  // residual has the noise variance.
  EXPECT_NEAR(covariance(y, g) / var_g, 1.0, 0.1);
  std::vector<double> e(2000);
  for (std::size_t i = 0; i < e.size(); ++i) e[i] = y[i] - g[i];
  EXPECT_NEAR(variance(e) / truth.scalar("var_e"), 1.0, 0.15);
  EXPECT_NEAR(mean(e), 0.0, 5 * std::sqrt(truth.scalar("var_e") / 2000));
}

TEST(SimulateTest, ZeroHeritabilityHasNoGeneticEffect) {
  test::temp_dir dir;
  simulate_options o = options(dir / "z", 2000, 50);
  o.h2 = 0;
  simulate_result r = preprocess::simulate(o);
  EXPECT_TRUE(r.causal.empty());
  EXPECT_EQ(r.var_g, 0);
  EXPECT_EQ(read_truth((dir / "z").string() + ".truth.tsv").rows.size(), 0u);
  const std::vector<double> y = read_phen((dir / "z").string() + ".phen");
  EXPECT_NEAR(variance(y), 1.0, 0.15);

  o.causal = 5;  // allowed: chosen, but with no effect
  r = preprocess::simulate(o);
  ASSERT_EQ(r.causal.size(), 5u);
  for (const auto& c : r.causal) EXPECT_EQ(c.beta, 0);
  EXPECT_EQ(r.var_g, 0);
}

TEST(SimulateTest, AnInterruptedRunLeavesThePreviousFilesAlone) {
  test::temp_dir dir;
  simulate_options o = options(dir / "x", 101, 100);
  preprocess::simulate(o);
  const auto before = test::read_file((dir / "x").string() + ".bed");
  o.seed = 2;
  o.block_bytes = 26 * 10;  // ten blocks, several in flight when the callback throws
  o.threads = 2;
  int calls = 0;
  EXPECT_THROW(preprocess::simulate(o,
                                    [&](const preprocess::simulate_progress& p) {
                                      EXPECT_EQ(p.variants_total, 100u);
                                      if (++calls == 3) throw std::runtime_error("stop");
                                    }),
               std::runtime_error);
  EXPECT_EQ(test::read_file((dir / "x").string() + ".bed"), before);
  EXPECT_FALSE(has_temporaries(dir.path()));
}

TEST(SimulateTest, AStopRequestCancelsTheRunAndLeavesThePreviousFilesAlone) {
  clear_stop_request();
  test::temp_dir dir;
  simulate_options o = options(dir / "x", 101, 100);
  preprocess::simulate(o);
  std::map<std::string, std::vector<char>> before;
  for (const char* e : extensions) before[e] = test::read_file((dir / "x").string() + e);
  o.seed = 2;
  o.block_bytes = 26 * 10;  // ten blocks
  o.threads = 2;
  std::uint64_t done = 0;
  try {
    preprocess::simulate(o, [&](const preprocess::simulate_progress& p) {
      done = p.variants_done;
      if (p.variants_done >= 20) request_stop();
    });
    ADD_FAILURE() << "the run ended despite the stop request";
  } catch (const error& e) {
    EXPECT_EQ(e.kind(), errc::cancelled) << e.message();
  }
  clear_stop_request();
  EXPECT_LT(done, 100u);  // stopped between variants, not at the end
  for (const char* e : extensions)
    EXPECT_EQ(test::read_file((dir / "x").string() + e), before[e]) << e;
  EXPECT_FALSE(has_temporaries(dir.path()));
}

TEST(SimulateTest, ChromosomesHoldConsecutiveRunsOfVariantsWithTheirOwnPositions) {
  test::temp_dir dir;
  simulate_options o = options(dir / "c", 9, 10);
  o.chromosomes = 3;
  preprocess::simulate(o);
  const auto bim = read_table((dir / "c").string() + ".bim");
  ASSERT_EQ(bim.size(), 10u);
  // Chromosome c holds variants floor(c M / C) .. floor((c + 1) M / C) - 1: 0-2, 3-5, 6-9.
  const std::vector<std::string> chromosome = {"1", "1", "1", "2", "2", "2", "3", "3", "3", "3"};
  const std::vector<std::string> position = {"1",    "1001", "2001", "1",    "1001",
                                             "2001", "1",    "1001", "2001", "3001"};
  for (std::size_t j = 0; j < 10; ++j) {
    EXPECT_EQ(bim[j].at(0), chromosome[j]) << j;
    EXPECT_EQ(bim[j].at(3), position[j]) << j;
    EXPECT_EQ(preprocess::describe_variant(o, j).chromosome, std::stoul(chromosome[j]));
  }
}

TEST(SimulateTest, PopulationsDivergeByFstAndShiftThePhenotype) {
  test::temp_dir dir;
  simulate_options o = options(dir / "p", 4000, 300);
  o.populations = 2;
  o.fst = 0.1;
  o.population_shift = 3;
  o.h2 = 0;  // y = e + 3 k, e ~ N(0, 1)
  o.maf_min = 0.1;
  preprocess::simulate(o);
  const bed_file bed = read_bed((dir / "p").string() + ".bed", 4000, 300);
  const auto fam = read_table((dir / "p").string() + ".fam");
  // Samples 0-1999 are pop1, 2000-3999 pop2.
  EXPECT_EQ(fam[1999].at(0), "pop1");
  EXPECT_EQ(fam[2000].at(0), "pop2");
  EXPECT_EQ(fam[2000].at(1), "s2001");
  // The frequencies of two populations differ by variance 2 F p (1 - p) (plus sampling):
  // the average of (p1 - p2)^2 / (p (1 - p)) is near 2 F = 0.2 (the clamp lowers it a little).
  double scaled = 0;
  for (std::uint64_t j = 0; j < 300; ++j) {
    const double p = preprocess::describe_variant(o, j).a1_freq;
    double freq[2];
    for (int k = 0; k < 2; ++k) {
      double a1 = 0;
      for (std::uint64_t i = 2000u * k; i < 2000u * (k + 1); ++i) a1 += bed.dosage(i, j);
      freq[k] = a1 / 4000;
    }
    scaled += (freq[0] - freq[1]) * (freq[0] - freq[1]) / (p * (1 - p));
  }
  EXPECT_NEAR(scaled / 300, 0.2, 0.05);
  // The shift: pop2's mean phenotype is 3 above pop1's (SE 0.03).
  const std::vector<double> y = read_phen((dir / "p").string() + ".phen");
  const double m1 = std::accumulate(y.begin(), y.begin() + 2000, 0.0) / 2000;
  const double m2 = std::accumulate(y.begin() + 2000, y.end(), 0.0) / 2000;
  EXPECT_NEAR(m2 - m1, 3, 0.15);
}

TEST(SimulateTest, RelativesAreParentAndOffspringNeverOppositeHomozygotes) {
  test::temp_dir dir;
  simulate_options o = options(dir / "r", 400, 400);
  o.relatives = 50;
  o.missing_rate = 0.05;
  o.maf_min = 0.2;
  preprocess::simulate(o);
  const bed_file bed = read_bed((dir / "r").string() + ".bed", 400, 400);
  // Parent 4b and offspring 4b + 1 share an allele at every variant both have called, so one
  // is never 0 where the other is 2; unrelated neighbours (4b + 2, 4b + 3) often are.
  std::uint64_t related_opposite = 0, unrelated_opposite = 0, shared_het = 0;
  for (std::uint64_t b = 0; b < 50; ++b)
    for (std::uint64_t j = 0; j < 400; ++j) {
      const int p = bed.dosage(4 * b, j), c = bed.dosage(4 * b + 1, j);
      const int u = bed.dosage(4 * b + 2, j), v = bed.dosage(4 * b + 3, j);
      related_opposite += p >= 0 && c >= 0 && std::abs(p - c) == 2;
      unrelated_opposite += u >= 0 && v >= 0 && std::abs(u - v) == 2;
      shared_het += p == 1 && c == 1;
    }
  EXPECT_EQ(related_opposite, 0u);
  EXPECT_GT(unrelated_opposite, 500u);
  EXPECT_GT(shared_het, 1000u);
}

TEST(SimulateTest, RejectsInvalidOptions) {
  test::temp_dir dir;
  const auto rejects = [&](simulate_options o, const std::string& needle) {
    try {
      preprocess::simulate(o);
      ADD_FAILURE() << "accepted options that should fail with " << needle;
    } catch (const error& e) {
      EXPECT_EQ(e.kind(), errc::invalid_argument) << e.message();
      EXPECT_NE(e.message().find(needle), std::string::npos) << e.message();
    }
  };
  const simulate_options good = options(dir / "bad", 10, 10);
  auto o = good;
  o.samples = 0;
  rejects(o, "--samples");
  o = good;
  o.variants = 0;
  rejects(o, "--variants");
  o = good;
  o.h2 = 1;
  rejects(o, "--h2");
  o.h2 = -0.1;
  rejects(o, "--h2");
  o.h2 = NAN;
  rejects(o, "--h2");
  o = good;
  o.missing_rate = 1;
  rejects(o, "--missing");
  o = good;
  o.causal = 11;
  rejects(o, "--causal 11 exceeds");
  o.causal = 0;
  rejects(o, "--causal 0");
  o = good;
  o.maf_min = 0;
  rejects(o, "MAF");
  o = good;
  o.maf_max = 0.6;
  rejects(o, "MAF");
  // The study's shape: 10 variants on at most 10 chromosomes, 3 groups of four samples.
  const std::pair<void (*)(simulate_options&), const char*> shapes[] = {
      {[](simulate_options& s) { s.chromosomes = 11; }, "--chromosomes"},
      {[](simulate_options& s) { s.populations = 4; }, "--populations"},
      {[](simulate_options& s) { s.populations = 2, s.fst = 0; }, "--fst"},
      {[](simulate_options& s) { s.population_shift = 1; }, "--population-shift needs"},
      {[](simulate_options& s) { s.relatives = 3; }, "--relatives"}};
  for (const auto& [change, needle] : shapes) {
    o = good;
    change(o);
    rejects(o, needle);
  }
  o = good;
  o.out.clear();
  rejects(o, "--out");
  EXPECT_TRUE(fs::is_empty(dir.path()));

  // An output folder that does not exist: an error naming the file, nothing written.
  o = good;
  o.out = dir / "no" / "such" / "dir" / "x";
  try {
    preprocess::simulate(o);
    ADD_FAILURE() << "wrote into a missing folder";
  } catch (const error& e) {
    EXPECT_NE(e.message().find("no/such/dir/.x.bed.tmp-"), std::string::npos) << e.message();
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(SimulateTest, CommandLineWritesFilesThatPlink2Reads) {
  test::temp_dir dir;
  const std::string prefix = (dir / "c").string();
  std::string out;
  ASSERT_EQ(test::run_command(cli +
                                  " simulate --samples 1001 --variants 200 --causal 10 "
                                  "--h2 0.3 --missing 0.05 --seed 9 --threads 2 --out " +
                                  prefix,
                              out),
            0)
      << out;
  EXPECT_NE(out.find("1001 samples x 200 variants"), std::string::npos) << out;
  const truth_file truth = read_truth(prefix + ".truth.tsv");
  EXPECT_EQ(truth.rows.size(), 10u);
  EXPECT_EQ(truth.scalars.at("seed"), "9");
  EXPECT_DOUBLE_EQ(truth.scalar("h2_target"), 0.3);

  // The same run through the library gives the same bytes.
  simulate_options o = options(dir / "lib", 1001, 200);
  o.causal = 10;
  o.h2 = 0.3;
  o.missing_rate = 0.05;
  o.seed = 9;
  preprocess::simulate(o);
  for (const char* ext : extensions)
    EXPECT_EQ(test::read_file(prefix + ext), test::read_file((dir / "lib").string() + ext)) << ext;

  // plink2 is part of the project's dependencies (scripts/install-deps.sh): fail if absent.
  ASSERT_EQ(test::run_command("plink2 --version", out), 0)
      << "plink2 is missing; run scripts/install-deps.sh\n"
      << out;
  ASSERT_EQ(
      test::run_command(
          "plink2 --bfile " + prefix + " --freq --threads 1 --out " + (dir / "p2").string(), out),
      0)
      << out;
  const auto afreq = read_table((dir / "p2").string() + ".afreq");
  ASSERT_EQ(afreq.size(), 201u);
  EXPECT_EQ(afreq[0],
            (std::vector<std::string>{"#CHROM", "ID", "REF", "ALT", "ALT_FREQS", "OBS_CT"}));
  const bed_file bed = read_bed(prefix + ".bed", 1001, 200);
  const auto bim = read_table(prefix + ".bim");
  for (std::uint64_t j = 0; j < 200; ++j) {
    const auto& f = afreq[j + 1];
    ASSERT_EQ(f.size(), 6u);
    EXPECT_EQ(f[1], bim[j][1]);
    EXPECT_EQ(f[3], bim[j][4]) << "PLINK 2 reads .bim column 5 (A1) as ALT";
    const auto [freq, obs] = bed.a1_freq(j);
    EXPECT_NEAR(std::stod(f[4]), freq, 1e-6) << f[1];  // plink2 prints 6 significant digits
    EXPECT_EQ(std::stoull(f[5]), 2 * obs) << f[1];
  }
}

TEST(SimulateTest, CommandLineReportsBadOptions) {
  test::temp_dir dir;
  const std::string prefix = " --out " + (dir / "bad").string();
  std::string out;
  EXPECT_EQ(test::run_command(cli + " simulate --samples 0 --variants 10" + prefix, out), 1);
  EXPECT_NE(out.find("colflow: error: simulate: --samples must be between 1"), std::string::npos)
      << out;
  EXPECT_EQ(test::run_command(cli + " simulate --samples 10 --variants 10 --h2 1.5" + prefix, out),
            1);
  EXPECT_NE(out.find("--h2 must be in [0, 1)"), std::string::npos) << out;
  EXPECT_EQ(test::run_command(cli + " simulate --samples 10 --variants 5 --causal 6" + prefix, out),
            1);
  EXPECT_NE(out.find("--causal 6 exceeds the number of variants 5"), std::string::npos) << out;
  EXPECT_NE(test::run_command(cli + " simulate --samples 10" + prefix, out), 0);
  EXPECT_NE(out.find("--variants"), std::string::npos) << out;
  EXPECT_NE(test::run_command(cli + " simulate --samples ten --variants 10" + prefix, out), 0);
  EXPECT_NE(test::run_command(cli + " simulate --samples -5 --variants 10" + prefix, out), 0);
  EXPECT_NE(out.find("--samples: must not be negative"), std::string::npos) << out;
  EXPECT_TRUE(fs::is_empty(dir.path()));
  EXPECT_EQ(test::run_command(cli + " simulate --help", out), 0);
  EXPECT_NE(out.find("log-uniform"), std::string::npos) << out;
}

}  // namespace
}  // namespace colflow
