// The BGEN reader (preprocess/bgen_header.cpp, bgen_source.cpp and bgen_probabilities.cpp):
// files written by plink2 against the .bed they came from and against plink2's own decoding,
// hand-made files for what plink2 does not write (phased and haploid probabilities, odd bit
// depths), and the IDs of columns and samples. Two-step reads (fetch in order, decode on several
// threads) are tested in bgen_source_decode_test.cpp, malformed files in
// bgen_source_malformed_test.cpp.
#include "colflow/preprocess/bgen_source.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <tuple>

#include "bgen_source_fixture.hpp"
#include "colflow/codec/dosage_codec.hpp"
#include "colflow/codec/genotype_codec.hpp"
#include "colflow/preprocess/bed_source.hpp"
#include "shared_data.hpp"

namespace colflow::bgen_source_tests {
namespace {

// ---- plink2's decoding -------------------------------------------------------------------

// plink2's .traw (--export A-transpose): per variant, the counted allele and each sample's
// dosage of it in fixed point (plink2 prints the shortest decimal that gives back its 1/16384
// value), or dosage_missing.
struct traw_variant {
  std::string id, counted, other;
  std::vector<std::uint16_t> dosages;
};

std::vector<traw_variant> read_traw(const std::filesystem::path& file) {
  std::vector<traw_variant> out;
  std::ifstream in(file);
  EXPECT_TRUE(in) << file;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string chrom, cm, pos;
    traw_variant v;
    s >> chrom >> v.id >> cm >> pos >> v.counted >> v.other;
    for (std::string x; s >> x;) {
      v.dosages.push_back(x == "NA"
                              ? dosage_missing
                              : static_cast<std::uint16_t>(std::lround(std::stod(x) * 16384)));
    }
    out.push_back(std::move(v));
  }
  return out;
}

// Compares every column of `source` with plink2's decoding of the same file; returns the number
// of non-missing fractional dosages compared (so that a test can insist on some).
std::size_t expect_same_as_plink2(bgen_source& source, const std::vector<traw_variant>& traw) {
  EXPECT_EQ(traw.size(), source.columns());
  std::size_t fractional = 0;
  std::vector<std::uint16_t> ours(source.rows());
  for (std::uint64_t j = 0; j < std::min<std::uint64_t>(traw.size(), source.columns()); ++j) {
    const column_info info = source.column(j);
    const traw_variant& t = traw[j];
    EXPECT_EQ(info.id, t.id);
    if (t.dosages.size() != source.rows()) {
      ADD_FAILURE() << "variant " << j << ": plink2 gives " << t.dosages.size() << " samples";
      return fractional;
    }
    // plink2 counts its REF allele in .traw; ours is A1, one of the two.
    const bool same_allele = t.counted == info.a1;
    EXPECT_TRUE(same_allele ? t.other == info.a2 : (t.counted == info.a2 && t.other == info.a1))
        << "variant " << j;
    source.read_dosages(j, ours);
    for (std::size_t i = 0; i < ours.size(); ++i) {
      const std::uint16_t ref = t.dosages[i];
      const std::uint16_t expected =
          ref == dosage_missing || same_allele ? ref : static_cast<std::uint16_t>(dosage_max - ref);
      if (ours[i] != expected) {
        ADD_FAILURE() << "variant " << j << " (" << t.id << "), sample " << i << ": " << ours[i]
                      << ", plink2 " << expected;
        return fractional;
      }
      if (expected != dosage_missing && expected % dosage_one != 0) ++fractional;
    }
  }
  return fractional;
}

// ---- Files written by plink2 from a .bed ------------------------------------------------------

std::string chrom_code(const std::string& c) {
  static const std::map<std::string, std::string> names{
      {"X", "23"}, {"Y", "24"}, {"XY", "25"}, {"MT", "26"}};
  const auto it = names.find(c);
  return it == names.end() ? c : it->second;
}

class BgenFromBedTest : public ::testing::TestWithParam<std::string> {};

// plink2 writes A1 (ALT) first and the .fam's FID/IID/sex to the .sample: read back, every
// dosage is the .bed's call of A1 times dosage_one. Males' X calls and the MT calls are written
// haploid (ploidy 1): these check that a haploid dosage counts two copies.
TEST_P(BgenFromBedTest, DosagesEqualBedCalls) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  const std::string bfile = test::dataset("hapmap3/HapMap3");
  const std::filesystem::path out = dir / "h";
  test::run_plink2("--bfile " + bfile + " --export " + GetParam() + " --threads 2 --out " +
                   out.string() + " --silent");
  bgen_source source(options(out.string() + ".bgen", out.string() + ".sample"));
  preprocess::bed_source bed(preprocess::plink_paths::from_prefix(bfile));
  const std::string version = GetParam() == "bgen-1.1"   ? "v1.1"
                              : GetParam() == "bgen-1.2" ? "v1.2"
                                                         : "v1.3";
  EXPECT_EQ(source.version(), version);
  EXPECT_EQ(source.description(), "BGEN " + version + " " + out.string() + ".bgen");
  EXPECT_EQ(source.layout(), GetParam() == "bgen-1.1" ? 1 : 2);
  EXPECT_EQ(source.compression(), GetParam() == "bgen-1.3" ? codec_id::zstd : codec_id::zlib);
  EXPECT_EQ(source.kind(), value_type::dosage);
  ASSERT_EQ(source.rows(), bed.rows());
  ASSERT_EQ(source.columns(), bed.columns());

