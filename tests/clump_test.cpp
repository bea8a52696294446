// colflow clump: the haplotype r², the 3 × 3 pair table, PLINK 1.9's numbers and the P-value
// tables checked by hand; the window and thresholds on a hand-made fileset; .clumped byte for
// byte against plink1.9 --clump on the shared datasets (tables from plink1.9 --assoc, from
// colflow assoc and made-up ones with several files, NA, absent and repeated IDs), at several
// thresholds; the same bytes at 1 and 2 threads; bad options and tables.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>

#include "analysis/products/haplotype_r2_internal.hpp"
#include "analysis/shared/id_index_internal.hpp"
#include "colflow/colflow.hpp"
#include "colflow/kernels/genotype_kernels.hpp"
#include "io/plink_number_internal.hpp"
#include "kernels/genotype_products_internal.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

constexpr const char* plink19 = "/usr/bin/plink1.9";

#define REQUIRE_PLINK19()                \
  REQUIRE_SHARED_DATA();                 \
  if (!std::filesystem::exists(plink19)) \
  GTEST_SKIP() << "plink1.9 (" << plink19 << ") is not installed"

genotype_pair_table table_of(std::initializer_list<std::uint64_t> nine) {
  genotype_pair_table t;
  auto it = nine.begin();
  for (int i = 2; i >= 0; --i)  // rows and columns by dosage 2, 1, 0, as PLINK lists them
    for (int j = 2; j >= 0; --j) t.count[i][j] = *it++;
  return t;
}

// The haplotype r² by brute force: the split of the double heterozygotes that maximises the
// likelihood, on a fine grid.
double brute_force_r2(const genotype_pair_table& t) {
  const auto c = [&](int i, int j) { return static_cast<double>(t.count[2 - i][2 - j]); };
  const double h11 = 2 * c(0, 0) + c(0, 1) + c(1, 0), h12 = 2 * c(0, 2) + c(0, 1) + c(1, 2),
               h21 = 2 * c(2, 0) + c(1, 0) + c(2, 1), h22 = 2 * c(2, 2) + c(1, 2) + c(2, 1),
               dh = c(1, 1), total = h11 + h12 + h21 + h22 + 2 * dh;
  double best = -INFINITY, r2 = 0;
  for (int step = 0; step <= 50000; ++step) {
    const double x = dh * step / 50000.0;  // double heterozygotes in phase 11/22
    const double f11 = (h11 + x) / total, f22 = (h22 + x) / total, f12 = (h12 + dh - x) / total,
                 f21 = (h21 + dh - x) / total;
    double l = dh * std::log(f11 * f22 + f12 * f21);
    for (const auto& [k, f] : {std::pair{h11, f11}, {h12, f12}, {h21, f21}, {h22, f22}})
      if (k > 0) l += k * std::log(f);
    if (l > best) {
      best = l;
      const double pa = f11 + f12, pb = f11 + f21, d = f11 - pa * pb;
      r2 = d * d / (pa * (1 - pa) * pb * (1 - pb));
    }
  }
  return r2;
}

TEST(ClumpR2Test, HandCheckedTables) {
  // No double heterozygote: 12 haplotypes, f11 = f22 = 1/3, f12 = f21 = 1/6; D = 1/12, r² = 1/9.
  EXPECT_NEAR(detail::haplotype_r2(table_of({2, 0, 1, 0, 0, 0, 1, 0, 2})), 1.0 / 9, 1e-15);
  // The same with A1 of b swapped: D < 0, the sign of PLINK's signed r².
  EXPECT_NEAR(detail::haplotype_r2(table_of({1, 0, 2, 0, 0, 0, 2, 0, 1})), -1.0 / 9, 1e-15);
  // Perfect LD with double heterozygotes: all in phase 11/22, r² = 1.
  EXPECT_NEAR(detail::haplotype_r2(table_of({3, 0, 0, 0, 4, 0, 0, 0, 5})), 1.0, 1e-12);
  // A variant with one allele among the calls: NaN, never clumped.
  EXPECT_TRUE(std::isnan(detail::haplotype_r2(table_of({3, 2, 5, 0, 0, 0, 0, 0, 0}))));
  // Independent: r² 0.
  EXPECT_NEAR(detail::haplotype_r2(table_of({1, 2, 1, 2, 4, 2, 1, 2, 1})), 0.0, 1e-12);
}

