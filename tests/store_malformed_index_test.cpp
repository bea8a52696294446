// Malformed stores, one damage at a time: inconsistent index entries (offsets, sizes, codecs,
// flags, statistics), index and data headers damaged byte by byte, reserved bits and header
// fields. Each must be refused at open with the right error kind, naming the file and the entry.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "store_malformed_fixture.hpp"

namespace colflow::store_malformed_tests {
namespace {

// Sets `width` bytes of field `field` of index entry `entry` to `value` and recomputes the
// Index_Checksum, so that only the entry's inconsistency remains to be found.
void rewrite_index_entry(const fs::path& store_dir, std::size_t entry, std::size_t field,
                         std::uint64_t value, std::size_t width = 8) {
  auto idx = test::read_file(idx_of(store_dir));
  put_le(idx, header_size + entry * entry_size + field, value, width);
  fix_index_checksum(idx);
  test::write_file(idx_of(store_dir), idx);
}

std::uint64_t index_entry_field(const fs::path& store_dir, std::size_t entry, std::size_t field,
                                std::size_t width = 8) {
  return get_le(test::read_file(idx_of(store_dir)), header_size + entry * entry_size + field,
                width);
}

TEST_F(StoreMalformedTest, PristineCopyOpensAndReads) { expect_reads_pristine(fresh("copy")); }

TEST_F(StoreMalformedTest, RewrittenIndexWithSameValuesStillOpens) {
  // The helper itself: rewriting a field with its own value and fixing the checksum is harmless.
  const fs::path p = fresh("same");
  rewrite_index_entry(p, 2, frame_offset_field, index_entry_field(p, 2, frame_offset_field));
  expect_reads_pristine(p);
}

// ==== 3. Inconsistent index entries

TEST_F(StoreMalformedTest, RejectsOffsetPastEndOfFile) {
  const fs::path p = fresh("past");
  const std::uint64_t data_size = fs::file_size(dat_of(p));
  const std::size_t last = store_columns - 1;
  rewrite_index_entry(p, last, frame_offset_field, data_size + 1000);
  EXPECT_TRUE(fails_with(opening(p), errc::corrupt_index,
                         {"columns.idx", "entry " + std::to_string(last) + ":",
                          "past the data file size " + std::to_string(data_size)}));
}

TEST_F(StoreMalformedTest, RejectsLastFrameEndingPastEndOfFile) {
  const fs::path p = fresh("past-end");
  const std::uint64_t data_size = fs::file_size(dat_of(p));
  const std::size_t last = store_columns - 1;
  rewrite_index_entry(p, last, frame_size_field, index_entry_field(p, last, frame_size_field) + 1);
  EXPECT_TRUE(fails_with(opening(p), errc::corrupt_index,
                         {"columns.idx", "entry " + std::to_string(last) + ":",
                          "past the data file size " + std::to_string(data_size)}));
}

TEST_F(StoreMalformedTest, RejectsFrameSizeWrappingAround) {
  for (std::size_t j : {std::size_t{0}, store_columns - 1}) {
    const fs::path p = fresh("wrap" + std::to_string(j));
    const std::uint64_t offset = index_entry_field(p, j, frame_offset_field);
    // offset + size == 9 modulo 2^64.
    rewrite_index_entry(p, j, frame_size_field,
                        std::numeric_limits<std::uint64_t>::max() - offset + 10);
    for (access_mode access : {access_mode::mmap, access_mode::pread})
      EXPECT_TRUE(fails_with(
          opening(p, {access, false}), errc::corrupt_index,
          {"columns.idx", "entry " + std::to_string(j) + ":", "past the data file size"}))
          << "entry " << j;
  }
}

TEST_F(StoreMalformedTest, RejectsOffsetNearTwoToTheSixtyFour) {
  const fs::path p = fresh("huge-offset");
  const std::size_t last = store_columns - 1;
  rewrite_index_entry(p, last, frame_offset_field, std::numeric_limits<std::uint64_t>::max() - 5);
  EXPECT_TRUE(fails_with(opening(p), errc::corrupt_index,
                         {"entry " + std::to_string(last) + ":", "past the data file size"}));
}

TEST_F(StoreMalformedTest, RejectsOverlappingFrames) {
  const fs::path p = fresh("overlap");
  const std::uint64_t previous = index_entry_field(p, 1, frame_offset_field);
  rewrite_index_entry(p, 2, frame_offset_field, previous + 1);
  EXPECT_TRUE(fails_with(opening(p), errc::corrupt_index, {"columns.idx", "entry 2:", "overlaps"}));
}

TEST_F(StoreMalformedTest, RejectsFrameOverlappingTheHeader) {
  const fs::path p = fresh("over-header");
  rewrite_index_entry(p, 0, frame_offset_field, 10);
  EXPECT_TRUE(fails_with(opening(p), errc::corrupt_index,
                         {"columns.idx", "entry 0:", "overlaps the header"}));
}

TEST_F(StoreMalformedTest, RejectsGapBetweenFrames) {
  // Five bytes inserted after frame 1 and the later offsets moved along: every frame is whole
  // and inside the file, but bytes that no checksum covers sit between two frames.
  const fs::path p = fresh("gap");
  const std::uint64_t end1 =
      index_entry_field(p, 1, frame_offset_field) + index_entry_field(p, 1, frame_size_field);
  auto dat = test::read_file(dat_of(p));
  dat.insert(dat.begin() + static_cast<std::ptrdiff_t>(end1), 5, '\0');
  test::write_file(dat_of(p), dat);
  for (std::size_t j = 2; j < store_columns; ++j)
    rewrite_index_entry(p, j, frame_offset_field, index_entry_field(p, j, frame_offset_field) + 5);
  EXPECT_TRUE(fails_with(opening(p), errc::corrupt_index,
                         {"columns.idx", "entry 2:", "gap", std::to_string(end1)}));
}

TEST_F(StoreMalformedTest, RejectsFramesOutOfOrder) {
  // Entries 1 and 2 swapped: each frame is inside the file, but they are out of order.
  const fs::path p = fresh("swapped");
  auto idx = test::read_file(idx_of(p));
  std::swap_ranges(idx.begin() + header_size + entry_size,
                   idx.begin() + header_size + 2 * entry_size,
                   idx.begin() + header_size + 2 * entry_size);
  fix_index_checksum(idx);
  test::write_file(idx_of(p), idx);
  EXPECT_TRUE(fails_with(opening(p), errc::corrupt_index, {"columns.idx", "entry 1:"}));
}

TEST_F(StoreMalformedTest, RejectsWrongDecodedSize) {
  const std::uint64_t right = genotype_column_bytes(genotype_rows);
  for (std::uint64_t wrong :
       {right - 1, right + 1, std::uint64_t{0}, std::numeric_limits<std::uint64_t>::max()}) {
    const fs::path p = fresh("decoded" + std::to_string(wrong));
    rewrite_index_entry(p, 1, decoded_size_field, wrong);
    EXPECT_TRUE(fails_with(opening(p), errc::corrupt_index,
                           {"columns.idx", "entry 1:", "Decoded_Size " + std::to_string(wrong)}));
  }
}

TEST_F(StoreMalformedTest, RejectsUnknownCodecId) {
  for (std::uint64_t id : {6, 64, 200, 255}) {
    const fs::path p = fresh("codec" + std::to_string(id));
    rewrite_index_entry(p, 1, codec_id_field, id, 1);
    EXPECT_TRUE(fails_with(opening(p), errc::corrupt_index,
                           {"columns.idx", "entry 1:", "unknown Codec_Id " + std::to_string(id)}));
  }
}

TEST_F(StoreMalformedTest, RejectsReservedColumnFlag) {
  for (std::uint64_t flag : {0x0010, 0x0100, 0x8000}) {
    const fs::path p = fresh("flag" + std::to_string(flag));
    rewrite_index_entry(p, 1, column_flags_field, flag, 2);
    EXPECT_TRUE(fails_with(opening(p), errc::corrupt_index,
                           {"columns.idx", "entry 1:", "reserved bits set in Column_Flags"}));
  }
}

TEST_F(StoreMalformedTest, RejectsReservedEntryBytes) {
  const fs::path p = fresh("entry-reserved");
  rewrite_index_entry(p, 3, entry_reserved_field, 1, 4);
  EXPECT_TRUE(fails_with(opening(p), errc::corrupt_index, {"columns.idx", "entry 3:", "reserved"}));
}

TEST_F(StoreMalformedTest, RejectsShuffleFlagOnGenotypeColumn) {
  const fs::path p = fresh("geno-shuffle");
  rewrite_index_entry(p, 1, column_flags_field, column_flag::shuffled, 2);
  EXPECT_TRUE(fails_with(opening(p), errc::corrupt_index, {"columns.idx", "entry 1:", "genotype"}));
}

TEST_F(StoreMalformedTest, RejectsTheDosageCodecOnAGenotypeColumn) {
  const fs::path p = fresh("geno-dosage-zstd");
  rewrite_index_entry(p, 1, codec_id_field, static_cast<std::uint64_t>(codec_id::dosage_zstd), 1);
  EXPECT_TRUE(fails_with(opening(p), errc::corrupt_index,
                         {"columns.idx", "entry 1:", "dosage-zstd codec", "dosage column"}));
}

TEST_F(StoreMalformedTest, RejectsTheFixed16CodecOnAColumnThatIsNotFloat32) {
  const fs::path p = fresh("geno-fixed16-zstd");
  rewrite_index_entry(p, 1, codec_id_field, static_cast<std::uint64_t>(codec_id::fixed16_zstd), 1);
  EXPECT_TRUE(fails_with(opening(p), errc::corrupt_index,
                         {"columns.idx", "entry 1:", "fixed16-zstd codec", "float32 column"}));
}

TEST_F(StoreMalformedTest, RejectsObservedCountAboveRows) {
  const fs::path p = fresh("observed");
  rewrite_index_entry(p, 2, observed_count_field, genotype_rows + 1);
  EXPECT_TRUE(fails_with(
      opening(p), errc::corrupt_index,
      {"columns.idx", "entry 2:", "Observed_Count " + std::to_string(genotype_rows + 1)}));
}

TEST_F(StoreMalformedTest, RejectsNegativeOrInfiniteSD) {
  const double bad_sds[] = {-1.0, std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::quiet_NaN()};
  for (std::size_t i = 0; i < std::size(bad_sds); ++i) {
    const double sd = bad_sds[i];
    const fs::path p = fresh("sd" + std::to_string(i));
    std::uint64_t bits;
    std::memcpy(&bits, &sd, 8);
    rewrite_index_entry(p, 2, sd_field, bits);
    EXPECT_TRUE(fails_with(opening(p), errc::corrupt_index, {"columns.idx", "entry 2:", "SD"}))
        << "SD " << sd;
  }
}

TEST_F(StoreMalformedTest, RejectsUncompressedFrameOfWrongSize) {
  const fs::path p = fresh_uncompressed("none-size");
  const std::uint64_t size = index_entry_field(p, 1, frame_size_field);
  ASSERT_EQ(size, float_rows * 8);
  for (std::uint64_t wrong : {size - 1, size + 1}) {
    rewrite_index_entry(p, 1, frame_size_field, wrong);
    EXPECT_TRUE(fails_with(
        opening(p), errc::corrupt_index,
        {"columns.idx", "entry 1:", "uncompressed frame of " + std::to_string(wrong) + " bytes"}));
  }
}

TEST_F(StoreMalformedTest, RejectsIndexChecksumMismatch) {
  // Every entry byte changed without recomputing the Index_Checksum.
  const fs::path p = fresh("idx-checksum");
  const auto original = test::read_file(idx_of(p));
  for (std::size_t pos = header_size; pos < original.size(); ++pos) {
    auto idx = original;
    idx[pos] = static_cast<char>(idx[pos] ^ 0x01);
    test::write_file(idx_of(p), idx);
    ASSERT_TRUE(fails_with(opening(p), errc::corrupt_index, {"columns.idx", "Index_Checksum"}))
        << "byte " << pos;
  }
}

TEST_F(StoreMalformedTest, RejectsTrailingBytesAfterLastFrame) {
  const fs::path p = fresh("trailing");
  auto dat = test::read_file(dat_of(p));
  const std::uint64_t size = dat.size();
  dat.resize(dat.size() + 10, '\0');
  test::write_file(dat_of(p), dat);
  EXPECT_TRUE(fails_with(
      opening(p), errc::corrupt_index,
      {"columns.idx", "end at " + std::to_string(size), std::to_string(size + 10) + " bytes"}));
}

// ==== Damaged headers, byte by byte

TEST_F(StoreMalformedTest, RejectsEveryFlippedDataHeaderByte) {
  const fs::path p = fresh("data-header");
  const auto original = test::read_file(dat_of(p));
  for (std::size_t pos = 0; pos < header_size; ++pos) {
    for (const unsigned char mask : {std::uint8_t{0x01}, std::uint8_t{0x80}}) {
      auto dat = original;
      dat[pos] = static_cast<char>(dat[pos] ^ mask);
      test::write_file(dat_of(p), dat);
      ASSERT_TRUE(fails_with_any(
          opening(p), {errc::bad_magic, errc::unsupported_version, errc::corrupt_header}))
          << "byte " << pos << " xor " << int{mask};
    }
  }
}

TEST_F(StoreMalformedTest, RejectsEveryFlippedIndexHeaderByte) {
  const fs::path p = fresh("index-header");
  const auto original = test::read_file(idx_of(p));
  for (std::size_t pos = 0; pos < header_size; ++pos) {
    for (const unsigned char mask : {std::uint8_t{0x01}, std::uint8_t{0x80}}) {
      auto idx = original;
      idx[pos] = static_cast<char>(idx[pos] ^ mask);
      test::write_file(idx_of(p), idx);
      ASSERT_TRUE(fails_with_any(opening(p), {errc::bad_magic, errc::unsupported_version,
                                              errc::corrupt_header, errc::corrupt_index}))
          << "byte " << pos << " xor " << int{mask};
    }
  }
}

// ==== 6. Reserved bits and header fields

TEST_F(StoreMalformedTest, RejectsReservedIndexHeaderFlags) {
  for (std::uint64_t flags : {0x1u, 0x80000000u}) {
    const fs::path p = fresh("idx-flags" + std::to_string(flags));
    rewrite_index_header(p, header_flags_pos, flags, 4);
    EXPECT_TRUE(
        fails_with(opening(p), errc::corrupt_header, {"reserved", "Header_Flags", "columns.idx"}));
  }
}

TEST_F(StoreMalformedTest, RejectsReservedDataHeaderFlags) {
  for (std::uint64_t flags : {0x1u, 0x80000000u}) {
    const fs::path p = fresh("dat-flags" + std::to_string(flags));
    rewrite_data_header(p, header_flags_pos, flags, 4);
    EXPECT_TRUE(
        fails_with(opening(p), errc::corrupt_header, {"reserved", "Header_Flags", "columns.dat"}));
  }
}

TEST_F(StoreMalformedTest, RejectsReservedHeaderBytes) {
  const fs::path p = fresh("dat-reserved");
  rewrite_data_header(p, 52, 1, 1);
  EXPECT_TRUE(fails_with(opening(p), errc::corrupt_header, {"reserved", "columns.dat"}));
  const fs::path q = fresh("idx-reserved");
  rewrite_index_header(q, 49, 1, 1);
  EXPECT_TRUE(fails_with(opening(q), errc::corrupt_header, {"reserved", "columns.idx"}));
}

TEST_F(StoreMalformedTest, RejectsDataHeaderChecksumMismatch) {
  const fs::path p = fresh("dat-checksum");
  rewrite_data_header(p, 20, 0xAB, 1, /*fix_checksum=*/false);  // inside Store_Id
  EXPECT_TRUE(fails_with(opening(p), errc::corrupt_header, {"checksum", "columns.dat"}));
}

TEST_F(StoreMalformedTest, RejectsWrongEntrySize) {
  const fs::path p = fresh("entry-size");
  rewrite_index_header(p, entry_size_pos, 64, 2);
  EXPECT_TRUE(fails_with(opening(p), errc::corrupt_header, {"Entry_Size", "columns.idx"}));
}

TEST_F(StoreMalformedTest, RejectsUnknownValueType) {
  for (std::uint64_t type : {0, 5, 255}) {
    const fs::path p = fresh("type" + std::to_string(type));
    rewrite_index_header(p, value_type_pos, type, 1);
    EXPECT_TRUE(fails_with(opening(p), errc::corrupt_header,
                           {"Value_Type " + std::to_string(type), "columns.idx"}));
  }
  // A type a later minor version may add: the store is not damaged, this build is too old.
  const fs::path p = fresh("type5-minor9");
  rewrite_index_header(p, value_type_pos, 5, 1);
  rewrite_index_header(p, 10, 9, 2);
  EXPECT_TRUE(fails_with(opening(p), errc::unsupported_version,
                         {"version 1.9", "Value_Type 5", "up to version 1.4", "columns.idx"}));
}

TEST_F(StoreMalformedTest, RejectsZeroRows) {
  const fs::path p = fresh("rows0");
  rewrite_index_header(p, num_rows_pos, 0, 8);
  EXPECT_TRUE(fails_with(opening(p), errc::corrupt_header, {"Num_Rows", "columns.idx"}));
}

}  // namespace
}  // namespace colflow::store_malformed_tests
