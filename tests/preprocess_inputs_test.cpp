// The preprocessor's inputs: chromosome codes normalised as plink2 writes them, several
// filesets made into one store, and the formats of inputs (by their ending), their options and
// the conversion defaults of each kind.
#include <gtest/gtest.h>

#include <utility>

#include "colflow/preprocess/chromosome.hpp"
#include "colflow/preprocess/inputs.hpp"
#include "preprocess_fixture.hpp"

namespace colflow::preprocess_tests {
namespace {

// What plink2 2.00a3.5 --allow-extra-chr writes for each code of a .bim (measured one code per
// file, since plink2 refuses a split chromosome).
TEST(ChromosomeTest, CodesAreNormalisedAsPlink2WritesThem) {
  const std::pair<const char*, const char*> cases[] = {{"chr1", "1"},
                                                       {"23", "X"},
                                                       {"24", "Y"},
                                                       {"25", "XY"},
                                                       {"26", "MT"},
                                                       {"M", "MT"},
                                                       {"chrM", "MT"},
                                                       {"X", "X"},
                                                       {"x", "X"},
                                                       {"XY", "XY"},
                                                       {"MT", "MT"},
                                                       {"01", "1"},
                                                       {"chr22", "22"},
                                                       {"Chr01K", "Chr01K"},
                                                       {"chrX", "X"},
                                                       {"CHR2", "2"},
                                                       {"chrMT", "MT"},
                                                       {"0", "0"},
                                                       {"chr23", "X"},
                                                       {"PAR1", "PAR1"},
                                                       {"y", "Y"},
                                                       {"chrY", "Y"},
                                                       {"mt", "MT"},
                                                       {"chr26", "MT"},
                                                       {"22", "22"},
                                                       {"chr0", "0"},
                                                       {"Un", "Un"},
                                                       {"27", "PAR1"},
                                                       {"28", "PAR2"},
                                                       {"100", "100"},
                                                       {"chrUn_gl000220", "chrUn_gl000220"},
                                                       {"m", "MT"},
                                                       {"chrXY", "XY"},
                                                       {"xy", "XY"},
                                                       {"chr27", "PAR1"},
                                                       {"023", "023"},
                                                       {"chrx", "X"},
                                                       {"cHr5", "5"},
                                                       {"chr100", "chr100"},
                                                       {"chrm", "MT"},
                                                       {"", ""}};
  for (const auto& [in, out] : cases) EXPECT_EQ(preprocess::normalize_chromosome(in), out) << in;
}

// Per-chromosome filesets of HapMap3 (made by plink2) given together make one store equal,
// column for column, to the store of the whole fileset; a list file does the same.
TEST(ManyInputsTest, PerChromosomeFilesetsMakeOneStoreEqualToTheWhole) {
  test::temp_dir dir;
  const std::string whole = test::dataset("hapmap3/HapMap3");
  std::string parts, list;
  for (const char* chrom : {"1", "2", "22", "X"}) {
    const std::string out = (dir / ("chr" + std::string(chrom))).string();
    test::run_plink2("--bfile " + whole + " --chr " + chrom + " --make-bed --out " + out);
    parts += " " + out;
    list += "chr" + std::string(chrom) + "\n";
  }
  test::write_file(dir / "inputs.txt", std::vector<char>(list.begin(), list.end()));
  test::run_plink2("--bfile " + whole + " --chr 1,2,22,X --make-bed --out " +
                   (dir / "joined").string());
  std::string out;
  ASSERT_EQ(
      test::run_cli("preprocess --quiet --bed" + parts + " --out " + (dir / "parts").string(), out),
      0)
      << out;
  ASSERT_EQ(test::run_cli("preprocess --quiet --inputs " + (dir / "inputs.txt").string() +
                              " --out " + (dir / "listed").string(),
                          out),
            0)
      << out;
  ASSERT_EQ(test::run_cli("preprocess --quiet --bed " + (dir / "joined").string() + " --out " +
                              (dir / "one").string(),
                          out),
            0)
      << out;
  const store one = store::open(dir / "one");
  for (const char* name : {"parts", "listed"}) {
    const store s = store::open(dir / name);
    ASSERT_EQ(s.num_columns(), one.num_columns());
    ASSERT_EQ(s.samples().size(), one.samples().size());
    std::vector<std::byte> a(one.entry(0).decoded_size), b(a.size());
    for (std::size_t j = 0; j < s.num_columns(); ++j) {
      s.read_payload(j, a);
      one.read_payload(j, b);
      ASSERT_EQ(a, b) << name << " column " << j;
      ASSERT_EQ(s.columns()[j].id, one.columns()[j].id);
      ASSERT_EQ(s.columns()[j].chrom, one.columns()[j].chrom);
    }
  }
  EXPECT_EQ(one.columns().back().chrom, "X") << "23 is stored as X";
}

TEST(ManyInputsTest, FilesetsOfOtherSamplesAreRefusedNamingTheFirstDifference) {
  test::temp_dir dir;
  const std::string whole = test::dataset("hapmap3/HapMap3");
  const std::string a = (dir / "a").string(), b = (dir / "b").string();
  test::run_plink2("--bfile " + whole + " --chr 1 --make-bed --out " + a);
  // The same samples but the first two swapped.
  test::run_plink2("--bfile " + whole + " --chr 2 --make-bed --out " + b);
  auto fam = test::read_file(b + ".fam");
  std::string text(fam.begin(), fam.end());
  const std::size_t first_end = text.find('\n') + 1, second_end = text.find('\n', first_end) + 1;
  text = text.substr(first_end, second_end - first_end) + text.substr(0, first_end) +
         text.substr(second_end);
  test::write_file(b + ".fam", std::vector<char>(text.begin(), text.end()));
  std::string out;
  EXPECT_NE(test::run_cli(
                "preprocess --quiet --bed " + a + " " + b + " --out " + (dir / "s").string(), out),
            0);
  EXPECT_NE(out.find("b.bed: sample 1 is"), std::string::npos) << out;
  EXPECT_NE(out.find("same samples in the same order"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(dir / "s"));
  // A duplicated sample ID is refused as plink2 refuses it: sample 2 made a copy of sample 1.
  const std::size_t line1 = text.find('\n') + 1, line2 = text.find('\n', line1) + 1;
  text = text.substr(0, line1) + text.substr(0, line1) + text.substr(line2);
  test::write_file(b + ".fam", std::vector<char>(text.begin(), text.end()));
  EXPECT_NE(test::run_cli("preprocess --quiet --bed " + b + " --out " + (dir / "t").string(), out),
            0);
  EXPECT_NE(out.find("have the same ID"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(dir / "t"));
}

// Runs `f`, which must throw colflow::error with `code` and a message containing `fragment`.
template <typename F>
::testing::AssertionResult throws_error(F&& f, errc code, const std::string& fragment) {
  try {
    f();
  } catch (const error& e) {
    if (e.kind() == code && e.message().find(fragment) != std::string::npos)
      return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "error " << errc_name(e.kind()) << ": " << e.message();
  }
  return ::testing::AssertionFailure() << "no error; expected one with \"" << fragment << "\"";
}

TEST(InputsTest, FormatOfAPathIsItsEnding) {
  using preprocess::input_format;
  const std::vector<std::pair<std::string, input_format>> cases = {
      {"chr1.bgen", input_format::bgen},   {"x.vcf", input_format::vcf},
      {"d/x.vcf.gz", input_format::vcf},   {"x.vcf.bgz", input_format::vcf},
      {"x.bcf", input_format::vcf},        {"m.npy", input_format::npy},
      {"m.csv", input_format::csv},        {"m.tsv", input_format::csv},
      {"data/x", input_format::plink},     {"data/x.bed", input_format::plink},
      {"x.gz", input_format::plink},       {"x.npy.bak", input_format::plink},
      {"d/chr1.pgen", input_format::pgen},
  };
  for (const auto& [path, format] : cases)
    EXPECT_EQ(preprocess::input_format_of(path), format) << path;
  EXPECT_STREQ(preprocess::input_format_name(input_format::plink), "plink");
  EXPECT_STREQ(preprocess::input_format_name(input_format::pgen), "pgen");
  EXPECT_EQ(preprocess::dosage_field_from_name("GP"), preprocess::vcf_options::dosage_field::gp);
  EXPECT_FALSE(preprocess::dosage_field_from_name("ds"));
  EXPECT_EQ(preprocess::half_call_from_name("haploid"),
            preprocess::vcf_options::half_call::haploid);
  EXPECT_EQ(preprocess::csv_presence_from_name("no"), preprocess::csv_presence::absent);
  EXPECT_FALSE(preprocess::csv_presence_from_name("true"));
}

TEST(InputsTest, OpensOneFormatAndRefusesOptionsOfAnother) {
  const std::string bed = prefix("bed-reader/small");
  preprocess::input_options o;
  o.bed = {bed, bed};
  const auto two = preprocess::open_inputs(o);
  EXPECT_EQ(two->columns(), 8u);
  EXPECT_EQ(two->description(), "PLINK .bed " + bed + ".bed; PLINK .bed " + bed + ".bed");
  o.bed.clear();
  o.bed_files = preprocess::plink_paths{bed + ".bed", bed + ".bim", bed + ".fam"};
  EXPECT_EQ(preprocess::open_inputs(o)->columns(), 4u);

  EXPECT_TRUE(
      throws_error([] { preprocess::open_inputs({}); }, errc::invalid_argument, "no input"));
  o.npy = "m.npy";
  EXPECT_TRUE(throws_error([&] { preprocess::open_inputs(o); }, errc::invalid_argument,
                           "must be of one format"));
  o = {};
  o.bed = {bed};
  o.dosage = preprocess::vcf_options::dosage_field::ds;
  EXPECT_TRUE(throws_error([&] { preprocess::open_inputs(o); }, errc::invalid_argument,
                           "apply to VCF input"));
  o.dosage = preprocess::vcf_options::dosage_field::none;
  o.ref_first = true;
  EXPECT_TRUE(throws_error([&] { preprocess::open_inputs(o); }, errc::invalid_argument,
                           "apply to BGEN input"));
  o.ref_first = false;
  o.csv_format.ids = preprocess::csv_presence::present;
  EXPECT_TRUE(throws_error([&] { preprocess::open_inputs(o); }, errc::invalid_argument,
                           "apply to CSV input"));

  test::temp_dir dir;
  const std::string list = "# inputs\n" + bed + "\n\n" + "m.npy\n";
  test::write_file(dir / "list.txt", std::vector<char>(list.begin(), list.end()));
  o = {};
  o.inputs_list = dir / "list.txt";
  EXPECT_TRUE(throws_error([&] { preprocess::open_inputs(o); }, errc::invalid_argument,
                           "lists " + (dir / "m.npy").string()));
  o.inputs_list = dir / "absent.txt";
  EXPECT_TRUE(throws_error([&] { preprocess::open_inputs(o); }, errc::not_found, "absent.txt"));
}

TEST(InputsTest, ConversionDefaultsFollowTheKindOfInput) {
  using preprocess::codec_choice;
  const preprocess::conversion_choices none;
  auto g = preprocess::make_convert_options(value_type::genotype, none, "out");
  EXPECT_EQ(g.out, "out");
  EXPECT_EQ(g.codec, codec_choice::genotype);
  EXPECT_TRUE(g.standardize);
  EXPECT_FALSE(g.shuffle);
  EXPECT_EQ(g.dtype, value_type::float64);
  auto d = preprocess::make_convert_options(value_type::dosage, none, "out");
  EXPECT_EQ(d.codec, codec_choice::zstd);
  EXPECT_TRUE(d.keep_dosages);
  EXPECT_TRUE(d.shuffle);
  auto f = preprocess::make_convert_options(value_type::float64, none, "out");
  EXPECT_EQ(f.codec, codec_choice::zstd);
  EXPECT_FALSE(f.standardize);
  EXPECT_FALSE(f.shuffle);

  preprocess::conversion_choices c;
  c.hard_call_threshold = 0.2;
  d = preprocess::make_convert_options(value_type::dosage, c, "out");
  EXPECT_EQ(d.codec, codec_choice::genotype);
  EXPECT_EQ(d.hard_call_threshold, 0.2);
  c = {};
  c.dtype = value_type::float32;
  d = preprocess::make_convert_options(value_type::dosage, c, "out");
  EXPECT_FALSE(d.keep_dosages);
  EXPECT_FALSE(d.shuffle);
  EXPECT_TRUE(d.standardize);
  EXPECT_EQ(d.dtype, value_type::float32);
  // A dtype asks for a float store of genotypes too.
  g = preprocess::make_convert_options(value_type::genotype, c, "out");
  EXPECT_EQ(g.codec, codec_choice::zstd);
  EXPECT_EQ(g.dtype, value_type::float32);
  c = {};
  c.codec = codec_choice::lz4;
  c.level = 5;
  c.shuffle = false;
  c.standardize = true;
  c.sex_file = "sex.txt";
  c.overwrite = true;
  f = preprocess::make_convert_options(value_type::float64, c, "out");
  EXPECT_EQ(f.codec, codec_choice::lz4);
  EXPECT_EQ(f.level, 5);
  EXPECT_FALSE(f.shuffle);
  EXPECT_TRUE(f.standardize);
  EXPECT_EQ(f.sex_file, "sex.txt");
  EXPECT_TRUE(f.overwrite);
}

}  // namespace
}  // namespace colflow::preprocess_tests
