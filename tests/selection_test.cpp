// Run-time subsets of samples and columns (--keep/--remove/--extract/--exclude).
#include <gtest/gtest.h>
#include <unistd.h>

#include <charconv>
#include <cstring>
#include <random>

#include "colflow/colflow.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

void write_text(const std::filesystem::path& p, const std::string& text) {
  test::write_file(p, std::vector<char>(text.begin(), text.end()));
}

// A pipe holding `text`, named as a shell's `<(cmd)` names one (/dev/fd/N); closed with it.
class piped_text {
 public:
  explicit piped_text(const std::string& text) {
    int ends[2];
    if (::pipe(ends) != 0) throw std::runtime_error("pipe");
    read_end_ = ends[0];
    EXPECT_EQ(::write(ends[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
    ::close(ends[1]);
  }
  ~piped_text() { ::close(read_end_); }
  piped_text(const piped_text&) = delete;
  piped_text& operator=(const piped_text&) = delete;
  std::filesystem::path path() const { return "/dev/fd/" + std::to_string(read_end_); }

 private:
  int read_end_ = -1;
};

class SelectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_genotype_store(dir / "s.cf", 10, 8, column_encoding{codec_id::none, 0});
  }
  test::temp_dir dir;
};

TEST_F(SelectionTest, AllSelectsEverything) {
  const store s = store::open(dir / "s.cf");
  const selection sel = selection::all(s);
  EXPECT_TRUE(sel.all_rows());
  EXPECT_EQ(sel.rows.size(), 10u);
  EXPECT_EQ(sel.columns.size(), 8u);
  const selection same = select(s, {});
  EXPECT_EQ(same.rows, sel.rows);
  EXPECT_EQ(same.columns, sel.columns);
}

TEST_F(SelectionTest, KeepThenRemoveWithPlinkSemantics) {
  const store s = store::open(dir / "s.cf");
  // FID IID pairs, a .fam-like line with extra fields, an IID-only line, a header, an ID the
  // store does not have.
  write_text(dir / "keep.txt", "#FID IID\nS2 S2\nS3 S3 0 0 1 -9\nS5\nS9 S9\nX1 X1\n\n");
  write_text(dir / "remove.txt", "S3 S3\nS4 S4\n");
  selection_files f;
  f.keep = dir / "keep.txt";
  f.remove = dir / "remove.txt";
  const selection sel = select(s, f);
  EXPECT_EQ(sel.rows, (std::vector<std::size_t>{1, 4, 8}));
  EXPECT_FALSE(sel.all_rows());
  EXPECT_EQ(sel.row_kept[1], 1);
  EXPECT_EQ(sel.row_kept[2], 0);
  EXPECT_EQ(sel.ids_not_found, 1u);
  EXPECT_EQ(sel.columns.size(), 8u);
}

TEST_F(SelectionTest, ExtractThenExclude) {
  const store s = store::open(dir / "s.cf");
  write_text(dir / "extract.txt", "rs1\nrs2 extra fields\nrs5\nrs99\n");
  write_text(dir / "exclude.txt", "rs2\n");
  selection_files f;
  f.extract = dir / "extract.txt";
  f.exclude = dir / "exclude.txt";
  const selection sel = select(s, f);
  EXPECT_EQ(sel.columns, (std::vector<std::size_t>{1, 5}));
  EXPECT_EQ(sel.ids_not_found, 1u);
  EXPECT_TRUE(sel.all_rows());
}

// Lists and phenotypes given as `<(cmd)`: a pipe has no size and cannot be mapped, and is read
// to its end (it was read as an empty file).
TEST_F(SelectionTest, ListsAndPhenotypesFromAPipeAreRead) {
  const store s = store::open(dir / "s.cf");
  const piped_text extract("rs1\nrs5\n");
  selection_files f;
  f.extract = extract.path();
  EXPECT_EQ(select(s, f).columns, (std::vector<std::size_t>{1, 5}));
  const piped_text phenotypes("#FID IID y\nS2 S2 1.5\n");
  const phenotype_table p = read_phenotypes(phenotypes.path(), test::numbered_samples(3));
  EXPECT_EQ(p.values(1, 0), 1.5);
  EXPECT_EQ(p.matched_samples, 1u);
}

TEST_F(SelectionTest, ErrorsNameTheFileOrTheProblem) {
  const store s = store::open(dir / "s.cf");
  selection_files f;
  f.keep = dir / "absent.txt";
  try {
    select(s, f);
    FAIL() << "a missing list must throw";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::not_found));
    EXPECT_NE(e.message().find("absent.txt"), std::string::npos) << e.message();
  }
  write_text(dir / "none.txt", "nobody here\n");
  f.keep = dir / "none.txt";
  try {
    select(s, f);
    FAIL() << "an empty selection must throw";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
    EXPECT_NE(e.message().find("no sample"), std::string::npos) << e.message();
  }
  f = {};
  f.exclude = dir / "all.txt";
  write_text(dir / "all.txt", "rs0\nrs1\nrs2\nrs3\nrs4\nrs5\nrs6\nrs7\n");
  EXPECT_THROW(select(s, f), error);
}

