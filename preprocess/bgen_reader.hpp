// What the files of bgen_source share: the little-endian loads, the sizes a layout-2 block may
// have, the messages, the header block and what fetch hands to decode. Private to preprocess/
// (no public header includes it); the public interface is colflow/preprocess/bgen_source.hpp.
//
//   bgen_header.cpp         the header block, the sample identifier block, the .sample file
//   bgen_source.cpp         the column_source: the variant blocks indexed, described, fetched
//   bgen_probabilities.cpp  a fetched genotype block decompressed and turned into dosages
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "colflow/codec/codec.hpp"
#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"
#include "colflow/preprocess/bgen_source.hpp"

namespace colflow::preprocess::detail::bgen {

// The messages' helpers (bad, str, bad_variant) are defined in bgen_source.cpp, out of line:
// inlined into bgen_probabilities.cpp, their string building would change the code the compiler
// makes of the decoding loops there.
[[noreturn]] void bad(const std::filesystem::path& file, const std::string& what);

std::string str(std::uint64_t v);

inline std::uint32_t load_le16(const std::uint8_t* p) noexcept {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8);
}

inline std::uint32_t load_le32(const std::uint8_t* p) noexcept {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

inline std::uint64_t load_le64(const std::uint8_t* p) noexcept {
  return static_cast<std::uint64_t>(load_le32(p)) |
         (static_cast<std::uint64_t>(load_le32(p + 4)) << 32);
}

// The smallest and largest decompressed layout-2 block of a biallelic variant with n samples:
// the 10 + n bytes before the probabilities, plus at most 63 (the largest ploidy) 32-bit values
// per sample.
inline std::uint64_t min_block_bytes(std::uint64_t n) { return 10 + n; }
inline std::uint64_t max_block_bytes(std::uint64_t n) { return 10 + n + 252 * n; }

// A problem with variant j (ID `id`, as display_id of bgen_source.cpp gives it), which starts
// at byte `at`.
[[noreturn]] void bad_variant(const std::filesystem::path& file, std::uint64_t j,
                              const std::string& id, std::uint64_t at, const std::string& what);

// ---- The header block and the samples (bgen_header.cpp) -----------------------------------

// The header block as read and checked: the offset of the first variant, L_H, M, N, and what
// the flags say.
struct header_block {
  std::uint64_t offset = 0;      // the first variant starts at offset + 4
  std::uint64_t header_len = 0;  // L_H
  std::uint64_t variants = 0, samples = 0;
  int layout = 0;
  codec_id compression = codec_id::none;
  bool has_sample_ids = false;
};

// The header block of the file `file` of `size` bytes, read through fd and checked.
header_block read_header_block(const std::filesystem::path& file, const file_descriptor& fd,
                               std::uint64_t size);

// The sample identifier block, between the header block and the first variant: the N
// identifiers, every length checked against the block.
std::vector<std::string> read_sample_ids(const std::filesystem::path& file,
                                         const file_descriptor& fd, const header_block& h);

// The samples from the identifiers of the .bgen: each must be one word.
std::vector<sample_info> samples_of_ids(const std::filesystem::path& file,
                                        std::vector<std::string>& ids);

// Refuses a (FID, IID) pair that appears twice, found by sorting indices; `id_source` is the
// file the IDs came from.
void refuse_duplicate_ids(const std::vector<sample_info>& samples,
                          const std::filesystem::path& id_source);

// ---- From fetch to decode (bgen_source.cpp, bgen_probabilities.cpp) -----------------------

// What bgen_source::fetch reads for decode_dosages: variant j's bytes, from its header to the
// end of its genotype block, and where in them the block is.
struct bgen_fetched final : column_source::fetched {
  const bgen_source* source = nullptr;  // the source that fetched it
  std::uint64_t j = 0;
  std::uint64_t at = 0;  // where the variant starts in the file
  std::string id;        // display_id, for messages
  // The size of the probability data (decompressed, when compressed); the stored block: its
  // bytes' offset in `bytes` and count (to the end of the variant).
  std::uint64_t payload_size = 0;
  std::size_t block_offset = 0, block_size = 0;
  // The variant's bytes, then eight zero bytes: an uncompressed layout-2 block is read in place
  // by the bit reader, which loads 64-bit windows.
  std::unique_ptr<std::uint8_t[]> bytes;
  // What its decoding goes through: the probability data, decompressed.
  std::size_t size() const noexcept override { return static_cast<std::size_t>(payload_size); }
};

}  // namespace colflow::preprocess::detail::bgen
