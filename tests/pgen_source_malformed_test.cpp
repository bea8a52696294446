// The PLINK 2 reader on hand-made files whose bytes the test chooses: every main-track type
// and dosage track decoded to the values pgen_spec gives them, and malformed files refused with
// a message naming the file and the record, nothing written.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <random>
#include <thread>

#include "colflow/codec/dosage_codec.hpp"
#include "colflow/codec/genotype_codec.hpp"
#include "pgen_source_fixture.hpp"

namespace colflow {
namespace {

using preprocess::pgen_paths;
using preprocess::pgen_source;

constexpr std::uint16_t miss = dosage_missing;

// Seven samples (not a multiple of 4); each record's categories written in its comment
// (0 hom-REF, 1 het, 2 hom-ALT, 3 missing), v0..v6 one per main-track type.
std::vector<pgen_record> every_main_track() {
  return {
      {0x00, {0xe4, 0x24}},                    // plain: 0 1 2 3 0 1 2
      {0x01, {0x01, 0x19, 0x01, 0x06, 0x02}},  // 1-bit {0,1}: 1 0 0 1 1 0, sample 6 -> 2
      {0x02, {0x02, 0x02, 0x0b, 0x03}},        // LD on v1: sample 2 -> 3, sample 5 -> 2
      {0x03, {0x02, 0x00, 0x03, 0x06}},        // LD on v1, 0 -> 3, 6 -> 0, then inverted
      {0x04, {0x01, 0x06, 0x01}},              // all 0, sample 6 -> 1
      {0x06, {0x02, 0x01, 0x03, 0x01}},        // all 2, sample 1 -> 3, sample 2 -> 0
      {0x07, {0x00}},                          // all 3
  };
}

const std::vector<std::vector<int>> every_main_track_categories = {
    {0, 1, 2, 3, 0, 1, 2}, {1, 0, 0, 1, 1, 0, 2}, {1, 0, 3, 1, 1, 2, 2}, {3, 2, 2, 1, 1, 2, 2},
    {0, 0, 0, 0, 0, 0, 1}, {2, 3, 0, 2, 2, 2, 2}, {3, 3, 3, 3, 3, 3, 3}};

TEST(PgenSourceDecodeTest, EveryMainTrackTypeDecodesAsTheSpecificationSays) {
  test::temp_dir dir;
  const std::string p = (dir / "x").string();
  write_pgen_fileset(p, 7, every_main_track());
  pgen_source source(pgen_paths::from_prefix(p));
  ASSERT_EQ(source.kind(), value_type::genotype);
  ASSERT_EQ(source.columns(), 7u);
  EXPECT_EQ(source.samples()[1].sex, "2");
  EXPECT_EQ(source.samples()[2].sex, "1");
  EXPECT_EQ(source.samples()[3].fid, "f3");
  std::vector<std::uint8_t> codes(genotype_column_bytes(7));
  // Category -> count of A1 = ALT, -1 missing.
  const int alt_count[4] = {0, 1, 2, -1};
  for (std::uint64_t j = 0; j < 7; ++j) {
    const column_info c = source.column(j);
    EXPECT_EQ(c.id, std::string(1, 'v').append(std::to_string(j)));
    EXPECT_EQ(c.a1, "C");
    EXPECT_EQ(c.a2, "A");
    source.read_genotypes(j, codes);
    for (std::uint64_t i = 0; i < 7; ++i)
      EXPECT_EQ(test::dosage_at(codes, i), alt_count[every_main_track_categories[j][i]])
          << "variant " << j << " sample " << i;
    EXPECT_EQ(codes[1] >> 6, 0) << "padding bits of variant " << j;
  }
}

TEST(PgenSourceDecodeTest, DosageTracksAndPhaseDecodeAsTheSpecificationSays) {
  test::temp_dir dir;
  const std::string p = (dir / "x").string();
  write_pgen_fileset(
      p, 7,
      {
          // Plain 1 1 0 2 3 1 0; phase with phasepresent (samples 0 and 5 phased); dosages as a
          // difference list: sample 3 0.5, sample 5 1.5.
          {0x30, {0x85, 0x07, 0x0b, 0x01, 0x02, 0x03, 0x02, 0x00, 0x20, 0x00, 0x60}},
          // All hom-REF; every sample's dosage, 65535 missing.
          {0x44, {0x00, 0, 0, 100, 0, 0xff, 0xff, 0, 0x80, 0, 0x40, 1, 0, 2, 0}},
          // All missing; a bit array (samples 1 and 6) of dosages.
          {0x67, {0x00, 0x42, 0x00, 0x10, 0x00, 0x80}},
          // Plain 0 1 2 3 0 1 2 without dosages: the hard calls.
          {0x00, {0xe4, 0x24}},
          // All hom-ALT, sample 0 het; phase without phasepresent; sample 2's dosage 30000/16384.
          {0x36, {0x01, 0x00, 0x01, 0x02, 0x01, 0x02, 0x30, 0x75}},
      });
  pgen_source source(pgen_paths::from_prefix(p));
  ASSERT_EQ(source.kind(), value_type::dosage);
  EXPECT_EQ(source.phased_variants(), 2u);
  const std::vector<std::vector<std::uint16_t>> expected = {
      {16384, 16384, 0, 8192, miss, 24576, 0},
      {0, 100, miss, 32768, 16384, 1, 2},
      {miss, 4096, miss, miss, miss, miss, 32768},
      {0, 16384, 32768, miss, 0, 16384, 32768},
      {16384, 32768, 30000, 32768, 32768, 32768, 32768}};
  std::vector<std::uint16_t> d(7);
  for (std::uint64_t j = 0; j < expected.size(); ++j) {
    source.read_dosages(j, d);
    EXPECT_EQ(d, expected[j]) << "variant " << j;
  }
}

// Fetched in order, decoded on four threads at once in a shuffled order (LD-compressed records
// with the records they refer to): what read_genotypes / read_dosages give, for 30 copies of
// the hand-made records of each test above.
TEST(PgenSourceDecodeTest, DecodeOnThreadsEqualsReadInOrder) {
  test::temp_dir dir;
  const std::string p = (dir / "x").string();
  std::vector<pgen_record> records;
  for (int copy = 0; copy < 30; ++copy)
    for (const pgen_record& r : every_main_track()) records.push_back(r);
  records.push_back({0x44, {0x00, 0, 0, 100, 0, 0xff, 0xff, 0, 0x80, 0, 0x40, 1, 0, 2, 0}});
  write_pgen_fileset(p, 7, records);
  pgen_source source(pgen_paths::from_prefix(p));
  ASSERT_EQ(source.kind(), value_type::dosage);
  const std::uint64_t m = source.columns();
  std::vector<std::vector<std::uint16_t>> expected(m, std::vector<std::uint16_t>(7));
  for (std::uint64_t j = 0; j < m; ++j) source.read_dosages(j, expected[j]);
  std::vector<std::unique_ptr<preprocess::column_source::fetched>> fetched;
  for (std::uint64_t j = 0; j < m; ++j) fetched.push_back(source.fetch(j));
  std::vector<std::uint64_t> order(m);
  for (std::uint64_t j = 0; j < m; ++j) order[j] = j;
  std::shuffle(order.begin(), order.end(), std::mt19937_64(3));
  std::vector<std::vector<std::uint16_t>> got(m, std::vector<std::uint16_t>(7));
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (std::uint64_t k = t; k < m; k += 4)
        source.decode_dosages(*fetched[order[k]], got[order[k]]);
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(got, expected);
  EXPECT_EQ(expected[3 * 7 + 3],
            (std::vector<std::uint16_t>{miss, 32768, 32768, 16384, 16384, 32768, 32768}));
}

// A copy of every_main_track's fileset with `change` applied to the .pgen's bytes.
std::string damaged(const test::temp_dir& dir,
                    const std::function<void(std::vector<std::uint8_t>&)>& change) {
  const std::string p = (dir / "x").string();
  std::vector<std::uint8_t> b = write_pgen_fileset(p, 7, every_main_track());
  change(b);
  test::write_file(p + ".pgen", std::vector<char>(b.begin(), b.end()));
  return p;
}

TEST(PgenSourceMalformedTest, BadMagicIsRefused) {
  test::temp_dir dir;
  const std::string p = damaged(dir, [](auto& b) { b[1] = 0x1c; });
  expect_bad_input([&] { pgen_source s(pgen_paths::from_prefix(p)); }, "x.pgen",
                   "not a PLINK 2 .pgen file");
}

TEST(PgenSourceMalformedTest, RecordTypeOutOfRangeIsRefusedByVariant) {
  test::temp_dir dir;
  const std::string p = damaged(dir, [](auto& b) { b[20 + 1] = 0x05; });
  expect_bad_input([&] { pgen_source s(pgen_paths::from_prefix(p)); }, "x.pgen",
                   "variant 1: record type 0x05 is out of range");
}

TEST(PgenSourceMalformedTest, LdCompressedFirstRecordIsRefused) {
  test::temp_dir dir;
  const std::string p = damaged(dir, [](auto& b) { b[20] = 0x02; });
  expect_bad_input([&] { pgen_source s(pgen_paths::from_prefix(p)); }, "x.pgen",
                   "variant 0: record type 0x02 is LD-compressed");
}

TEST(PgenSourceMalformedTest, PvarShorterThanThePgenIsRefused) {
  test::temp_dir dir;
  const std::string p = damaged(dir, [](auto&) {});
  std::ofstream(p + ".pvar") << "#CHROM\tPOS\tID\tREF\tALT\n1\t1\tv0\tA\tC\n1\t2\tv1\tA\tC\n";
  expect_bad_input([&] { pgen_source s(pgen_paths::from_prefix(p)); }, "x.pvar",
                   "lists 2 variants, but x.pgen holds 7");
}

TEST(PgenSourceMalformedTest, PvarWithoutVariantsSaysWhetherItIsEmpty) {
  test::temp_dir dir;
  const std::string p = damaged(dir, [](auto&) {});
  std::ofstream(p + ".pvar", std::ios::trunc).flush();
  expect_bad_input([&] { pgen_source s(pgen_paths::from_prefix(p)); }, "x.pvar",
                   "no variants (the file is empty)");
  std::ofstream(p + ".pvar", std::ios::trunc) << "##fileformat\n#CHROM\tPOS\tID\tREF\tALT\n";
  expect_bad_input([&] { pgen_source s(pgen_paths::from_prefix(p)); }, "x.pvar",
                   "no variants (the file ends in its header)");
}

TEST(PgenSourceMalformedTest, PsamDuplicateIdIsRefusedByLine) {
  test::temp_dir dir;
  const std::string p = damaged(dir, [](auto&) {});
  std::ofstream(p + ".psam") << "#IID\tSEX\na\t1\nb\t2\nc\t1\nd\t1\nb\t2\nf\t1\ng\t1\n";
  expect_bad_input([&] { pgen_source s(pgen_paths::from_prefix(p)); }, "x.psam",
                   "line 6: sample 0 b appears twice (first on line 3)");
}

TEST(PgenSourceMalformedTest, TruncatedFileIsRefusedByRecordAndNothingIsWritten) {
  test::temp_dir dir;
  const std::string p = damaged(dir, [](auto& b) { b.pop_back(); });
  expect_bad_input([&] { pgen_source s(pgen_paths::from_prefix(p)); }, "x.pgen",
                   "variant 6: its record of 1 bytes at byte");
  std::string out;
  EXPECT_NE(
      test::run_cli("preprocess --quiet --pfile " + p + " --out " + (dir / "s.cf").string(), out),
      0);
  EXPECT_NE(out.find("x.pgen: variant 6"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(dir / "s.cf"));
}

TEST(PgenSourceMalformedTest, RecordThatContradictsItsTypeIsRefusedWhenRead) {
  test::temp_dir dir;
  // Variant 4's difference list names sample 9 of 7.
  const std::string p = damaged(dir, [](auto& b) { b[b.size() - 1 - 4 - 3 + 1] = 0x09; });
  pgen_source source(pgen_paths::from_prefix(p));
  std::vector<std::uint8_t> codes(genotype_column_bytes(7));
  for (std::uint64_t j = 0; j < 4; ++j) source.read_genotypes(j, codes);
  expect_bad_input([&] { source.read_genotypes(4, codes); }, "x.pgen",
                   "variant 4: record of type 4 (3 bytes): its difference list names sample 9");
}

// A dosage above two copies is refused in each kind of dosage track, naming the variant and
// the value (every sample's dosage, where 65535 is a missing one; a difference list; a bit
// array).
TEST(PgenSourceMalformedTest, DosageAboveTwoCopiesIsRefusedInEveryTrack) {
  test::temp_dir dir;
  const std::string p = (dir / "x").string();
  write_pgen_fileset(
      p, 7,
      {
          {0x44, {0x00, 0, 0, 100, 0, 0xff, 0xff, 0x41, 0x9c, 0, 0x40, 1, 0, 2, 0}},  // 40001
          {0x24, {0x00, 0x01, 0x03, 0xff, 0xff}},        // sample 3: 65535, not a dosage here
          {0x64, {0x00, 0x42, 0x00, 0x10, 0x01, 0x80}},  // sample 6: 32769
      });
  pgen_source source(pgen_paths::from_prefix(p));
  std::vector<std::uint16_t> d(7);
  expect_bad_input([&] { source.read_dosages(0, d); }, "x.pgen",
                   "variant 0: record of type 68 (15 bytes): a dosage of 40001 exceeds 32768");
  expect_bad_input([&] { source.read_dosages(1, d); }, "x.pgen",
                   "variant 1: record of type 36 (5 bytes): a dosage of 65535 exceeds 32768");
  expect_bad_input([&] { source.read_dosages(2, d); }, "x.pgen",
                   "variant 2: record of type 100 (6 bytes): a dosage of 32769 exceeds 32768");
}

// The .pgen is mapped: a file cut short after it was opened (by another program) reads zeros
// past its new end, and the decode that read them is refused rather than taken for calls: plain
// records, whose zeros would be calls, and 1-bit ones, whose zeros are no valid record.
TEST(PgenSourceMalformedTest, PgenThatShrinksWhileItIsReadIsRefused) {
  // 80 records of 800 samples: plain (200 bytes), or 1-bit (the pair 0 / 1, 100 bytes of bits,
  // an empty difference list); over two pages of the file either way.
  std::vector<std::uint8_t> one_bit(102, 0x33);
  one_bit.front() = 0x01;
  one_bit.back() = 0x00;
  for (const pgen_record& record :
       {pgen_record{0x00, std::vector<std::uint8_t>(200, 0x55)}, pgen_record{0x01, one_bit}}) {
    test::temp_dir dir;
    const std::string p = (dir / "x").string();
    write_pgen_fileset(p, 800, std::vector<pgen_record>(80, record));
    pgen_source source(pgen_paths::from_prefix(p));
    std::vector<std::uint8_t> codes(genotype_column_bytes(800));
    source.read_genotypes(0, codes);
    std::filesystem::resize_file(p + ".pgen", 4096);
    try {
      source.read_genotypes(79, codes);
      ADD_FAILURE() << "no error for a record past the file's new end, type " << +record.type;
    } catch (const error& e) {
      EXPECT_EQ(e.code(), make_error_code(errc::io_error)) << e.what();
      EXPECT_NE(std::string(e.what()).find("x.pgen: the file shrank while it was being read"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace colflow
