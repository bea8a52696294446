// Case/control traits: which phenotypes are taken as case/control (PLINK's 1/2 codes with 0
// missing, or 0/1), how they are coded, and the assoc command's trait options (--binary,
// --quantitative, --1, --beta, --firth) with the errors of their bad uses.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "colflow/colflow.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

TEST(LogisticAssocTest, CaseControlDetectionFollowsPlinkCodes) {
  phenotype_table t;
  t.names = {"ONE_TWO", "WITH_ZERO", "ZERO_ONE", "OTHER", "ZEROS", "EMPTY"};
  t.values.resize(4, 6);
  t.values << 1, 0, 0, 1, 0, NAN,  //
      2, 2, 1, 2, 0, NAN,          //
      NAN, 1, 0, 3, NAN, NAN,      //
      1, 0, 1, 2, 0, NAN;
  const std::vector<std::uint8_t> rows(4, 1);
  const auto one_two = [&](std::size_t c) { return is_case_control(t, c, rows); };
  const auto zero_one = [&](std::size_t c) {
    return is_case_control(t, c, rows, case_control_codes::zero_one);
  };
  EXPECT_TRUE(one_two(0));
  EXPECT_TRUE(one_two(1));   // 0 is missing
  EXPECT_TRUE(one_two(2));   // 1 (control) and 0 (missing)
  EXPECT_FALSE(one_two(3));  // a 3
  EXPECT_FALSE(one_two(4));  // nothing but missing
  EXPECT_FALSE(one_two(5));
  EXPECT_FALSE(zero_one(0));  // a 2
  EXPECT_TRUE(zero_one(2));
  EXPECT_TRUE(zero_one(4));  // all controls: a trait, refused later for want of a case
  // Rows not selected do not count.
  const std::vector<std::uint8_t> first_two = {1, 1, 0, 0};
  EXPECT_TRUE(is_case_control(t, 3, first_two));

  phenotype_table coded = select_phenotypes(t, std::vector<std::size_t>{1, 0});
  ASSERT_EQ(coded.names, (std::vector<std::string>{"WITH_ZERO", "ONE_TWO"}));
  code_case_control(coded);
  EXPECT_TRUE(std::isnan(coded.values(0, 0)));  // 0: missing
  EXPECT_EQ(coded.values(1, 0), 1.0);
  EXPECT_EQ(coded.values(2, 0), 0.0);
  EXPECT_EQ(coded.values(0, 1), 0.0);
  phenotype_table other = select_phenotypes(t, std::vector<std::size_t>{3});
  try {
    code_case_control(other);
    ADD_FAILURE() << "a 3 was coded";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("OTHER is taken as case/control but has the value 3"),
              std::string::npos)
        << e.what();
  }
}

TEST(LogisticAssocTest, CommandDetectsTraitsAndHonoursBinaryQuantitativeAndZeroOneCoding) {
  test::temp_dir dir;
  const std::uint64_t n = 200;
  test::write_genotype_store(dir / "g.cf", n, 12, column_encoding{codec_id::zstd, 1});
  const std::string st = (dir / "g.cf").string(), d = dir.path().string() + "/";
  {
    std::mt19937_64 rng(2);
    std::ofstream a(d + "ph.txt"), b(d + "ph01.txt");
    a << "#IID CC Q\n";
    b << "#IID CC Q\n";
    for (std::uint64_t i = 0; i < n; ++i) {
      const int cc = static_cast<int>(rng() % 3);  // 0 missing, 1 control, 2 case
      const std::string q = std::to_string(static_cast<int>(rng() % 3));  // 0, 1, 2: 0 included
      const std::string id = "S" + std::to_string(i + 1);
      a << id << " " << cc << " " << q << "\n";
      b << id << " " << (cc == 0 ? "NA" : std::to_string(cc - 1)) << " " << q << "\n";
    }
  }
  std::string out;
  const auto run = [&](const std::string& args) {
    return test::run_cli("assoc " + st + " --quiet --digits 12 " + args, out);
  };
  // CC is case/control; Q has 0s, which are missing in a case/control trait: it is taken as
  // case/control too, as PLINK takes it, unless named --quantitative.
  ASSERT_EQ(run("--pheno " + d + "ph.txt --out " + d + "a"), 0) << out;
  EXPECT_TRUE(std::filesystem::exists(d + "a.CC.logistic.tsv"));
  EXPECT_TRUE(std::filesystem::exists(d + "a.Q.logistic.tsv"));
  ASSERT_EQ(run("--pheno " + d + "ph.txt --quantitative Q --out " + d + "b"), 0) << out;
  EXPECT_TRUE(std::filesystem::exists(d + "b.CC.logistic.tsv"));
  EXPECT_TRUE(std::filesystem::exists(d + "b.Q.assoc.tsv"));
  EXPECT_FALSE(std::filesystem::exists(d + "b.Q.logistic.tsv"));
  ASSERT_EQ(run("--pheno " + d + "ph.txt --quantitative --out " + d + "c"), 0) << out;
  EXPECT_TRUE(std::filesystem::exists(d + "c.CC.assoc.tsv"));
  // The 0/1 file with --1 gives the same tests as the 1/2 file.
  ASSERT_EQ(run("--pheno " + d + "ph01.txt --1 --pheno-name CC --out " + d + "z"), 0) << out;
  EXPECT_EQ(test::read_file(d + "z.CC.logistic.tsv"), test::read_file(d + "a.CC.logistic.tsv"));
  // --beta: the log odds ratio.
  ASSERT_EQ(run("--pheno " + d + "ph.txt --pheno-name CC --beta --firth always --out " + d + "e"),
            0)
      << out;
  const test::text_table e = test::read_table(d + "e.CC.logistic.tsv");
  EXPECT_NO_THROW(e.column("BETA"));
  for (const auto& r : e.rows)
    if (r[e.column("NOTE")] == ".") {
      EXPECT_EQ(r[e.column("FIRTH?")], "Y");
    }
  // Bad uses, with the reason.
  EXPECT_EQ(run("--pheno " + d + "ph.txt --binary NOPE --out " + d + "x"), 1);
  EXPECT_NE(out.find("--binary NOPE: no such phenotype"), std::string::npos) << out;
  EXPECT_EQ(run("--pheno " + d + "ph.txt --binary Q --quantitative Q --out " + d + "x"), 1);
  EXPECT_NE(out.find("named by both"), std::string::npos) << out;
  EXPECT_EQ(run("--pheno " + d + "ph01.txt --binary Q --1 --out " + d + "x"), 1);
  EXPECT_NE(out.find("Q is taken as case/control but has the value 2"), std::string::npos) << out;
  EXPECT_NE(run("--pheno " + d + "ph.txt --firth sometimes --out " + d + "x"), 0);
  EXPECT_NE(out.find("--firth: sometimes not in {fallback,always,never}"), std::string::npos)
      << out;
  EXPECT_FALSE(std::filesystem::exists(d + "x.CC.logistic.tsv"));
}

}  // namespace
}  // namespace colflow
