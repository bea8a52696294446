// GCTB's .ma summary statistics: reading, the refusal of every bad value by file and line, and
// the alignment to an LD reference's alleles.
#include "colflow/analysis/gwas_summary.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>

#include "colflow/error.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

const char* const header = "SNP A1 A2 freq b se p N\n";

// A .ma's text: the header, then `rows` (appended: GCC 12's -Warray-bounds misreads a chain of
// + on string temporaries in optimised builds).
std::string ma(std::initializer_list<std::string_view> rows) {
  std::string text = header;
  for (std::string_view r : rows) text.append(r);
  return text;
}

std::filesystem::path write_ma(const test::temp_dir& dir, const std::string& body) {
  const auto path = dir / "g.ma";
  std::ofstream(path) << body;
  return path;
}

// The message of the bad_input error reading `body` throws.
std::string refusal(const std::string& body) {
  test::temp_dir dir;
  const auto path = write_ma(dir, body);
  try {
    read_gwas_summary(path);
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::bad_input) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error for:\n" << body;
  return {};
}

std::vector<ld_variant> reference() {
  return {{"rs1", "1", 100, "A", "G"},
          {"rs2", "1", 200, "C", "T"},
          {"rs3", "1", 300, "A", "C"},
          {"rs4", "1", 400, "G", "T"}};
}

TEST(GwasSummaryTest, ReadsColumnsByNameInAnyOrder) {
  test::temp_dir dir;
  const auto path = write_ma(dir,
                             "SNP A1 A2 freq b se p N extra\n"
                             "rs1 A G 0.2 0.5 0.1 1e-6 1000 x\n"
                             "\n"
                             "rs2\tt\tc\t0.75\t-0.25\t0.05\t0.3\t+998.5 y\n");
  const gwas_summary g = read_gwas_summary(path);
  ASSERT_EQ(g.entries.size(), 2u);
  EXPECT_EQ(g.entries[1].id, "rs2");
  EXPECT_EQ(g.entries[1].a1, "t");
  EXPECT_DOUBLE_EQ(g.entries[1].freq, 0.75);
  EXPECT_DOUBLE_EQ(g.entries[1].b, -0.25);
  EXPECT_DOUBLE_EQ(g.entries[1].n, 998.5);
  EXPECT_EQ(g.entries[1].line, 4u);

  const auto reordered = write_ma(dir, "n se B P FREQ a2 a1 snp\n10 0.1 0.2 0.5 0.3 G A rs1\n");
  const gwas_summary r = read_gwas_summary(reordered);
  ASSERT_EQ(r.entries.size(), 1u);
  EXPECT_EQ(r.entries[0].a1, "A");
  EXPECT_DOUBLE_EQ(r.entries[0].freq, 0.3);
  EXPECT_DOUBLE_EQ(r.entries[0].n, 10);
}

TEST(GwasSummaryTest, RefusesMissingColumns) {
  const std::string m = refusal("SNP A1 A2 freq b p N\nrs1 A G 0.2 0.5 0.1 10\n");
  EXPECT_NE(m.find("g.ma:1:"), std::string::npos) << m;
  EXPECT_NE(m.find("no column 'se'"), std::string::npos) << m;
  EXPECT_NE(refusal("SNP A1 A2 freq b se se p N\n").find("twice"), std::string::npos);
  EXPECT_NE(refusal("").find("empty"), std::string::npos);
}

TEST(GwasSummaryTest, RefusesLinesOfAnotherLengthAndNonNumbers) {
  EXPECT_NE(refusal(ma({"rs1 A G 0.2 0.5 0.1 0.3\n"})).find("g.ma:2: 7 fields"), std::string::npos);
  EXPECT_NE(refusal(ma({"rs1 A G 0.2 0.5 0.1 0.3 10 0.9\n"})).find("g.ma:2: 9 fields"),
            std::string::npos);
  const std::string m =
      refusal(ma({"rs1 A G 0.2 0.5 0.1 0.3 10\n", "rs2 A G 0.2 big 0.1 0.3 10\n"}));
  EXPECT_NE(m.find("g.ma:3: column b: 'big' is not a number"), std::string::npos) << m;
  EXPECT_NE(refusal(ma({"rs1 A G NA 0.5 0.1 0.3 10\n"})).find("column freq"), std::string::npos);
}

