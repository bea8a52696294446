// The quality-control filters (--mind, --geno, --hwe, --maf/--max-maf, --mac/--max-mac): small
// hand-checked stores, X, Y and MT included; --hwe against hardy(); `colflow qc` against
// plink2's --write-snplist and --write-samples on a fileset of males, females, unknown-sex
// samples and non-founders, and on the shared datasets; threads and in-flight depths; errors.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <fstream>
#include <sstream>

#include "colflow/colflow.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

// A .bed/.bim/.fam of hand-written calls: `fam` lines, one chromosome per column, and each
// column's A1 counts per sample (-1 missing). Its store in PREFIX.cf.
std::string write_hand_store(const test::temp_dir& dir, const std::vector<std::string>& fam,
                             const std::vector<std::string>& chroms,
                             const std::vector<std::vector<int>>& calls) {
  const std::string prefix = (dir / "hand").string();
  std::ofstream(prefix + ".fam") << [&] {
    std::string s;
    for (const auto& line : fam) s += line + "\n";
    return s;
  }();
  std::ofstream bim(prefix + ".bim");
  std::ofstream bed(prefix + ".bed", std::ios::binary);
  bed << '\x6c' << '\x1b' << '\x01';
  for (std::size_t j = 0; j < calls.size(); ++j) {
    bim << chroms[j] << "\tc" << j << "\t0\t" << 100 + j << "\tA\tC\n";
    std::vector<std::uint8_t> bytes(genotype_column_bytes(fam.size()), 0);
    for (std::size_t i = 0; i < fam.size(); ++i) {
      const int d = calls[j][i];
      const std::uint8_t code = d < 0 ? 0b01 : d == 2 ? 0b00 : d == 1 ? 0b10 : 0b11;
      bytes[i / 4] |= static_cast<std::uint8_t>(code << (2 * (i % 4)));
    }
    bed.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  }
  bim.close();
  bed.close();
  std::string out;
  EXPECT_EQ(test::run_cli("preprocess --quiet --bed " + prefix + " --out " + prefix + ".cf", out),
            0)
      << out;
  return prefix + ".cf";
}

std::vector<std::string> column_ids(const store& s, const selection& sel) {
  std::vector<std::string> ids;
  for (std::size_t j : sel.columns) ids.push_back(s.columns()[j].id);
  return ids;
}

using ids = std::vector<std::string>;
using rows = std::vector<std::size_t>;

// Seven founders of known sex on chromosome 1. Missing calls per sample: s0 two of four
// columns, s1 and s6 one, the others none.
struct autosome_case {
  test::temp_dir dir;
  std::string path =
      write_hand_store(dir,
                       {"f s0 0 0 2 -9", "f s1 0 0 2 -9", "f s2 0 0 1 -9", "f s3 0 0 1 -9",
                        "f s4 0 0 2 -9", "f s5 0 0 1 -9", "f s6 0 0 2 -9"},
                       {"1", "1", "1", "1"},
                       {{2, 1, 0, 0, 0, 0, 0},     // c0: A1 3 of 14; without s0, 1 of 12
                        {-1, 1, 1, 0, 0, 0, 0},    // c1: A1 2 of 12
                        {-1, -1, 0, 0, 0, 0, 0},   // c2: no A1
                        {2, 2, 2, 2, 1, 0, -1}});  // c3: A1 9 of 12, minor allele 3
  store s = store::open(path);
};