TEST(ClumpR2Test, EqualsTheMaximumLikelihoodPhaseOfRandomTables) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> count(0, 30);
  for (int round = 0; round < 80; ++round) {
    genotype_pair_table t;
    for (auto& row : t.count)
      for (auto& c : row) c = static_cast<std::uint64_t>(count(rng) * (count(rng) < 8 ? 0 : 1));
    t.count[1][1] = static_cast<std::uint64_t>(count(rng));
    const double ours = detail::haplotype_r2(t);
    if (std::isnan(ours)) continue;
    EXPECT_NEAR(std::fabs(ours), brute_force_r2(t), 1e-3) << "round " << round;
  }
}

TEST(ClumpR2Test, PairTableEqualsANaiveDecode) {
  std::mt19937_64 rng(5);
  // Lengths past the vector kernels' steps, and past the AVX2 kernel's 31 steps of bytes (the
  // last: every plane full, 8 bits a byte a step).
  for (std::size_t n : {1u, 7u, 64u, 65u, 1000u, 4097u, 9000u, 20001u, 20000u}) {
    const bool full = n == 20000;
    const auto a = test::random_genotype_codes(n, full ? 1.0 : 0.3, full ? 0.0 : 0.1, rng),
               b = test::random_genotype_codes(n, full ? 1.0 : 0.6, full ? 0.0 : 0.1, rng);
    std::vector<std::uint8_t> keep(n);
    for (std::size_t i = 0; i < n; ++i) keep[i] = full || i % 5 != 2;
    const auto mask = make_sample_mask(keep);
    const std::size_t words = genotype_plane_words(n);
    std::vector<std::uint64_t> pa(3 * words), pb(3 * words);
    make_genotype_planes(a, n, mask, pa.data());
    make_genotype_planes(b, n, mask, pb.data());
    genotype_pair_table naive;
    for (std::size_t i = 0; i < n; ++i) {
      const int x = test::dosage_at(a, i), y = test::dosage_at(b, i);
      if (keep[i] && x >= 0 && y >= 0) ++naive.count[x][y];
    }
    const genotype_pair_table t = genotype_pair_counts(pa.data(), pb.data(), words),
                              portable = detail::genotype_pair_counts_portable(pa.data(), pb.data(),
                                                                               words);
    for (int x = 0; x < 3; ++x)
      for (int y = 0; y < 3; ++y) {
        EXPECT_EQ(t.count[x][y], naive.count[x][y]) << genotype_pair_products_path() << " " << n;
        EXPECT_EQ(portable.count[x][y], naive.count[x][y]) << "portable " << n;
      }
  }
}

// The ID index finds every ID at its first position and nothing else, with the table full of
// collisions (60,000 IDs), and names the first repeat in order.
TEST(ClumpIdIndexTest, FindsFirstPositionsAndTheFirstRepeat) {
  std::vector<std::string> names;
  for (int k = 0; k < 60000; ++k) names.push_back("rs" + std::to_string(k * 7919 % 100003));
  names.push_back("rs" + std::to_string(5 * 7919 % 100003));  // repeats position 5
  names.push_back("rs" + std::to_string(9 * 7919 % 100003));  // repeats position 9, later
  std::vector<std::string_view> views(names.begin(), names.end());
  const detail::id_index index(views);
  for (std::size_t k = 0; k < 60000; ++k) ASSERT_EQ(index.find(names[k]), k);
  EXPECT_EQ(index.find(names[60000]), 5u);
  EXPECT_EQ(index.find("rs100003"), detail::id_index::npos);
  EXPECT_EQ(index.find(""), detail::id_index::npos);
  ASSERT_TRUE(index.first_repeat());
  EXPECT_EQ(*index.first_repeat(), 60000u);
  EXPECT_FALSE(detail::id_index({"a", "b"}).first_repeat());
}

