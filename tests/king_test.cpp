// colflow king: the pair counts against straight loops over the calls (across threads,
// in-flight depths, bands and blocks), the kernel's vector path against its portable loop,
// the greedy cutoff on hand-checked graphs, the files against plink2 --make-king-table and
// --king-cutoff byte for byte on the shared datasets, and the errors.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include "colflow/colflow.hpp"
#include "io/plink_number_internal.hpp"
#include "kernels/bit_columns_internal.hpp"
#include "kernels/king_counts_internal.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

// The counts of samples i and j straight from their dosages over the columns (-1 missing).
king_pair_counts direct_counts(const std::vector<std::vector<std::uint8_t>>& columns, std::size_t i,
                               std::size_t j) {
  king_pair_counts c;
  for (const auto& codes : columns) {
    const int a = test::dosage_at(codes, i), b = test::dosage_at(codes, j);
    if (a < 0 || b < 0) continue;
    const bool het_a = a == 1, het_b = b == 1;
    if (het_a && het_b) ++c.hethet;
    if (het_a && !het_b) ++c.het_hom;
    if (!het_a && het_b) ++c.hom_het;
    if (!het_a && !het_b) {
      ++c.homhom;
      if (a != b) ++c.ibs0;
    }
  }
  return c;
}

// Every band's pairs, in a samples × samples table (i > j filled).
std::vector<king_pair_counts> all_pairs(const store& s, const selection& sel, const king_options& k,
                                        const analysis_options& o, std::size_t* bands = nullptr) {
  const std::size_t n = sel.rows.size();
  std::vector<king_pair_counts> out(n * n);
  std::size_t count = 0;
  king(s, sel, k, o, [&](const king_band& band) {
    ++count;
    for (std::size_t i = band.first_row; i < band.width(); ++i)
      for (std::size_t j = 0; j < i; ++j) out[i * n + j] = band.pair(i, j);
  });
  if (bands) *bands = count;
  return out;
}

TEST(KingTest, CountsEqualStraightLoopsOverTheCalls) {
  test::temp_dir dir;
  // 130 samples: three tiles, the last partial; 200 columns: blocks of 64 end mid-word.
  const auto columns = test::write_genotype_store(dir / "g.cf", 130, 200, column_encoding{}, 7);
  const store s = store::open(dir / "g.cf");
  selection sel = selection::all(s);
  // Drop some samples and columns, so that positions and rows differ.
  sel.rows.erase(sel.rows.begin() + 5);
  sel.rows.erase(sel.rows.begin() + 70);
  sel.columns.erase(sel.columns.begin() + 3);
  std::vector<std::vector<std::uint8_t>> used;
  for (const std::size_t c : sel.columns) used.push_back(columns[c]);
  const std::size_t n = sel.rows.size();
  const auto expected = [&](std::size_t i, std::size_t j) {
    return direct_counts(used, sel.rows[i], sel.rows[j]);
  };
  std::vector<king_pair_counts> reference;
  for (const std::size_t block : {std::size_t{0}, std::size_t{64}, std::size_t{192}})
    for (const int threads : {1, 2}) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      king_options k;
      k.block_columns = block;
      analysis_options o;
      o.stream.in_flight = threads == 1 ? 1 : 5;
      const auto got = all_pairs(s, sel, k, o);
      if (reference.empty()) {
        for (std::size_t i = 1; i < n; ++i)
          for (std::size_t j = 0; j < i; ++j)
            ASSERT_EQ(got[i * n + j], expected(i, j)) << "pair " << i << ", " << j;
        reference = got;
      }
      EXPECT_EQ(got, reference) << "block " << block << ", " << threads << " threads";
    }
}

TEST(KingTest, SamplesWithManyMissingCallsCountTheSame) {
  // A third of the calls missing, more than the lists of missing calls hold (a sixteenth of a
  // block's calls): the samples past the lists' budget are read from their planes.
  test::temp_dir dir;
  const std::size_t rows = 100, columns = 150;
  std::mt19937_64 rng(21);
  writer_options w;
  w.type = value_type::genotype;
  w.rows = rows;
  w.source = "test";
  store_writer writer(dir / "g.cf", w, test::numbered_samples(rows));
  std::vector<std::vector<std::uint8_t>> used;
  for (std::size_t j = 0; j < columns; ++j) {
    used.push_back(test::random_genotype_codes(rows, 0.3, j < 75 ? 0.33 : 0.01, rng));
    writer.append(encode_genotype_column(used.back(), rows, column_encoding{}),
                  test::numbered_column(j));
  }
  writer.finish();
  const store s = store::open(dir / "g.cf");
  const selection sel = selection::all(s);
  king_options k;
  k.block_columns = 128;
  const auto got = all_pairs(s, sel, k, {});
  for (std::size_t i = 1; i < rows; ++i)
    for (std::size_t j = 0; j < i; ++j)
      ASSERT_EQ(got[i * rows + j], direct_counts(used, i, j)) << "pair " << i << ", " << j;
}

