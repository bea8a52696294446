// Encoding and validating a store's binary headers and index entries (docs/FORMAT.md).
#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <sstream>

#include "colflow/error.hpp"
#include "store/format_internal.hpp"

namespace colflow::detail {
namespace {

// Little-endian field access, whatever the host's byte order.
template <typename T>
void put(std::byte* p, T value) noexcept {
  std::uint64_t bits;
  if constexpr (std::is_same_v<T, double>) {
    bits = std::bit_cast<std::uint64_t>(value);
  } else {
    bits = static_cast<std::uint64_t>(value);
  }
  for (std::size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<std::byte>(bits >> (8 * i));
}

template <typename T>
T get(const std::byte* p) noexcept {
  if constexpr (std::endian::native == std::endian::little) {
    T value;  // the layout is the host's: one load
    std::memcpy(&value, p, sizeof(T));
    return value;
  }
  std::uint64_t bits = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i)
    bits |= static_cast<std::uint64_t>(std::to_integer<std::uint8_t>(p[i])) << (8 * i);
  if constexpr (std::is_same_v<T, double>) {
    return std::bit_cast<double>(bits);
  } else {
    return static_cast<T>(bits);
  }
}

bool all_zero(const std::byte* p, std::size_t n) noexcept {
  return std::all_of(p, p + n, [](std::byte b) { return b == std::byte{0}; });
}

std::string hex(std::uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

// Writes the fields common to both headers (bytes 0..48).
void put_common(std::byte* p, const std::array<std::uint8_t, 8>& magic, const file_header& h) {
  std::memcpy(p, magic.data(), 8);
  put<std::uint16_t>(p + 8, h.major);
  put<std::uint16_t>(p + 10, h.minor);
  put<std::uint32_t>(p + 12, 0);
  std::memcpy(p + 16, h.store_id.data(), 16);
  put<std::uint64_t>(p + 32, h.rows);
  put<std::uint64_t>(p + 40, h.columns);
  put<std::uint8_t>(p + 48, static_cast<std::uint8_t>(h.type));
}

// Parses and validates the common fields. Checks are ordered so that the most telling
// message wins: not our file, then a version we cannot read, then damaged fields.
file_header get_common(std::span<const std::byte> bytes, const std::array<std::uint8_t, 8>& magic,
                       const char* what, const std::string& file) {
  if (bytes.size() < data_header_size)
    throw error(errc::corrupt_header, std::string(what) + " is " + std::to_string(bytes.size()) +
                                          " bytes, shorter than its 64-byte header (" + file + ")");
  const std::byte* p = bytes.data();
  if (std::memcmp(p, magic.data(), 8) != 0)
    throw error(errc::bad_magic,
                std::string("not a colflow ") + what + ": bad magic (" + file + ")");
  file_header h;
  h.major = get<std::uint16_t>(p + 8);
  h.minor = get<std::uint16_t>(p + 10);
  if (h.major != format_version_major)
    throw error(errc::unsupported_version,
                std::string(what) + " has format version " + std::to_string(h.major) + "." +
                    std::to_string(h.minor) + "; this build reads version " +
                    std::to_string(format_version_major) + ".x (" + file + ")");
  const auto flags = get<std::uint32_t>(p + 12);
  if (flags != 0)
    throw error(errc::corrupt_header, std::string(what) + ": reserved bits set in Header_Flags (" +
                                          hex(flags) + ") (" + file + ")");
  std::memcpy(h.store_id.data(), p + 16, 16);
  h.rows = get<std::uint64_t>(p + 32);
  h.columns = get<std::uint64_t>(p + 40);
  const auto type = get<std::uint8_t>(p + 48);
  if (type < 1 || type > 4) {
    if (h.minor > format_version_minor)
      throw error(errc::unsupported_version,
                  std::string(what) + " has format version " + std::to_string(h.major) + "." +
                      std::to_string(h.minor) + " with Value_Type " + std::to_string(type) +
                      ", which this build does not know; it reads up to version " +
                      std::to_string(format_version_major) + "." +
                      std::to_string(format_version_minor) + " (" + file + ")");
    throw error(errc::corrupt_header, std::string(what) + ": unknown Value_Type " +
                                          std::to_string(type) + " (" + file + ")");
  }
  h.type = static_cast<value_type>(type);
  // Num_Rows bounds every size computed from it (rows * 8 must not overflow).
  if (h.rows == 0 || h.rows > (std::uint64_t{1} << 48))
    throw error(errc::corrupt_header, std::string(what) + ": Num_Rows " + std::to_string(h.rows) +
                                          " is outside 1..2^48 (" + file + ")");
  if (h.columns > (std::uint64_t{1} << 48))
    throw error(errc::corrupt_header, std::string(what) + ": Num_Columns " +
                                          std::to_string(h.columns) + " is above 2^48 (" + file +
                                          ")");
  return h;
}

[[noreturn]] void bad_entry(std::uint64_t j, const std::string& what, const std::string& file) {
  throw error(errc::corrupt_index,
              "corrupt index: entry " + std::to_string(j) + ": " + what + " (" + file + ")");
}

}  // namespace

std::array<std::byte, data_header_size> encode_data_header(const file_header& h) {
  std::array<std::byte, data_header_size> b{};
  put_common(b.data(), data_magic, h);
  put<std::uint64_t>(b.data() + 56, XXH3_64bits(b.data(), 56));
  return b;
}

std::array<std::byte, index_header_size> encode_index_header(const file_header& h,
                                                             std::span<const std::byte> entries) {
  std::array<std::byte, index_header_size> b{};
  put_common(b.data(), index_magic, h);
  put<std::uint16_t>(b.data() + 50, static_cast<std::uint16_t>(index_entry_size));
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  XXH3_64bits_update(state, b.data(), 56);
  XXH3_64bits_update(state, entries.data(), entries.size());
  put<std::uint64_t>(b.data() + 56, XXH3_64bits_digest(state));
  XXH3_freeState(state);
  return b;
}

std::array<std::byte, index_entry_size> encode_entry(const column_entry& e) {
  std::array<std::byte, index_entry_size> b{};
  std::byte* p = b.data();
  put<std::uint64_t>(p + 0, e.offset);
  put<std::uint64_t>(p + 8, e.frame_size);
  put<std::uint64_t>(p + 16, e.decoded_size);
  put<std::uint64_t>(p + 24, e.checksum);
  put<std::uint64_t>(p + 32, e.stats.observed);
  put<double>(p + 40, e.stats.mean);
  put<double>(p + 48, e.stats.sd);
  put<double>(p + 56, e.stats.a1_freq);
  put<std::uint8_t>(p + 64, static_cast<std::uint8_t>(e.codec));
  put<std::uint8_t>(p + 65, static_cast<std::uint8_t>(e.level));
  put<std::uint16_t>(p + 66, e.flags);
  return b;
}

file_header decode_data_header(std::span<const std::byte> bytes, const std::string& file) {
  file_header h = get_common(bytes, data_magic, "data file", file);
  if (!all_zero(bytes.data() + 49, 7))
    throw error(errc::corrupt_header,
                "data file: reserved bytes 49..55 are not zero (" + file + ")");
  const auto stored = get<std::uint64_t>(bytes.data() + 56);
  if (stored != XXH3_64bits(bytes.data(), 56))
    throw error(errc::corrupt_header, "data file: header checksum mismatch (" + file + ")");
  return h;
}

file_header decode_index_header(std::span<const std::byte> bytes, const std::string& file) {
  file_header h = get_common(bytes, index_magic, "index file", file);
  if (bytes[49] != std::byte{0} || !all_zero(bytes.data() + 52, 4))
    throw error(errc::corrupt_header, "index file: reserved bytes are not zero (" + file + ")");
  const auto entry_size = get<std::uint16_t>(bytes.data() + 50);
  if (entry_size != index_entry_size)
    throw error(errc::corrupt_header, "index file: Entry_Size is " + std::to_string(entry_size) +
                                          ", expected 72 (" + file + ")");
  return h;
}

void validate_index_checksum(std::span<const std::byte> header, std::span<const std::byte> entries,
                             const std::string& file) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  XXH3_64bits_update(state, header.data(), 56);
  XXH3_64bits_update(state, entries.data(), entries.size());
  const std::uint64_t computed = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  if (computed != get<std::uint64_t>(header.data() + 56))
    throw error(errc::corrupt_index, "corrupt index: Index_Checksum mismatch (" + file + ")");
}

column_entry decode_entry(const std::byte* p) noexcept {
  column_entry e;
  e.offset = get<std::uint64_t>(p + 0);
  e.frame_size = get<std::uint64_t>(p + 8);
  e.decoded_size = get<std::uint64_t>(p + 16);
  e.checksum = get<std::uint64_t>(p + 24);
  e.stats.observed = get<std::uint64_t>(p + 32);
  e.stats.mean = get<double>(p + 40);
  e.stats.sd = get<double>(p + 48);
  e.stats.a1_freq = get<double>(p + 56);
  e.codec = static_cast<codec_id>(get<std::uint8_t>(p + 64));
  e.level = static_cast<std::int8_t>(get<std::uint8_t>(p + 65));
  e.flags = get<std::uint16_t>(p + 66);
  return e;
}

void validate_entries(std::span<const std::byte> entries, const file_header& h,
                      std::uint64_t data_file_size, const std::string& file) {
  const std::uint64_t expected_decoded = decoded_column_bytes(h.type, h.rows);
  const bool is_float = !holds_variants(h.type);
  std::uint64_t previous_end = data_header_size;
  for (std::uint64_t j = 0; j < h.columns; ++j) {
    const std::byte* p = entries.data() + j * index_entry_size;
    const column_entry e = decode_entry(p);
    const auto codec_raw = static_cast<std::uint8_t>(e.codec);
    if (!is_known_codec(codec_raw))
      bad_entry(j, "unknown Codec_Id " + std::to_string(codec_raw), file);
    if (e.flags & ~column_flag::all_known)
      bad_entry(j, "reserved bits set in Column_Flags (" + hex(e.flags) + ")", file);
    if (!all_zero(p + 68, 4)) bad_entry(j, "reserved bytes 68..71 are not zero", file);
    if (h.type == value_type::genotype &&
        (e.flags & (column_flag::shuffled | column_flag::standardized)))
      bad_entry(j, "shuffle or standardized flag on a genotype column", file);
    if (h.type == value_type::dosage && (e.flags & column_flag::standardized))
      bad_entry(j, "standardized flag on a dosage column", file);
    if (e.codec == codec_id::dosage_zstd &&
        (h.type != value_type::dosage || (e.flags & column_flag::shuffled)))
      bad_entry(j, "the dosage-zstd codec on a column that is not an unshuffled dosage column",
                file);
    if (e.codec == codec_id::fixed16_zstd &&
        (h.type != value_type::float32 || (e.flags & column_flag::shuffled)))
      bad_entry(j, "the fixed16-zstd codec on a column that is not an unshuffled float32 column",
                file);
    if (e.decoded_size != expected_decoded)
      bad_entry(j,
                "Decoded_Size " + std::to_string(e.decoded_size) + " does not match " +
                    std::to_string(h.rows) + " rows of " + std::string(value_type_name(h.type)) +
                    " (" + std::to_string(expected_decoded) + " bytes)",
                file);
    if (e.codec == codec_id::none && e.frame_size != e.decoded_size)
      bad_entry(j,
                "uncompressed frame of " + std::to_string(e.frame_size) + " bytes, expected " +
                    std::to_string(e.decoded_size),
                file);
    // Overflow-safe: compare sizes against what is left, never add to an offset first.
    if (e.offset > data_file_size || e.frame_size > data_file_size - e.offset)
      bad_entry(j,
                "frame of " + std::to_string(e.frame_size) + " bytes at offset " +
                    std::to_string(e.offset) + " ends past the data file size " +
                    std::to_string(data_file_size),
                file);
    // Frames are contiguous: every byte of the data file belongs to a header or a checksummed
    // frame, so nothing can hide in a gap and an overlap is impossible.
    if (e.offset != previous_end)
      bad_entry(j,
                "frame at offset " + std::to_string(e.offset) +
                    (e.offset < previous_end ? " overlaps the header or the previous frame"
                                             : " leaves a gap after the previous frame") +
                    " (which ends at " + std::to_string(previous_end) + ")",
                file);
    previous_end = e.offset + e.frame_size;
    const column_stats& s = e.stats;
    if (s.observed > h.rows)
      bad_entry(j,
                "Observed_Count " + std::to_string(s.observed) + " exceeds " +
                    std::to_string(h.rows) + " rows",
                file);
    if (!std::isfinite(s.sd) || s.sd < 0) bad_entry(j, "SD is negative or not finite", file);
    if (s.observed > 0 && !std::isfinite(s.mean)) bad_entry(j, "Mean is not finite", file);
    if (s.observed == 0 && s.sd != 0) bad_entry(j, "SD is not 0 for a column with no value", file);
    if (((e.flags & column_flag::constant) != 0) != (s.sd == 0))
      bad_entry(j, "Constant flag disagrees with SD", file);
    if (!is_float && s.observed > 0 &&
        !(s.mean >= 0 && s.mean <= 2 && s.a1_freq >= 0 && s.a1_freq <= 1))
      bad_entry(j, std::string(value_type_name(h.type)) + " Mean or A1_Freq out of range", file);
  }
  if (previous_end != data_file_size)
    throw error(errc::corrupt_index, "corrupt index: the frames end at " +
                                         std::to_string(previous_end) + " but the data file is " +
                                         std::to_string(data_file_size) + " bytes (" + file + ")");
}

}  // namespace colflow::detail