TEST(ClumpNumberTest, PrintsAsPlink19) {
  EXPECT_EQ(detail::plink1_g3(1.99e-43), "1.99e-43");
  EXPECT_EQ(detail::plink1_g3(2.0e-123), "2e-123");
  EXPECT_EQ(detail::plink1_g3(0.0345), "0.0345");
  EXPECT_EQ(detail::plink1_g3(0.05), "0.05");
  EXPECT_EQ(detail::plink1_g3(0.00012345), "0.000123");
  EXPECT_EQ(detail::plink1_g3(9.9949e-5), "9.99e-05");
  EXPECT_EQ(detail::plink1_g3(9.9951e-5), "0.0001");
  EXPECT_EQ(detail::plink1_g3(1.0), "1");
  EXPECT_EQ(detail::plink1_g3(0.99951), "1");
  EXPECT_EQ(detail::plink1_g3(0.0), "0");
  EXPECT_EQ(detail::plink1_g3(0.1235), "0.124");  // a tie after scaling rounds to even...
  EXPECT_EQ(detail::plink1_g3(0.1225), "0.122");  // ...both ways
  EXPECT_EQ(detail::plink1_g3(1.5e-5), "1.5e-05");
}

void write_text(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

TEST(ClumpTableTest, RecognisesTheFormatsByHeader) {
  test::temp_dir dir;
  const auto f = dir / "t";
  write_text(
      f,
      "#CHR\tPOS\tID\tA1\tA2\tN_OBS\tBETA\tSE\tT_STAT\tP\tNOTE\n1\t5\trs1\tA\tC\t9\t1\t1\t1\t"
      "0.5\t.\n1\t6\trs2\tA\tC\t9\t1\t1\t1\tNA\t.\n");
  p_value_table t = read_p_value_table(f);
  EXPECT_EQ(t.id_field, "ID");
  ASSERT_EQ(t.entries.size(), 1u);
  EXPECT_EQ(t.entries[0].id, "rs1");
  EXPECT_EQ(t.entries[0].p, 0.5);
  EXPECT_EQ(t.not_available, 1u);
  write_text(f, " CHR SNP BP NMISS BETA SE R2 T P \n 1 rs9 3 10 1 1 1 1 1e-8 \n");
  t = read_p_value_table(f);
  EXPECT_EQ(t.id_field, "SNP");
  EXPECT_EQ(t.entries.at(0).p, 1e-8);
  write_text(f,
             "CHROM GENPOS ID ALLELE0 ALLELE1 A1FREQ N TEST BETA SE CHISQ LOG10P EXTRA\n"
             "1 3 rs7 A C 0.1 9 ADD 1 1 1 2.5 NA\n");
  t = read_p_value_table(f);
  EXPECT_EQ(t.p_field, "LOG10P");
  EXPECT_NEAR(t.entries.at(0).p, std::pow(10.0, -2.5), 1e-18);
  // Named by the caller, in order of precedence.
  write_text(f, "name pval P\nrs3 0.25 0.5\n");
  p_value_table_options o;
  o.id_fields = {"name"};
  o.p_fields = {"pval", "P"};
  EXPECT_EQ(read_p_value_table(f, o).entries.at(0).p, 0.25);
}

void expect_bad_table(const std::string& text, const std::string& needle) {
  test::temp_dir dir;
  const auto f = dir / "bad";
  write_text(f, text);
  try {
    read_p_value_table(f);
    ADD_FAILURE() << "accepted: " << text;
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::bad_input);
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(f.string()), std::string::npos) << e.what();
  }
}

TEST(ClumpTableTest, RefusesBadTablesByFileAndLine) {
  expect_bad_table("SNP BETA\nrs1 0.1\n", "no P-value column");
  expect_bad_table("MARKER P\nrs1 0.1\n", "no variant ID column");
  expect_bad_table("SNP P\nrs1 0.1\nrs2 abc\n", ":3: column P: 'abc' is not a number");
  expect_bad_table("SNP P\nrs1 1.5\n", ":2: column P: '1.5' is not a P-value");
  expect_bad_table("SNP P\nrs1 -0.1\n", "is not a P-value");
  expect_bad_table("SNP P\nrs1\n", ":2: 1 fields");
  expect_bad_table("SNP P P\nrs1 0.1 0.2\n", "names column 'P' twice");
  expect_bad_table("\n\n", "empty");
}