TEST(PhenotypeTest, HeaderMissingValuesAndNames) {
  test::temp_dir dir;
  const auto samples = test::numbered_samples(4);
  write_text(dir / "p.txt",
             "#FID IID height bmi\nS1 S1 1.5 NA\nS3 S3 -9 22\r\nS4 S4 2e1 -1.25\nZ Z 3 3\n");
  const phenotype_table all = read_phenotypes(dir / "p.txt", samples);
  ASSERT_EQ(all.names, (std::vector<std::string>{"height", "bmi"}));
  EXPECT_EQ(all.file_samples, 4u);
  EXPECT_EQ(all.matched_samples, 3u);
  EXPECT_EQ(all.values(0, 0), 1.5);
  EXPECT_TRUE(std::isnan(all.values(0, 1)));
  EXPECT_TRUE(std::isnan(all.values(1, 0)));  // S2 is not in the file
  EXPECT_TRUE(std::isnan(all.values(2, 0)));  // -9
  EXPECT_EQ(all.values(2, 1), 22.0);
  EXPECT_EQ(all.values(3, 0), 20.0);
  EXPECT_EQ(all.values(3, 1), -1.25);

  const std::vector<std::string> names{"bmi"};
  const phenotype_table one = read_phenotypes(dir / "p.txt", samples, names);
  ASSERT_EQ(one.values.cols(), 1);
  EXPECT_EQ(one.values(2, 0), 22.0);

  write_text(dir / "q.txt", "S1 S1 1 2 3\nS2 S2 4 5 6\n");
  const phenotype_table plain = read_phenotypes(dir / "q.txt", samples, {}, "COVAR");
  EXPECT_EQ(plain.names, (std::vector<std::string>{"COVAR1", "COVAR2", "COVAR3"}));
  EXPECT_EQ(plain.values(1, 2), 6.0);
}

