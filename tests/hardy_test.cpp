// colflow hardy: against plink2 --hardy [midp] --nonfounders on every shared dataset (with and
// without --keep), on a fileset of males, females and unknown-sex samples on 1, X, Y, XY and MT
// (--sex as --update-sex), on dosages (their hard calls) and on the store commit 77f7e1c wrote;
// against plain counts on subsets, across threads, in-flight depths and processes; and the
// errors.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <bit>
#include <cmath>
#include <fstream>
#include <functional>

#include "colflow/colflow.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

const std::vector<std::string> sex_test_chromosomes = {"1", "X", "Y", "XY", "MT"};

// Lines compared with plink2: in .hardy (every chromosome but X, Y and MT) and in .hardy.x;
// of the latter, those whose mid-p plink2 computes with fewer ties (below).
struct compared_lines {
  std::size_t diploid = 0, x = 0, x_midp_ties = 0;
  compared_lines& operator+=(const compared_lines& o) {
    diploid += o.diploid;
    x += o.x;
    x_midp_ties += o.x_midp_ties;
    return *this;
  }
};

bool is_number_column(const std::string& name) {
  return name.find('(') != std::string::npos || name.find("FREQ") != std::string::npos ||
         name == "P" || name == "MIDP";
}

// One field of our table against plink2's: names, alleles and counts as text, numbers to the
// digits plink2 prints. Where there is no call plink2 writes nan (and 0 for the expected
// heterozygosity), colflow NA.
bool same_field(const std::string& name, const std::string& ours, const std::string& theirs) {
  if (!is_number_column(name)) return ours == theirs;
  if (ours == "NA" && theirs == "0" && name.rfind("E(", 0) == 0) return true;
  return test::same_as_printed(ours == "NA" ? NAN : std::stod(ours), theirs);
}

// plink2 2.00a3.5's mid-p on X leaves out half of the observed table's probability but not
// always half of the other tables exactly as probable (docs/ANALYSES.md, "colflow hardy"):
// its MIDP then lies above ours, at most at our P less nothing. Whether `theirs` is such a
// value, given our MIDP and P.
bool midp_with_fewer_ties(const std::string& ours_midp, const std::string& ours_p,
                          const std::string& theirs) {
  const double low = std::stod(ours_midp), high = std::stod(ours_p), value = std::stod(theirs);
  return value > low && (value < high || test::same_as_printed(high, theirs));
}

// Where the comparison runs: our store and plink2's input flags, the keep files (ours and
// plink2's, or none), more flags for either, and whether an X line's MIDP may have fewer ties
// (small samples, where ties happen).
struct comparison {
  std::string store, plink2_input;
  std::filesystem::path dir;
  std::pair<std::string, std::string> keep;
  std::string ours_extra, plink2_extra;
  bool x_midp_ties = false;
};