// A PLINK fileset of `genotypes` (one row of dosages per variant, -1 missing) on `variants`
// (chromosome, ID, position), samples s<i> all founders.
void write_fileset(const std::filesystem::path& prefix,
                   const std::vector<std::tuple<std::string, std::string, int>>& variants,
                   const std::vector<std::vector<int>>& genotypes) {
  const std::size_t n = genotypes[0].size();
  std::ofstream fam(prefix.string() + ".fam"), bim(prefix.string() + ".bim");
  for (std::size_t i = 0; i < n; ++i) fam << "s" << i << " s" << i << " 0 0 1 -9\n";
  std::vector<char> bed = {0x6c, 0x1b, 0x01};
  for (std::size_t v = 0; v < variants.size(); ++v) {
    const auto& [chrom, id, pos] = variants[v];
    bim << chrom << '\t' << id << "\t0\t" << pos << "\tA\tC\n";
    std::vector<char> bytes((n + 3) / 4, 0);
    for (std::size_t i = 0; i < n; ++i) {
      const int d = genotypes[v][i];  // A1 dosage: 2 -> 00, 1 -> 10, 0 -> 11, missing 01
      const int code = d == 2 ? 0 : d == 1 ? 2 : d == 0 ? 3 : 1;
      bytes[i / 4] = static_cast<char>(bytes[i / 4] | (code << (2 * (i % 4))));
    }
    bed.insert(bed.end(), bytes.begin(), bytes.end());
  }
  test::write_file(prefix.string() + ".bed", bed);
}

std::string run_ok(const std::string& args) {
  std::string out;
  EXPECT_EQ(test::run_cli(args, out), 0) << args << "\n" << out;
  return out;
}

std::string text_of(const std::filesystem::path& p) {
  const std::vector<char> b = test::read_file(p);
  return {b.begin(), b.end()};
}

// 10 samples; a, d, e, g, h, b and c carry the same genotypes (r² 1) at 0, 499, 500, 1499,
// 1500, 249999 and 250000 bp from a; f is on chromosome 2; m is in LD with nothing.
class ClumpWindowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::vector<int> g = {0, 1, 2, 2, 1, 0, 1, 2, 0, 1};
    const std::vector<int> other = {1, 1, 1, 1, 1, 1, 1, 1, 2, 0};
    write_fileset(dir_ / "w",
                  {{"1", "a", 1000},
                   {"1", "d", 1499},
                   {"1", "e", 1500},
                   {"1", "m", 1600},
                   {"1", "g", 2499},
                   {"1", "h", 2500},
                   {"1", "b", 250999},
                   {"1", "c", 251000},
                   {"2", "f", 1000}},
                  {g, g, g, other, g, g, g, g, g});
    write_text(dir_ / "w.assoc",
               "SNP P\na 1e-6\nd 0.001\ne 0.02\nm 0.001\ng 0.5\nh 0.001\nb 0.001\nc 0.001\n"
               "f 0.001\nzz 1e-9\n");
    run_ok("preprocess --quiet --bed " + (dir_ / "w").string() + " --out " + store());
  }
  std::string store() const { return (dir_ / "w.cf").string(); }
  // Our SP2 field of the first clump, with these options.
  std::string first_sp2(const std::string& flags) {
    const auto out = dir_ / "o";
    run_ok("clump " + store() + " --quiet --clump " + (dir_ / "w.assoc").string() + " " + flags +
           " --out " + out.string());
    std::ifstream in(out.string() + ".clumped");
    std::string header, line;
    std::getline(in, header);
    std::getline(in, line);
    return line.substr(line.rfind(' ') + 1);
  }
  test::temp_dir dir_;
};

TEST_F(ClumpWindowTest, WindowIsLessThanKbTimes1000AndOnOneChromosome) {
  // e has P 0.02 >= p2: counted (S05) but not listed; g (P 0.5) counted as NSIG.
  EXPECT_EQ(first_sp2(""), "d(1),h(1),b(1)");
  EXPECT_EQ(first_sp2("--clump-kb 0.5"), "d(1)");
  EXPECT_EQ(first_sp2("--clump-kb 0.4999"), "NONE");
  EXPECT_EQ(first_sp2("--clump-kb 1.5"), "d(1)");
  EXPECT_EQ(first_sp2("--clump-kb 1.501"), "d(1),h(1)");
  EXPECT_EQ(first_sp2("--clump-kb 250.001"), "d(1),h(1),b(1),c(1)");
  EXPECT_EQ(first_sp2("--clump-p2 0.5"), "d(1),e(1),h(1),b(1)");
  EXPECT_EQ(first_sp2("--clump-p2 0.51"), "d(1),e(1),g(1),h(1),b(1)");
}