TEST(KingTest, BandsUnderAMemoryLimitGiveTheSameCounts) {
  test::temp_dir dir;
  test::write_genotype_store(dir / "g.cf", 200, 90, column_encoding{}, 3);
  const store s = store::open(dir / "g.cf");
  const selection sel = selection::all(s);
  const auto whole = all_pairs(s, sel, {}, {});
  king_options k;
  const king_plan plan = plan_king(s, sel, k);
  k.memory_limit = plan.minimum_bytes;  // one tile of rows per band
  std::size_t bands = 0;
  EXPECT_EQ(all_pairs(s, sel, k, {}, &bands), whole);
  EXPECT_EQ(bands, 4u);
}

TEST(KingTest, VectorPathEqualsPortableLoop) {
  std::mt19937_64 rng(11);
  // 7 words a plane: the AVX2 loop's 4 and the 3 the scalar loop finishes.
  const std::size_t words = 7, count = 9;
  std::vector<std::uint64_t> planes(2 * count * king_planes * words);
  for (std::uint64_t& w : planes) w = rng();
  // Valid planes: hom and het exclusive, two within hom.
  for (std::size_t s = 0; s < 2 * count; ++s)
    for (std::size_t w = 0; w < words; ++w) {
      std::uint64_t* p = planes.data() + s * king_planes * words;
      p[het_plane * words + w] &= ~p[hom_plane * words + w];
      p[two_plane * words + w] &= p[hom_plane * words + w];
    }
  const std::uint64_t* a = planes.data();
  std::vector<const std::uint64_t*> b(count);
  for (std::size_t i = 0; i < count; ++i) b[i] = planes.data() + (count + i) * king_planes * words;
  // Counts written over what was there.
  std::vector<std::uint32_t> hethet(count, 1), ibs0(count, 2), hethet_slow(count, 3),
      ibs0_slow(count, 4);
  king_hethet_ibs0(a, b.data(), count, words, hethet.data(), ibs0.data());
  detail::king_hethet_ibs0_portable(a, b.data(), count, words, hethet_slow.data(),
                                    ibs0_slow.data());
  EXPECT_EQ(hethet, hethet_slow) << king_hethet_ibs0_path();
  EXPECT_EQ(ibs0, ibs0_slow) << king_hethet_ibs0_path();
  EXPECT_GT(hethet_slow[0], 0u);
  EXPECT_GT(ibs0_slow[0], 0u);
}

TEST(KingTest, TransposeMovesBitSOfRowVToBitVOfRowS) {
  std::mt19937_64 rng(5);
  std::uint64_t rows[64], transposed[64];
  for (std::uint64_t& r : rows) r = rng();
  std::copy(rows, rows + 64, transposed);
  transpose_bits_64(transposed);
  for (unsigned v = 0; v < 64; ++v)
    for (unsigned s = 0; s < 64; ++s)
      ASSERT_EQ((transposed[v] >> s) & 1u, (rows[s] >> v) & 1u) << "row " << v << ", bit " << s;
}