  const auto fam = bed.samples(), ours = source.samples();
  for (std::size_t i = 0; i < fam.size(); ++i) {
    EXPECT_EQ(ours[i].fid, fam[i].fid) << i;
    EXPECT_EQ(ours[i].iid, fam[i].iid) << i;
    EXPECT_EQ(ours[i].sex, fam[i].sex) << i;
  }
  EXPECT_NE(fam[0].fid, fam[0].iid);

  const std::size_t n = fam.size();
  std::vector<std::uint8_t> codes(genotype_column_bytes(n));
  std::vector<std::uint16_t> dosages(source.rows());
  for (std::uint64_t j = 0; j < bed.columns(); ++j) {
    const column_info b = bed.column(j), c = source.column(j);
    EXPECT_EQ(chrom_code(c.chrom), b.chrom) << j;
    EXPECT_EQ(c.id, b.id);
    EXPECT_EQ(c.pos, b.pos);
    EXPECT_EQ(c.cm, "0");
    EXPECT_EQ(c.a1, b.a1) << b.id;
    EXPECT_EQ(c.a2, b.a2) << b.id;
    bed.read_genotypes(j, codes);
    source.read_dosages(j, dosages);
    for (std::uint64_t i = 0; i < n; ++i) {
      const unsigned code = (codes[i / 4] >> (2 * (i % 4))) & 3u;
      const std::uint16_t expected = code == 0   ? 2 * dosage_one
                                     : code == 2 ? dosage_one
                                     : code == 3 ? 0
                                                 : dosage_missing;
      ASSERT_EQ(dosages[i], expected) << b.id << ", sample " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllVersions, BgenFromBedTest,
                         ::testing::Values("bgen-1.1", "bgen-1.2", "bgen-1.3"),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string s = p.param;
                           std::replace(s.begin(), s.end(), '-', '_');
                           std::replace(s.begin(), s.end(), '.', '_');
                           return s;
                         });

// Counting the second allele swaps the alleles and complements the dosages; columns can be read
// in any order, any number of times.
TEST(BgenSourceTest, RefFirstCountsSecondAlleleInAnyOrder) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  const std::filesystem::path out = dir / "h";
  test::run_plink2("--bfile " + test::dataset("hapmap3/HapMap3") +
                   " --export bgen-1.2 bits=8 --threads 2 --out " + out.string() + " --silent");
  bgen_source last(options(out.string() + ".bgen", out.string() + ".sample"));
  bgen_source first(options(out.string() + ".bgen", out.string() + ".sample", true));
  EXPECT_FALSE(last.counts_second_allele());
  EXPECT_TRUE(first.counts_second_allele());
  const auto forward = read_all(last);
  std::vector<std::uint16_t> d(first.rows());
  for (std::uint64_t j = first.columns(); j-- > 0;) {
    const column_info a = last.column(j), b = first.column(j);
    EXPECT_EQ(a.a1, b.a2);
    EXPECT_EQ(a.a2, b.a1);
    first.read_dosages(j, d);
    for (std::size_t i = 0; i < d.size(); ++i) {
      const std::uint16_t x = forward[j][i];
      ASSERT_EQ(d[i], x == dosage_missing ? x : dosage_max - x) << j << " " << i;
    }
    last.read_dosages(j, d);
    ASSERT_EQ(d, forward[j]);
  }
}