// Plain decimals take a fast path of their own; every value must still be the double
// std::from_chars reads, bit for bit: up to 15 and past 15 digits, the point anywhere, signs,
// negative zero, leading zeros, and the forms only from_chars reads (exponents).
TEST(PhenotypeTest, DecimalsReadToTheSameBitsAsFromChars) {
  test::temp_dir dir;
  constexpr std::size_t n = 4000;
  const auto samples = test::numbered_samples(n);
  std::mt19937_64 rng(11);
  std::vector<std::string> text(n);
  const char* fixed[] = {"0",
                         "-0",
                         "+7",
                         "0.1",
                         "-0.3",
                         "5.",
                         ".5",
                         "-.25",
                         "00012.50",
                         "1e-3",
                         "2.5E+2",
                         "123456789012345",
                         "1234567890123456",
                         "0.000000000000001",
                         "9007199254740993",
                         "-98765.4321098765"};
  for (std::size_t i = 0; i < n; ++i) {
    if (i < std::size(fixed)) {
      text[i] = fixed[i];
      continue;
    }
    std::string digits = std::to_string(rng() % 1000000000000000ULL);  // 1 to 15 digits
    digits.resize(1 + rng() % digits.size());
    const std::size_t point = rng() % (digits.size() + 1);
    text[i] = (rng() % 2 ? "-" : "") + digits.substr(0, point) + "." + digits.substr(point);
    if (text[i].back() == '.' && rng() % 2) text[i].pop_back();
  }
  // Runs of spaces and tabs of every length around fields of every length, so that field ends
  // fall at every place in the tokenizer's eight-byte steps.
  const auto blanks = [&](std::size_t least) {
    std::string b(least + rng() % 3, ' ');
    for (char& c : b) c = rng() % 2 ? '\t' : ' ';
    return b;
  };
  std::string file = "#FID IID v\n";
  for (std::size_t i = 0; i < n; ++i)
    file += blanks(0) + "S" + std::to_string(i + 1) + blanks(1) + "S" + std::to_string(i + 1) +
            blanks(1) + text[i] + blanks(0) + "\n";
  write_text(dir / "p.txt", file);
  const phenotype_table t = read_phenotypes(dir / "p.txt", samples);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& v = text[i];
    if (v == "-9" || v == "-9.0") {  // PLINK's missing value
      EXPECT_TRUE(std::isnan(t.values(static_cast<Eigen::Index>(i), 0)));
      continue;
    }
    double expected = 0;
    const char* first = v.data() + (v[0] == '+' ? 1 : 0);
    ASSERT_EQ(std::from_chars(first, v.data() + v.size(), expected).ec, std::errc{}) << v;
    const double got = t.values(static_cast<Eigen::Index>(i), 0);
    std::uint64_t a = 0, b = 0;
    std::memcpy(&a, &expected, sizeof a);
    std::memcpy(&b, &got, sizeof b);
    EXPECT_EQ(a, b) << "'" << v << "' read as " << got << ", from_chars gives " << expected;
  }
}

// Every form PLINK 2 reads gives the same table: FID and IID headers, IID-only headers
// (matched on IID alone), .psam sample columns skipped, no header, a .fam's sixth field.
TEST(PhenotypeTest, EveryPlinkFormGivesTheSameValues) {
  test::temp_dir dir;
  // Families differ from IIDs, as in real .fam files.
  std::vector<sample_info> samples(4);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    samples[i].fid = "F" + std::to_string(i % 2);
    samples[i].iid = "I" + std::to_string(i);
  }
  const std::vector<std::pair<std::string, std::string>> forms = {
      {"fid.txt", "#FID IID Q\nF0 I0 1.5\nF1 I1 NA\nF0 I2 -0.25\nF9 I9 7\n"},
      {"fid2.txt", "FID\tIID\tQ\nF0\tI0\t1.5\nF1\tI1\tNA\nF0\tI2\t-0.25\nF9\tI9\t7\n"},
      {"iid.txt", "#IID Q\nI0 1.5\nI1 NA\nI2 -0.25\nI9 7\n"},
      {"iid2.txt", "IID Q\nI2 -0.25\nI0 1.5\nI1 .\n"},
      {"x.psam", "#IID SEX Q\nI0 1 1.5\nI1 2 NA\nI2 NA -0.25\n"},
      {"y.psam", "#FID IID SID PAT MAT SEX Q\nF0 I0 s 0 0 1 1.5\nF0 I2 s 0 0 2 -0.25\n"},
      {"none.txt", "F0 I0 1.5\nF1 I1 -9\nF0 I2 -0.25\n"},
      {"z.fam", "F0 I0 0 0 1 1.5\nF1 I1 0 0 2 -9\nF0 I2 0 0 1 -0.25\nF1 I3 0 0 1 NA\n"},
  };
  for (const auto& [name, text] : forms) {
    SCOPED_TRACE(name);
    write_text(dir / name, text);
    const phenotype_table t = read_phenotypes(dir / name, samples);
    ASSERT_EQ(t.values.cols(), 1);
    EXPECT_EQ(t.names[0], name == "none.txt" || name == "z.fam" ? "PHENO1" : "Q");
    EXPECT_EQ(t.values(0, 0), 1.5);
    EXPECT_TRUE(std::isnan(t.values(1, 0)));
    EXPECT_EQ(t.values(2, 0), -0.25);
    EXPECT_TRUE(std::isnan(t.values(3, 0)));  // I3 has no value in any form
  }
  // With FIDs, a sample is its FID and IID together: F1 I0 is nobody here.
  write_text(dir / "other_family.txt", "#FID IID Q\nF1 I0 3\n");
  EXPECT_EQ(read_phenotypes(dir / "other_family.txt", samples).matched_samples, 0u);
}

