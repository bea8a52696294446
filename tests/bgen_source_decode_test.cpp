// The BGEN reader's two-step reads: columns fetched in order and decoded on several threads at
// once, in a shuffled order, equal read_dosages, for files plink2 writes and hand-made ones.
#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "bgen_source_fixture.hpp"
#include "colflow/codec/dosage_codec.hpp"
#include "shared_data.hpp"

namespace colflow::bgen_source_tests {
namespace {

// ---- Two-step reads: fetch in order, decode on several threads --------------------------------

class BgenParallelDecodeTest : public ::testing::TestWithParam<dummy_case> {};

// Files plink2 writes, of each version: fetching every column in order and decoding them on four
// threads at once, in a shuffled order, gives exactly what read_dosages gives, either allele
// counted.
TEST_P(BgenParallelDecodeTest, DecodeOnThreadsEqualsReadDosages) {
  test::temp_dir dir;
  const std::string d = (dir / "d").string(), x = (dir / "x").string();
  test::run_plink2("--dummy 503 400 0.1 dosage-freq=0.3 --seed 5 --out " + d + " --silent");
  test::run_plink2("--pfile " + d + " --export " + GetParam().export_flags + " --out " + x +
                   " --silent");
  for (const bool ref_first : {false, true}) {
    auto source = std::make_shared<bgen_source>(options(x + ".bgen", x + ".sample", ref_first));
    EXPECT_EQ(expect_decode_equals_read(source, ref_first ? 2 : 3), source->columns());
    // Not vacuous: the columns hold fractional and missing dosages.
    std::vector<std::uint16_t> col(source->rows());
    std::size_t fractional = 0, missing = 0;
    for (std::uint64_t j = 0; j < source->columns(); ++j) {
      source->read_dosages(j, col);
      for (const std::uint16_t v : col) {
        fractional += v != dosage_missing && v % dosage_one != 0;
        missing += v == dosage_missing;
      }
    }
    EXPECT_GT(fractional, 10000u);
    EXPECT_GT(missing, 10000u);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Exports, BgenParallelDecodeTest,
    ::testing::Values(dummy_case{"V11", "bgen-1.1"}, dummy_case{"V12Bits8", "bgen-1.2 bits=8"},
                      dummy_case{"V12Bits16", "bgen-1.2 bits=16"}, dummy_case{"V13", "bgen-1.3"}),
    [](const ::testing::TestParamInfo<dummy_case>& p) { return p.param.name; });

// Hand-made files of both layouts, uncompressed (decoded in place), zlib and zstd, with every bit
// depth from 1 to 32 (the 16 first through tables built on first use, here by concurrent
// decodes), phased, haploid and missing samples: decoded on threads as read_dosages reads them.
TEST(BgenSourceTest, ParallelDecodeOfHandMadeFiles) {
  test::temp_dir dir;
  std::mt19937_64 rng(17);
  const std::size_t n = 97;
  crafted_bgen b = small_bgen(n, 0);
  for (unsigned bits = 1; bits <= 32; ++bits) {
    for (const bool phased : {false, true}) {
      crafted_variant v;
      v.rsid = "rs" + std::to_string(b.variants.size());
      v.bits = bits;
      v.phased = phased;
      const std::uint64_t max = (std::uint64_t{1} << bits) - 1;
      for (std::size_t i = 0; i < n; ++i) {
        std::uint64_t x = rng() & max, y = rng() & max;
        if (!phased) y %= max - x + 1;
        switch (i % 6) {
          case 0:
            v.ploidy.push_back(1);
            v.values.push_back(x);
            break;
          case 1:
            v.ploidy.push_back(0);
            break;
          case 2:
            v.ploidy.push_back(0x80 | 2);
            v.values.insert(v.values.end(), {0, 0});
            break;
          default:
            v.ploidy.push_back(2);
            v.values.insert(v.values.end(), {x, y});
        }
      }
      b.variants.push_back(v);
    }
  }
  for (const unsigned compression : {0u, 1u, 2u}) {
    crafted_bgen c = b;
    c.compression = compression;
    const auto file = dir / ("l2_" + std::to_string(compression) + ".bgen");
    test::write_file(file, build(c));
    auto source = std::make_shared<bgen_source>(options(file));
    EXPECT_EQ(expect_decode_equals_read(source, compression), source->columns()) << compression;
  }
  crafted_bgen l1 = small_bgen(n, 40);
  l1.layout = 1;
  for (auto& v : l1.variants) {
    v.values.clear();
    for (std::size_t i = 0; i < 3 * n; ++i) v.values.push_back(rng() % 20000);
  }
  for (const unsigned compression : {0u, 1u}) {
    l1.compression = compression;
    const auto file = dir / ("l1_" + std::to_string(compression) + ".bgen");
    test::write_file(file, build(l1));
    auto source = std::make_shared<bgen_source>(options(file, {}, compression == 1));
    EXPECT_EQ(expect_decode_equals_read(source, 9), source->columns()) << compression;
  }
}

}  // namespace
}  // namespace colflow::bgen_source_tests