// Compares our PREFIX.hardy and PREFIX.hardy.x with plink2's REF.hardy and REF.hardy.x: the
// same files, the same header, then line by line. `ours_p`: our P tables beside our mid-p ones.
compared_lines expect_equal_to_plink2(const comparison& c, const std::string& ours,
                                      const std::string& ours_p, const std::string& ref,
                                      const std::string& what) {
  compared_lines lines;
  for (const std::string suffix : {".hardy", ".hardy.x"}) {
    const bool we_wrote = std::filesystem::exists(ours + suffix);
    EXPECT_EQ(we_wrote, std::filesystem::exists(ref + suffix)) << what << suffix;
    if (!we_wrote || !std::filesystem::exists(ref + suffix)) continue;
    const test::text_table a = test::read_table(ours + suffix), b = test::read_table(ref + suffix);
    EXPECT_EQ(a.header, b.header) << what << suffix;
    EXPECT_EQ(a.rows.size(), b.rows.size()) << what << suffix;
    if (a.header != b.header || a.rows.size() != b.rows.size()) continue;
    const test::text_table p =
        ours_p.empty() ? test::text_table{} : test::read_table(ours_p + suffix);
    for (std::size_t j = 0; j < a.rows.size(); ++j) {
      const std::string at = what + suffix + " line " + std::to_string(j + 1);
      EXPECT_EQ(a.rows[j].size(), a.header.size()) << at;
      EXPECT_EQ(b.rows[j].size(), b.header.size()) << at;
      if (a.rows[j].size() != a.header.size() || b.rows[j].size() != b.header.size()) continue;
      for (std::size_t k = 0; k < a.header.size(); ++k) {
        const std::string& name = a.header[k];
        if (same_field(name, a.rows[j][k], b.rows[j][k])) continue;
        if (c.x_midp_ties && name == "MIDP" && suffix == ".hardy.x" &&
            midp_with_fewer_ties(a.rows[j][k], p.rows.at(j).at(k), b.rows[j][k])) {
          ++lines.x_midp_ties;
          continue;
        }
        ADD_FAILURE() << at << " " << name << ": " << a.rows[j][k] << " vs plink2's "
                      << b.rows[j][k];
      }
    }
    (suffix == ".hardy" ? lines.diploid : lines.x) += a.rows.size();
  }
  return lines;
}

// Runs `colflow hardy` (with --midp, also without it) and plink2 --hardy --nonfounders on the
// same input, and compares.
compared_lines run_both(const comparison& c, const std::string& tag, bool midp) {
  const std::string ours = (c.dir / ("c" + tag)).string(), ref = (c.dir / ("p" + tag)).string();
  const std::string keep = c.keep.first.empty() ? "" : " --keep " + c.keep.first;
  std::string out;
  const auto run_ours = [&](const std::string& prefix, const std::string& flag) {
    EXPECT_EQ(test::run_cli("hardy " + c.store + " --quiet --digits 12 --out " + prefix + flag +
                                keep + c.ours_extra,
                            out),
              0)
        << out;
  };
  run_ours(ours, midp ? " --midp" : "");
  if (midp) run_ours(ours + "_p", "");
  test::run_plink2(c.plink2_input + " --hardy" + (midp ? " midp" : "") +
                   " --nonfounders --allow-extra-chr --out " + ref +
                   (c.keep.second.empty() ? "" : " --keep " + c.keep.second) + c.plink2_extra);
  return expect_equal_to_plink2(c, ours, midp ? ours + "_p" : "", ref, tag);
}

TEST(HardyTest, EqualsPlink2OnEveryDatasetWithAndWithoutKeep) {
  REQUIRE_SHARED_DATA();
  compared_lines total;
  for (const std::string& name : test::all_datasets()) {
    test::temp_dir dir;
    std::string out;
    comparison c;
    c.store = (dir / "s.cf").string();
    c.dir = dir.path();
    ASSERT_EQ(test::run_cli("preprocess --quiet --bed " + name + " --out " + c.store, out), 0)
        << out;
    // plink2 reads the .fam's sexes, as colflow does, for X.
    c.plink2_input = "--bfile " + test::plink2_input(name, dir.path(), /*keep_sex=*/true);
    test::write_keep_files(store::open(c.store).samples(), dir / "keep.txt", dir / "keep_p2.txt");
    for (const bool midp : {false, true}) {
      const std::string tag = name.substr(name.rfind('/') + 1) + (midp ? ".midp" : "");
      c.keep = {};
      total += run_both(c, tag, midp);
      c.keep = {(dir / "keep.txt").string(), (dir / "keep_p2.txt").string()};
      total += run_both(c, tag + ".keep", midp);
    }
  }
  // HapMap3 has X (23 in its .bim) with males and females; HapMap YRI has X without sexes,
  // which plink2 does not test either. No mid-p differs.
  EXPECT_GT(total.diploid, 10000u);
  EXPECT_GT(total.x, 100u);
}

