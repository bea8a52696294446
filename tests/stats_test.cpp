// colflow stats: against plink2 --freq/--missing on the shared datasets (with and without
// --keep), and against plain loops on genotype and dense stores.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>

#include "colflow/colflow.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

// Writes the same subset of samples (rows with i % 3 != 1) as our IDs and as plink2's.
void write_keep_files(const std::vector<sample_info>& samples, const std::filesystem::path& ours,
                      const std::filesystem::path& theirs) {
  std::ofstream a(ours), b(theirs);
  for (std::size_t i = 0; i < samples.size(); ++i)
    if (i % 3 != 1) {
      a << samples[i].fid << " " << samples[i].iid << "\n";
      b << "f" << i << " s" << i << "\n";
    }
}

TEST(StatsTest, EqualsPlink2FreqAndMissingOnEveryDatasetWithAndWithoutKeep) {
  REQUIRE_SHARED_DATA();
  for (const std::string& name : test::all_datasets()) {
    test::temp_dir dir;
    std::string out;
    ASSERT_EQ(test::run_cli(
                  "preprocess --quiet --bed " + name + " --out " + (dir / "s.cf").string(), out),
              0)
        << out;
    const store s = store::open(dir / "s.cf");
    const std::string p2 = test::plink2_input(name, dir.path());
    write_keep_files(s.samples(), dir / "keep.txt", dir / "keep_p2.txt");
    for (const bool keep : {false, true}) {
      const std::string ours = (dir / (keep ? "k.tsv" : "all.tsv")).string();
      ASSERT_EQ(test::run_cli("stats " + (dir / "s.cf").string() + " --quiet --digits 12 --out " +
                                  ours + (keep ? " --keep " + (dir / "keep.txt").string() : ""),
                              out),
                0)
          << out;
      const std::string ref = (dir / (keep ? "pk" : "pa")).string();
      test::run_plink2("--bfile " + p2 +
                       " --freq --missing --nonfounders --allow-extra-chr --out " + ref +
                       (keep ? " --keep " + (dir / "keep_p2.txt").string() : ""));
      const test::text_table t = test::read_table(ours), freq = test::read_table(ref + ".afreq"),
                             miss = test::read_table(ref + ".vmiss");
      ASSERT_EQ(t.rows.size(), s.num_columns()) << name;
      ASSERT_EQ(freq.rows.size(), s.num_columns()) << name;
      ASSERT_EQ(miss.rows.size(), s.num_columns()) << name;
      const std::size_t c_chr = t.column("CHR"), c_id = t.column("ID"), c_obs = t.column("OBS_CT"),
                        c_miss = t.column("MISSING_CT"), c_fmiss = t.column("F_MISS"),
                        c_freq = t.column("A1_FREQ");
      const std::size_t f_id = freq.column("ID"), f_alt = freq.column("ALT"),
                        f_freq = freq.column("ALT_FREQS"), f_obs = freq.column("OBS_CT"),
                        m_miss = miss.column("MISSING_CT"), m_obs = miss.column("OBS_CT"),
                        m_fmiss = miss.column("F_MISS");
      std::size_t compared = 0;
      for (std::size_t j = 0; j < t.rows.size(); ++j) {
        const auto& r = t.rows[j];
        if (test::is_sex_or_mt_chromosome(r[c_chr])) continue;
        const std::string what = name + (keep ? " --keep " : " ") + r[c_id];
        ASSERT_EQ(r[c_id], freq.rows[j][f_id]) << what;  // same order as the .bim
        ASSERT_EQ(s.columns()[j].a1, freq.rows[j][f_alt]) << what;
        // plink2's OBS_CT counts alleles in .afreq and all samples in .vmiss.
        const auto obs = std::stoull(r[c_obs]), missing = std::stoull(r[c_miss]);
        EXPECT_EQ(2 * obs, std::stoull(freq.rows[j][f_obs])) << what;
        EXPECT_EQ(obs + missing, std::stoull(miss.rows[j][m_obs])) << what;
        EXPECT_EQ(r[c_miss], miss.rows[j][m_miss]) << what;
        EXPECT_TRUE(test::same_as_printed(std::stod(r[c_fmiss]), miss.rows[j][m_fmiss]))
            << what << " F_MISS: " << r[c_fmiss] << " vs " << miss.rows[j][m_fmiss];
        EXPECT_TRUE(test::same_as_printed(r[c_freq] == "NA" ? NAN : std::stod(r[c_freq]),
                                          freq.rows[j][f_freq]))
            << what << " A1_FREQ: " << r[c_freq] << " vs " << freq.rows[j][f_freq];
        ++compared;
      }
      EXPECT_GT(compared, 0u) << name;
    }
  }
}