TEST(PhenotypeTest, AnIidSharedByTwoFamiliesCannotBeMatchedAlone) {
  test::temp_dir dir;
  std::vector<sample_info> samples(3);
  const char* ids[3][2] = {{"A", "kid"}, {"B", "kid"}, {"B", "mum"}};
  for (std::size_t i = 0; i < 3; ++i) {
    samples[i].fid = ids[i][0];
    samples[i].iid = ids[i][1];
  }
  write_text(dir / "p.txt", "#IID y\nmum 1\nkid 2\n");
  try {
    read_phenotypes(dir / "p.txt", samples);
    ADD_FAILURE() << "an ambiguous IID was matched";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::bad_input));
    for (const char* part : {"p.txt:3:", "IID kid is ambiguous", "families A, B", "#FID IID"})
      EXPECT_NE(e.message().find(part), std::string::npos) << part << " in " << e.message();
  }
  // With FIDs the same samples are told apart.
  write_text(dir / "q.txt", "#FID IID y\nB mum 1\nA kid 2\nB kid 3\n");
  const phenotype_table t = read_phenotypes(dir / "q.txt", samples);
  EXPECT_EQ(t.values(0, 0), 2.0);
  EXPECT_EQ(t.values(1, 0), 3.0);
  EXPECT_EQ(t.values(2, 0), 1.0);
}

// Samples are found through a hash table of the store's samples: any order, repeated keys in
// the store (the first row wins), an IID in many families, and a store large enough to make
// the table probe.
TEST(PhenotypeTest, SamplesAreFoundInAnyOrderWhateverKeysTheStoreRepeats) {
  test::temp_dir dir;
  constexpr std::size_t n = 30000, families = 500;
  std::vector<sample_info> samples(n + 1 + families);
  for (std::size_t i = 0; i < n; ++i) {
    samples[i].fid = "F" + std::to_string(i % 7);
    samples[i].iid = "I" + std::to_string(i);
  }
  samples[n].fid = "F0";  // row 0's FID and IID again
  samples[n].iid = "I0";
  for (std::size_t k = 0; k < families; ++k) {
    samples[n + 1 + k].fid = "K" + std::to_string(k);
    samples[n + 1 + k].iid = "kid";
  }
  std::string text = "#FID IID y\nX nobody 5\n";
  for (std::size_t i = n; i-- > 0;)
    text += samples[i].fid + " " + samples[i].iid + " " + std::to_string(i) + "\n";
  text += "K321 kid -1\n";
  write_text(dir / "p.txt", text);
  const phenotype_table t = read_phenotypes(dir / "p.txt", samples);
  EXPECT_EQ(t.file_samples, n + 2);
  EXPECT_EQ(t.matched_samples, n + 1);
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(t.values(static_cast<Eigen::Index>(i), 0), static_cast<double>(i)) << i;
  EXPECT_TRUE(std::isnan(t.values(static_cast<Eigen::Index>(n), 0)));  // the repeat: not named
  for (std::size_t k = 0; k < families; ++k) {
    const double v = t.values(static_cast<Eigen::Index>(n + 1 + k), 0);
    if (k == 321)
      EXPECT_EQ(v, -1.0);
    else
      EXPECT_TRUE(std::isnan(v)) << k;
  }

  // In store order, line k is tried against row k first; the repeat of row 0's key on row n's
  // line still names row 0, the first row with that key.
  std::string in_order = "#FID IID y\nX nobody 0\n";
  for (std::size_t i = 1; i <= n; ++i)
    in_order += samples[i].fid + " " + samples[i].iid + " " + std::to_string(i) + "\n";
  write_text(dir / "in_order.txt", in_order);
  const phenotype_table o = read_phenotypes(dir / "in_order.txt", samples);
  EXPECT_EQ(o.matched_samples, n);
  EXPECT_EQ(o.values(0, 0), static_cast<double>(n));
  EXPECT_TRUE(std::isnan(o.values(static_cast<Eigen::Index>(n), 0)));
  for (std::size_t i = 1; i < n; ++i)
    ASSERT_EQ(o.values(static_cast<Eigen::Index>(i), 0), static_cast<double>(i)) << i;

  // By IID alone: a unique IID is found, the shared one names every family, in store order.
  write_text(dir / "iid.txt", "#IID y\nI29999 1\nI5 2\nkid 3\n");
  try {
    read_phenotypes(dir / "iid.txt", samples);
    ADD_FAILURE() << "an IID of 500 families was matched";
  } catch (const error& e) {
    EXPECT_NE(e.message().find("iid.txt:4: IID kid is ambiguous: the store has it in families "
                               "K0, K1, K2, K3,"),
              std::string::npos)
        << e.message().substr(0, 200);
    EXPECT_NE(e.message().find(", K498, K499; give FID and IID"), std::string::npos);
  }
  write_text(dir / "iid2.txt", "#IID y\nI29999 1\nI5 2\n");
  const phenotype_table by_iid = read_phenotypes(dir / "iid2.txt", samples);
  EXPECT_EQ(by_iid.values(29999, 0), 1.0);
  EXPECT_EQ(by_iid.values(5, 0), 2.0);
  EXPECT_EQ(by_iid.matched_samples, 2u);

  // A sample the store lacks, listed twice, is a repeat all the same.
  write_text(dir / "twice.txt", "#FID IID y\nX nobody 1\nF1 I1 2\nX nobody 3\n");
  try {
    read_phenotypes(dir / "twice.txt", samples);
    ADD_FAILURE() << "a repeated sample was read";
  } catch (const error& e) {
    EXPECT_NE(e.message().find("twice.txt:4: sample X nobody is listed again (first on line 2)"),
              std::string::npos)
        << e.message();
  }
}