TEST(KingTest, ColumnSumsOfChosenRowsEqualAStraightCount) {
  std::mt19937_64 rng(9);
  // 12 words of choices: sparse words, an empty one, and whole words that take the vector
  // path's byte counters past 255 rows.
  const std::size_t words = 12;
  std::vector<std::uint64_t> rows(64 * words), chosen_bits(words);
  for (std::uint64_t& r : rows) r = rng() | rng();
  for (std::size_t w = 0; w < words; ++w)
    chosen_bits[w] = w < 3 ? rng() & rng() & rng() : w == 3 ? 0 : ~std::uint64_t{0};
  std::vector<std::uint32_t> chosen(64 * words);
  chosen.resize(set_bit_positions(chosen_bits.data(), words, chosen.data()));
  ASSERT_TRUE(std::is_sorted(chosen.begin(), chosen.end()));
  // Two matrices: the rows above and their complements, a stride apart.
  const std::size_t stride = rows.size();
  for (std::size_t r = 0; r < stride; ++r) rows.push_back(~rows[r]);
  std::uint32_t direct[128] = {};
  std::size_t listed = 0;
  for (std::size_t r = 0; r < 64 * words; ++r)
    if ((chosen_bits[r / 64] >> (r % 64)) & 1u) {
      ASSERT_EQ(chosen[listed++], r);
      for (unsigned s = 0; s < 128; ++s)
        direct[s] += static_cast<std::uint32_t>((rows[r + (s / 64) * stride] >> (s % 64)) & 1u);
    }
  ASSERT_EQ(listed, chosen.size());
  for (const std::size_t matrices : {1, 2}) {
    std::uint32_t fast[128], slow[128];
    chosen_row_column_sums(rows.data(), matrices, stride, chosen.data(), chosen.size(), fast);
    detail::chosen_row_column_sums_portable(rows.data(), matrices, stride, chosen.data(),
                                            chosen.size(), slow);
    for (unsigned s = 0; s < 64 * matrices; ++s) {
      EXPECT_EQ(slow[s], direct[s]) << matrices << " matrices, column " << s;
      EXPECT_EQ(fast[s], direct[s]) << matrices << " matrices, column " << s;
    }
  }
  EXPECT_GT(direct[0], 255u);
  EXPECT_GT(direct[64], 0u);
}

TEST(KingTest, KinshipIsPlink2sExpression) {
  king_pair_counts c;
  c.hethet = 100;
  c.het_hom = 30;
  c.hom_het = 50;
  c.ibs0 = 4;
  c.homhom = 300;
  // 0.5 - (16 + 80) / (4 * 130)
  EXPECT_DOUBLE_EQ(king_kinship(c), 0.5 - 96.0 / 520.0);
  king_pair_counts twins;
  twins.hethet = 10;
  twins.homhom = 20;
  EXPECT_EQ(king_kinship(twins), 0.5);
  king_pair_counts none;
  none.homhom = 5;
  none.ibs0 = 1;
  EXPECT_EQ(king_kinship(none), -std::numeric_limits<double>::infinity());
}

std::string plink_g6(double v) {
  std::string s;
  append_plink_g6(s, v);
  return s;
}

TEST(PlinkNumberTest, PrintsPlink2sDigitsWithItsTies) {
  // The kinship of a hapmap-yri pair: exactly 0.1890625 + 2^-55, a tie to plink2 (even digit
  // kept), not to printf.
  EXPECT_EQ(plink_g6(-0.18906250000000002), "-0.189062");
  EXPECT_EQ(plink_g6(0.1234575), "0.123458");  // the odd digit rounds up
  EXPECT_EQ(plink_g6(0.5), "0.5");
  EXPECT_EQ(plink_g6(0.0999999), "0.0999999");
  EXPECT_EQ(plink_g6(0.09999996), "0.1");
  EXPECT_EQ(plink_g6(3.2e-05), "3.2e-05");
  EXPECT_EQ(plink_g6(-1.5e-300), "-1.5e-300");
  EXPECT_EQ(plink_g6(1234567.0), "1.23457e+06");
  EXPECT_EQ(plink_g6(12.5), "12.5");
  EXPECT_EQ(plink_g6(100.0), "100");
  EXPECT_EQ(plink_g6(999999.0), "999999");
  EXPECT_EQ(plink_g6(0.000123), "0.000123");
  EXPECT_EQ(plink_g6(0.0), "0");
  EXPECT_EQ(plink_g6(std::nan("")), "nan");
  EXPECT_EQ(plink_g6(-std::numeric_limits<double>::infinity()), "-inf");
}

TEST(PlinkNumberTest, EqualsPrintfAwayFromTies) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> mantissa(-10, 10);
  std::uniform_int_distribution<int> exponent(-40, 40);
  for (int k = 0; k < 20000; ++k) {
    const double v = mantissa(rng) * std::pow(10.0, exponent(rng));
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", v);
    ASSERT_EQ(plink_g6(v), text) << v;
  }
}

using pairs = std::vector<std::pair<std::size_t, std::size_t>>;

