// colflow score: against an explicit computation from the codes, against plink2 --score on
// the shared datasets (every modifier), on genotype and dosage stores, across thread counts,
// colflow's own effect files and PGS Catalog files, and the errors of the score file.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>

#include "colflow/colflow.hpp"
#include "colflow/preprocess/converter.hpp"
#include "kernels/sample_blocks_internal.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

void write_text(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

// The plain definition, from the codes: for each selected sample, the sum over entries of
// w × (named dosage, mean-imputed / centred / standardised as asked).
std::vector<double> explicit_scores(const std::vector<std::vector<std::uint8_t>>& codes,
                                    const std::vector<column_info>& columns, const selection& sel,
                                    const score_table& t, const score_options& o,
                                    std::size_t score_index) {
  std::vector<double> out(sel.rows.size(), 0.0);
  for (const auto& e : t.entries) {
    std::size_t j = columns.size();
    for (std::size_t c = 0; c < columns.size(); ++c)
      if (columns[c].id == e.id) j = c;
    if (j == columns.size() || (e.allele != columns[j].a1 && e.allele != columns[j].a2)) continue;
    const bool a1 = e.allele == columns[j].a1;
    double total = 0, called = 0;
    for (std::size_t i : sel.rows) {
      const int d = test::dosage_at(codes[j], i);
      if (d >= 0) total += d, ++called;
    }
    const double f = total / called / 2, named_mean = a1 ? 2 * f : 2 * (1 - f);
    const double sd = std::sqrt(2 * f * (1 - f));
    for (std::size_t k = 0; k < sel.rows.size(); ++k) {
      const int d = test::dosage_at(codes[j], sel.rows[k]);
      double x;
      if (d < 0) {
        x = o.no_mean_imputation || o.scale != score_options::scaling::none ? 0 : named_mean;
      } else {
        x = a1 ? d : 2 - d;
        if (o.scale != score_options::scaling::none) x -= named_mean;
        if (o.scale == score_options::scaling::variance_standardize) x = sd > 0 ? x / sd : 0;
      }
      out[k] += e.weights[score_index] * x;
    }
  }
  return out;
}

TEST(ScoreTest, EqualsExplicitComputationWithEveryOption) {
  test::temp_dir dir;
  const std::size_t n = 203, m = 40;
  const auto codes = test::write_genotype_store(dir / "g.cf", n, m, column_encoding{}, 5);
  const store s = store::open(dir / "g.cf");
  // Weights on every other column, A1 or A2, three scores; an absent ID and an unknown allele.
  std::ostringstream text;
  std::mt19937_64 rng(9);
  std::normal_distribution<double> w;
  for (std::size_t j = 1; j < m; j += 2)
    text << "rs" << j << ' ' << (j % 4 == 1 ? "A" : "C") << ' ' << w(rng) << ' ' << w(rng) << ' '
         << w(rng) << '\n';
  text << "rs5 C 0.5 0.25 -1\n";  // the other allele of a variant already named
  text << "nowhere A 1 1 1\nrs2 G 1 1 1\n";
  write_text(dir / "w.txt", text.str());
  score_file f;
  f.path = dir / "w.txt";
  f.score_columns = {3, 4, 5};
  const score_table t = read_score_file(f);
  ASSERT_EQ(t.names, (std::vector<std::string>{"SCORE1", "SCORE2", "SCORE3"}));

  selection sel = selection::all(s);
  selection subset = sel;
  subset.rows.clear();
  for (std::size_t i = 0; i < n; ++i) {
    subset.row_kept[i] = i % 3 != 0;
    if (subset.row_kept[i]) subset.rows.push_back(i);
  }
  for (const selection* chosen : {&sel, &subset})
    for (auto scale : {score_options::scaling::none, score_options::scaling::center,
                       score_options::scaling::variance_standardize})
      for (bool no_mean : {false, true}) {
        score_options o;
        o.scale = scale;
        o.no_mean_imputation = no_mean;
        const score_result r = score(s, *chosen, t, o);
        EXPECT_EQ(r.missing_ids, 1u);
        EXPECT_EQ(r.allele_mismatches, 1u);
        EXPECT_EQ(r.columns.size(), 20u);  // rs1, rs3, ..., rs39 (rs5 named twice)
        EXPECT_EQ(r.entries_used, 21u);
        for (std::size_t v = 0; v < 3; ++v) {
          const auto expected = explicit_scores(codes, s.columns(), *chosen, t, o, v);
          for (std::size_t k = 0; k < chosen->rows.size(); ++k)
            ASSERT_NEAR(r.sums[k * 3 + v], expected[k], 1e-11 * (1 + std::abs(expected[k])))
                << "sample " << k << " score " << v << " scale " << static_cast<int>(scale)
                << " no-mean-imputation " << no_mean;
        }
        // ALLELE_CT: 2 per called variant; DENOM: 2 per variant, or ALLELE_CT.
        for (std::size_t k = 0; k < chosen->rows.size(); ++k) {
          std::uint64_t alleles = 0;
          for (std::size_t j : r.columns)
            if (test::dosage_at(codes[j], chosen->rows[k]) >= 0) alleles += 2;
          EXPECT_EQ(r.allele_counts[k], alleles);
          EXPECT_EQ(r.denominators[k], no_mean ? alleles : 2 * r.columns.size());
        }
      }
}

// Every column weighted, one score and three (three and five sums a sample), in segments of
// 13 columns (column_segments: at most 16 of them), so that the pass takes its columns four at
// a time, each sample's sums in registers, and the rest one by one: the explicit sums still.
TEST(ScoreTest, ColumnsTakenFourAtATimeEqualExplicitComputation) {
  test::temp_dir dir;
  const std::size_t n = 203, m = 201;
  const auto codes = test::write_genotype_store(dir / "g.cf", n, m, column_encoding{}, 11);
  const store s = store::open(dir / "g.cf");
  std::ostringstream text;
  std::mt19937_64 rng(4);
  std::normal_distribution<double> w;
  for (std::size_t j = 0; j < m; ++j)
    text << "rs" << j << ' ' << (j % 3 == 1 ? "C" : "A") << ' ' << w(rng) << ' ' << w(rng) << ' '
         << w(rng) << '\n';
  write_text(dir / "w.txt", text.str());
  const selection sel = selection::all(s);
  for (const std::vector<std::size_t>& columns :
       {std::vector<std::size_t>{3}, std::vector<std::size_t>{3, 4, 5}}) {
    score_file f;
    f.path = dir / "w.txt";
    f.score_columns = columns;
    const score_table t = read_score_file(f);
    const score_result r = score(s, sel, t, score_options{});
    ASSERT_EQ(r.columns.size(), m);
    const std::size_t scores = columns.size();
    for (std::size_t v = 0; v < scores; ++v) {
      const auto expected = explicit_scores(codes, s.columns(), sel, t, score_options{}, v);
      for (std::size_t k = 0; k < n; ++k)
        ASSERT_NEAR(r.sums[k * scores + v], expected[k], 1e-11 * (1 + std::abs(expected[k])))
            << "sample " << k << " score " << v << " of " << scores;
    }
    for (std::size_t k = 0; k < n; ++k) {
      std::uint64_t alleles = 0;
      for (std::size_t j = 0; j < m; ++j)
        if (test::dosage_at(codes[j], k) >= 0) alleles += 2;
      ASSERT_EQ(r.allele_counts[k], alleles) << "sample " << k;
    }
  }
}

// Hard calls held as 16-bit dosages.
class dosage_source final : public preprocess::column_source {
 public:
  explicit dosage_source(std::vector<std::vector<std::uint16_t>> columns)
      : columns_(std::move(columns)) {}
  value_type kind() const override { return value_type::dosage; }
  std::uint64_t rows() const override { return columns_[0].size(); }
  std::uint64_t columns() const override { return columns_.size(); }
  std::vector<sample_info> samples() const override { return test::numbered_samples(rows()); }
  column_info column(std::uint64_t j) const override { return test::numbered_column(j); }
  std::string description() const override { return "test dosages"; }
  void read_dosages(std::uint64_t j, std::span<std::uint16_t> out) override {
    check_read(j, out.size());
    std::copy(columns_[j].begin(), columns_[j].end(), out.begin());
  }

 private:
  std::vector<std::vector<std::uint16_t>> columns_;
};

TEST(ScoreTest, DosageStoreOfHardCallsEqualsGenotypeStore) {
  test::temp_dir dir;
  const std::size_t n = 150, m = 12;
  const auto codes = test::write_genotype_store(dir / "g.cf", n, m, column_encoding{}, 2);
  std::vector<std::vector<std::uint16_t>> dosages(m, std::vector<std::uint16_t>(n));
  for (std::size_t j = 0; j < m; ++j)
    for (std::size_t i = 0; i < n; ++i) {
      const int d = test::dosage_at(codes[j], i);
      dosages[j][i] = d < 0 ? dosage_missing : static_cast<std::uint16_t>(d * dosage_one);
    }
  dosage_source source(dosages);
  preprocess::convert_options co;
  co.out = dir / "d.cf";
  co.codec = preprocess::codec_choice::auto_select;  // the dosages, not their hard calls
  co.keep_dosages = true;
  preprocess::convert(source, co);
  const store g = store::open(dir / "g.cf"), d = store::open(dir / "d.cf");
  ASSERT_EQ(d.type(), value_type::dosage);
  write_text(dir / "w.txt", "rs1 A 0.5\nrs2 C -1.5\nrs4 A 2\nrs5 A 0.125\nrs9 C 3\n");
  score_file f;
  f.path = dir / "w.txt";
  const score_table t = read_score_file(f);
  for (bool no_mean : {false, true})
    for (auto scale : {score_options::scaling::none, score_options::scaling::center,
                       score_options::scaling::variance_standardize}) {
      score_options o;
      o.scale = scale;
      o.no_mean_imputation = no_mean;
      const score_result a = score(g, selection::all(g), t, o),
                         b = score(d, selection::all(d), t, o);
      ASSERT_EQ(a.sums.size(), b.sums.size());
      for (std::size_t k = 0; k < a.sums.size(); ++k) {
        EXPECT_NEAR(a.sums[k], b.sums[k], 1e-12 * (1 + std::abs(a.sums[k])));
        EXPECT_NEAR(a.dosage_sums[k], b.dosage_sums[k], 1e-12);
        EXPECT_EQ(a.allele_counts[k], b.allele_counts[k]);
      }
    }
}

TEST(ScoreTest, BitIdenticalAtAnyThreadAndProcessCount) {
  test::temp_dir dir;
  // Three sample blocks, so that two threads share them.
  const std::size_t n = 3 * sample_block_rows + 77, m = 30;
  test::write_genotype_store(dir / "g.cf", n, m, column_encoding{codec_id::zstd, 1}, 3);
  const store s = store::open(dir / "g.cf");
  std::ostringstream text;
  for (std::size_t j = 0; j < m; ++j)
    text << "rs" << j << ' ' << (j % 2 ? "A" : "C") << ' ' << 0.1 * static_cast<double>(j) - 1.3
         << ' ' << 1.0 / static_cast<double>(j + 1) << '\n';
  write_text(dir / "w.txt", text.str());
  score_file f;
  f.path = dir / "w.txt";
  f.score_columns = {3, 4};
  const score_table t = read_score_file(f);
  std::vector<std::vector<double>> results;
  for (std::size_t threads : {1, 2}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    for (std::size_t in_flight : {1, 4}) {
      analysis_options a;
      a.stream.in_flight = in_flight;
      a.stream.block_bytes = 4096;  // batches of a few columns
      score_options o;
      o.scale = score_options::scaling::variance_standardize;
      results.push_back(score(s, selection::all(s), t, o, a).sums);
    }
  }
  // Processes (threads here) taking whole segments of the columns (15 of 2 columns: segments
  // end inside the stream's batches), each one's result the single process's.
  for (const std::size_t size : {2u, 3u}) {
    std::vector<std::vector<double>> got(size);
    test::on_processes(size, [&](std::size_t r, analysis_options& a) {
      a.stream.block_bytes = 4096;
      score_options o;
      o.scale = score_options::scaling::variance_standardize;
      got[r] = score(s, selection::all(s), t, o, a).sums;
    });
    results.insert(results.end(), got.begin(), got.end());
  }
  for (const auto& r : results) {
    ASSERT_EQ(r.size(), results[0].size());
    EXPECT_EQ(std::memcmp(r.data(), results[0].data(), r.size() * sizeof(double)), 0);
  }
}

TEST(ScoreTest, ReadsBayesrPenalizedAndPgsCatalogFiles) {
  test::temp_dir dir;
  const std::size_t n = 57, m = 8;
  const auto codes = test::write_genotype_store(dir / "g.cf", n, m, column_encoding{}, 7);
  const store s = store::open(dir / "g.cf");
  // A direct product with per-A1 effects b_j: sum_j b_j × A1 dosage (mean-imputed).
  const std::vector<double> b = {0, 0.5, -0.25, 0, 1.5, 0.125, -2, 0.75};
  const auto direct = [&](const std::vector<double>& beta) {
    std::vector<double> out(n, 0.0);
    for (std::size_t j = 0; j < m; ++j) {
      double total = 0, called = 0;
      for (std::size_t i = 0; i < n; ++i)
        if (const int d = test::dosage_at(codes[j], i); d >= 0) total += d, ++called;
      for (std::size_t i = 0; i < n; ++i) {
        const int d = test::dosage_at(codes[j], i);
        out[i] += beta[j] * (d >= 0 ? d : total / called);
      }
    }
    return out;
  };
  std::ostringstream effects, coef;
  effects << "ID\tA1\tPIP\tBETA\tBETA_SD\tBETA_PER_UNIT\tBETA_PER_UNIT_SD\n";
  coef << "LAMBDA\tID\tA1\tBETA\tBETA_PER_UNIT\n";
  for (std::size_t j = 0; j < m; ++j) {
    effects << "rs" << j << "\tA\t0.5\t9\t1\t" << b[j] << "\t0.1\n";
    if (b[j] != 0) coef << "0.5\trs" << j << "\tA\t9\t" << b[j] << '\n';
  }
  coef << "0.25\trs1\tA\t9\t3\n";
  write_text(dir / "b.effects.tsv", effects.str());
  write_text(dir / "p.coef.tsv", coef.str());
  score_file f;
  f.path = dir / "b.effects.tsv";
  score_table t = read_score_file(f);
  EXPECT_EQ(t.format, "colflow bayesr");
  score_result r = score(s, selection::all(s), t);
  auto expected = direct(b);
  for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(r.sums[i], expected[i], 1e-12);

  // GCTB's .snpRes (and colflow sbayesr's): Name, A1 and A1Effect by the header; variant 4
  // given for its other allele, which is then the one counted.
  std::ostringstream snp_res;
  snp_res << "    Id                 Name  Chrom     Position     A1     A2        A1Frq     "
             "A1Effect           SE            PIP  LastSampleEff\n";
  for (std::size_t j = 0; j < m; ++j)
    snp_res << j + 1 << " rs" << j << " 1 " << 1000 + j << (j == 4 ? " C A" : " A C") << " 0.3 "
            << (j == 4 ? -b[j] : b[j]) << " 0.1 0.5 0.2\n";
  write_text(dir / "g.snpRes", snp_res.str());
  f.path = dir / "g.snpRes";
  const score_table gctb = read_score_file(f);
  EXPECT_EQ(gctb.format, "GCTB snpRes");
  ASSERT_EQ(gctb.entries.size(), m);
  EXPECT_EQ(gctb.entries[4].allele, "C");
  const score_result from_gctb = score(s, selection::all(s), gctb);
  // −b (2 − d) for the A2 allele: the same score less 2b.
  for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(from_gctb.sums[i], expected[i] - 2 * b[4], 1e-12);

  f.path = dir / "p.coef.tsv";
  t = read_score_file(f);
  EXPECT_EQ(t.format, "colflow penalized");
  ASSERT_EQ(t.names, (std::vector<std::string>{"LAMBDA=0.5", "LAMBDA=0.25"}));
  r = score(s, selection::all(s), t);
  std::vector<double> second(m, 0.0);
  second[1] = 3;
  const auto expected2 = direct(second);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_NEAR(r.sums[2 * i], expected[i], 1e-12);
    EXPECT_NEAR(r.sums[2 * i + 1], expected2[i], 1e-12);
  }

  // PGS Catalog: hm_rsID first, rsID where it is empty; effect_allele C is the store's A2.
  write_text(dir / "pgs.txt",
             "###PGS CATALOG SCORING FILE\n#pgs_id=PGS000999\n#weight_type=beta\n"
             "rsID\tchr_name\teffect_allele\tother_allele\teffect_weight\thm_rsID\n"
             "x1\t1\tA\tC\t0.5\trs1\n"
             "rs2\t1\tC\tA\t-0.25\t\n");
  f.path = dir / "pgs.txt";
  t = read_score_file(f);
  EXPECT_EQ(t.format, "PGS Catalog");
  EXPECT_EQ(t.names, std::vector<std::string>{"PGS000999"});
  r = score(s, selection::all(s), t);
  std::vector<double> pgs(m, 0.0);
  pgs[1] = 0.5;
  pgs[2] = 0.25;  // −0.25 × (2 − d) = 0.25 d − 0.5
  expected = direct(pgs);
  for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(r.sums[i], expected[i] - 0.5, 1e-12);
}

