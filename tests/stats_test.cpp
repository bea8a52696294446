// colflow stats: against plink2 --freq/--missing on the shared datasets (with and without
// --keep) and on files with X, Y, XY and MT variants of males, females and unknown-sex samples
// (calls and dosages, --sex as --update-sex), on a store an earlier colflow wrote, and against
// plain loops on genotype, dosage and dense stores, on one process and on several.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <fstream>
#include <map>
#include <random>

#include "colflow/colflow.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

// Compares our table `ours` of store `s` with plink2's `ref`.afreq and `ref`.vmiss (made with
// --freq --missing, all samples counted) line by line, on every chromosome: A1_FREQ, MISSING_CT
// and F_MISS equal plink2's; OBS_CT + MISSING_CT is .vmiss's OBS_CT (the counted samples: the
// males on Y), and OBS_CT relates to .afreq's count of alleles through the ploidy (two per
// sample on autosomes and XY, one on Y and MT, one or two on X). With `dosage_missing` the
// missing counts are plink2's missing dosages (vcols=...,nmissdosage,nobs,fmissdosage), else its
// missing hard calls. Returns the lines compared on each chromosome kind.
std::map<chromosome_kind, std::size_t> expect_equal_to_plink2(const std::string& ours,
                                                              const std::string& ref,
                                                              const store& s,
                                                              const std::string& what,
                                                              bool dosage_missing = false) {
  std::map<chromosome_kind, std::size_t> compared;
  const test::text_table t = test::read_table(ours), freq = test::read_table(ref + ".afreq"),
                         miss = test::read_table(ref + ".vmiss");
  EXPECT_EQ(t.rows.size(), s.num_columns()) << what;
  EXPECT_EQ(freq.rows.size(), s.num_columns()) << what;
  EXPECT_EQ(miss.rows.size(), s.num_columns()) << what;
  if (t.rows.size() != s.num_columns() || freq.rows.size() != s.num_columns() ||
      miss.rows.size() != s.num_columns())
    return compared;
  const std::size_t c_chr = t.column("CHR"), c_id = t.column("ID"), c_obs = t.column("OBS_CT"),
                    c_miss = t.column("MISSING_CT"), c_fmiss = t.column("F_MISS"),
                    c_freq = t.column("A1_FREQ");
  const std::size_t f_id = freq.column("ID"), f_alt = freq.column("ALT"),
                    f_freq = freq.column("ALT_FREQS"), f_obs = freq.column("OBS_CT"),
                    m_miss = miss.column(dosage_missing ? "MISSING_DOSAGE_CT" : "MISSING_CT"),
                    m_obs = miss.column("OBS_CT"),
                    m_fmiss = miss.column(dosage_missing ? "F_MISS_DOSAGE" : "F_MISS");
  for (std::size_t j = 0; j < t.rows.size(); ++j) {
    const auto& r = t.rows[j];
    const std::string at = what + " " + r[c_chr] + " " + r[c_id];
    EXPECT_EQ(r[c_id], freq.rows[j][f_id]) << at;  // same order as the .bim
    EXPECT_EQ(s.columns()[j].a1, freq.rows[j][f_alt]) << at;
    const auto obs = std::stoull(r[c_obs]), missing = std::stoull(r[c_miss]),
               alleles = std::stoull(freq.rows[j][f_obs]);
    const chromosome_kind kind = kind_of_chromosome(r[c_chr]);
    switch (kind) {
      case chromosome_kind::y:
      case chromosome_kind::mt:
        EXPECT_EQ(obs, alleles) << at;
        break;
      case chromosome_kind::x:
        EXPECT_LE(obs, alleles) << at;
        EXPECT_LE(alleles, 2 * obs) << at;
        break;
      default:
        EXPECT_EQ(2 * obs, alleles) << at;
    }
    EXPECT_EQ(obs + missing, std::stoull(miss.rows[j][m_obs])) << at;
    EXPECT_EQ(r[c_miss], miss.rows[j][m_miss]) << at;
    EXPECT_TRUE(test::same_as_printed(r[c_fmiss] == "NA" ? NAN : std::stod(r[c_fmiss]),
                                      miss.rows[j][m_fmiss]))
        << at << " F_MISS: " << r[c_fmiss] << " vs " << miss.rows[j][m_fmiss];
    EXPECT_TRUE(
        test::same_as_printed(r[c_freq] == "NA" ? NAN : std::stod(r[c_freq]), freq.rows[j][f_freq]))
        << at << " A1_FREQ: " << r[c_freq] << " vs " << freq.rows[j][f_freq];
    ++compared[kind];
  }
  return compared;
}