TEST(KingCutoffTest, RemovesThePartnerOfTheFirstSampleWithOnePair) {
  // A path 0-1-2: 0 has one pair, so its partner 1 goes, which ends both pairs.
  EXPECT_EQ(king_cutoff_removals(3, pairs{{1, 0}, {2, 1}}), (std::vector<std::size_t>{1}));
  // Two separate pairs: the partner of 0 (3), then the partner of 1 (2).
  EXPECT_EQ(king_cutoff_removals(5, pairs{{3, 0}, {2, 1}}), (std::vector<std::size_t>{2, 3}));
  // No pair: nothing removed.
  EXPECT_TRUE(king_cutoff_removals(4, pairs{}).empty());
}

TEST(KingCutoffTest, RemovesTheFirstSampleWithTheMostPairsWhenNoneHasOne) {
  // A triangle 0-1-2 and a square 3-4-5-6: degrees all 2, the first (0) goes; then 1 and 2
  // have one pair each: 1's partner 2 goes. In the square, 3 goes, then 4's partner 5.
  const pairs p{{1, 0}, {2, 1}, {2, 0}, {4, 3}, {5, 4}, {6, 5}, {6, 3}};
  EXPECT_EQ(king_cutoff_removals(7, p), (std::vector<std::size_t>{0, 2, 3, 5}));
  // A star around 2 with a tail 4-5: 0 has one pair (with 2), so 2 goes; then 4's partner 5.
  EXPECT_EQ(king_cutoff_removals(6, pairs{{2, 0}, {2, 1}, {3, 2}, {5, 4}}),
            (std::vector<std::size_t>{2, 5}));
  EXPECT_THROW(king_cutoff_removals(3, pairs{{1, 1}}), error);
  EXPECT_THROW(king_cutoff_removals(3, pairs{{3, 0}}), error);
}

std::string file_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Expects our PREFIX+suffix to be plink2's, byte for byte, for each suffix.
void expect_same_files(const std::string& ours, const std::string& theirs,
                       const std::vector<std::string>& suffixes, const std::string& what) {
  for (const std::string& suffix : suffixes) {
    ASSERT_TRUE(std::filesystem::exists(theirs + suffix)) << what << suffix;
    ASSERT_TRUE(std::filesystem::exists(ours + suffix)) << what << suffix;
    const std::string a = file_text(ours + suffix), b = file_text(theirs + suffix);
    EXPECT_TRUE(a == b) << what << suffix << " differs from plink2's (" << a.size() << " vs "
                        << b.size() << " bytes)";
  }
}

// plink2 2.00a3.5 writes the counts of IBS1 under each other's names: its HET1_HOM2 column
// holds the pairs where IID1 is homozygous and IID2 heterozygous (a slip fixed upstream in
// 2026, "the HET1_HOM2 and HET2_HOM1 columns were exchanged"). Its table with the two fields
// of every line swapped back, the header kept.
void swap_ibs1_columns(const std::filesystem::path& kin0) {
  std::istringstream in(file_text(kin0));
  std::string text, line;
  std::size_t het1 = std::string::npos;
  for (bool header = true; std::getline(in, line); header = false) {
    std::vector<std::string> f;
    std::istringstream fields(line);
    for (std::string x; std::getline(fields, x, '\t');) f.push_back(x);
    if (header)
      het1 = static_cast<std::size_t>(std::find(f.begin(), f.end(), "HET1_HOM2") - f.begin());
    else if (het1 + 1 < f.size())
      std::swap(f[het1], f[het1 + 1]);
    for (std::size_t k = 0; k < f.size(); ++k) text += (k ? "\t" : "") + f[k];
    text += '\n';
  }
  std::ofstream(kin0, std::ios::binary) << text;
}

// A keep file of the samples of `fam` but every third (FID IID lines, as both tools read).
std::string write_keep_file(const std::string& fam, const std::filesystem::path& dir) {
  std::ifstream in(fam);
  std::ofstream out(dir / "keep.txt");
  std::string fid, iid, rest;
  for (std::size_t i = 0; in >> fid >> iid && std::getline(in, rest); ++i)
    if (i % 3 != 1) out << fid << ' ' << iid << '\n';
  return (dir / "keep.txt").string();
}