// ---- Dosages against plink2's decoding ---------------------------------------------------------

class BgenDummyTest : public ::testing::TestWithParam<dummy_case> {};

// plink2 --dummy dosages (10% missing calls, 30% fractional dosages) exported to BGEN, then read
// back both by plink2 and by us, counting either allele: equal to the 1/16384.
TEST_P(BgenDummyTest, DosagesEqualPlink2) {
  test::temp_dir dir;
  const std::string d = (dir / "d").string(), x = (dir / "x").string();
  test::run_plink2("--dummy 301 200 0.1 dosage-freq=0.3 --seed 7 --out " + d + " --silent");
  test::run_plink2("--pfile " + d + " --export " + GetParam().export_flags + " --out " + x +
                   " --silent");
  for (const bool ref_first : {false, true}) {
    const std::string mode = ref_first ? "ref-first" : "ref-last";
    test::run_plink2("--bgen " + x + ".bgen " + mode + " --sample " + x +
                     ".sample --export A-transpose --out " + x + mode + " --silent");
    bgen_source source(options(x + ".bgen", x + ".sample", ref_first));
    EXPECT_GT(expect_same_as_plink2(source, read_traw(x + mode + ".traw")), 1000u) << mode;
  }
}

INSTANTIATE_TEST_SUITE_P(Exports, BgenDummyTest,
                         ::testing::Values(dummy_case{"V11", "bgen-1.1"},
                                           dummy_case{"V12Bits8", "bgen-1.2 bits=8"},
                                           dummy_case{"V12Bits16", "bgen-1.2 bits=16"},
                                           dummy_case{"V13Bits12", "bgen-1.3 bits=12"}),
                         [](const ::testing::TestParamInfo<dummy_case>& p) {
                           return p.param.name;
                         });