TEST(StatsTest, EqualsPlink2FreqAndMissingOnEveryDatasetWithAndWithoutKeep) {
  REQUIRE_SHARED_DATA();
  std::map<chromosome_kind, std::size_t> compared;
  for (const std::string& name : test::all_datasets()) {
    test::temp_dir dir;
    std::string out;
    ASSERT_EQ(test::run_cli(
                  "preprocess --quiet --bed " + name + " --out " + (dir / "s.cf").string(), out),
              0)
        << out;
    const store s = store::open(dir / "s.cf");
    // plink2 reads the .fam's sexes, as colflow does, for the ploidy rules of X, Y and MT.
    const std::string p2 = test::plink2_input(name, dir.path(), /*keep_sex=*/true);
    test::write_keep_files(s.samples(), dir / "keep.txt", dir / "keep_p2.txt");
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
      for (const auto& [kind, lines] :
           expect_equal_to_plink2(ours, ref, s, name + (keep ? " --keep" : "")))
        compared[kind] += lines;
    }
  }
  // HapMap3 has X, XY and MT (23, 25, 26 in its .bim), with males and females; two bed-reader
  // files have Y.
  for (const chromosome_kind kind : {chromosome_kind::autosome, chromosome_kind::x,
                                     chromosome_kind::y, chromosome_kind::xy, chromosome_kind::mt})
    EXPECT_GT(compared[kind], 0u) << static_cast<int>(kind);
}

const std::vector<std::string> sex_test_chromosomes = {"1", "X", "Y", "XY", "MT"};

TEST(StatsTest, SexChromosomesEqualPlink2ForMalesFemalesAndUnknownSexWithAndWithoutKeep) {
  test::temp_dir dir;
  const std::string bfile = (dir / "sexed").string();
  test::write_sexed_fileset(bfile, test::mixed_sexes(), sex_test_chromosomes, 40, 3);
  {
    std::ofstream keep(dir / "keep.txt");
    for (std::size_t i = 0; i < 31; ++i)
      if (i % 5 != 2) keep << "f" << i << " s" << i << "\n";
  }
  test::run_plink2("--bfile " + bfile + " --freq --missing --out " + (dir / "pa").string());
  test::run_plink2("--bfile " + bfile + " --freq --missing --keep " + (dir / "keep.txt").string() +
                   " --out " + (dir / "pk").string());
  for (const std::string codec : {"genotype", "genotype-zstd"}) {
    std::string out;
    const std::string cf = (dir / (codec + ".cf")).string();
    ASSERT_EQ(test::run_cli(
                  "preprocess --quiet --bed " + bfile + " --codec " + codec + " --out " + cf, out),
              0)
        << out;
    const store s = store::open(cf);
    for (const bool keep : {false, true}) {
      const std::string ours = (dir / (codec + (keep ? ".k.tsv" : ".a.tsv"))).string();
      ASSERT_EQ(test::run_cli("stats " + cf + " --quiet --digits 12 --out " + ours +
                                  (keep ? " --keep " + (dir / "keep.txt").string() : ""),
                              out),
                0)
          << out;
      const auto compared = expect_equal_to_plink2(ours, (dir / (keep ? "pk" : "pa")).string(), s,
                                                   codec + (keep ? " --keep" : ""));
      for (const chromosome_kind kind :
           {chromosome_kind::autosome, chromosome_kind::x, chromosome_kind::y, chromosome_kind::xy,
            chromosome_kind::mt})
        EXPECT_EQ(compared.count(kind) ? compared.at(kind) : 0, 42u) << static_cast<int>(kind);
    }
  }
}