// A .bed of 31 samples on 1, X, Y, XY and MT, 40 random variants and one of every call missing
// and one of every call heterozygous per chromosome, in dir/sexed; its store in dir/CODEC.cf.
comparison sexed_comparison(const test::temp_dir& dir, const std::string& codec,
                            std::uint64_t seed = 3) {
  const std::string bfile = (dir / "sexed").string();
  if (!std::filesystem::exists(bfile + ".bed"))
    test::write_sexed_fileset(bfile, test::mixed_sexes(), sex_test_chromosomes, 40, seed);
  comparison c;
  c.store = (dir / (codec + ".cf")).string();
  c.plink2_input = "--bfile " + bfile;
  c.dir = dir.path();
  c.x_midp_ties = true;  // 12 to 16 samples of each sex: tables with ties
  std::string out;
  EXPECT_EQ(
      test::run_cli("preprocess --quiet --bed " + bfile + " --codec " + codec + " --out " + c.store,
                    out),
      0)
      << out;
  return c;
}

// A keep file of the samples i of mixed_sexes() for which `kept(i)` holds.
std::string keep_file(const test::temp_dir& dir, const std::string& name,
                      const std::function<bool(std::size_t)>& kept) {
  std::ofstream keep(dir / name);
  for (std::size_t i = 0; i < 31; ++i)
    if (kept(i)) keep << "f" << i << " s" << i << "\n";
  return (dir / name).string();
}

TEST(HardyTest, SexChromosomesEqualPlink2ForMalesFemalesAndUnknownSex) {
  test::temp_dir dir;
  const std::string keep = keep_file(dir, "keep.txt", [](std::size_t i) { return i % 5 != 2; });
  compared_lines total;
  for (const std::string codec : {"genotype", "genotype-zstd"}) {
    comparison c = sexed_comparison(dir, codec);
    for (const bool midp : {false, true}) {
      const std::string tag = codec + (midp ? ".midp" : "");
      // 42 variants of each chromosome, Y and MT in neither table.
      for (const bool subset : {false, true}) {
        c.keep = subset ? std::pair{keep, keep} : std::pair<std::string, std::string>{};
        const compared_lines lines = run_both(c, tag + (subset ? ".keep" : ""), midp);
        EXPECT_EQ(lines.diploid, 84u) << tag;
        EXPECT_EQ(lines.x, 42u) << tag;
        total += lines;
      }
    }
  }
  // Ties are rare even here: a few X lines of the mid-p tables.
  EXPECT_LT(total.x_midp_ties * 10, total.x) << total.x_midp_ties;
}

// plink2 takes every selected sample as a female on X when no male is selected, and does not
// test X when no selected sample has a known sex.
TEST(HardyTest, XWithoutSelectedMalesOrSexesFollowsPlink2) {
  test::temp_dir dir;
  comparison c = sexed_comparison(dir, "genotype", 7);
  const std::vector<sample_sex> sexes = sexes_of(store::open(c.store).samples());
  const auto sex_of = [&](std::size_t i) { return sexes[i]; };
  const struct {
    std::string name;
    std::function<bool(std::size_t)> kept;
    std::size_t x_lines;
  } selections[] = {
      {"females_unknown", [&](std::size_t i) { return sex_of(i) != sample_sex::male; }, 42},
      {"males_unknown", [&](std::size_t i) { return sex_of(i) != sample_sex::female; }, 42},
      {"unknown", [&](std::size_t i) { return sex_of(i) == sample_sex::unknown; }, 0},
      {"females", [&](std::size_t i) { return sex_of(i) == sample_sex::female; }, 42}};
  for (const auto& sel : selections) {
    const std::string keep = keep_file(dir, sel.name + ".txt", sel.kept);
    c.keep = {keep, keep};
    for (const bool midp : {false, true}) {
      const compared_lines lines = run_both(c, sel.name + (midp ? ".midp" : ""), midp);
      EXPECT_EQ(lines.x, sel.x_lines) << sel.name;
      EXPECT_EQ(lines.diploid, 84u) << sel.name;
    }
  }
  // Without males, the samples of unknown sex are in the female counts.
  const test::text_table with_unknown = test::read_table(dir / "cfemales_unknown.hardy.x"),
                         females = test::read_table(dir / "cfemales.hardy.x");
  const auto females_counted = [](const test::text_table& t) {
    return std::stoull(t.rows[0][4]) + std::stoull(t.rows[0][5]) + std::stoull(t.rows[0][6]);
  };
  EXPECT_GT(females_counted(with_unknown), females_counted(females));
}