TEST(PhenotypeTest, QuantileNormalizeAndVarianceStandardizeAsPlink2) {
  phenotype_table t;
  t.names = {"y"};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  t.values.resize(6, 1);
  t.values << 3.0, 1.0, nan, 3.0, 7.0, 100.0;
  const std::vector<std::uint8_t> used = {1, 1, 1, 1, 1, 0};  // the last row is not selected
  phenotype_table q = t;
  quantile_normalize(q, used);
  // Ranks among 1, 3, 3, 7: 1, 2.5, 2.5, 4 of n = 4; Φ⁻¹((r − ½) / 4).
  EXPECT_NEAR(q.values(1, 0), -1.1503493803760079, 1e-15);  // Φ⁻¹(1/8)
  EXPECT_EQ(q.values(0, 0), 0.0);                           // Φ⁻¹(1/2), the tied pair
  EXPECT_EQ(q.values(3, 0), 0.0);
  EXPECT_NEAR(q.values(4, 0), 1.1503493803760079, 1e-15);
  EXPECT_TRUE(std::isnan(q.values(2, 0)));
  EXPECT_TRUE(std::isnan(q.values(5, 0)));  // not selected: missing, not ranked

  phenotype_table v = t;
  variance_standardize(v, used);
  // 1, 3, 3, 7: mean 3.5, SD sqrt(19/3).
  EXPECT_NEAR(v.values(4, 0), 3.5 / std::sqrt(19.0 / 3.0), 1e-15);
  EXPECT_NEAR(v.values(1, 0), -2.5 / std::sqrt(19.0 / 3.0), 1e-15);
  EXPECT_TRUE(std::isnan(v.values(5, 0)));
  t.values << 2.0, 2.0, nan, 2.0, 2.0, 5.0;
  try {
    variance_standardize(t, used);
    ADD_FAILURE() << "a constant covariate was standardised";
  } catch (const error& e) {
    EXPECT_NE(e.message().find("y is constant"), std::string::npos) << e.message();
  }
}