// A store made from a .pgen (colflow preprocess --pfile) gives plink2's --freq and --missing
// on that .pgen, sex chromosomes included (the .psam's sexes).
TEST(StatsTest, StoreFromAPgenEqualsPlink2FreqAndMissingOnThatPgen) {
  test::temp_dir dir;
  const std::string bfile = (dir / "sexed").string(), p = (dir / "x").string();
  test::write_sexed_fileset(bfile, test::mixed_sexes(), sex_test_chromosomes, 40, 5);
  test::run_plink2("--bfile " + bfile + " --make-pgen --out " + p);
  test::run_plink2("--pfile " + p + " --freq --missing --out " + (dir / "pa").string());
  std::string out;
  const std::string cf = (dir / "x.cf").string(), ours = (dir / "x.tsv").string();
  ASSERT_EQ(test::run_cli("preprocess --quiet --pfile " + p + " --out " + cf, out), 0) << out;
  ASSERT_EQ(test::run_cli("stats " + cf + " --quiet --digits 12 --out " + ours, out), 0) << out;
  const store s = store::open(cf);
  const auto compared = expect_equal_to_plink2(ours, (dir / "pa").string(), s, ".pgen");
  for (const chromosome_kind kind : {chromosome_kind::autosome, chromosome_kind::x,
                                     chromosome_kind::y, chromosome_kind::xy, chromosome_kind::mt})
    EXPECT_EQ(compared.count(kind) ? compared.at(kind) : 0, 42u) << static_cast<int>(kind);
}