TEST(HardyTest, SexFileChangesXAsPlink2UpdateSexDoes) {
  test::temp_dir dir;
  comparison c = sexed_comparison(dir, "genotype", 5);
  const std::string sex = (dir / "sex.txt").string();
  {
    std::ofstream file(sex);
    file << "#FID IID SEX\n";
    const char* const codes[] = {"2", "1", "1", "0", "M", "F", "NA"};
    for (std::size_t i = 0; i < 31; i += 2)
      file << "f" << i << " s" << i << " " << codes[i % 7] << "\n";
  }
  c.ours_extra = " --sex " + sex;
  c.plink2_extra = " --update-sex " + sex;
  EXPECT_EQ(run_both(c, "sex", false).x, 42u);
  // The file changed the X table, and nothing else.
  std::string out;
  ASSERT_EQ(test::run_cli(
                "hardy " + c.store + " --quiet --digits 12 --out " + (dir / "fam").string(), out),
            0)
      << out;
  EXPECT_NE(test::read_file(dir / "fam.hardy.x"), test::read_file(dir / "csex.hardy.x"));
  EXPECT_EQ(test::read_file(dir / "fam.hardy"), test::read_file(dir / "csex.hardy"));
}

TEST(HardyTest, DosageStoresTestTheirHardCallsAsPlink2) {
  test::temp_dir dir;
  const std::string d = dir.path().string() + "/";
  std::vector<std::string> sexes;
  for (std::size_t i = 0; i < 29; ++i) sexes.push_back(i % 3 == 0 ? "1" : i % 3 == 1 ? "2" : "0");
  test::write_dosage_vcf(d + "x.vcf", sexes, sex_test_chromosomes);
  {
    std::ofstream sex(d + "sex.txt"), keep(d + "keep.txt");
    sex << "#IID SEX\n";
    for (std::size_t i = 0; i < sexes.size(); ++i) {
      sex << "s" << i << " " << sexes[i] << "\n";
      if (i % 4 != 1) keep << "0 s" << i << "\n";
    }
  }
  comparison c;
  c.store = d + "d.cf";
  c.dir = dir.path();
  c.x_midp_ties = true;  // a few calls per variant: tables with ties
  std::string out;
  ASSERT_EQ(test::run_cli("preprocess --quiet --vcf " + d + "x.vcf --dosage DS --sex " + d +
                              "sex.txt --out " + c.store,
                          out),
            0)
      << out;
  ASSERT_EQ(store::open(c.store).type(), value_type::dosage);
  // plink2 makes the hard calls of the dosages it imports (a haploid DS doubled, as colflow
  // stores it) with its default threshold, 0.1.
  c.plink2_input = "--vcf " + d + "x.vcf dosage=DS --update-sex " + d + "sex.txt";
  for (const bool midp : {false, true})
    for (const bool subset : {false, true}) {
      c.keep = subset ? std::pair{d + "keep.txt", d + "keep.txt"}
                      : std::pair<std::string, std::string>{};
      const compared_lines lines =
          run_both(c, std::string(midp ? "m" : "p") + (subset ? "k" : ""), midp);
      EXPECT_EQ(lines.diploid, 60u);
      EXPECT_EQ(lines.x, 30u);
    }
  // A threshold of 0.5 calls every dosage: more calls than at 0.1.
  ASSERT_EQ(test::run_cli(
                "hardy " + c.store + " --quiet --hard-call-threshold 0.5 --out " + d + "h", out),
            0)
      << out;
  const test::text_table wide = test::read_table(d + "h.hardy"),
                         narrow = test::read_table(d + "cp.hardy");
  const auto calls = [](const test::text_table& t, std::size_t j) {
    return std::stoull(t.rows[j][4]) + std::stoull(t.rows[j][5]) + std::stoull(t.rows[j][6]);
  };
  for (std::size_t j = 0; j < wide.rows.size(); ++j) EXPECT_GT(calls(wide, j), calls(narrow, j));
}