TEST(ScoreTest, BadScoreFilesNameFileAndLineAndWriteNothing) {
  test::temp_dir dir;
  test::write_genotype_store(dir / "g.cf", 20, 5, column_encoding{}, 1);
  const std::string st = (dir / "g.cf").string(), d = dir.path().string() + "/";
  const auto expect_error = [&](const std::string& name, const std::string& text,
                                const std::string& message) {
    if (!text.empty()) write_text(dir / name, text);
    std::string out;
    EXPECT_NE(
        test::run_cli("score " + st + " --quiet --score " + d + name + " --out " + d + "o", out), 0)
        << name;
    EXPECT_NE(out.find(name), std::string::npos) << out;
    EXPECT_NE(out.find(message), std::string::npos) << out;
    EXPECT_FALSE(std::filesystem::exists(dir / "o.sscore")) << name;
  };
  expect_error("dup.txt", "rs1 A 1\nrs2 A 1\n\nrs1 A 2\n", "line 4");
  expect_error("dup.txt", "rs1 A 1\nrs2 A 1\n\nrs1 A 2\n", "first on line 1");
  expect_error("nan.txt", "rs1 A 1\nrs2 A x1\n", "line 2");
  expect_error("nan.txt", "rs1 A 1\nrs2 A x1\n", "not a number");
  expect_error("short.txt", "rs1 A 1\nrs2 A\n", "line 2");
  expect_error("absent.txt", "", "absent.txt");
  // A PGS Catalog file with a weight that is not a number.
  expect_error("pgs.txt", "#pgs_id=X\nrsID\teffect_allele\teffect_weight\nrs1\tA\tNA\n", "line 3");

  // Alleles that are neither A1 nor A2 are skipped and counted, as plink2 does.
  write_text(dir / "ok.txt", "rs1 G 1\nrs2 A 1\nrs99 A 1\n");
  std::string out;
  ASSERT_EQ(test::run_cli("score " + st + " --score " + d + "ok.txt --out " + d + "o", out), 0)
      << out;
  EXPECT_NE(out.find("1 --score file entries were skipped due to a mismatching allele code"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("1 --score file entries were skipped due to a missing variant ID"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("--score: 1 variants processed"), std::string::npos) << out;
  EXPECT_TRUE(std::filesystem::exists(dir / "o.sscore"));
}

// plink2's .sscore and ours, line by line: the columns both have, to plink2's 6 digits; only the
// lines where `use` holds (all by default).
void compare_sscore(
    const std::filesystem::path& ours, const std::filesystem::path& theirs, const std::string& what,
    const std::function<bool(const std::vector<std::string>&, const test::text_table&)>& use = {}) {
  const test::text_table a = test::read_table(ours), p = test::read_table(theirs);
  ASSERT_EQ(a.header, p.header) << what;
  ASSERT_EQ(a.rows.size(), p.rows.size()) << what;
  std::size_t compared = 0;
  for (std::size_t i = 0; i < a.rows.size(); ++i) {
    if (use && !use(p.rows[i], p)) continue;
    ++compared;
    for (std::size_t c = 0; c < a.header.size(); ++c) {
      const std::string& h = a.header[c];
      if (h == "FID" || h == "IID") continue;  // plink2's copy renames the samples
      const std::string& x = a.rows[i][c];
      const std::string y = p.rows[i][c] == "nan" ? "NA" : p.rows[i][c];
      if (x == "NA" || y == "NA") {
        EXPECT_EQ(x, y) << what << " line " << i + 2 << " " << h;
        continue;
      }
      EXPECT_TRUE(test::same_as_printed(std::stod(x), y))
          << what << " line " << i + 2 << " " << h << ": " << x << " vs " << y;
    }
  }
  EXPECT_GT(compared, 0u) << what;
}

TEST(ScoreTest, EqualsPlink2Score) {
  REQUIRE_SHARED_DATA();
  std::string out;
  if (test::run_command("plink2 --version", out) != 0) GTEST_SKIP() << "plink2 is not installed";
  for (const std::string& name :
       {test::dataset("bed-reader/some_missing"), test::dataset("hapmap-yri/plinkhapmap")}) {
    test::temp_dir dir;
    const std::string st = (dir / "s.cf").string(), d = dir.path().string() + "/";
    ASSERT_EQ(test::run_cli("preprocess --quiet --bed " + name + " --out " + st, out), 0) << out;
    const std::string p2 = test::plink2_input(name, dir.path());
    const store s = store::open(st);
    // Every third autosomal variant, named by A1 or A2 (a flip), two weights; a header line;
    // IDs absent from the data and an allele of neither.
    std::ostringstream text;
    text << "ID\tALLELE\tBETA\tGAMMA\n";
    std::mt19937_64 rng(11);
    std::normal_distribution<double> w;
    std::size_t scored = 0;
    const auto& columns = s.columns();
    // Monomorphic variants are left out: plink2 refuses them under variance-standardize.
    std::ostringstream few;  // the first four: samples without a missing call among them
    few << "ID\tALLELE\tBETA\tGAMMA\n";
    for (std::size_t j = 0; j < columns.size(); j += 3) {
      const double f = s.entry(j).stats.a1_freq;
      if (test::is_sex_or_mt_chromosome(columns[j].chrom) || columns[j].chrom == "23" ||
          !(f > 0 && f < 1))
        continue;
      std::ostringstream line;
      line << columns[j].id << '\t' << (j % 2 ? columns[j].a1 : columns[j].a2) << '\t' << w(rng)
           << '\t' << w(rng) << '\n';
      text << line.str();
      if (++scored <= 4) few << line.str();
    }
    const std::string absent =
        "absent_1\tA\t1\t1\nabsent_2\tC\t1\t1\n" + columns[1].id + "\tN\t1\t1\n";
    write_text(dir / "w.txt", text.str() + absent);
    write_text(dir / "few.txt", few.str() + absent);
    // plink2 2.00a3.5 adds a missing call's uncentred mean under center and
    // variance-standardize, where colflow adds 0 (docs/ANALYSES.md): those runs score the four
    // variants of few.txt and compare the samples with a call at each.
    const auto complete = [&](const std::vector<std::string>& row, const test::text_table& t) {
      return row[t.column("ALLELE_CT")] == "8";
    };
    struct run {
      std::string modifiers, extra;
      bool complete_only;
    };
    for (const run& c : std::vector<run>{
             {"header", "", false},
             {"header-read cols=+scoresums,+denom", "--score-col-nums 3-4", false},
             {"header no-mean-imputation cols=+scoresums,+denom", "--score-col-nums 3,4", false},
             {"header-read center no-mean-imputation cols=+scoresums", "--score-col-nums 3-4",
              false},
             {"header-read center cols=+scoresums", "--score-col-nums 3-4", true},
             {"header-read variance-standardize cols=+scoresums", "--score-col-nums 3-4", true},
             {"header-read variance-standardize no-mean-imputation cols=+scoresums,+denom",
              "--score-col-nums 4", false},
             {"header 1 2 4 cols=fid,scoreavgs,scoresums,nallele", "", false},
             {"header cols=maybefid,dosagesum,denom", "", false},
             {"header cols=-scoreavgs,+scoresums,-nallele", "", false},
         }) {
      const std::string file = c.complete_only ? "few.txt" : "w.txt";
      const std::size_t variants = c.complete_only ? 4 : scored;
      const std::string what = name + " --score " + file + " " + c.modifiers + " " + c.extra;
      ASSERT_EQ(test::run_cli("score " + st + " --score " + d + file + " " + c.modifiers + " " +
                                  c.extra + " --out " + d + "c",
                              out),
                0)
          << what << "\n"
          << out;
      EXPECT_NE(out.find("--score: " + std::to_string(variants) + " variants processed"),
                std::string::npos)
          << what << "\n"
          << out;
      test::run_plink2("--bfile " + p2 + " --score " + d + file + " " + c.modifiers + " " +
                       c.extra + " --out " + d + "p");
      std::string log;
      ASSERT_EQ(test::run_command("cat " + d + "p.log", log), 0);
      EXPECT_NE(log.find("--score: " + std::to_string(variants) + " variants processed"),
                std::string::npos)
          << log;
      EXPECT_NE(log.find("2 --score file entries were skipped due to missing variant IDs"),
                std::string::npos)
          << log;
      if (c.complete_only)
        compare_sscore(d + "c.sscore", d + "p.sscore", what, complete);
      else
        compare_sscore(d + "c.sscore", d + "p.sscore", what);
    }
  }
}

}  // namespace
}  // namespace colflow
