// Malformed BGEN files and sample files, which the reader must refuse by name (file, variant,
// sample, line), whether found at open, in a read or in a decode on another thread; and random
// damage, which must decode as it reads and never crash.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <random>
#include <thread>

#include "bgen_source_fixture.hpp"

namespace colflow::bgen_source_tests {
namespace {

// Expects `f` to throw colflow::error errc::bad_input whose message holds every `parts`.
template <typename F>
void expect_bad_input(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one mentioning '" << parts.front() << "'";
  } catch (const error& e) {
    EXPECT_EQ(e.kind(), errc::bad_input) << e.message();
    for (const auto& p : parts) EXPECT_NE(e.message().find(p), std::string::npos) << e.message();
  }
}

// ---- Malformed files ---------------------------------------------------------------------------

class BgenMalformedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bytes_ = build(small_bgen(5, 3));
    write("ok.bgen", bytes_);
  }
  std::filesystem::path write(const std::string& name, const std::vector<char>& bytes) {
    test::write_file(dir_ / name, bytes);
    return dir_ / name;
  }
  // Opens `file` and reads every column.
  static void open_and_read(const std::filesystem::path& file,
                            const std::filesystem::path& sample = {}) {
    bgen_source s(options(file, sample));
    read_all(s);
  }
  test::temp_dir dir_;
  std::vector<char> bytes_;
};

TEST_F(BgenMalformedTest, ValidFileReads) { EXPECT_NO_THROW(open_and_read(dir_ / "ok.bgen")); }

TEST_F(BgenMalformedTest, RefusesTruncatedHeader) {
  for (const std::size_t size : {0, 3, 20, 23, 30, 44}) {
    const auto file = write("t.bgen", std::vector<char>(bytes_.begin(), bytes_.begin() + size));
    expect_bad_input([&] { open_and_read(file); }, {"t.bgen"});
  }
  const auto file = write("t.bgen", std::vector<char>(bytes_.begin(), bytes_.begin() + 20));
  expect_bad_input([&] { open_and_read(file); }, {"t.bgen: file is 20 bytes, too short"});
  // Inside the sample identifier block (28 bytes: the first variant starts at byte 52).
  const auto ids = write("i.bgen", std::vector<char>(bytes_.begin(), bytes_.begin() + 40));
  expect_bad_input([&] { open_and_read(ids); }, {"i.bgen", "past the end of the file"});
}

TEST_F(BgenMalformedTest, RefusesTruncatedVariantBlock) {
  // Cut in the middle of the last variant's genotype block, then of its header, then between
  // two variants.
  const std::size_t size = bytes_.size();
  for (const std::size_t cut : {std::size_t{10}, std::size_t{30}}) {
    const auto file = write("t.bgen", std::vector<char>(bytes_.begin(), bytes_.end() - cut));
    expect_bad_input([&] { open_and_read(file); }, {"t.bgen", "variant 2 (rs2)"});
  }
  {
    const auto file = write("t.bgen", std::vector<char>(bytes_.begin(), bytes_.end() - 10));
    expect_bad_input([&] { open_and_read(file); }, {"genotype block", "runs past the end"});
  }
  // Just after variant 0's rsid length field: the rsid is cut.
  const std::size_t first_variant = 4 + 20 + 28;
  const auto file = write(
      "r.bgen", std::vector<char>(bytes_.begin(), bytes_.begin() + first_variant + 2 + 2 + 1));
  expect_bad_input([&] { open_and_read(file); }, {"variant 0", "ends inside the rsid"});
  (void)size;
}

TEST_F(BgenMalformedTest, RefusesMissingVariants) {
  auto bytes = bytes_;
  bytes[8] = 4;  // M = 4 variants, 3 present
  const auto file = write("m.bgen", bytes);
  expect_bad_input([&] { open_and_read(file); }, {"m.bgen", "ends after 3 of the 4 variants"});
}

TEST_F(BgenMalformedTest, RefusesBadMagic) {
  auto bytes = bytes_;
  bytes[19] = 'X';
  const auto file = write("m.bgen", bytes);
  expect_bad_input([&] { open_and_read(file); }, {"m.bgen", "magic number"});
  // Four zero bytes are allowed.
  std::fill(bytes.begin() + 16, bytes.begin() + 20, 0);
  EXPECT_NO_THROW(open_and_read(write("z.bgen", bytes)));
}