TEST_F(ClumpWindowTest, CountsAndLayoutAreHandChecked) {
  const auto out = dir_ / "o";
  const std::string log = run_ok("clump " + store() + " --clump " + (dir_ / "w.assoc").string() +
                                 " --out " + out.string());
  // a's clump: d, h and b (P 0.001, not below 0.001: S01), e (S05), g (NSIG); m is not in LD
  // with a, c is too far, f on another chromosome, and none of them is a top variant (P > p1).
  EXPECT_EQ(text_of(out.string() + ".clumped"),
            " CHR    F  SNP         BP        P    TOTAL   NSIG    S05    S01   S001  S0001    "
            "SP2\n"
            "   1    1    a       1000      1e-06        5      1      1      3      0      0 "
            "d(1),h(1),b(1)\n\n\n");
  EXPECT_NE(log.find("'zz' is missing"), std::string::npos) << log;
  EXPECT_NE(log.find("1 clump formed from 1 top variant"), std::string::npos) << log;
}

TEST_F(ClumpWindowTest, WritesPlink2sClumpsLayout) {
  const auto out = dir_ / "o";
  run_ok("clump " + store() + " --quiet --clump-format clumps --clump " +
         (dir_ / "w.assoc").string() + " --out " + out.string());
  EXPECT_EQ(text_of(out.string() + ".clumps"),
            "#CHROM\tPOS\tID\tP\tTOTAL\tNONSIG\tS0.05\tS0.01\tS0.001\tS0.0001\tSP2\n"
            "1\t1000\ta\t1e-06\t5\t1\t1\t3\t0\t0\td,h,b\n");
  EXPECT_FALSE(std::filesystem::exists(out.string() + ".clumped"));
}

TEST_F(ClumpWindowTest, MatchesPlink19) {
  REQUIRE_PLINK19();
  for (const std::string flags : {"", "--clump-kb 0.5", "--clump-kb 1.501", "--clump-p2 0.51",
                                  "--clump-p1 0.001 --clump-r2 0.9", "--clump-r2 0"}) {
    const auto ours = dir_ / "o", theirs = dir_ / "p";
    run_ok("clump " + store() + " --quiet --clump " + (dir_ / "w.assoc").string() + " " + flags +
           " --out " + ours.string());
    std::string out;
    ASSERT_EQ(test::run_command(std::string(plink19) + " --bfile " + (dir_ / "w").string() +
                                    " --clump " + (dir_ / "w.assoc").string() + " " + flags +
                                    " --out " + theirs.string(),
                                out),
              0)
        << out;
    EXPECT_EQ(text_of(ours.string() + ".clumped"), text_of(theirs.string() + ".clumped")) << flags;
  }
}

TEST_F(ClumpWindowTest, RefusesOptionsOutOfRangeWritingNothing) {
  const auto out = dir_ / "bad";
  for (const auto& [flag, needle] :
       std::vector<std::pair<std::string, std::string>>{{"--clump-p1 0", "--clump-p1"},
                                                        {"--clump-p1 1.5", "--clump-p1"},
                                                        {"--clump-p2 0", "--clump-p2"},
                                                        {"--clump-r2 -0.1", "--clump-r2"},
                                                        {"--clump-r2 1.1", "--clump-r2"},
                                                        {"--clump-kb 0", "--clump-kb"},
                                                        {"--clump-format xyz", "--clump-format"}}) {
    std::string log;
    EXPECT_NE(test::run_cli("clump " + store() + " --clump " + (dir_ / "w.assoc").string() + " " +
                                flag + " --out " + out.string(),
                            log),
              0)
        << flag;
    EXPECT_NE(log.find(needle), std::string::npos) << flag << ": " << log;
    EXPECT_FALSE(std::filesystem::exists(out.string() + ".clumped")) << flag;
  }
  std::string log;
  write_text(dir_ / "bad.assoc", "SNP P\na 0.1\nd zero\n");
  EXPECT_NE(test::run_cli("clump " + store() + " --clump " + (dir_ / "bad.assoc").string() +
                              " --out " + out.string(),
                          log),
            0);
  EXPECT_NE(log.find("bad.assoc:3: column P: 'zero' is not a number"), std::string::npos) << log;
  EXPECT_FALSE(std::filesystem::exists(out.string() + ".clumped"));
}