// Probabilities plink2 never writes: phased and haploid samples, ploidy 0, missing samples, every
// pair of 3- and 8-bit values, 1- to 28-bit depths (plink2 reads no deeper), layout-1 triples that
// do not sum to 32768 and ties. plink2 reads them (as ref-last and ref-first); we must agree.
TEST(BgenSourceTest, HandMadeProbabilitiesEqualPlink2) {
  test::temp_dir dir;
  std::mt19937_64 rng(3);
  // Every pair of 8-bit values with P(AA) + P(AB) <= 1, plus some.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs8;
  for (std::uint64_t x = 0; x < 256; ++x)
    for (std::uint64_t y = 0; x + y < 256; ++y) pairs8.emplace_back(x, y);
  const std::size_t n = pairs8.size() + 11;
  crafted_bgen b;
  for (std::size_t i = 0; i < n; ++i) b.samples.push_back("s" + std::to_string(i));
  auto add = [&](unsigned bits, bool phased, int kind) {
    crafted_variant v;
    v.rsid = "rs" + std::to_string(b.variants.size());
    v.bits = bits;
    v.phased = phased;
    const std::uint64_t max = (std::uint64_t{1} << bits) - 1;
    for (std::size_t i = 0; i < n; ++i) {
      // kind 0: diploid only; 1: mixed ploidy 0, 1, 2 and missing samples.
      const unsigned shape = kind == 0 ? 2 : static_cast<unsigned>(i % 5);
      std::uint64_t x = rng() & max, y = rng() & max;
      if (!phased) y %= max - x + 1;
      if (bits == 8 && kind == 0 && i < pairs8.size()) std::tie(x, y) = pairs8[i];
      switch (shape) {
        case 0:  // haploid
          v.ploidy.push_back(1);
          v.values.push_back(x);
          break;
        case 1:  // ploidy 0
          v.ploidy.push_back(0);
          break;
        case 3:  // missing diploid: zero values
          v.ploidy.push_back(0x80 | 2);
          v.values.insert(v.values.end(), {0, 0});
          break;
        case 4:  // missing haploid
          v.ploidy.push_back(0x80 | 1);
          v.values.push_back(0);
          break;
        default:
          v.ploidy.push_back(2);
          v.values.insert(v.values.end(), {x, y});
      }
    }
    b.variants.push_back(v);
  };
  for (const bool phased : {false, true}) {
    for (const unsigned bits : {1u, 2u, 3u, 7u, 8u, 12u, 16u, 20u, 28u}) add(bits, phased, 0);
    add(8, phased, 1);
    add(13, phased, 1);
  }
  const std::filesystem::path file = dir / "c.bgen";
  test::write_file(file, build(b));
  for (const bool ref_first : {false, true}) {
    const std::string mode = ref_first ? "ref-first" : "ref-last";
    test::run_plink2("--bgen " + file.string() + " " + mode + " --export A-transpose --out " +
                     (dir / mode).string() + " --silent");
    bgen_source source(options(file, {}, ref_first));
    EXPECT_GT(expect_same_as_plink2(source, read_traw(dir / (mode + ".traw"))), n) << mode;
  }

  // Layout 1: sums of 32768 (ties to even), other sums (ties up), all-zero (missing).
  crafted_bgen l1;
  l1.layout = 1;
  l1.samples = b.samples;
  crafted_variant v;
  std::uniform_int_distribution<std::uint64_t> u16(0, 65535);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t aa, ab, bb;
    switch (i % 4) {
      case 0:  // sum 32768
        aa = u16(rng) % 32769, ab = u16(rng) % (32769 - aa), bb = 32768 - aa - ab;
        break;
      case 1: {  // ties at sum 32768 (p_AB odd) and at sum 65536 (p_AB + 2 p_BB = 2 mod 4)
        const bool half = i % 8 == 1;
        ab = 2 * (i % 97) + (half ? 1 : 2), bb = i % 7, aa = (half ? 32768 : 65536) - ab - bb;
        break;
      }
      case 2:
        aa = u16(rng), ab = u16(rng), bb = u16(rng);
        break;
      default:
        aa = ab = bb = i % 8 == 3 ? 0 : u16(rng) % 300;
    }
    v.values.insert(v.values.end(), {aa, ab, bb});
  }
  l1.variants.push_back(v);
  const std::filesystem::path file1 = dir / "l1.bgen";
  test::write_file(file1, build(l1));
  for (const bool ref_first : {false, true}) {
    const std::string mode = ref_first ? "ref-first" : "ref-last";
    test::run_plink2("--bgen " + file1.string() + " " + mode + " --export A-transpose --out " +
                     (dir / ("l1" + mode)).string() + " --silent");
    bgen_source source(options(file1, {}, ref_first));
    EXPECT_GT(expect_same_as_plink2(source, read_traw(dir / ("l1" + mode + ".traw"))), n / 2)
        << mode;
  }
}

// ---- Columns and samples -----------------------------------------------------------------------

TEST(BgenSourceTest, IdIsRsidElseVariantId) {
  test::temp_dir dir;
  crafted_bgen b = small_bgen(5, 4);
  b.variants[0].id = "v0";
  b.variants[1].id = "v1", b.variants[1].rsid = ".";
  b.variants[2].id = "v2", b.variants[2].rsid = "";
  b.variants[3].id = "", b.variants[3].rsid = ".";
  b.variants[3].chrom = "chrX";
  b.variants[3].pos = 4000000000u;
  b.variants[3].alleles = {"ACGT", "T"};
  test::write_file(dir / "a.bgen", build(b));
  bgen_source s(options(dir / "a.bgen"));
  EXPECT_EQ(s.column(0).id, "rs0");
  EXPECT_EQ(s.column(1).id, ".") << "the rsid as written, as plink2 takes it";
  EXPECT_EQ(s.column(2).id, "v2");
  const column_info c = s.column(3);
  EXPECT_EQ(c.id, ".");
  EXPECT_EQ(c.chrom, "chrX");  // as written
  EXPECT_EQ(c.pos, "4000000000");
  EXPECT_EQ(c.a1, "ACGT");
  EXPECT_EQ(c.a2, "T");
  EXPECT_THROW(s.column(4), error);
  std::vector<std::uint16_t> d(5), short_buffer(4);
  EXPECT_THROW(s.read_dosages(4, d), error);
  EXPECT_THROW(s.read_dosages(0, short_buffer), error);
}