TEST_F(BgenMalformedTest, RefusesUnknownLayoutAndCompression) {
  auto bytes = bytes_;
  bytes[20] = static_cast<char>((bytes[20] & ~0x3c) | (3 << 2));  // layout 3
  expect_bad_input([&] { open_and_read(write("l.bgen", bytes)); }, {"l.bgen", "unknown layout 3"});
  bytes = bytes_;
  bytes[20] = static_cast<char>((bytes[20] & ~0x3c) | (0 << 2));  // layout 0
  expect_bad_input([&] { open_and_read(write("l.bgen", bytes)); }, {"unknown layout 0"});
  bytes = bytes_;
  bytes[20] = static_cast<char>(bytes[20] | 3);  // compression 3
  expect_bad_input([&] { open_and_read(write("c.bgen", bytes)); },
                   {"c.bgen", "unknown compression 3"});
  bytes = bytes_;
  bytes[20] = static_cast<char>((bytes[20] & ~0x3f) | (1 << 2) | 2);  // layout 1 with zstd
  expect_bad_input([&] { open_and_read(write("c.bgen", bytes)); },
                   {"zstd compression with layout 1"});
}

TEST_F(BgenMalformedTest, RefusesInconsistentHeaderLengths) {
  auto bytes = bytes_;
  bytes[4] = 19;  // L_H < 20
  expect_bad_input([&] { open_and_read(write("h.bgen", bytes)); }, {"h.bgen", "less than the 20"});
  bytes = bytes_;
  bytes[0] = 10;  // first variant inside the header block
  expect_bad_input([&] { open_and_read(write("h.bgen", bytes)); }, {"runs past the first variant"});
  bytes = bytes_;
  bytes[24] = static_cast<char>(bytes[24] + 1);  // L_SI one byte too long
  expect_bad_input([&] { open_and_read(write("h.bgen", bytes)); }, {"sample identifier block"});
  bytes = bytes_;
  bytes[28] = 4;  // the identifier block's own sample count
  expect_bad_input([&] { open_and_read(write("h.bgen", bytes)); }, {"holds 4 samples"});
  bytes = bytes_;
  bytes[0] = static_cast<char>(0xff), bytes[1] = static_cast<char>(0xff);  // offset past the end
  expect_bad_input([&] { open_and_read(write("h.bgen", bytes)); }, {"past the end of the file"});
}

TEST_F(BgenMalformedTest, RefusesMultiallelicVariant) {
  crafted_bgen b = small_bgen(5, 3);
  b.variants[1].alleles = {"A", "C", "G"};
  b.variants[1].values.clear();  // never read: the header alone is refused
  expect_bad_input([&] { open_and_read(write("multi.bgen", build(b))); },
                   {"multi.bgen: variant 1 (rs1) at byte", "has 3 alleles",
                    "colflow reads biallelic variants", "bcftools norm -m-"});
  b.variants[1].alleles = {"A"};
  expect_bad_input([&] { open_and_read(write("mono.bgen", build(b))); },
                   {"variant 1 (rs1)", "has 1 allele"});
}

TEST_F(BgenMalformedTest, RefusesDecompressedSizeMismatch) {
  for (const std::int64_t delta : {-1, 1, 1000}) {
    crafted_bgen b = small_bgen(5, 3);
    b.variants[2].declared_size_delta = delta;
    const auto file = write("d.bgen", build(b));
    bgen_source s(options(file));  // D is only read back when the block is
    std::vector<std::uint16_t> d(5);
    s.read_dosages(0, d);
    expect_bad_input([&] { s.read_dosages(2, d); },
                     {"d.bgen: variant 2 (rs2)", "does not decompress to the"});
  }
  // A declared size that cannot hold the samples is refused at once.
  crafted_bgen b = small_bgen(5, 3);
  b.variants[0].declared_size_delta = 100000;
  expect_bad_input([&] { bgen_source s(options(write("e.bgen", build(b)))); },
                   {"variant 0 (rs0)", "cannot hold 5 samples"});
}

TEST_F(BgenMalformedTest, RefusesBadProbabilityBlocks) {
  auto refused = [&](crafted_bgen b, const std::vector<std::string>& parts) {
    const auto file = write("p.bgen", build(b));
    bgen_source s(options(file));
    std::vector<std::uint16_t> d(s.rows());
    s.read_dosages(0, d);
    expect_bad_input([&] { s.read_dosages(1, d); }, parts);
  };
  crafted_bgen b = small_bgen(5, 2);
  b.variants[1].values[6] = 200, b.variants[1].values[7] = 100;  // sample 3: 300/255
  refused(b, {"p.bgen: variant 1 (rs1)", "sample 3", "sum to more than one"});
  b = small_bgen(5, 2);
  b.variants[1].ploidy[2] = 3;
  b.variants[1].values.push_back(0);
  refused(b, {"variant 1 (rs1)", "ploidy up to 3", "haploid and diploid"});
  b = small_bgen(5, 2);
  b.variants[1].bits = 0;
  refused(b, {"variant 1", "0 bits"});
  b = small_bgen(5, 2);
  b.variants[1].values.push_back(0);  // one value too many: one byte too long
  refused(b, {"variant 1", "genotype block of", "ploidies and 8-bit probabilities take"});
  b = small_bgen(5, 2);
  b.compression = 0;
  b.variants[1].values.pop_back();
  refused(b, {"variant 1", "probabilities take"});
}