TEST(QcFiltersTest, AutosomeCountsAsCheckedByHand) {
  autosome_case c;
  qc_filter_options o;
  // --mind 0.25: at most floor(4 x 0.25) = 1 missing call; s0 has 2.
  o.mind = 0.25;
  // --geno 0.1 over the six left: floor(0.6) = 0 missing calls; c2 and c3 have one each.
  o.geno = 0.1;
  // --maf 0.1: c0's minor allele is 1 of 12 without s0.
  o.min_maf = 0.1;
  const qc_filter_result r = apply_qc_filters(c.s, selection::all(c.s), o);
  EXPECT_EQ(r.selected.rows, (rows{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(column_ids(c.s, r.selected), (ids{"c1"}));
  EXPECT_EQ(r.removed.mind, 1u);
  EXPECT_EQ(r.removed.geno, 2u);
  EXPECT_EQ(r.removed.allele_frequency, 1u);
  EXPECT_EQ(r.selected.row_kept[0], 0);
  EXPECT_EQ(qc_filter_log(o, r), (ids{"1 sample removed due to missing genotype data (--mind).",
                                      "--geno: 2 variants removed due to missing genotype data.",
                                      "1 variant removed due to allele frequency threshold(s) "
                                      "(--maf/--max-maf/--mac/--max-mac).",
                                      "6 samples remaining after main filters.",
                                      "1 variant remaining after main filters."}));
}

// --mind that keeps every sample leaves the column filters' counts those over every sample
// (one pass counts both); one that drops s0 leaves them those over the others (a second
// pass): either way, the columns the column filters keep on the samples --mind left.
TEST(QcFiltersTest, ColumnFiltersCountTheSamplesMindLeaves) {
  autosome_case c;
  const selection all = selection::all(c.s);
  qc_filter_options columns;
  columns.geno = 0.2;  // one missing call of 7 (of 6 without s0)
  columns.min_maf = 0.1;
  columns.hwe = hwe_filter{0.05, false, false};
  for (const double mind : {0.5, 0.25}) {
    qc_filter_options o = columns;
    o.mind = mind;
    const qc_filter_result with = apply_qc_filters(c.s, all, o);
    selection left = all;
    if (mind < 0.5) {
      left.row_kept[0] = 0;
      left.rows = {1, 2, 3, 4, 5, 6};
    }
    const qc_filter_result alone = apply_qc_filters(c.s, left, columns);
    EXPECT_EQ(with.selected.rows, alone.selected.rows) << mind;
    EXPECT_EQ(column_ids(c.s, with.selected), column_ids(c.s, alone.selected)) << mind;
    EXPECT_EQ(with.removed.geno, alone.removed.geno) << mind;
    EXPECT_EQ(with.removed.hwe, alone.removed.hwe) << mind;
    EXPECT_EQ(with.removed.allele_frequency, alone.removed.allele_frequency) << mind;
  }
  // The two give different columns, so the test tells the passes apart.
  qc_filter_options keep_all = columns, drop_s0 = columns;
  keep_all.mind = 0.5;
  drop_s0.mind = 0.25;
  EXPECT_NE(column_ids(c.s, apply_qc_filters(c.s, all, keep_all).selected),
            column_ids(c.s, apply_qc_filters(c.s, all, drop_s0).selected));
}

TEST(QcFiltersTest, ThresholdsAreInclusiveAsPlink2s) {
  autosome_case c;
  const selection all = selection::all(c.s);
  const auto kept = [&](const qc_filter_options& o) {
    return column_ids(c.s, apply_qc_filters(c.s, all, o).selected);
  };
  qc_filter_options o;
  o.geno = 2.0 / 7;  // exactly c2's fraction: kept
  EXPECT_EQ(kept(o), (ids{"c0", "c1", "c2", "c3"}));
  o.geno = 1.99 / 7;
  EXPECT_EQ(kept(o), (ids{"c0", "c1", "c3"}));
  o = {};
  o.min_maf = 3.0 / 14;  // c0's minor allele frequency, 0.2142857...: kept
  EXPECT_EQ(kept(o), (ids{"c0", "c3"}));
  o.min_maf = {};
  o.max_maf = 2.0 / 12;  // c1's
  EXPECT_EQ(kept(o), (ids{"c1", "c2"}));
  o = {};
  o.min_mac = 3;  // c0 and c3 have 3
  EXPECT_EQ(kept(o), (ids{"c0", "c3"}));
  o.max_mac = 3;
  EXPECT_EQ(kept(o), (ids{"c0", "c3"}));
  o.min_mac = 0;
  o.max_mac = 2;
  EXPECT_EQ(kept(o), (ids{"c1", "c2"}));
  o = {};
  o.mind = 0.5;  // s0's fraction exactly: kept
  EXPECT_EQ(apply_qc_filters(c.s, all, o).selected.rows.size(), 7u);
}

// Males s0-s2, females s3-s5, s6 of unknown sex; s2 is a non-founder (father s0).
struct sex_case {
  test::temp_dir dir;
  std::string path =
      write_hand_store(dir,
                       {"f s0 0 0 1 -9", "f s1 0 0 1 -9", "f s2 s0 0 1 -9", "f s3 0 0 2 -9",
                        "f s4 0 0 2 -9", "f s5 0 0 2 -9", "f s6 0 0 0 -9"},
                       {"X", "Y", "MT"},
                       {{2, 1, 0, 1, 2, -1, 0},    // X
                        {2, -1, 0, -1, -1, 1, 2},  // Y
                        {2, 1, 0, 0, 0, 0, -1}});  // MT
  store s = store::open(path);
  const selection all = selection::all(s);

  ids kept(const qc_filter_options& o) const {
    return column_ids(s, apply_qc_filters(s, all, o).selected);
  }
};

TEST(QcFiltersTest, GenoCountsMalesOnYAndNoHeterozygousHaploidCall) {
  sex_case c;
  qc_filter_options o;
  // X: 1 missing of 7 (s1's heterozygous call is not missing): kept at floor(7 x 0.15) = 1.
  // Y: the males' 1 missing of 3, kept at floor(3 x 0.34) = 1; the females' are not counted.
  // MT: 1 of 7.
  o.geno = 0.34;
  EXPECT_EQ(c.kept(o), (ids{"c0", "c1", "c2"}));
  o.geno = 0.15;  // Y: floor(0.45) = 0
  EXPECT_EQ(c.kept(o), (ids{"c0", "c2"}));
  o.geno = 0.14;  // X and MT too, floor(0.98) = 0: no column is left
  EXPECT_THROW(c.kept(o), error);
}

TEST(QcFiltersTest, MindCountsYForMalesOnly) {
  sex_case c;
  qc_filter_options o;
  // Males: at most floor(3 x 0.4) = 1 of 3 columns (s1 misses Y); the others at most
  // floor(2 x 0.4) = 0 of 2 (Y not counted: s3 and s4 stay; s5 misses X, s6 MT).
  o.mind = 0.4;
  const qc_filter_result r = apply_qc_filters(c.s, c.all, o);
  EXPECT_EQ(r.selected.rows, (rows{0, 1, 2, 3, 4}));
  EXPECT_EQ(r.removed.mind, 2u);
}

TEST(QcFiltersTest, AllelesFollowPlink2sPloidyAndFounders) {
  sex_case c;
  qc_filter_options o;
  // X, founders: s0 1 A1 of 1, s1 half of 1 (heterozygous haploid), s3 1 of 2, s4 2 of 2,
  // s6 0 of 2: A1 4.5 of 8, minor count 3.5, frequency 0.4375. Y: s0 alone, 1 of 1: minor 0.
  // MT: s0 1, s1 0.5 of five haploid founders: 1.5 of 5, frequency 0.3.
  o.max_mac = 3.5;
  EXPECT_EQ(c.kept(o), (ids{"c0", "c1", "c2"}));
  o.max_mac = 3.4;
  EXPECT_EQ(c.kept(o), (ids{"c1", "c2"}));
  o = {};
  o.min_maf = 0.3;
  EXPECT_EQ(c.kept(o), (ids{"c0", "c2"}));
  o.min_maf = 0.301;
  EXPECT_EQ(c.kept(o), (ids{"c0"}));
  o.min_maf = 0.4375;
  EXPECT_EQ(c.kept(o), (ids{"c0"}));
  o.min_maf = 0.44;
  EXPECT_THROW(c.kept(o), error);  // no column left
  // With the non-founder s2 (a male, 0 of 1 on X and Y): X 4.5 of 9, Y 1 of 2.
  o = {};
  o.nonfounders = true;
  o.min_maf = 0.5;
  EXPECT_EQ(c.kept(o), (ids{"c0", "c1"}));
}

// --hwe removes exactly the columns whose hardy() P is below the threshold, over every sample
// (all are founders, or --nonfounders), on a fileset of 1, X, Y, XY and MT.
TEST(QcFiltersTest, HweRemovesTheColumnsHardyFindsBelowTheThreshold) {
  test::temp_dir dir;
  const std::string bfile = (dir / "sexed").string();
  test::write_sexed_fileset(bfile, test::mixed_sexes(), {"1", "X", "Y", "XY", "MT"}, 40, 5);
  std::string out;
  ASSERT_EQ(
      test::run_cli("preprocess --quiet --bed " + bfile + " --out " + (dir / "s.cf").string(), out),
      0)
      << out;
  const store s = store::open(dir / "s.cf");
  const selection all = selection::all(s);
  for (const bool midp : {false, true}) {
    hardy_options h;
    const std::vector<hardy_result> tests = hardy(s, all, h);
    qc_filter_options o;
    o.hwe = hwe_filter{0.05, midp, false};
    const qc_filter_result r = apply_qc_filters(s, all, o);
    ids expected;
    std::size_t removed = 0;
    for (std::size_t k = 0; k < tests.size(); ++k) {
      const double p = midp ? tests[k].test.midp : tests[k].test.p;
      if (p < 0.05) {
        ++removed;
      } else {
        expected.push_back(s.columns()[k].id);
      }
    }
    EXPECT_GT(removed, 5u);
    EXPECT_EQ(r.removed.hwe, removed);
    EXPECT_EQ(column_ids(s, r.selected), expected);
  }
}

TEST(QcFiltersTest, ResultsDoNotDependOnThreadsOrDepth) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  const store s = store::open(test::uk10k_store(dir.path()));
  qc_filter_options o;
  o.min_maf = 0.05;
  o.hwe = hwe_filter{1e-4, false, false};
  o.mind = 0.1;
  selection reference;
  for (const int threads : {1, 2}) {
    for (const std::size_t depth : {1u, 3u, 16u}) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      analysis_options a;
      a.stream.in_flight = depth;
      const qc_filter_result r = apply_qc_filters(s, selection::all(s), o, a);
      if (reference.columns.empty()) reference = r.selected;
      EXPECT_EQ(r.selected.columns, reference.columns) << threads << " " << depth;
      EXPECT_EQ(r.selected.rows, reference.rows) << threads << " " << depth;
    }
  }
  EXPECT_LT(reference.columns.size(), s.num_columns());
}

TEST(QcFiltersTest, RefusesThresholdsOutOfRangeNamingTheOption) {
  autosome_case c;
  const auto message = [&](const qc_filter_options& o) {
    try {
      apply_qc_filters(c.s, selection::all(c.s), o);
    } catch (const error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  qc_filter_options o;
  o.min_maf = 2;
  EXPECT_NE(message(o).find("--maf"), std::string::npos) << message(o);
  o = {};
  o.geno = -1;
  EXPECT_NE(message(o).find("--geno"), std::string::npos) << message(o);
  o = {};
  o.mind = 1.5;
  EXPECT_NE(message(o).find("--mind"), std::string::npos) << message(o);
  for (const double p : {0.0, 1.0, 2.0}) {
    o = {};
    o.hwe = hwe_filter{p, false, false};
    EXPECT_NE(message(o).find("--hwe"), std::string::npos) << message(o);
  }
  o = {};
  o.min_maf = 0.2;
  o.max_maf = 0.1;
  EXPECT_NE(message(o).find("--max-maf"), std::string::npos) << message(o);
  o = {};
  o.min_mac = 5;
  o.max_mac = 3;
  EXPECT_NE(message(o).find("--max-mac"), std::string::npos) << message(o);
  o = {};
  o.min_mac = -1;
  EXPECT_NE(message(o).find("--mac"), std::string::npos) << message(o);
}

// ---- colflow qc against plink2 ----

// A file's bytes, as a string.
std::string contents(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Whitespace runs as one space: plink2 wraps its log lines.
std::string squeezed(const std::string& text) {
  std::string out;
  for (char ch : text) {
    const bool space = ch == ' ' || ch == '\n' || ch == '\t';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : ch;
  }
  return out;
}

// Runs `colflow qc STORE FLAGS` and plink2 FLAGS on `input` with --write-snplist and
// --write-samples, and expects the same files, byte for byte (`id_map`: the store's IDs of
// plink2's input's samples, when plink2 reads a renamed copy), and each of our filter lines in
// plink2's log. Returns how many variants and samples we kept.
std::pair<std::size_t, std::size_t> expect_same_as_plink2(
    const std::string& store_path, const std::string& input, const std::string& flags,
    const test::temp_dir& dir, const std::string& tag, bool renamed = false) {
  const std::string ours = (dir / ("c_" + tag)).string(), ref = (dir / ("p_" + tag)).string();
  std::string out;
  EXPECT_EQ(
      test::run_cli(
          "qc " + store_path + " " + flags + " --write-snplist --write-samples --out " + ours, out),
      0)
      << tag << ": " << out;
  test::run_plink2(input + " " + flags +
                   " --write-snplist --write-samples --allow-extra-chr --out " + ref);
  EXPECT_EQ(contents(ours + ".snplist"), contents(ref + ".snplist")) << tag;
  std::string theirs = contents(ref + ".id");
  if (renamed) {  // plink2_input's f<i> s<i>: our IDs of sample i
    const store s = store::open(store_path);
    std::istringstream lines(theirs);
    std::string line;
    theirs.clear();
    while (std::getline(lines, line)) {
      if (line[0] == '#') {
        theirs += line + "\n";
        continue;
      }
      const std::size_t i = std::stoul(line.substr(line.find('\t') + 2));
      theirs += s.samples()[i].fid + "\t" + s.samples()[i].iid + "\n";
    }
  }
  EXPECT_EQ(contents(ours + ".id"), theirs) << tag;
  const std::string log = squeezed(contents(ref + ".log"));
  std::istringstream our_lines(out);
  std::string line;
  while (std::getline(our_lines, line)) {
    if (line.find("removed due to") == std::string::npos) continue;
    const std::string said = squeezed(line.substr(line.find(": ") + 2));
    EXPECT_NE(log.find(said), std::string::npos) << tag << ": '" << said << "' not in\n" << log;
  }
  std::size_t variants = 0, samples = 0;
  for (char ch : contents(ours + ".snplist")) variants += ch == '\n';
  for (char ch : contents(ours + ".id")) samples += ch == '\n';
  return {variants, samples - 1};
}

// The sexed fileset of write_sexed_fileset with non-founders: some samples name a father in
// the fileset, some a mother who is not.
std::string sexed_fileset_with_nonfounders(const test::temp_dir& dir) {
  const std::string bfile = (dir / "sexed").string();
  const std::vector<std::string> sexes = test::mixed_sexes();
  test::write_sexed_fileset(bfile, sexes, {"1", "X", "Y", "XY", "MT"}, 40, 9);
  std::ofstream fam(bfile + ".fam");
  for (std::size_t i = 0; i < sexes.size(); ++i)
    fam << "f" << i << " s" << i << " " << (i % 5 == 4 ? "s0" : "0") << " "
        << (i % 7 == 6 ? "absent" : "0") << " " << sexes[i] << " -9\n";
  return bfile;
}

TEST(QcFiltersTest, QcEqualsPlink2OnSexChromosomesAndNonFounders) {
  test::temp_dir dir;
  const std::string bfile = sexed_fileset_with_nonfounders(dir);
  const std::string store = (dir / "s.cf").string();
  std::string out;
  ASSERT_EQ(test::run_cli("preprocess --quiet --bed " + bfile + " --out " + store, out), 0) << out;
  std::ofstream(dir / "keep.txt") << "f1 s1\nf2 s2\nf3 s3\nf5 s5\nf8 s8\nf9 s9\nf10 s10\n"
                                     "f11 s11\nf12 s12\nf14 s14\nf16 s16\nf20 s20\nf21 s21\n"
                                     "f22 s22\nf25 s25\nf27 s27\nf29 s29\nf30 s30\n";
  const std::string keep = " --keep " + (dir / "keep.txt").string();
  const std::vector<std::string> flags = {
      "--mind 0.12",
      "--geno 0.12",
      "--hwe 0.05",
      "--hwe 0.05 midp",
      "--hwe 0.2 keep-fewhet",
      "--hwe 0.05 --nonfounders",
      "--maf 0.2",
      "--max-maf 0.3",
      "--mac 6",
      "--max-mac 8.5",
      "--maf 0.1 --nonfounders",
      "--maf --geno --mind",  // plink2's defaults: 0.01, 0.1, 0.1
      "--maf 0.05 --mac 4 --geno 0.15 --hwe 0.01 --mind 0.12",
      "--maf 0.05 --mac 4 --geno 0.15 --hwe 0.01 --mind 0.12 --no-id-header" + keep,
      "--max-maf 0.4 --max-mac 12 --geno 0.2 --hwe 0.1 midp --mind 0.15" + keep,
  };
  for (std::size_t k = 0; k < flags.size(); ++k) {
    const auto [variants, samples] =
        expect_same_as_plink2(store, "--bfile " + bfile, flags[k], dir, std::to_string(k));
    EXPECT_GT(variants, 0u) << flags[k];
    EXPECT_TRUE(variants < 210 || samples < 31) << flags[k] << ": nothing removed";
  }
}

// The regenie recipe, with thresholds that remove something on each set, and two more sets of
// thresholds.
TEST(QcFiltersTest, QcEqualsPlink2OnTheSharedDatasets) {
  REQUIRE_SHARED_DATA();
  const std::vector<std::pair<std::string, std::vector<std::string>>> runs = {
      {"hapmap3/HapMap3",
       {"--maf 0.01 --mac 100 --geno 0.005 --hwe 1e-5 --mind 0.005",
        "--max-maf 0.2 --max-mac 300 --geno 0.003 --hwe 1e-3 midp --mind 0.003"}},
      {"bed-reader/some_missing",
       {"--maf 0.05 --mac 10 --geno 0.25 --hwe 0.01 --mind 0.3",
        "--max-maf 0.3 --geno 0.3 --hwe 0.2 keep-fewhet --mind 0.25"}},
      {"bed-reader/plink_sim_10s_100v_10pmiss",
       {"--maf 0.1 --mac 3 --geno 0.15 --hwe 0.05 --mind 0.15", "--max-mac 6 --geno 0.1"}},
      {"bed-reader/toydata.5chrom",
       {"--maf 0.05 --mac 60 --geno 0.1 --hwe 5e-4 --mind 0.1",
        "--max-maf 0.2 --max-mac 150 --hwe 1e-3 midp"}},
      {"uk10k/uk10k_chr1_1mb",
       {"--maf 0.01 --mac 100 --geno 0.1 --hwe 1e-5 --mind 0.1", "--max-maf 0.02 --hwe 1e-3"}},
  };
  for (const auto& [name, flag_sets] : runs) {
    test::temp_dir dir;
    const std::string bfile = test::dataset(name), store = (dir / "s.cf").string();
    std::string out;
    ASSERT_EQ(test::run_cli("preprocess --quiet --bed " + bfile + " --out " + store, out), 0)
        << out;
    const std::string input = "--bfile " + test::plink2_input(bfile, dir.path(), true);
    const std::size_t total = store::open(store).num_columns();
    for (std::size_t k = 0; k < flag_sets.size(); ++k) {
      const std::string tag = name.substr(name.find('/') + 1) + std::to_string(k);
      const auto [variants, samples] =
          expect_same_as_plink2(store, input, flag_sets[k], dir, tag, true);
      EXPECT_LT(variants, total) << tag;
      EXPECT_GT(variants, 0u) << tag;
      EXPECT_GT(samples, 0u) << tag;
    }
  }
}

// On HapMap3's own files (no renaming), with and without the header of the .id file.
TEST(QcFiltersTest, QcFilesAreByteEqualToPlink2sOnHapMap3) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  const std::string bfile = test::dataset("hapmap3/HapMap3"), store = (dir / "s.cf").string();
  std::string out;
  ASSERT_EQ(test::run_cli("preprocess --quiet --bed " + bfile + " --out " + store, out), 0) << out;
  for (const std::string extra : {"", " --no-id-header"}) {
    const std::string tag = extra.empty() ? "header" : "no_header";
    expect_same_as_plink2(store, "--bfile " + bfile,
                          "--maf 0.01 --mac 100 --geno 0.005 --hwe 1e-15 --mind 0.005" + extra, dir,
                          tag);
  }
}

// (--hwe without P, then an option: the option is never taken for P.)
TEST(QcFiltersTest, QcRefusesBadThresholdsAndWritesNothing) {
  autosome_case c;
  const std::string prefix = (c.dir / "q").string();
  for (const std::string flags : {"--maf 2", "--geno -1", "--hwe 0", "--hwe 1.5", "--mind x",
                                  "--hwe 0.1 maybe", "--max-maf 0.1 --maf 0.2", "--hwe"}) {
    std::string out;
    EXPECT_NE(test::run_cli("qc " + c.path + " " + flags + " --write-snplist --out " + prefix, out),
              0)
        << flags;
    const std::string option = flags.substr(0, flags.find(' '));
    EXPECT_NE(out.find(option), std::string::npos) << flags << ": " << out;
    EXPECT_FALSE(std::filesystem::exists(prefix + ".snplist")) << flags;
  }
}

// Every analysis command takes the filters: stats reports only the columns that pass.
TEST(QcFiltersTest, AnalysisCommandsUseTheFilteredSelection) {
  autosome_case c;
  const std::string table = (c.dir / "stats.tsv").string();
  std::string out;
  ASSERT_EQ(
      test::run_cli("stats " + c.path + " --mind 0.25 --geno 0.1 --maf 0.1 --out " + table, out), 0)
      << out;
  EXPECT_NE(out.find("--geno: 2 variants removed due to missing genotype data."), std::string::npos)
      << out;
  const test::text_table t = test::read_table(table);
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0][t.column("ID")], "c1");
  EXPECT_EQ(t.rows[0][t.column("OBS_CT")], "6");  // s0 removed by --mind
}

}  // namespace
}  // namespace colflow
