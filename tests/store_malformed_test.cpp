// Malformed stores: truncated files, flipped bytes, inconsistent index entries, headers from
// the future, files from two different stores, broken text files and interrupted writers.
// Every damage must be refused with the right error kind and a message that names the file
// and what is wrong; none may crash (run under ASan/UBSan) or be silently accepted.
//
// This file holds the damage done to every store kind (truncation at every length, every flipped
// frame byte); the single-damage tests on one store are in store_malformed_*_test.cpp: the index
// and headers, the files of a store, the sample and column lists, the writer.
#include <gtest/gtest.h>

#include <iostream>
#include <optional>

#include "store_malformed_fixture.hpp"

namespace colflow::store_malformed_tests {
namespace {

// ---- The stores under test.

struct store_kind {
  value_type type;
  column_encoding encoding;
};

std::string capitalized(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

std::string store_kind_name(const testing::TestParamInfo<store_kind>& info) {
  const column_encoding& e = info.param.encoding;
  return capitalized(std::string(value_type_name(info.param.type))) +
         capitalized(std::string(traits_of(e.codec).name)) + std::to_string(e.level) +
         (e.shuffle ? "Shuffle" : "");
}

std::vector<store_kind> every_store_kind() {
  std::vector<store_kind> kinds;
  for (value_type t : {value_type::genotype, value_type::float64})
    for (const column_encoding& e : test::all_encodings()) {
      if (t == value_type::genotype && e.shuffle) continue;  // shuffle is ignored for genotypes
      kinds.push_back({t, e});
    }
  return kinds;
}

void write_store(const fs::path& path, const store_kind& kind, std::uint64_t seed = 1) {
  if (kind.type == value_type::genotype)
    test::write_genotype_store(path, genotype_rows, store_columns, kind.encoding, seed);
  else
    test::write_float_store(path, kind.type, float_rows, store_columns, kind.encoding, seed);
}

class StoreKindTest : public testing::TestWithParam<store_kind> {
 protected:
  void SetUp() override {
    path_ = dir_ / "store";
    write_store(path_, GetParam());
  }
  test::temp_dir dir_;
  fs::path path_;
};

// ==== 1. Truncation

using StoreTruncationTest = StoreKindTest;

TEST_P(StoreTruncationTest, RejectsDataFileTruncatedAtEveryLength) {
  std::vector<column_entry> entries;
  {
    const store s = store::open(path_);
    for (std::size_t j = 0; j < s.num_columns(); ++j) entries.push_back(s.entry(j));
  }
  const fs::path dat = dat_of(path_);
  const std::uint64_t full = fs::file_size(dat);
  ASSERT_GT(full, header_size);
  std::cout << "data file truncated at each of " << full << " lengths, both access modes\n";
  // Each shorter length is a prefix of the previous one: shrink the file step by step.
  for (std::uint64_t length = full; length-- > 0;) {
    fs::resize_file(dat, length);
    for (access_mode access : {access_mode::mmap, access_mode::pread}) {
      const auto open_it = opening(path_, {access, false});
      if (length < header_size) {
        ASSERT_TRUE(fails_with(open_it, errc::corrupt_header,
                               {"columns.dat", "shorter than its 64-byte header"}))
            << "length " << length;
        continue;
      }
      // The first frame that no longer fits is named.
      std::size_t bad = 0;
      while (entries[bad].offset + entries[bad].frame_size <= length) ++bad;
      ASSERT_TRUE(fails_with(open_it, errc::corrupt_index,
                             {"columns.idx", "entry " + std::to_string(bad) + ":",
                              "past the data file size " + std::to_string(length)}))
          << "length " << length;
    }
  }
}

TEST_P(StoreTruncationTest, RejectsIndexTruncatedAtEveryLength) {
  const fs::path idx = idx_of(path_);
  const std::uint64_t full = fs::file_size(idx);
  ASSERT_EQ(full, header_size + store_columns * entry_size);
  for (std::uint64_t length = full; length-- > 0;) {
    fs::resize_file(idx, length);
    for (access_mode access : {access_mode::mmap, access_mode::pread}) {
      const auto open_it = opening(path_, {access, false});
      if (length < header_size) {
        ASSERT_TRUE(fails_with(open_it, errc::corrupt_header,
                               {"columns.idx", "shorter than its 64-byte header"}))
            << "length " << length;
      } else {
        ASSERT_TRUE(fails_with(
            open_it, errc::corrupt_index,
            {"columns.idx", std::to_string(length) + " bytes, expected " + std::to_string(full)}))
            << "length " << length;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, StoreTruncationTest, testing::ValuesIn(every_store_kind()),
                         store_kind_name);

// ==== 2. Flipped bytes inside frames

using StoreFrameDamageTest = StoreKindTest;

TEST_P(StoreFrameDamageTest, FlippedByteFailsOnlyThatColumnsChecksum) {
  const codec_id codec = GetParam().encoding.codec;
  std::vector<column_entry> entries;
  std::vector<std::vector<double>> pristine;
  {
    const store s = store::open(path_);
    for (std::size_t j = 0; j < s.num_columns(); ++j) {
      entries.push_back(s.entry(j));
      pristine.push_back(stored_values(s, j));
    }
  }
  // Opened once: the shared mapping and pread both see every flip as it is made.
  const store verified = store::open(path_, {access_mode::mmap, true});
  const store verified_pread = store::open(path_, {access_mode::pread, true});
  byte_flipper flipper(dat_of(path_));
  ASSERT_TRUE(flipper.ok());
  std::uint64_t flips = 0, decode_errors = 0;
  for (std::size_t j = 0; j < entries.size(); ++j) {
    const column_entry& e = entries[j];
    const std::size_t other = (j + 1) % entries.size();
    for (std::uint64_t pos = e.offset; pos < e.offset + e.frame_size; ++pos) {
      for (const unsigned char mask : {std::uint8_t{0x01}, std::uint8_t{0xFF}}) {
        SCOPED_TRACE("column " + std::to_string(j) + ", byte " + std::to_string(pos) + " xor " +
                     std::to_string(mask));
        ASSERT_TRUE(flipper.flip(pos, mask));
        ++flips;
        {
          // The index is untouched: opening works, only the damaged frame's checksum fails.
          std::optional<store> s;
          ASSERT_NO_THROW(s.emplace(store::open(path_)));
          for (std::size_t k = 0; k < entries.size(); ++k) {
            if (k == j) {
              ASSERT_TRUE(fails_with([&] { s->verify_checksum(k); }, errc::checksum_mismatch,
                                     {"column " + std::to_string(k) + ":", "columns.dat"}));
            } else {
              ASSERT_NO_THROW(s->verify_checksum(k));
            }
          }

          // Verified reads refuse the frame before decoding it, in both access modes.
          std::vector<double> out(s->num_rows());
          ASSERT_TRUE(fails_with([&] { verified.read_column(j, out, decode_as::stored); },
                                 errc::checksum_mismatch, {"column " + std::to_string(j) + ":"}));
          ASSERT_TRUE(same_bits(stored_values(verified, other), pristine[other]));
          std::vector<std::byte> payload(e.decoded_size);
          ASSERT_TRUE(fails_with([&] { verified_pread.read_payload(j, payload); },
                                 errc::checksum_mismatch, {"column " + std::to_string(j) + ":"}));

          // Unverified: a codec may notice (corrupt_frame) or decode something; never more.
          const auto result = capture([&] { s->read_column(j, out, decode_as::standardized); });
          if (codec == codec_id::none) {
            ASSERT_FALSE(result) << result->message;  // nothing to notice without a checksum
          } else if (result) {
            ++decode_errors;
            ASSERT_EQ(result->kind, errc::corrupt_frame) << result->message;
            ASSERT_NE(result->message.find("column " + std::to_string(j) + ":"), std::string::npos)
                << result->message;
            ASSERT_NE(result->message.find("columns.dat"), std::string::npos) << result->message;
          }
          ASSERT_TRUE(same_bits(stored_values(*s, other), pristine[other]));
        }
        ASSERT_TRUE(flipper.flip(pos, mask));  // restore
      }
    }
  }
  EXPECT_GT(flips, 0u);
  std::cout << "frame damage " << store_kind_name(testing::TestParamInfo<store_kind>(GetParam(), 0))
            << ": " << flips << " single-byte corruptions, all detected by the checksum; "
            << decode_errors << " also by the codec\n";
  // Compressed frames carry structure: some of the damage must be noticed by the codec.
  if (codec != codec_id::none) {
    EXPECT_GT(decode_errors, 0u);
  }
  // Restored: everything reads as before, checksums included.
  const store s = store::open(path_, {access_mode::mmap, true});
  for (std::size_t j = 0; j < entries.size(); ++j) {
    EXPECT_NO_THROW(s.verify_checksum(j));
    EXPECT_TRUE(same_bits(stored_values(s, j), pristine[j]));
  }
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, StoreFrameDamageTest, testing::ValuesIn(every_store_kind()),
                         store_kind_name);

}  // namespace
}  // namespace colflow::store_malformed_tests