TEST(StatsTest, GenotypeSubsetsMatchPlainCounts) {
  test::temp_dir dir;
  const std::uint64_t n = 203;
  const auto codes =
      test::write_genotype_store(dir / "g.cf", n, 12, column_encoding{codec_id::zstd, 3});
  const store s = store::open(dir / "g.cf");
  selection sel = selection::all(s);
  // Index path (all rows) and pass path (a subset) against plain loops.
  for (const bool subset : {false, true}) {
    if (subset) {
      sel.rows.clear();
      for (std::size_t i = 0; i < n; ++i) {
        sel.row_kept[i] = i % 4 != 0;
        if (sel.row_kept[i]) sel.rows.push_back(i);
      }
    }
    const auto got = column_summaries(s, sel);
    ASSERT_EQ(got.size(), 12u);
    for (std::size_t j = 0; j < 12; ++j) {
      double sum = 0, obs = 0;
      for (std::size_t i : sel.rows)
        if (test::dosage_at(codes[j], i) >= 0) {
          sum += test::dosage_at(codes[j], i);
          ++obs;
        }
      double ss = 0;
      for (std::size_t i : sel.rows) {
        const int d = test::dosage_at(codes[j], i);
        if (d >= 0) ss += (d - sum / obs) * (d - sum / obs);
      }
      EXPECT_EQ(static_cast<double>(got[j].observed), obs) << j;
      EXPECT_EQ(static_cast<double>(got[j].missing), static_cast<double>(sel.rows.size()) - obs)
          << j;
      EXPECT_NEAR(got[j].a1_freq, sum / obs / 2, 1e-14) << j;
      EXPECT_NEAR(got[j].mean, sum / obs, 1e-14) << j;
      EXPECT_NEAR(got[j].sd, std::sqrt(ss / static_cast<double>(sel.rows.size() - 1)), 1e-12) << j;
      EXPECT_TRUE(std::isnan(got[j].min)) << "min/max are for dense stores";
    }
  }
}

TEST(StatsTest, DenseStoresReportObservedMeanSdMinMaxOfTheSelection) {
  test::temp_dir dir;
  const std::uint64_t n = 57;
  const auto values = test::write_float_store(dir / "f.cf", value_type::float64, n, 5,
                                              column_encoding{codec_id::lz4, 1, true});
  const store s = store::open(dir / "f.cf");
  selection sel = selection::all(s);
  sel.rows.clear();
  for (std::size_t i = 0; i < n; ++i) {
    sel.row_kept[i] = i % 2;
    if (i % 2) sel.rows.push_back(i);
  }
  sel.columns = {4, 1};
  const auto got = column_summaries(s, sel);
  ASSERT_EQ(got.size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    const auto& col = values[sel.columns[k]];
    double sum = 0, obs = 0, lo = INFINITY, hi = -INFINITY;
    for (std::size_t i : sel.rows)
      if (!std::isnan(col[i])) {
        sum += col[i];
        ++obs;
        lo = std::min(lo, col[i]);
        hi = std::max(hi, col[i]);
      }
    double ss = 0;
    for (std::size_t i : sel.rows)
      if (!std::isnan(col[i])) ss += (col[i] - sum / obs) * (col[i] - sum / obs);
    EXPECT_EQ(static_cast<double>(got[k].observed), obs);
    EXPECT_NEAR(got[k].mean, sum / obs, 1e-12);
    EXPECT_NEAR(got[k].sd, std::sqrt(ss / static_cast<double>(sel.rows.size() - 1)), 1e-12);
    EXPECT_EQ(got[k].min, lo);
    EXPECT_EQ(got[k].max, hi);
    EXPECT_TRUE(std::isnan(got[k].a1_freq));
  }
}

TEST(StatsTest, CommandLineErrorsAreClear) {
  test::temp_dir dir;
  test::write_genotype_store(dir / "g.cf", 10, 3, column_encoding{codec_id::none, 0});
  std::string out;
  EXPECT_EQ(test::run_cli("stats " + (dir / "g.cf").string() + " --out " +
                              (dir / "o.tsv").string() + " --keep " + (dir / "nope.txt").string(),
                          out),
            1);
  EXPECT_NE(out.find("nope.txt: no such file"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(dir / "o.tsv"));
  EXPECT_EQ(
      test::run_cli("stats " + (dir / "missing.cf").string() + " --out " + (dir / "o.tsv").string(),
                    out),
      1);
  EXPECT_NE(out.find("missing.cf"), std::string::npos) << out;
  // The result appears complete or not at all: no partial file is left behind.
  ASSERT_EQ(
      test::run_cli(
          "stats " + (dir / "g.cf").string() + " --quiet --out " + (dir / "o.tsv").string(), out),
      0)
      << out;
  EXPECT_TRUE(std::filesystem::exists(dir / "o.tsv"));
  EXPECT_FALSE(std::filesystem::exists(dir / "o.tsv.partial"));
  EXPECT_EQ(test::read_table(dir / "o.tsv").rows.size(), 3u);
}

}  // namespace
}  // namespace colflow