// A made-up table of P-values for the variants of a .bim (X's too with `with_x`, Y, MT and
// others never): a log-uniform P per variant (some far below p1), NA on some lines, IDs absent
// from the data, and variants given twice.
void write_random_table(const std::string& bim, const std::filesystem::path& out,
                        std::uint64_t seed, std::size_t stride, bool with_x) {
  std::ifstream in(bim);
  std::ofstream t(out);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  t << "CHR SNP BP P\n";
  std::string chrom, id, cm, pos, a1, a2;
  std::size_t variant = 0, k = 0;  // k counts the variants written
  while (in >> chrom >> id >> cm >> pos >> a1 >> a2) {
    // PLINK 1.9 makes males' X calls (and MT) haploid, which colflow does not: X only in data
    // where that changes no clump (docs/ANALYSES.md, clump).
    const bool x = chrom == "23" || chrom == "X";
    if (!(x && with_x) && (chrom.size() > 2 || std::stoi(chrom) > 22)) continue;
    if (variant++ % stride != 0) continue;
    if (++k % 7 == 3) {
      t << chrom << ' ' << id << ' ' << pos << " NA\n";
    } else {
      const double p = std::pow(10.0, -8 * u(rng) * u(rng));
      t << chrom << ' ' << id << ' ' << pos << ' ' << p << '\n';
      if (k % 97 == 5) t << chrom << ' ' << id << ' ' << pos << ' ' << p * u(rng) << '\n';
    }
    if (k % 211 == 17) t << "0 absent" << k << " 0 " << 1e-7 * u(rng) << '\n';
  }
}

// A dataset, and every how many of its variants the made-up tables give a P (toydata's
// variants are 1 bp apart: every window holds a whole chromosome).
struct plink_case {
  std::string name, bfile;
  std::size_t stride = 1;
  bool with_x = false;  // X's variants in the tables too
};

class ClumpVsPlinkTest : public ::testing::TestWithParam<plink_case> {};

// Our .clumped and plink1.9's on the same fileset and tables, for several thresholds.
const std::vector<std::string> all_thresholds = {
    "", "--clump-p1 0.001 --clump-p2 0.05 --clump-r2 0.2 --clump-kb 100",
    "--clump-p1 1e-6 --clump-p2 1e-3 --clump-r2 0.8 --clump-kb 500", "--clump-r2 0.1",
    "--clump-allow-overlap --clump-r2 0.2"};

void expect_same_clumps(const std::string& bfile, const std::string& store,
                        const std::string& tables, const std::filesystem::path& dir,
                        const std::string& extra = "",
                        const std::vector<std::string>& thresholds = all_thresholds) {
  for (const std::string& flags : thresholds) {
    const auto ours = dir / "ours", theirs = dir / "theirs";
    std::filesystem::remove(ours.string() + ".clumped");
    std::filesystem::remove(theirs.string() + ".clumped");
    run_ok("clump " + store + " --quiet --clump " + tables + " " + flags + extra + " --out " +
           ours.string());
    std::string out;
    ASSERT_EQ(test::run_command(std::string(plink19) + " --bfile " + bfile + " --clump " + tables +
                                    " " + flags + extra + " --out " + theirs.string(),
                                out),
              0)
        << out;
    ASSERT_TRUE(std::filesystem::exists(theirs.string() + ".clumped")) << flags << "\n" << out;
    EXPECT_EQ(text_of(ours.string() + ".clumped"), text_of(theirs.string() + ".clumped"))
        << bfile << " " << tables << " " << flags;
  }
}

TEST_P(ClumpVsPlinkTest, MadeUpTablesMatchPlink19) {
  REQUIRE_PLINK19();
  const plink_case& c = GetParam();
  test::temp_dir dir;
  const std::string bfile = test::dataset(c.bfile);
  const std::string store = (dir / "s.cf").string();
  run_ok("preprocess --quiet --bed " + bfile + " --out " + store);
  write_random_table(bfile + ".bim", dir / "t1", 1, c.stride, c.with_x);
  write_random_table(bfile + ".bim", dir / "t2", 2, c.stride, c.with_x);
  expect_same_clumps(bfile, store, (dir / "t1").string(), dir.path());
  expect_same_clumps(bfile, store, (dir / "t1").string() + " " + (dir / "t2").string(), dir.path());
}