TEST(GwasSummaryTest, RefusesValuesOutOfRange) {
  // Appended piece by piece: GCC 12's -Warray-bounds misreads a chain of + on temporaries.
  const auto line = [](const std::string& values) {
    std::string text = header;
    text.append("rs1 A G ").append(values).append("\n");
    return refusal(text);
  };
  EXPECT_NE(line("1.5 0.5 0.1 0.3 10").find("column freq"), std::string::npos);
  EXPECT_NE(line("-0.1 0.5 0.1 0.3 10").find("column freq"), std::string::npos);
  EXPECT_NE(line("0.5 inf 0.1 0.3 10").find("column b"), std::string::npos);
  EXPECT_NE(line("0.5 0.5 0 0.3 10").find("column se"), std::string::npos);
  EXPECT_NE(line("0.5 0.5 -0.1 0.3 10").find("column se"), std::string::npos);
  EXPECT_NE(line("0.5 0.5 0.1 1.2 10").find("column p"), std::string::npos);
  EXPECT_NE(line("0.5 0.5 0.1 0.3 0").find("column N"), std::string::npos);
  EXPECT_NE(line("0.5 0.5 0.1 0.3 -5").find("g.ma:2: column N"), std::string::npos);
}

TEST(GwasSummaryTest, RefusesDuplicateSnps) {
  const std::string m = refusal(ma({"rs1 A G 0.2 0.5 0.1 0.3 10\n", "rs2 A G 0.2 0.5 0.1 0.3 10\n",
                                    "rs1 A G 0.2 0.5 0.1 0.3 10\n"}));
  EXPECT_NE(m.find("g.ma:4: SNP 'rs1' is listed twice (first on line 2)"), std::string::npos) << m;
}

TEST(GwasSummaryTest, AlignsFlipsAndDropsAsGctb) {
  test::temp_dir dir;
  const auto path = write_ma(dir, ma({"rs3 c a 0.3 0.2 0.1 0.3 900\n"   // swapped: flipped
                                      "rs1 A G 0.2 0.5 0.1 0.3 1000\n"  // kept
                                      "rs2 G A 0.2 0.5 0.1 0.3 1000\n"  // other alleles
                                      "rs9 A G 0.2 0.5 0.1 0.3 1000\n"  // absent
                                      "rs4 T G 0.6 -0.4 0.1 0.3 1100\n"}));
  const aligned_gwas a = align_gwas(read_gwas_summary(path), reference(), "ref");
  EXPECT_EQ(a.gwas_variants, 5u);
  EXPECT_EQ(a.matched, 3u);
  EXPECT_EQ(a.flipped, 2u);
  EXPECT_EQ(a.allele_mismatch, 1u);
  EXPECT_EQ(a.absent, 1u);
  EXPECT_EQ(a.reference_only, 1u);
  ASSERT_EQ(a.variant, (std::vector<std::size_t>{0, 2, 3}));  // the reference's order
  EXPECT_DOUBLE_EQ(a.b[0], 0.5);
  EXPECT_DOUBLE_EQ(a.freq[0], 0.2);
  EXPECT_DOUBLE_EQ(a.b[1], -0.2);
  EXPECT_DOUBLE_EQ(a.freq[1], 0.7);
  EXPECT_DOUBLE_EQ(a.b[2], 0.4);
  EXPECT_DOUBLE_EQ(a.freq[2], 0.4);
  EXPECT_EQ(a.line, (std::vector<std::size_t>{3, 2, 6}));
  EXPECT_DOUBLE_EQ(a.n_min, 900);
  EXPECT_DOUBLE_EQ(a.n_median, 1000);
  EXPECT_DOUBLE_EQ(a.n_max, 1100);
}

TEST(GwasSummaryTest, RefusesNoVariantInCommon) {
  test::temp_dir dir;
  std::string text = header;
  text.append("rs9 A G 0.2 0.5 0.1 0.3 10\n").append("rs1 C T 0.2 0.5 0.1 0.3 10\n");
  const auto path = write_ma(dir, text);
  try {
    align_gwas(read_gwas_summary(path), reference(), "ref.ldm");
    FAIL() << "no error";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::bad_input);
    const std::string m = e.what();
    EXPECT_NE(m.find("g.ma: no variant in common with the LD reference ref.ldm"), std::string::npos)
        << m;
    EXPECT_NE(m.find("1 SNPs absent from it, 1 with other alleles"), std::string::npos) << m;
  }
}

TEST(GwasSummaryTest, RefusesAReferenceListingAnIdTwice) {
  test::temp_dir dir;
  const auto path = write_ma(dir, ma({"rs1 A G 0.2 0.5 0.1 0.3 10\n"}));
  auto ref = reference();
  ref[2].id = "rs1";
  EXPECT_THROW(align_gwas(read_gwas_summary(path), ref, "ref"), error);
}

}  // namespace
}  // namespace colflow