// colflow king and plink2 on a dataset's plink2-readable copy, with the same flags (and with
// `keep`, the same --keep file).
void compare_with_plink2(const std::string& name, std::string flags,
                         const std::vector<std::string>& suffixes, bool keep = false) {
  test::temp_dir dir;
  const std::string input = test::plink2_input(test::dataset(name), dir.path());
  if (keep) flags += " --keep " + write_keep_file(input + ".fam", dir.path());
  const std::string store = (dir / "s.cf").string();
  std::string out;
  ASSERT_EQ(test::run_cli("preprocess --quiet --bed " + input + " --out " + store, out), 0) << out;
  const std::string ours = (dir / "c").string(), theirs = (dir / "p").string();
  ASSERT_EQ(test::run_cli("king " + store + " --quiet " + flags + " --out " + ours, out), 0) << out;
  test::run_plink2("--bfile " + input + " " + flags + " --out " + theirs);
  if (flags.find("ibs1") != std::string::npos) swap_ibs1_columns(theirs + ".kin0");
  expect_same_files(ours, theirs, suffixes, name + " " + flags);
}

TEST(KingPlink2Test, TableEqualsPlink2OnTriosWithMissingCallsAndFiveChromosomes) {
  REQUIRE_SHARED_DATA();
  for (const std::string name :
       {"hapmap-yri/plinkhapmap", "bed-reader/some_missing", "bed-reader/toydata.5chrom"})
    compare_with_plink2(name, "--make-king-table", {".kin0"});
}

TEST(KingPlink2Test, ColumnsCountsAndFilterEqualPlink2) {
  REQUIRE_SHARED_DATA();
  compare_with_plink2("bed-reader/some_missing", "--make-king-table counts cols=+ibs1", {".kin0"});
  compare_with_plink2("hapmap-yri/plinkhapmap", "--make-king-table cols=nsnp,kinship",
                      {".kin0", ".kin0.id"});
  compare_with_plink2("hapmap-yri/plinkhapmap",
                      "--make-king-table cols=id,hethet,kinship --king-table-filter 0.05",
                      {".kin0"});
}

TEST(KingPlink2Test, CutoffEqualsPlink2OnTriosAndPopulations) {
  REQUIRE_SHARED_DATA();
  const std::vector<std::string> ids = {".king.cutoff.in.id", ".king.cutoff.out.id"};
  compare_with_plink2("hapmap-yri/plinkhapmap", "--king-cutoff 0.0884", ids);
  compare_with_plink2("hapmap-yri/plinkhapmap", "--king-cutoff 0.177", ids);
  compare_with_plink2("hapmap-yri/plinkhapmap", "--make-king-table --king-cutoff 0.0884",
                      {".kin0", ids[0], ids[1]}, true);
  compare_with_plink2("hapmap3/HapMap3",
                      "--make-king-table --king-table-filter 0.0442 --king-cutoff 0.0884",
                      {".kin0", ids[0], ids[1]});
}

TEST(KingCommandTest, RefusesBadOptionsByName) {
  test::temp_dir dir;
  test::write_genotype_store(dir / "g.cf", 7, 20, column_encoding{});
  const std::string base =
      "king " + (dir / "g.cf").string() + " --quiet --out " + (dir / "k").string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {" --king-cutoff 0.5", "--king-cutoff"},
      {" --king-cutoff -0.1", "--king-cutoff"},
      {" --king-cutoff abc", "--king-cutoff"},
      {" --make-king-table --king-table-filter 0.6", "--king-table-filter"},
      {" --king-table-filter 0.1", "--king-table-filter needs --make-king-table"},
      {"", "--make-king-table, --king-cutoff or both"},
      {" --make-king-table cols=nsnp,sid", "sid"},
      {" --make-king-table cols=fid,kinship", "fid requires id"},
      {" --make-king-table cols=-kinship,-id,-nsnp,-hethet,-ibs0,-maybefid", "leaves no column"},
      {" --make-king-table cols=maybesid", "leaves no column"},
      {" --make-king-table bogus", "bogus"},
      {" --make-king-table cols=kinship --king-table-filter 0", "needs the id columns"},
  };
  for (const auto& [flags, message] : cases) {
    std::string out;
    EXPECT_NE(test::run_cli(base + flags, out), 0) << flags;
    EXPECT_NE(out.find(message), std::string::npos) << flags << ": " << out;
    EXPECT_FALSE(std::filesystem::exists(dir / "k.kin0")) << flags;
  }
}

}  // namespace
}  // namespace colflow
