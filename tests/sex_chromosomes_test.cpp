// Chromosome kinds, the sexes of a store's samples, and sex files in the forms plink2
// --update-sex reads, with their errors. (How stats counts with them: stats_test.)
#include <gtest/gtest.h>

#include "colflow/colflow.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

void write_text(const std::filesystem::path& p, const std::string& text) {
  test::write_file(p, std::vector<char>(text.begin(), text.end()));
}

// Seven samples; IID b is in two families, so only its FID and IID name one of them.
std::vector<sample_info> seven_samples() {
  return {{"F1", "a", "0", "0", "1", "-9"},  {"F1", "b", "0", "0", "2", "-9"},
          {"F2", "b", "0", "0", "0", "-9"},  {"F2", "c", "0", "0", "M", "-9"},
          {"F3", "d", "0", "0", "-9", "-9"}, {"F3", "e", "0", "0", "f", "-9"},
          {"F3", "g", "0", "0", "NA", "-9"}};
}

constexpr sample_sex male = sample_sex::male, female = sample_sex::female,
                     unknown = sample_sex::unknown;

TEST(SexChromosomesTest, EveryCodeOfXYXYAndMTIsASexChromosome) {
  // PLINK 1's numbers (a store written before codes were normalised), prefixes, any case.
  for (const char* code : {"X", "23", "chrX", "x", "CHR23"})
    EXPECT_EQ(kind_of_chromosome(code), chromosome_kind::x) << code;
  for (const char* code : {"Y", "24", "chrY"})
    EXPECT_EQ(kind_of_chromosome(code), chromosome_kind::y) << code;
  for (const char* code : {"XY", "25", "xy"})
    EXPECT_EQ(kind_of_chromosome(code), chromosome_kind::xy) << code;
  for (const char* code : {"MT", "26", "M", "chrM"})
    EXPECT_EQ(kind_of_chromosome(code), chromosome_kind::mt) << code;
  for (const char* code : {"1", "22", "01", "PAR1", "Chr01K", "chrUn_gl000220", "100", ""})
    EXPECT_EQ(kind_of_chromosome(code), chromosome_kind::autosome) << code;
}

TEST(SexChromosomesTest, StoreSexesAreReadAsPlink2ReadsAFam) {
  // 1 and M/m male, 2 and F/f female, anything else (0, -9, NA, 3, "Male") unknown.
  EXPECT_EQ(sexes_of(seven_samples()),
            (std::vector<sample_sex>{male, female, unknown, male, unknown, female, unknown}));
  std::vector<sample_info> more = seven_samples();
  const char* const codes[] = {"m", "F", "3", "Male", "01", "", "2"};
  for (std::size_t i = 0; i < more.size(); ++i) more[i].sex = codes[i];
  EXPECT_EQ(sexes_of(more),
            (std::vector<sample_sex>{male, female, unknown, unknown, unknown, unknown, female}));
}

TEST(SexChromosomesTest, SexCodesAreReadByTheirFirstCharacterAsPlink2UpdateSex) {
  for (const char* code : {"1", "M", "m", "Male", "1.0", "12"})
    EXPECT_EQ(sex_of_code(code), male) << code;
  for (const char* code : {"2", "F", "f", "female", "2.0"})
    EXPECT_EQ(sex_of_code(code), female) << code;
  for (const char* code : {"0", "NA", "N", "U", "unknown", "0.0"})
    EXPECT_EQ(sex_of_code(code), unknown) << code;
  for (const char* code : {"", "-9", "3", "x", " 1", "nan"})
    EXPECT_EQ(sex_of_code(code), std::nullopt) << code;
}