// The store of tests/data/old-store was written by commit 77f7e1c with PLINK 1's chromosome
// numbers (23 for X, 24 Y, 25 XY, 26 MT): hardy reads them as today's codes and writes plink2's
// tables byte for byte, with and without --keep, P and mid-p.
TEST(HardyTest, StoreOfCommit77f7e1cGivesPlink2sTablesByteForByte) {
  const auto data = std::filesystem::path(COLFLOW_TEST_SOURCE_DIR) / "data" / "old-store";
  const std::string bfile = (data / "numeric_chromosomes").string(),
                    cf = (data / "numeric_chromosomes-77f7e1c.cf").string();
  test::temp_dir dir;
  {
    std::ofstream keep(dir / "keep.txt");
    for (std::size_t i = 1; i <= 50; ++i)
      if (i % 4 != 2) keep << "fam" << i << " s" << i << "\n";
  }
  for (const bool keep : {false, true})
    for (const bool midp : {false, true}) {
      const std::string k = keep ? " --keep " + (dir / "keep.txt").string() : "",
                        tag = std::string(keep ? "k" : "a") + (midp ? "m" : "p");
      std::string out;
      ASSERT_EQ(test::run_cli("hardy " + cf + " --quiet --out " + (dir / ("c" + tag)).string() +
                                  (midp ? " --midp" : "") + k,
                              out),
                0)
          << out;
      test::run_plink2("--bfile " + bfile + " --hardy" + (midp ? " midp" : "") +
                       " --nonfounders --out " + (dir / ("p" + tag)).string() + k);
      for (const std::string suffix : {".hardy", ".hardy.x"}) {
        const auto ours = test::read_file(dir / ("c" + tag + suffix)),
                   theirs = test::read_file(dir / ("p" + tag + suffix));
        EXPECT_FALSE(ours.empty()) << tag << suffix;
        EXPECT_EQ(ours, theirs) << tag << suffix;
      }
    }
}

// The rows of a PLINK fileset's .bed, one per variant.
std::vector<std::vector<std::uint8_t>> bed_columns(const std::string& bfile, std::size_t n,
                                                   std::size_t m) {
  const std::vector<char> bed = test::read_file(bfile + ".bed");
  const std::size_t bytes = genotype_column_bytes(n);
  std::vector<std::vector<std::uint8_t>> columns(m);
  for (std::size_t j = 0; j < m; ++j)
    columns[j].assign(bed.begin() + static_cast<std::ptrdiff_t>(3 + j * bytes),
                      bed.begin() + static_cast<std::ptrdiff_t>(3 + (j + 1) * bytes));
  return columns;
}

// The counts of one column by plain loops over the selected samples: every one, or on X the
// females' genotypes and the males' homozygous calls.
hardy_result plain_counts(const std::vector<std::uint8_t>& codes, chromosome_kind kind,
                          const std::vector<sample_sex>& sexes,
                          const std::vector<std::size_t>& rows) {
  hardy_result r;
  r.kind = kind;
  if (kind == chromosome_kind::y || kind == chromosome_kind::mt) return r;
  for (std::size_t i : rows) {
    const int d = test::dosage_at(codes, i);
    if (d < 0) continue;
    if (kind == chromosome_kind::x && sexes[i] == sample_sex::male) {
      if (d == 2) ++r.males.a1;
      if (d == 0) ++r.males.a2;
    } else if (kind != chromosome_kind::x || sexes[i] == sample_sex::female) {
      (d == 2 ? r.genotypes.hom_a1 : d == 1 ? r.genotypes.het : r.genotypes.hom_a2) += 1;
    }
  }
  return r;
}