TEST(BgenSourceTest, SamplesFromSampleFileElseFromBgen) {
  test::temp_dir dir;
  const crafted_bgen b = small_bgen(7, 1);
  test::write_file(dir / "a.bgen", build(b));
  bgen_source embedded(options(dir / "a.bgen"));
  ASSERT_EQ(embedded.rows(), 7u);
  EXPECT_TRUE(embedded.has_sample_identifiers());
  EXPECT_EQ(embedded.samples()[6].fid, "0");
  EXPECT_EQ(embedded.samples()[6].iid, "s6");
  EXPECT_EQ(embedded.samples()[6].sex, "0");
  EXPECT_EQ(embedded.samples()[6].phenotype, "-9");

  // The .sample file wins, even where the .bgen's identifiers differ.
  std::vector<std::string> ids;
  for (int i = 0; i < 7; ++i) ids.push_back("x" + std::to_string(i));
  write_sample_file(dir / "a.sample", ids);
  bgen_source with_file(options(dir / "a.bgen", dir / "a.sample"));
  const auto s = with_file.samples();
  EXPECT_EQ(s[4].fid, "fx4");
  EXPECT_EQ(s[4].iid, "x4");
  EXPECT_EQ(s[4].sex, "1");
  EXPECT_EQ(s[5].sex, "2");
  EXPECT_EQ(s[3].sex, "0");
  EXPECT_EQ(s[4].father, "0");
  EXPECT_EQ(s[4].mother, "0");

  // QCTOOL v2's variant: one ID column; sex unknown as 0 or NA.
  std::ofstream(dir / "v2.sample") << "ID missing sex PHENO1\n0 0 D B\n"
                                   << "y0 0 1 0\ny1 0 2 1\ny2 0 NA 0\ny3 0 0 1\n"
                                   << "y4 0 2 0\ny5 0 1 NA\ny6 0 2 1\n";
  const auto v2 = bgen_source(options(dir / "a.bgen", dir / "v2.sample")).samples();
  ASSERT_EQ(v2.size(), 7u);
  EXPECT_EQ(v2[2].fid, "0");
  EXPECT_EQ(v2[2].iid, "y2");
  EXPECT_EQ(v2[0].sex, "1");
  EXPECT_EQ(v2[1].sex, "2");
  EXPECT_EQ(v2[2].sex, "0");
  EXPECT_EQ(v2[3].sex, "0");
}

TEST(BgenSourceTest, UncompressedFilesOfBothLayouts) {
  test::temp_dir dir;
  crafted_bgen b = small_bgen(6, 2);
  b.compression = 0;
  test::write_file(dir / "a.bgen", build(b));
  bgen_source s2(options(dir / "a.bgen"));
  EXPECT_EQ(s2.compression(), codec_id::none);
  EXPECT_EQ(s2.version(), "v1.2");
  std::vector<std::uint16_t> d(6);
  s2.read_dosages(1, d);
  // Sample 3 of variant 1: P(AA) = 3/255, P(AB) = 1/255: 16384 * 7 / 255 = 449.75.
  EXPECT_EQ(d[3], 450);

  crafted_bgen l1 = small_bgen(6, 1);
  l1.layout = 1;
  l1.compression = 0;
  l1.variants[0].values = {32768, 0, 0, 0, 32768, 0, 0,    0,     32768,
                           0,     0, 0, 1, 1,     1, 8192, 16384, 8192};
  test::write_file(dir / "b.bgen", build(l1));
  bgen_source s1(options(dir / "b.bgen"));
  EXPECT_EQ(s1.version(), "v1.1");
  s1.read_dosages(0, d);
  EXPECT_EQ(d, (std::vector<std::uint16_t>{32768, 16384, 0, dosage_missing, 16384, 16384}));
}

}  // namespace
}  // namespace colflow::bgen_source_tests