// A damaged block is only found when decoded, on whichever thread decodes it: the error names
// the file and the variant, as read_dosages' does, and the other columns decode.
TEST_F(BgenMalformedTest, DecodeReportsDamagedBlocksByVariant) {
  crafted_bgen b = small_bgen(5, 6);
  b.variants[1].values[6] = 200, b.variants[1].values[7] = 100;  // sample 3: 300/255
  b.variants[2].declared_size_delta = 1;                         // does not decompress
  b.variants[4].ploidy[2] = 3;
  b.variants[4].values.push_back(0);
  const auto file = write("damaged.bgen", build(b));
  auto source = std::make_shared<bgen_source>(options(file));
  // Fetching reads the bytes and parses the variant's header: the blocks are not looked at.
  std::vector<std::unique_ptr<preprocess::column_source::fetched>> raw;
  for (std::uint64_t j = 0; j < 6; ++j) ASSERT_NO_THROW(raw.push_back(source->fetch(j))) << j;
  // Through decode_dosages itself, on another thread.
  std::string message;
  std::thread([&] {
    std::vector<std::uint16_t> d(5);
    try {
      source->decode_dosages(*raw[2], d);
    } catch (const error& e) {
      message = e.message();
      EXPECT_EQ(e.kind(), errc::bad_input);
    }
  }).join();
  EXPECT_NE(message.find("damaged.bgen: variant 2 (rs2) at byte "), std::string::npos) << message;
  EXPECT_NE(message.find("genotype block of"), std::string::npos) << message;
  EXPECT_NE(message.find("does not decompress to the 26 bytes it declares"), std::string::npos)
      << message;

  const auto outcomes = decode_outcomes(source, 4, 7);
  for (const std::uint64_t j : {0, 3, 5}) EXPECT_EQ(outcomes[j].error, "") << j;
  auto expect_error = [&](std::uint64_t j, const std::vector<std::string>& parts) {
    for (const auto& p : parts)
      EXPECT_NE(outcomes[j].error.find(p), std::string::npos) << outcomes[j].error;
  };
  expect_error(1, {"damaged.bgen: variant 1 (rs1)", "sample 3", "sum to more than one"});
  expect_error(2, {"damaged.bgen: variant 2 (rs2)", "does not decompress"});
  expect_error(4, {"damaged.bgen: variant 4 (rs4)", "ploidy up to 3"});
  EXPECT_EQ(expect_decode_equals_read(source), 3u);

  // Misuse: a column of another source, a buffer of another size, a column out of range.
  bgen_source other(options(dir_ / "ok.bgen"));
  std::vector<std::uint16_t> d(5), short_buffer(4);
  EXPECT_THROW(other.decode_dosages(*raw[0], d), error);
  EXPECT_THROW(source->decode_dosages(*raw[0], short_buffer), error);
  EXPECT_THROW(source->fetch(6), error);
  EXPECT_NO_THROW(source->decode_dosages(*raw[0], d));
  EXPECT_NO_THROW(other.decode_dosages(*other.fetch(0), d));
}

// Random damage, read in two steps on four threads: the same dosages and the same errors as
// read_dosages, column by column (and, under the sanitizers, no race and no stray access).
TEST_F(BgenMalformedTest, RandomDamageDecodesAsItReads) {
  std::mt19937_64 rng(23);
  crafted_bgen b = small_bgen(9, 6);
  b.variants[1].ploidy[2] = 1;
  b.variants[1].values.erase(b.variants[1].values.begin() + 5);
  b.variants[2].phased = true;
  b.variants[3].bits = 13;
  b.variants[4].bits = 16;
  std::size_t opened = 0, good = 0;
  for (int layout = 1; layout <= 2; ++layout) {
    for (const unsigned compression : {0u, 1u, 2u}) {
      if (layout == 1 && compression == 2) continue;
      crafted_bgen c = b;
      c.layout = layout;
      c.compression = compression;
      if (layout == 1)
        for (auto& v : c.variants) v.values.assign(27, 1000);
      const auto clean = build(c);
      for (int round = 0; round < 100; ++round) {
        auto bytes = clean;
        const int edits = round == 0 ? 0 : 1 + static_cast<int>(rng() % 3);
        for (int e = 0; e < edits; ++e) bytes[rng() % bytes.size()] = static_cast<char>(rng());
        std::shared_ptr<bgen_source> source;
        try {
          source = std::make_shared<bgen_source>(options(write("damaged.bgen", bytes)));
        } catch (const error&) {
          continue;
        }
        ++opened;
        good += expect_decode_equals_read(source, rng());
      }
    }
  }
  EXPECT_GT(opened, 100u);
  EXPECT_GT(good, 600u);
}