void expect_same_results(const std::vector<hardy_result>& a, const std::vector<hardy_result>& b,
                         const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t j = 0; j < a.size(); ++j) {
    EXPECT_EQ(a[j].kind, b[j].kind) << what << " " << j;
    EXPECT_EQ(a[j].genotypes.hom_a1, b[j].genotypes.hom_a1) << what << " " << j;
    EXPECT_EQ(a[j].genotypes.het, b[j].genotypes.het) << what << " " << j;
    EXPECT_EQ(a[j].genotypes.hom_a2, b[j].genotypes.hom_a2) << what << " " << j;
    EXPECT_EQ(a[j].males.a1, b[j].males.a1) << what << " " << j;
    EXPECT_EQ(a[j].males.a2, b[j].males.a2) << what << " " << j;
    // Bit for bit, NaN equal to NaN.
    EXPECT_EQ(std::bit_cast<std::uint64_t>(a[j].test.p), std::bit_cast<std::uint64_t>(b[j].test.p))
        << what << " " << j;
    EXPECT_EQ(std::bit_cast<std::uint64_t>(a[j].test.midp),
              std::bit_cast<std::uint64_t>(b[j].test.midp))
        << what << " " << j;
  }
}

TEST(HardyTest, CountsEqualPlainLoopsAndNeverDependOnThreadsDepthsOrProcesses) {
  test::temp_dir dir;
  const std::string bfile = (dir / "sexed").string();
  const std::vector<std::string> fam_sexes = test::mixed_sexes();
  test::write_sexed_fileset(bfile, fam_sexes, sex_test_chromosomes, 12, 11);
  const std::size_t n = fam_sexes.size(), m = 5 * 14;
  std::string out;
  ASSERT_EQ(test::run_cli("preprocess --quiet --bed " + bfile + " --codec genotype-zstd --out " +
                              (dir / "s.cf").string(),
                          out),
            0)
      << out;
  const store s = store::open(dir / "s.cf");
  const std::vector<sample_sex> sexes = sexes_of(s.samples());
  const auto codes = bed_columns(bfile, n, m);
  selection subset = selection::all(s);
  subset.rows.clear();
  for (std::size_t i = 0; i < n; ++i) {
    subset.row_kept[i] = i % 4 != 1;
    if (subset.row_kept[i]) subset.rows.push_back(i);
  }
  subset.columns.clear();
  for (std::size_t j = 0; j < m; j += 2) subset.columns.push_back(j);
  for (const selection& sel : {selection::all(s), subset}) {
    const std::string what = sel.all_rows() ? "all" : "subset";
    const std::vector<hardy_result> got = hardy(s, sel);
    ASSERT_EQ(got.size(), sel.columns.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
      const std::size_t j = sel.columns[k];
      hardy_result want =
          plain_counts(codes[j], kind_of_chromosome(s.columns()[j].chrom), sexes, sel.rows);
      if (want.kind == chromosome_kind::y || want.kind == chromosome_kind::mt)
        want.test = {NAN, NAN};
      else if (want.kind == chromosome_kind::x)
        want.test = hardy_weinberg_exact_x(want.genotypes, want.males);
      else
        want.test = hardy_weinberg_exact(want.genotypes);
      expect_same_results({got[k]}, {want}, what + " column " + std::to_string(j));
    }
    for (const std::size_t threads : {1u, 2u, 4u})
      for (const std::size_t depth : {1u, 3u, 16u}) {
        tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
        analysis_options options;
        options.stream.in_flight = depth;
        options.stream.block_bytes = 64;  // batches of a few columns
        expect_same_results(
            hardy(s, sel, {}, options), got,
            what + " threads " + std::to_string(threads) + " depth " + std::to_string(depth));
      }
    for (const std::size_t size : {2u, 3u}) {
      std::vector<std::vector<hardy_result>> ranks(size);
      test::on_processes(size, [&](std::size_t r, analysis_options& options) {
        ranks[r] = hardy(s, sel, sexes, {}, options);
      });
      for (std::size_t r = 0; r < size; ++r)
        expect_same_results(ranks[r], got, what + " rank " + std::to_string(r));
    }
  }
}