TEST(SexFileTest, EveryFormGivesTheSameSexes) {
  test::temp_dir dir;
  const auto samples = seven_samples();
  const auto current = sexes_of(samples);
  // a becomes female, c unknown, d male and g female; the others keep their sex. Only the first
  // character of a sex counts (Female, NA, Male), as in plink2.
  std::vector<sample_sex> want = current;
  want[0] = female;
  want[3] = unknown;
  want[4] = male;
  want[6] = female;
  const std::string forms[] = {
      "#FID IID SEX\nF1 a 2\nF2 c 0\nF3 d M\nF3 g F\n",
      "#IID SEX\na f\nc U\nd 1\ng female\n",
      "F1 a Female\nF2 c NA\r\nF3\td\tMale\n\nF3 g 2\n",
      // A .psam: the first column named SEX, in any case, after the IDs; a sample the store does
      // not have is ignored.
      "#FID IID PAT MAT Sex PHENO1\nF1 a 0 0 2 1.5\nF9 zz 0 0 1 2\nF2 c 0 0 u NA\n"
      "F3 d 0 0 m -9\nF3 g 0 0 F 2\n",
      "#IID SEX PHENO1\na 2 1\nc N 1\nd 1 1\ng 2 1\n",
  };
  for (const std::string& text : forms) {
    write_text(dir / "sex.txt", text);
    EXPECT_EQ(read_sex_file(dir / "sex.txt", samples, current), want) << text;
  }
  // Samples the file leaves out keep what `current` says, whatever it says.
  const std::vector<sample_sex> all_unknown(samples.size(), unknown);
  write_text(dir / "sex.txt", "#FID IID SEX\nF2 b 1\n");
  EXPECT_EQ(read_sex_file(dir / "sex.txt", samples, all_unknown),
            (std::vector<sample_sex>{unknown, unknown, male, unknown, unknown, unknown, unknown}));
  // A header alone changes nothing.
  write_text(dir / "sex.txt", "#IID SEX\n");
  EXPECT_EQ(read_sex_file(dir / "sex.txt", samples, current), current);
}

TEST(SexFileTest, MalformedFilesGiveErrorsWithFileAndLine) {
  test::temp_dir dir;
  const auto samples = seven_samples();
  const auto expect_error = [&](const std::string& text, errc code, const std::string& part) {
    write_text(dir / "bad.txt", text);
    try {
      read_sex_file(dir / "bad.txt", samples, sexes_of(samples));
      ADD_FAILURE() << "no error for:\n" << text;
    } catch (const error& e) {
      EXPECT_EQ(e.code(), make_error_code(code)) << e.message();
      EXPECT_NE(e.message().find("bad.txt"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find(part), std::string::npos) << e.message();
    }
  };
  expect_error("F1 a 1\nF2 c\n", errc::bad_input, ":2: expected 3 fields, found 2");
  expect_error("#FID IID SEX\nF1 a 1 1\n", errc::bad_input, ":2: expected 3 fields, found 4");
  expect_error("F1 a\n", errc::bad_input, ":1: expected FID, IID and SEX, found 2 field(s)");
  expect_error("F1 a -9\n", errc::bad_input, ":1: '-9' is not a sex code");
  expect_error("#FID IID SEX\nF1 a 1\nF2 c 3\n", errc::bad_input, ":3: '3' is not a sex code");
  // Checked for samples the store does not have too: a typo is a typo.
  expect_error("#IID SEX\nzz x\n", errc::bad_input, ":2: 'x' is not a sex code");
  expect_error("#FID IID SEX\nF1 a 1\nF3 d 2\nF1 a 2\n", errc::bad_input,
               ":4: sample F1 a is listed again (first on line 2)");
  expect_error("#IID SEX\nzz 1\nzz 2\n", errc::bad_input, ":3: sample zz is listed again");
  expect_error("#IID SEX\nb 1\n", errc::bad_input,
               ":2: IID b is ambiguous: the store has it in families F1, F2");
  expect_error("#FID IID PHENO1\nF1 a 1\n", errc::bad_input, ":1: the header names no SEX column");
  expect_error("#FID SEX\nF1 1\n", errc::bad_input,
               ":1: a header starting with #FID must name IID second");
  expect_error("#SEX IID\n1 a\n", errc::bad_input, ":1: a header line starts with #FID or #IID");
  expect_error("", errc::bad_input, "the file is empty");
  try {
    read_sex_file(dir / "absent.txt", samples, sexes_of(samples));
    ADD_FAILURE() << "no error for a missing file";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::not_found)) << e.message();
    EXPECT_NE(e.message().find("absent.txt"), std::string::npos) << e.message();
  }
  write_text(dir / "sex.txt", "F1 a 1\n");
  EXPECT_THROW(read_sex_file(dir / "sex.txt", samples, {}), error);
}

}  // namespace
}  // namespace colflow