TEST(PhenotypeTest, MalformedFilesGiveErrorsWithFileAndLine) {
  test::temp_dir dir;
  const auto samples = test::numbered_samples(3);
  const auto expect_error = [&](const std::string& text, errc code, const std::string& part,
                                const std::vector<std::string>& names = {}) {
    write_text(dir / "bad.txt", text);
    try {
      read_phenotypes(dir / "bad.txt", samples, names);
      ADD_FAILURE() << "no error for:\n" << text;
    } catch (const error& e) {
      EXPECT_EQ(e.code(), make_error_code(code)) << e.message();
      EXPECT_NE(e.message().find("bad.txt"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find(part), std::string::npos) << e.message();
    }
  };
  expect_error("S1 S1 1\nS2 S2 1 2\n", errc::bad_input, ":2: expected 3 fields, found 4");
  expect_error("FID IID y\nS1 S1 abc\n", errc::bad_input, ":2: 'abc' in column y");
  expect_error("S1 S1 1\nS2 S2 2\nS1 S1 3\n", errc::bad_input, "listed again (first on line 1)");
  expect_error("S1 S1\n", errc::bad_input, "at least one value");
  expect_error("", errc::bad_input, "empty");
  expect_error("#IID y\nS1 1\nS1 2\n", errc::bad_input, "sample S1 is listed again");
  expect_error("#FID y\nS1 1\n", errc::bad_input, ":1: a header starting with FID must name IID");
  expect_error("#IID SEX\nS1 1\n", errc::bad_input, ":1: the header names no value column");
  expect_error("FID IID y z y\nS1 S1 1 2 3\n", errc::bad_input,
               ":1: the header names column 'y' twice");
  expect_error("FID IID y\nS1 S1 1\n", errc::invalid_argument, "no column named 'z' (it has y)",
               {"z"});
  EXPECT_THROW(read_phenotypes(dir / "absent.txt", samples), error);
}

// The lines of a large file are read across threads; the error is still the first one in
// the file, whichever thread met which problem, and the values land on their samples.
TEST(PhenotypeTest, LargeFilesReadAcrossThreadsNameTheFirstProblem) {
  test::temp_dir dir;
  constexpr std::size_t n = 20000;
  const auto samples = test::numbered_samples(n);
  const auto file = [&](std::size_t bad_value, std::size_t bad_count, std::size_t repeated) {
    std::string text = "#FID IID a b\n";
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t line = i + 2;
      const std::string id = samples[line == repeated ? 0 : i].iid;
      text += samples[line == repeated ? 0 : i].fid + " " + id + " " +
              (line == bad_value ? std::string("x1") : std::to_string(i)) + " " +
              std::to_string(0.5 * static_cast<double>(i)) + (line == bad_count ? " 7" : "") + "\n";
    }
    write_text(dir / "big.txt", text);
  };
  const auto first_error = [&]() -> std::string {
    try {
      read_phenotypes(dir / "big.txt", samples);
    } catch (const error& e) {
      return e.message();
    }
    return "no error";
  };
  file(0, 0, 0);
  const phenotype_table t = read_phenotypes(dir / "big.txt", samples);
  EXPECT_EQ(t.matched_samples, n);
  for (std::size_t i : {std::size_t{0}, std::size_t{2047}, std::size_t{2048}, n - 1}) {
    EXPECT_EQ(t.values(static_cast<Eigen::Index>(i), 0), static_cast<double>(i));
    EXPECT_EQ(t.values(static_cast<Eigen::Index>(i), 1), 0.5 * static_cast<double>(i));
  }
  file(15000, 9000, 0);  // a line with a field too many comes before a bad value
  EXPECT_NE(first_error().find("big.txt:9000: expected 4 fields, found 5"), std::string::npos)
      << first_error();
  file(3000, 19000, 0);
  EXPECT_NE(first_error().find("big.txt:3000: 'x1' in column a"), std::string::npos)
      << first_error();
  file(12000, 0, 7000);  // the first sample again, before a bad value
  EXPECT_NE(first_error().find("big.txt:7000: sample"), std::string::npos) << first_error();
  EXPECT_NE(first_error().find("listed again (first on line 2)"), std::string::npos);
  file(5000, 0, 16000);
  EXPECT_NE(first_error().find("big.txt:5000: 'x1' in column a"), std::string::npos)
      << first_error();
}

}  // namespace
}  // namespace colflow