INSTANTIATE_TEST_SUITE_P(Shared, ClumpVsPlinkTest,
                         // HapMap3: 470 males, one heterozygous male call on X.
                         ::testing::Values(plink_case{"hapmap3", "hapmap3/HapMap3", 1, true},
                                           plink_case{"some_missing", "bed-reader/some_missing"},
                                           plink_case{"toydata", "bed-reader/toydata.5chrom", 7}),
                         [](const ::testing::TestParamInfo<plink_case>& p) {
                           return p.param.name;
                         });

// Index variants in groups as small as one (a pass each) clump as in one group: the r² of a
// variant with its window do not depend on what was clumped before it.
TEST(ClumpGroupTest, GroupsOfAnySizeGiveTheSameClumps) {
  test::temp_dir dir;
  const std::string bfile = test::dataset("hapmap3/HapMap3");
  const std::string store_path = (dir / "s.cf").string();
  run_ok("preprocess --quiet --bed " + bfile + " --out " + store_path);
  write_random_table(bfile + ".bim", dir / "t", 3, 4, false);
  const store s = store::open(store_path);
  const selection sel = select(s, selection_files{});
  const std::vector<p_value_table> tables = {read_p_value_table(dir / "t")};
  for (const bool overlap : {false, true}) {
    clump_options options;
    options.allow_overlap = overlap;
    const clump_result whole = clump(s, sel, tables, options);
    ASSERT_GT(whole.clumps.size(), 3u);
    for (const std::size_t entries : {1u, 3000u}) {
      options.group_entries = entries;
      const clump_result grouped = clump(s, sel, tables, options);
      ASSERT_EQ(grouped.clumps.size(), whole.clumps.size()) << entries;
      for (std::size_t c = 0; c < whole.clumps.size(); ++c) {
        const clump_group &a = whole.clumps[c], &b = grouped.clumps[c];
        EXPECT_EQ(a.index, b.index) << entries << " clump " << c;
        EXPECT_EQ(a.members.size(), b.members.size()) << entries << " clump " << c;
        for (std::size_t k = 0; k < 5; ++k) EXPECT_EQ(a.counts[k], b.counts[k]) << entries;
        for (std::size_t m = 0; m < std::min(a.members.size(), b.members.size()); ++m)
          EXPECT_EQ(a.members[m].column, b.members[m].column) << entries << " clump " << c;
      }
    }
  }
}

// uk10k with its simulated phenotype: plink1.9 --assoc's .qassoc, and colflow assoc's table
// (ID and P found by the header), clumped by both tools on the same genotypes.
TEST(ClumpUk10kTest, AssocTablesMatchPlink19AtAnyThreadCount) {
  REQUIRE_PLINK19();
  test::temp_dir dir;
  const std::string bfile = test::dataset("uk10k/uk10k_chr1_1mb");
  const std::string pheno = test::dataset("uk10k/test.phen");
  const std::string store = (dir / "s.cf").string();
  run_ok("preprocess --quiet --bed " + bfile + " --out " + store);
  std::string out;
  ASSERT_EQ(test::run_command(std::string(plink19) + " --bfile " + bfile + " --pheno " + pheno +
                                  " --assoc --allow-no-sex --out " + (dir / "q").string(),
                              out),
            0)
      << out;
  expect_same_clumps(bfile, store, (dir / "q.qassoc").string(), dir.path());
  run_ok("assoc " + store + " --quiet --pheno " + pheno + " --out " + (dir / "ca").string());
  std::filesystem::path table;
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    if (e.path().filename().string().rfind("ca", 0) == 0) table = e.path();
  ASSERT_FALSE(table.empty());
  // PLINK 1.9 looks for SNP alone unless told; colflow finds ID by itself.
  expect_same_clumps(bfile, store, table.string(), dir.path(), " --clump-snp-field ID",
                     {"", "--clump-r2 0.1"});
  // The same bytes at 1 and 2 threads.
  for (const char* threads : {"1", "2"})
    run_ok("clump " + store + " --quiet --threads " + threads + " --clump " +
           (dir / "q.qassoc").string() + " --out " + (dir / ("t" + std::string(threads))).string());
  EXPECT_EQ(text_of(dir / "t1.clumped"), text_of(dir / "t2.clumped"));
}

}  // namespace
}  // namespace colflow