TEST(StatsTest, SexFileChangesXAndYAsPlink2UpdateSexDoes) {
  test::temp_dir dir;
  const std::string bfile = (dir / "sexed").string();
  test::write_sexed_fileset(bfile, test::mixed_sexes(), sex_test_chromosomes, 30, 5);
  // Some males become female or unknown, some females and unknown samples male; the samples the
  // file leaves out keep the .fam's sex.
  {
    std::ofstream sex(dir / "sex.txt");
    sex << "#FID IID SEX\n";
    const char* const codes[] = {"2", "1", "1", "0", "M", "F", "NA"};
    for (std::size_t i = 0; i < 31; i += 2)
      sex << "f" << i << " s" << i << " " << codes[i % 7] << "\n";
  }
  std::string out;
  const std::string cf = (dir / "s.cf").string();
  ASSERT_EQ(test::run_cli("preprocess --quiet --bed " + bfile + " --out " + cf, out), 0) << out;
  const store s = store::open(cf);
  ASSERT_EQ(test::run_cli(
                "stats " + cf + " --quiet --digits 12 --out " + (dir / "fam.tsv").string(), out),
            0)
      << out;
  ASSERT_EQ(test::run_cli("stats " + cf + " --quiet --digits 12 --sex " +
                              (dir / "sex.txt").string() + " --out " + (dir / "sex.tsv").string(),
                          out),
            0)
      << out;
  test::run_plink2("--bfile " + bfile + " --update-sex " + (dir / "sex.txt").string() +
                   " --freq --missing --out " + (dir / "p").string());
  const auto compared =
      expect_equal_to_plink2((dir / "sex.tsv").string(), (dir / "p").string(), s, "--sex");
  EXPECT_EQ(compared.at(chromosome_kind::x), 32u);
  // The file made a difference on X and Y, none elsewhere.
  const test::text_table a = test::read_table(dir / "fam.tsv"),
                         b = test::read_table(dir / "sex.tsv");
  std::map<chromosome_kind, std::size_t> changed;
  for (std::size_t j = 0; j < a.rows.size(); ++j)
    changed[kind_of_chromosome(a.rows[j][0])] += a.rows[j] != b.rows[j];
  EXPECT_GT(changed[chromosome_kind::x], 25u);
  EXPECT_GT(changed[chromosome_kind::y], 25u);
  EXPECT_EQ(changed[chromosome_kind::autosome] + changed[chromosome_kind::xy] +
                changed[chromosome_kind::mt],
            0u);
  // A bad file is an error naming it, and no table is written.
  test::write_file(dir / "bad.txt", {'f', '0', ' ', 's', '0', ' ', '3', '\n'});
  EXPECT_EQ(test::run_cli("stats " + cf + " --sex " + (dir / "bad.txt").string() + " --out " +
                              (dir / "bad.tsv").string(),
                          out),
            1);
  EXPECT_NE(out.find("bad.txt:1: '3' is not a sex code"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(dir / "bad.tsv"));
}

TEST(StatsTest, DosageStoresFollowPlink2OnSexChromosomes) {
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
  std::string out;
  // The sexes set at preprocessing, or given to stats: the same table.
  ASSERT_EQ(test::run_cli("preprocess --quiet --vcf " + d + "x.vcf --dosage DS --sex " + d +
                              "sex.txt --out " + d + "sexed.cf",
                          out),
            0)
      << out;
  ASSERT_EQ(test::run_cli(
                "preprocess --quiet --vcf " + d + "x.vcf --dosage DS --out " + d + "plain.cf", out),
            0)
      << out;
  const store s = store::open(d + "sexed.cf");
  ASSERT_EQ(s.type(), value_type::dosage);
  EXPECT_EQ(s.samples()[0].sex, "1");
  EXPECT_EQ(s.samples()[1].sex, "2");
  EXPECT_EQ(s.samples()[2].sex, "0");
  EXPECT_EQ(store::open(d + "plain.cf").samples()[0].sex, "0");
  for (const bool keep : {false, true}) {
    const std::string k = keep ? " --keep " + d + "keep.txt" : "";
    const std::string tag = keep ? "k" : "a";
    ASSERT_EQ(
        test::run_cli(
            "stats " + d + "sexed.cf --quiet --digits 12" + k + " --out " + d + tag + "1.tsv", out),
        0)
        << out;
    ASSERT_EQ(test::run_cli("stats " + d + "plain.cf --quiet --digits 12 --sex " + d + "sex.txt" +
                                k + " --out " + d + tag + "2.tsv",
                            out),
              0)
        << out;
    EXPECT_EQ(test::read_file(d + tag + "1.tsv"), test::read_file(d + tag + "2.tsv"));
    // plink2 imports the dosages as colflow does (a haploid DS doubled); its sample IDs are the
    // VCF's, with FID 0 for --keep. plink2 2.00a3.5's --missing with --keep counts one missing
    // dosage too many on some X variants (not on a .pgen of the kept samples, nor for calls):
    // the kept samples are compared with plink2 on such a .pgen, what colflow's figures on a
    // subset equal by design (those of a store of the subset alone).
    const std::string vcf = "--vcf " + d + "x.vcf dosage=DS --update-sex " + d + "sex.txt";
    const std::string report = " --freq --missing vcols=chrom,nmissdosage,nobs,fmissdosage";
    if (keep) {
      test::run_plink2(vcf + k + " --make-pgen --out " + d + "kept");
      test::run_plink2("--pfile " + d + "kept" + report + " --out " + d + "p" + tag);
    } else {
      test::run_plink2(vcf + report + " --out " + d + "p" + tag);
    }
    const auto compared = expect_equal_to_plink2(d + tag + "1.tsv", d + "p" + tag, s, "dosages" + k,
                                                 /*dosage_missing=*/true);
    EXPECT_EQ(compared.size(), 5u);
  }
}

// A genotype or dosage store of `n` samples with one random column on each chromosome of
// `chroms` (~8% missing; heterozygous calls and fractional dosages everywhere). Returns the
// columns' stored dosages (0-2, NaN for missing).
std::vector<std::vector<double>> write_store_on(const std::filesystem::path& path, value_type type,
                                                std::size_t n,
                                                const std::vector<std::string>& chroms) {
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> u(0, 1);
  writer_options options;
  options.type = type;
  options.rows = n;
  options.source = "test";
  store_writer writer(path, options, test::numbered_samples(n));
  std::vector<std::vector<double>> all;
  for (std::size_t j = 0; j < chroms.size(); ++j) {
    std::vector<double> x(n);
    const column_info info{chroms[j], std::to_string(j + 1), "0", std::to_string(j + 1), "A", "C"};
    const column_encoding e{codec_id::zstd, 3, type == value_type::dosage};
    if (type == value_type::genotype) {
      const auto codes = test::random_genotype_codes(n, 0.1 + 0.8 * u(rng), 0.08, rng);
      for (std::size_t i = 0; i < n; ++i) {
        const int d = test::dosage_at(codes, i);
        x[i] = d < 0 ? std::numeric_limits<double>::quiet_NaN() : d;
      }
      writer.append(encode_genotype_column(codes, n, e), info);
    } else {
      std::vector<std::uint16_t> d(n);
      for (std::size_t i = 0; i < n; ++i) {
        d[i] =
            u(rng) < 0.08 ? dosage_missing : static_cast<std::uint16_t>(u(rng) * dosage_max + 0.5);
        x[i] = d[i] == dosage_missing ? NAN : static_cast<double>(d[i]) / dosage_one;
      }
      writer.append(encode_dosage_column(d, e), info);
    }
    all.push_back(std::move(x));
  }
  writer.finish();
  return all;
}

// The summary by the ploidy rules, in plain loops over the selected rows.
column_summary plain_summary(const std::vector<double>& x, chromosome_kind kind,
                             const std::vector<sample_sex>& sexes,
                             const std::vector<std::size_t>& rows) {
  column_summary r;
  double a1 = 0, alleles = 0, sum = 0, called = 0;
  for (std::size_t i : rows) {
    const bool male = sexes[i] == sample_sex::male;
    const double ploidy = kind == chromosome_kind::x    ? (male ? 1 : 2)
                          : kind == chromosome_kind::y  ? (male ? 1 : 0)
                          : kind == chromosome_kind::mt ? 1
                                                        : 2;
    if (!std::isnan(x[i])) {
      sum += x[i];
      ++called;
    }
    if (ploidy == 0) continue;
    if (std::isnan(x[i])) {
      ++r.missing;
    } else {
      ++r.observed;
      a1 += x[i] * ploidy / 2;
      alleles += ploidy;
    }
  }
  r.a1_freq = a1 / alleles;
  r.mean = sum / called;
  double squares = 0;
  for (std::size_t i : rows)
    if (!std::isnan(x[i])) squares += (x[i] - r.mean) * (x[i] - r.mean);
  r.sd = std::sqrt(squares / static_cast<double>(rows.size() - 1));
  return r;
}

TEST(StatsTest, PloidyRulesMatchPlainLoopsAndOnlySexChromosomesArePassedOverWithAllSamples) {
  const std::vector<std::string> chroms = {"1", "X", "2", "Y", "XY", "MT", "X", "Chr01K", "Y"};
  const std::size_t n = 203;
  std::vector<sample_sex> sexes(n);
  for (std::size_t i = 0; i < n; ++i) sexes[i] = static_cast<sample_sex>((i * 7 + i / 5) % 3);
  for (const value_type type : {value_type::genotype, value_type::dosage}) {
    SCOPED_TRACE(std::string(value_type_name(type)));
    test::temp_dir dir;
    const auto x = write_store_on(dir / "s.cf", type, n, chroms);
    const store s = store::open(dir / "s.cf");
    for (const bool subset : {false, true}) {
      selection sel = selection::all(s);
      if (subset) {
        sel.rows.clear();
        for (std::size_t i = 0; i < n; ++i) {
          sel.row_kept[i] = i % 3 != 0;
          if (sel.row_kept[i]) sel.rows.push_back(i);
        }
      }
      analysis_options options;
      std::uint64_t passed_over = 0;
      options.progress = [&](const std::string&, const pass_progress& p) {
        passed_over = p.columns_total;
      };
      const auto got = column_summaries(s, sel, sexes, options);
      ASSERT_EQ(got.size(), chroms.size());
      // With every sample, the index answers the columns without ploidy rules.
      EXPECT_EQ(passed_over, subset ? chroms.size() : 5u);
      for (std::size_t j = 0; j < chroms.size(); ++j) {
        const column_summary want =
            plain_summary(x[j], kind_of_chromosome(chroms[j]), sexes, sel.rows);
        EXPECT_EQ(got[j].observed, want.observed) << j;
        EXPECT_EQ(got[j].missing, want.missing) << j;
        EXPECT_NEAR(got[j].a1_freq, want.a1_freq, 1e-14) << j;
        EXPECT_NEAR(got[j].mean, want.mean, 1e-13) << j;
        EXPECT_NEAR(got[j].sd, want.sd, 1e-12) << j;
      }
      // The store's own sexes (all unknown here): X and XY alike, nobody counted on Y.
      const auto unknown = column_summaries(s, sel);
      EXPECT_EQ(unknown[1].observed + unknown[1].missing, sel.rows.size());
      EXPECT_EQ(unknown[1].a1_freq, unknown[1].mean / 2);
      EXPECT_EQ(unknown[3].observed + unknown[3].missing, 0u);
      EXPECT_TRUE(std::isnan(unknown[3].a1_freq));
    }
    // Autosomes alone with every sample: no pass at all.
    selection autosomes = selection::all(s);
    autosomes.columns = {0, 2, 4, 7};
    bool passed = false;
    analysis_options options;
    options.progress = [&](const std::string&, const pass_progress&) { passed = true; };
    column_summaries(s, autosomes, sexes, options);
    EXPECT_FALSE(passed);
    EXPECT_THROW(column_summaries(s, autosomes, std::vector<sample_sex>(n - 1)), error);
  }
}

// A store written before chromosome codes were normalised holds PLINK 1's numbers: its X, Y, XY
// and MT columns follow the same ploidy rules as a new store's.
TEST(StatsTest, NumericSexChromosomeCodesOfOldStoresFollowTheSameRules) {
  const std::size_t n = 101;
  std::vector<sample_sex> sexes(n);
  for (std::size_t i = 0; i < n; ++i) sexes[i] = static_cast<sample_sex>((i * 5 + i / 7) % 3);
  test::temp_dir dir;
  write_store_on(dir / "new.cf", value_type::genotype, n, {"1", "X", "Y", "XY", "MT"});
  write_store_on(dir / "old.cf", value_type::genotype, n, {"1", "23", "24", "25", "26"});
  const store fresh = store::open(dir / "new.cf"), old = store::open(dir / "old.cf");
  const auto want = column_summaries(fresh, selection::all(fresh), sexes);
  const auto got = column_summaries(old, selection::all(old), sexes);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t j = 0; j < want.size(); ++j) {
    EXPECT_EQ(got[j].observed, want[j].observed) << j;
    EXPECT_EQ(got[j].missing, want[j].missing) << j;
    EXPECT_EQ(got[j].a1_freq, want[j].a1_freq) << j;
  }
  // Only males count on Y: the rules applied, not an autosome's.
  EXPECT_LT(want[2].observed + want[2].missing, n);
}