TEST(HardyTest, WritesOnlyTheTablesThatHaveLines) {
  test::temp_dir dir;
  const std::string bfile = (dir / "f").string();
  test::write_sexed_fileset(bfile, test::mixed_sexes(), {"1", "2", "Y", "MT"}, 3, 2);
  std::string out;
  const std::string cf = (dir / "s.cf").string();
  ASSERT_EQ(test::run_cli("preprocess --quiet --bed " + bfile + " --out " + cf, out), 0) << out;
  const store s = store::open(cf);
  selection autosomes = selection::all(s), haploid = selection::all(s);
  autosomes.columns = {0, 1, 5, 6};
  haploid.columns = {10, 11, 15, 16};
  EXPECT_EQ(write_hardy(s, autosomes, hardy(s, autosomes), dir / "a"),
            std::vector<std::filesystem::path>{dir / "a.hardy"});
  EXPECT_FALSE(std::filesystem::exists(dir / "a.hardy.x"));
  const auto nothing = hardy(s, haploid);
  for (const hardy_result& r : nothing) EXPECT_TRUE(std::isnan(r.test.p));
  EXPECT_TRUE(write_hardy(s, haploid, nothing, dir / "y").empty());
  EXPECT_FALSE(std::filesystem::exists(dir / "y.hardy"));
  // The command says so.
  test::write_file(dir / "ids.txt", {'v', '1', '0', '\n'});
  ASSERT_EQ(test::run_cli("hardy " + cf + " --extract " + (dir / "ids.txt").string() + " --out " +
                              (dir / "c").string(),
                          out),
            0)
      << out;
  EXPECT_NE(out.find("no variant to test: nothing written"), std::string::npos) << out;
}

TEST(HardyTest, RefusesDenseStoresAndBadArguments) {
  test::temp_dir dir;
  test::write_float_store(dir / "f.cf", value_type::float64, 9, 3,
                          column_encoding{codec_id::none, 0});
  const store dense = store::open(dir / "f.cf");
  try {
    hardy(dense, selection::all(dense));
    ADD_FAILURE() << "a dense store was tested";
  } catch (const error& e) {
    EXPECT_EQ(e.kind(), errc::invalid_argument);
    EXPECT_NE(e.message().find("holds float64 values, not genotype calls"), std::string::npos)
        << e.message();
  }
  std::string out;
  EXPECT_EQ(
      test::run_cli("hardy " + (dir / "f.cf").string() + " --out " + (dir / "o").string(), out), 1);
  EXPECT_NE(out.find("not genotype calls"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(dir / "o.hardy"));

  test::write_genotype_store(dir / "g.cf", 9, 3, column_encoding{codec_id::none, 0});
  const store g = store::open(dir / "g.cf");
  const selection all = selection::all(g);
  hardy_options wide;
  wide.hard_call_threshold = 0.6;
  EXPECT_THROW(hardy(g, all, wide), error);
  EXPECT_THROW(hardy(g, all, std::vector<sample_sex>(8), {}), error);
  const auto results = hardy(g, all);
  EXPECT_THROW(write_hardy(g, all, std::span(results).first(2), dir / "w"), error);
  EXPECT_THROW(write_hardy(g, all, results, dir / "w", {}, 18), error);
  EXPECT_FALSE(std::filesystem::exists(dir / "w.hardy"));
}

}  // namespace
}  // namespace colflow