TEST_F(BgenMalformedTest, RefusesBadSampleSources) {
  crafted_bgen b = small_bgen(5, 2);
  b.sample_ids = false;
  const auto file = write("noids.bgen", build(b));
  expect_bad_input([&] { bgen_source s(options(file)); },
                   {"noids.bgen", "no sample identifiers", ".sample"});

  write_sample_file(dir_ / "six.sample", {"a", "b", "c", "d", "e", "f"});
  expect_bad_input([&] { bgen_source s(options(file, dir_ / "six.sample")); },
                   {"six.sample: holds 6 samples, but noids.bgen has 5"});
  write_sample_file(dir_ / "five.sample", {"a", "b", "c", "d", "e"});
  EXPECT_NO_THROW(bgen_source(options(file, dir_ / "five.sample")));
  write_sample_file(dir_ / "dup.sample", {"a", "b", "c", "b", "e"});
  expect_bad_input([&] { bgen_source s(options(file, dir_ / "dup.sample")); },
                   {"dup.sample", "duplicate sample ID 'fb b'"});
  b.sample_ids = true;
  b.samples[3] = "s1";
  expect_bad_input([&] { bgen_source s(options(write("dup.bgen", build(b)))); },
                   {"dup.bgen", "duplicate sample ID '0 s1' (samples 1 and 3)"});

  auto sample_text = [&](const std::string& text) {
    std::ofstream(dir_ / "bad.sample") << text;
    return dir_ / "bad.sample";
  };
  expect_bad_input(
      [&] { bgen_source s(options(file, sample_text("FID IID missing\n0 0 0\na a 0\n"))); },
      {"bad.sample", "line 1", "ID_1 ID_2 missing"});
  expect_bad_input([&] { bgen_source s(options(file, sample_text("ID_1 ID_2 missing\n0 0\n"))); },
                   {"bad.sample", "line 2", "expected 3 types"});
  expect_bad_input(
      [&] { bgen_source s(options(file, sample_text("ID_1 ID_2 missing x\n0 0 0 Q\na a 0 1\n"))); },
      {"bad.sample", "unknown type 'Q'"});
  expect_bad_input(
      [&] { bgen_source s(options(file, sample_text("ID_1 ID_2 missing\n0 0 0\na a 0\nb b\n"))); },
      {"bad.sample", "line 4", "expected 3 fields"});
  expect_bad_input(
      [&] {
        bgen_source s(options(file, sample_text("ID_1 ID_2 missing sex\n0 0 0 D\na a 0 1\n"
                                                "b b 0 M\nc c 0 2\nd d 0 2\ne e 0 1\n")));
      },
      {"bad.sample", "line 4", "invalid sex code 'M'"});
  EXPECT_THROW(bgen_source(options(file, dir_ / "absent.sample")), error);
  EXPECT_THROW(bgen_source(options(dir_ / "absent.bgen")), error);
}

// Random damage to a small file: whatever the bytes, the source either reads every column or
// throws colflow::error (the sanitizer builds check that it never reads out of bounds).
TEST_F(BgenMalformedTest, SurvivesRandomDamage) {
  std::mt19937_64 rng(11);
  crafted_bgen b = small_bgen(7, 4);
  b.variants[1].ploidy[2] = 1;
  b.variants[1].values.erase(b.variants[1].values.begin() + 5);
  b.variants[2].phased = true;
  b.variants[3].bits = 13;
  for (int layout = 1; layout <= 2; ++layout) {
    for (const unsigned compression : {0u, 1u, 2u}) {
      if (layout == 1 && compression == 2) continue;
      crafted_bgen c = b;
      c.layout = layout;
      c.compression = compression;
      if (layout == 1)
        for (auto& v : c.variants) v.values.assign(21, 1000);
      const auto clean = build(c);
      ASSERT_NO_THROW(open_and_read(write("clean.bgen", clean)));
      for (int round = 0; round < 300; ++round) {
        auto bytes = clean;
        const int edits = 1 + static_cast<int>(rng() % 4);
        for (int e = 0; e < edits; ++e) bytes[rng() % bytes.size()] = static_cast<char>(rng());
        if (rng() % 4 == 0) bytes.resize(rng() % bytes.size());
        const auto file = write("damaged.bgen", bytes);
        try {
          open_and_read(file);
        } catch (const error&) {
        }
      }
    }
  }
}

}  // namespace
}  // namespace colflow::bgen_source_tests
