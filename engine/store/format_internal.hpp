// The on-disk layout of store format v1 (docs/FORMAT.md is normative; this mirrors it).
// This file and format.cpp are the only places that turn bytes from disk into values:
// everything read from a header or an index entry is validated here before any use.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "colflow/store/store.hpp"

namespace colflow::detail {

// File names inside a store directory.
inline constexpr const char* data_file_name = "columns.dat";
inline constexpr const char* index_file_name = "columns.idx";
inline constexpr const char* samples_file_name = "samples.tsv";
inline constexpr const char* columns_file_name = "columns.tsv";
inline constexpr const char* manifest_file_name = "manifest.json";

// 8-byte magics in the style of PNG: a non-ASCII first byte, a name, CR LF, ^Z, LF, so that
// text-mode transfers and truncated downloads are caught by the first read.
inline constexpr std::array<std::uint8_t, 8> data_magic = {0x89, 'C',  'F',  'D',
                                                           0x0D, 0x0A, 0x1A, 0x0A};
inline constexpr std::array<std::uint8_t, 8> index_magic = {0x89, 'C',  'F',  'I',
                                                            0x0D, 0x0A, 0x1A, 0x0A};

inline constexpr std::size_t data_header_size = 64;
inline constexpr std::size_t index_header_size = 64;
inline constexpr std::size_t index_entry_size = 72;

// Data file header (64 bytes):
//   0  8  Magic            data_magic
//   8  2  Version_Major    1
//  10  2  Version_Minor    0
//  12  4  Header_Flags     reserved, must be 0
//  16 16  Store_Id         random, equal in data and index
//  32  8  Num_Rows
//  40  8  Num_Columns
//  48  1  Value_Type       1 float64, 2 float32, 3 genotype
//  49  7  Reserved         must be 0
//  56  8  Header_Checksum  XXH3-64 of bytes 0..55
//
// Index file header (64 bytes): the same fields up to byte 48, then
//  48  1  Value_Type
//  49  1  Reserved         must be 0
//  50  2  Entry_Size       72
//  52  4  Reserved         must be 0
//  56  8  Index_Checksum   XXH3-64 of bytes 0..55 followed by all entries
//
// Index entry (72 bytes), one per column, in column order:
//   0  8  Frame_Offset     absolute offset in the data file
//   8  8  Frame_Size
//  16  8  Decoded_Size     = decoded_column_bytes(Value_Type, Num_Rows)
//  24  8  Frame_Checksum   XXH3-64 of the frame's bytes
//  32  8  Observed_Count   <= Num_Rows
//  40  8  Mean             IEEE-754 double
//  48  8  SD               IEEE-754 double, finite and >= 0 (0 when Observed_Count is 0)
//  56  8  A1_Freq          IEEE-754 double (NaN for dense columns)
//  64  1  Codec_Id
//  65  1  Codec_Level      signed, informational
//  66  2  Column_Flags     bits 0-2 defined, others reserved (must be 0)
//  68  4  Reserved         must be 0

struct file_header {
  std::uint16_t major = format_version_major;
  std::uint16_t minor = format_version_minor;
  std::array<std::uint8_t, 16> store_id{};
  std::uint64_t rows = 0;
  std::uint64_t columns = 0;
  value_type type = value_type::float64;
};

// Serialise headers and entries (little-endian, whatever the host).
std::array<std::byte, data_header_size> encode_data_header(const file_header& h);
// The index header's checksum covers the entries too: pass them all.
std::array<std::byte, index_header_size> encode_index_header(const file_header& h,
                                                             std::span<const std::byte> entries);
std::array<std::byte, index_entry_size> encode_entry(const column_entry& e);

// Parse and validate. `file` names the file in error messages.
file_header decode_data_header(std::span<const std::byte> bytes, const std::string& file);
file_header decode_index_header(std::span<const std::byte> bytes, const std::string& file);
column_entry decode_entry(const std::byte* bytes) noexcept;

// Validates every entry of the index (`entries` = all entry bytes) against the header and the
// data file size: codec known, flags and reserved bits, decoded size, frame inside the file
// and after the previous one (overflow-safe), stats in range. Throws errc::corrupt_index
// naming the entry and `file`.
void validate_entries(std::span<const std::byte> entries, const file_header& h,
                      std::uint64_t data_file_size, const std::string& file);

// Checks the index checksum (header bytes 0..55 then entries).
void validate_index_checksum(std::span<const std::byte> header, std::span<const std::byte> entries,
                             const std::string& file);

}  // namespace colflow::detail