// The store of tests/data/old-store was written by the code of commit 77f7e1c, before sex
// chromosomes were supported: its columns.tsv keeps the .bim's PLINK 1 codes (23 for X, 24 Y,
// 25 XY, 26 MT). `colflow stats` gives the same figures on it as on a store made today from the
// same .bed, with and without --keep, and they are plink2's: males haploid on X, only males
// counted on Y, everyone haploid on MT. The store reads its codes as today's (23 as X), so the
// two tables are the same bytes, CHR column included, while its columns.tsv stays as written.
std::string file_bytes(const std::filesystem::path& f) {
  std::ifstream in(f, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(StatsTest, StoreOfCommit77f7e1cGivesTheStatsOfANewStoreOfItsBed) {
  const auto data = std::filesystem::path(COLFLOW_TEST_SOURCE_DIR) / "data" / "old-store";
  const std::string bfile = (data / "numeric_chromosomes").string(),
                    old_cf = (data / "numeric_chromosomes-77f7e1c.cf").string();
  test::temp_dir dir;
  const std::string new_cf = (dir / "new.cf").string();
  std::string out;
  ASSERT_EQ(test::run_cli("preprocess --quiet --bed " + bfile + " --out " + new_cf, out), 0) << out;
  const store old = store::open(old_cf), fresh = store::open(new_cf);
  ASSERT_EQ(old.num_columns(), 16u);
  ASSERT_EQ(fresh.num_columns(), 16u);
  EXPECT_EQ(old.version_minor(), 0);  // format 1.0, as that code wrote every store
  EXPECT_EQ(old.columns()[3].chrom, "X");
  EXPECT_EQ(fresh.columns()[3].chrom, "X");
  {
    std::ifstream on_disk(std::filesystem::path(old_cf) / "columns.tsv");
    std::string header, first, second, third, fourth;
    std::getline(on_disk, header);
    for (std::string* line : {&first, &second, &third, &fourth}) std::getline(on_disk, *line);
    EXPECT_EQ(fourth.substr(0, 3), "23\t");  // the bytes as commit 77f7e1c wrote them
  }
  {
    std::ofstream keep(dir / "keep.txt");
    for (std::size_t i = 1; i <= 50; ++i)
      if (i % 4 != 2) keep << "fam" << i << " s" << i << "\n";
  }
  const std::vector<sample_sex> sexes = sexes_of(old.samples());
  const std::size_t males =
      static_cast<std::size_t>(std::count(sexes.begin(), sexes.end(), sample_sex::male));
  ASSERT_EQ(males, 20u);
  // The GRM leaves X, Y and MT out (plink2's --make-rel) on the old store as on the new.
  for (const std::string& cf : {old_cf, new_cf}) {
    const std::string prefix = (dir / (cf == old_cf ? "old" : "new")).string();
    ASSERT_EQ(test::run_cli("grm " + cf + " --quiet --make-rel square --out " + prefix, out), 0)
        << out;
  }
  EXPECT_EQ(file_bytes(dir / "old.rel"), file_bytes(dir / "new.rel"));
  EXPECT_FALSE(file_bytes(dir / "new.rel").empty());
  for (const bool keep : {false, true}) {
    const std::string k = keep ? " --keep " + (dir / "keep.txt").string() : "",
                      tag = keep ? "k" : "a";
    const auto run_stats = [&](const std::string& cf, const std::string& name) {
      const auto table = dir / (name + "." + tag + ".tsv");
      EXPECT_EQ(
          test::run_cli("stats " + cf + " --quiet --digits 12 --out " + table.string() + k, out), 0)
          << out;
      return table;
    };
    const auto old_table = run_stats(old_cf, "old"), new_table = run_stats(new_cf, "new");
    EXPECT_EQ(file_bytes(old_table), file_bytes(new_table)) << tag;
    const test::text_table a = test::read_table(old_table), b = test::read_table(new_table);
    ASSERT_EQ(a.header, b.header);
    ASSERT_EQ(a.rows.size(), 16u);
    ASSERT_EQ(b.rows.size(), 16u);
    const std::size_t c_chr = a.column("CHR");
    for (std::size_t j = 0; j < a.rows.size(); ++j) {
      for (std::size_t c = 0; c < a.header.size(); ++c)
        EXPECT_EQ(a.rows[j][c], b.rows[j][c]) << tag << " " << j << " " << a.header[c];
    }

    // The rules applied: plink2's figures, which on X are not a diploid count's (A1_FREQ =
    // MEAN / 2), and on Y count the males alone.
    test::run_plink2("--bfile " + bfile + " --freq --missing --out " + (dir / tag).string() + k);
    const auto compared = expect_equal_to_plink2(old_table.string(), (dir / tag).string(), old,
                                                 "77f7e1c store " + tag);
    EXPECT_EQ(compared, (std::map<chromosome_kind, std::size_t>{{chromosome_kind::autosome, 3},
                                                                {chromosome_kind::x, 5},
                                                                {chromosome_kind::y, 3},
                                                                {chromosome_kind::xy, 2},
                                                                {chromosome_kind::mt, 3}}));
    const std::size_t c_obs = a.column("OBS_CT"), c_miss = a.column("MISSING_CT"),
                      c_freq = a.column("A1_FREQ"), c_mean = a.column("MEAN");
    for (std::size_t j = 0; j < a.rows.size(); ++j) {
      const auto& r = a.rows[j];
      const chromosome_kind kind = kind_of_chromosome(r[c_chr]);
      if (kind == chromosome_kind::x) {
        EXPECT_GT(std::abs(std::stod(r[c_freq]) - std::stod(r[c_mean]) / 2), 1e-6)
            << tag << " " << j;
      }
      if (kind == chromosome_kind::y) {
        std::size_t kept_males = 0;
        for (std::size_t i = 0; i < sexes.size(); ++i)
          kept_males += sexes[i] == sample_sex::male && (!keep || (i + 1) % 4 != 2);
        EXPECT_EQ(std::stoull(r[c_obs]) + std::stoull(r[c_miss]), kept_males) << tag << " " << j;
      }
    }
  }

  // The library's summaries too, bit for bit (NaN equal to NaN).
  const auto want = column_summaries(fresh, selection::all(fresh)),
             got = column_summaries(old, selection::all(old));
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t j = 0; j < want.size(); ++j) {
    EXPECT_EQ(got[j].observed, want[j].observed) << j;
    EXPECT_EQ(got[j].missing, want[j].missing) << j;
    for (const auto field : {&column_summary::a1_freq, &column_summary::mean, &column_summary::sd})
      EXPECT_EQ(std::bit_cast<std::uint64_t>(got[j].*field),
                std::bit_cast<std::uint64_t>(want[j].*field))
          << j;
  }
}

TEST(StatsTest, ProcessesSharingTheColumnsGiveOneProcesssSummariesOnSexChromosomes) {
  std::vector<std::string> chroms;
  for (std::size_t j = 0; j < 40; ++j) chroms.push_back(sex_test_chromosomes[j * 7 % 5]);
  const std::size_t n = 101;
  std::vector<sample_sex> sexes(n);
  for (std::size_t i = 0; i < n; ++i) sexes[i] = static_cast<sample_sex>(i % 3);
  test::temp_dir dir;
  write_store_on(dir / "s.cf", value_type::genotype, n, chroms);
  const store s = store::open(dir / "s.cf");
  selection subset = selection::all(s);
  subset.rows.clear();
  for (std::size_t i = 0; i < n; ++i) {
    subset.row_kept[i] = i % 4 != 1;
    if (subset.row_kept[i]) subset.rows.push_back(i);
  }
  for (const selection& sel : {selection::all(s), subset}) {
    const auto one = column_summaries(s, sel, sexes);
    for (const std::size_t size : {2u, 3u}) {
      std::vector<std::vector<column_summary>> got(size);
      test::on_processes(size, [&](std::size_t r, analysis_options& options) {
        got[r] = column_summaries(s, sel, sexes, options);
      });
      for (std::size_t r = 0; r < size; ++r) {
        ASSERT_EQ(got[r].size(), one.size());
        for (std::size_t j = 0; j < one.size(); ++j) {
          EXPECT_EQ(got[r][j].observed, one[j].observed) << size << " " << r << " " << j;
          EXPECT_EQ(got[r][j].missing, one[j].missing) << size << " " << r << " " << j;
          // Bit for bit (NaN equal to NaN).
          for (const auto field : {&column_summary::a1_freq, &column_summary::mean,
                                   &column_summary::sd, &column_summary::min, &column_summary::max})
            EXPECT_EQ(std::bit_cast<std::uint64_t>(got[r][j].*field),
                      std::bit_cast<std::uint64_t>(one[j].*field))
                << size << " " << r << " " << j;
        }
      }
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
