/// @file codec.hpp
/// The frame codecs of a store: stable ids, names, levels, and one-frame compress/decompress.
///
/// A frame is a complete, standard stream of its codec: a zlib stream (RFC 1950), an LZ4 frame,
/// a zstd frame. `zlib.decompress`, `lz4 -d` and `zstd -d` decode them as they are.
/// These functions know nothing about stores or threads; they are safe to call from many
/// threads at once (each thread keeps its own decompression contexts).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace colflow {

/// Codec ids as stored on disk (docs/FORMAT.md, Codec_Id). Never renumbered, never reused.
/// 0-63 are colflow's built-in codecs; 64-255 are reserved for future official codecs.
enum class codec_id : std::uint8_t {
  none = 0,  ///< the payload as it is
  zlib = 1,  ///< a zlib stream (RFC 1950), levels 1-9
  lz4 = 2,   ///< an LZ4 frame; level 1-2 is LZ4 fast, 3-12 is LZ4 HC
  zstd = 3,  ///< a zstd frame, levels 1-19
  /// Dosage payloads only (16-bit values): the split layout of dosage_codec.hpp in one zstd
  /// frame, levels 1-19 (format 1.2)
  dosage_zstd = 4,
  /// float32 payloads only whose values are multiples of 2⁻¹⁴ within 16 bits (an LD store of
  /// 16-bit values): those multiples, low bytes then high bytes, in one zstd frame, levels 1-19
  /// (format 1.4)
  fixed16_zstd = 5,
};

/// What a codec accepts.
struct codec_traits {
  codec_id id;
  std::string_view name;  ///< "none", "zlib", "lz4", "zstd", "dosage-zstd", "fixed16-zstd"
  int min_level;
  int max_level;
  int default_level;
};

/// fixed16-zstd's step: its values are q · 2⁻¹⁴ for a 16-bit q.
inline constexpr double fixed16_step = 0x1p-14;

/// True, with q, when v is q · fixed16_step for a 16-bit q (NaN is not). Multiplying by 2¹⁴ is
/// exact, so the test is exact.
inline bool fixed16_of(float v, std::int16_t& q) noexcept {
  const float scaled = v * static_cast<float>(1 / fixed16_step);
  if (!(scaled >= -32768.0f && scaled <= 32767.0f)) return false;
  q = static_cast<std::int16_t>(scaled);
  return static_cast<float>(q) == scaled;
}

/// The traits of a known codec. Throws errc::invalid_argument for an unknown id.
const codec_traits& traits_of(codec_id id);

/// The built-in codecs, in id order.
std::span<const codec_traits> all_codecs() noexcept;

/// True when `raw` is the id of a codec this build decodes.
bool is_known_codec(std::uint8_t raw) noexcept;

/// The codec called `name` ("none", "zlib", "lz4", "zstd", "dosage-zstd", "fixed16-zstd"), or
/// nothing.
std::optional<codec_id> codec_from_name(std::string_view name) noexcept;

/// Compresses `payload` into one standard frame of `codec` at `level`, replacing `frame`'s
/// contents. The frame records the payload size where the codec allows it (zstd, LZ4; for
/// dosage-zstd, the size of the split layout). Throws errc::invalid_argument for a level outside
/// the codec's range, and for dosage-zstd a payload of an odd number of bytes.
void compress_frame(codec_id codec, int level, std::span<const std::byte> payload,
                    std::vector<std::byte>& frame);

/// Decodes the frame into exactly `payload.size()` bytes. Never writes outside `payload` and
/// never reads outside `frame`, whatever the bytes: a frame that is not exactly one valid
/// frame of `codec` decoding to exactly that size throws errc::corrupt_frame.
void decompress_frame(codec_id codec, std::span<const std::byte> frame,
                      std::span<std::byte> payload);

/// The library that writes and reads zlib frames. Both write standard zlib streams (RFC 1950)
/// and read each other's and every other encoder's; the frame bytes they write differ, the
/// payloads never do.
enum class zlib_impl : std::uint8_t {
  libdeflate,  ///< the default: whole-buffer libdeflate, faster to decode than zlib
  zlib,        ///< zlib's deflate/inflate, the reference (benchmarks, diagnosis)
};

/// The zlib implementation in use. The first call reads the environment variable
/// COLFLOW_ZLIB_IMPL ("libdeflate", the default, or "zlib"), a benchmarking and diagnostic
/// switch; another value throws errc::invalid_argument. Even with libdeflate, zlib decodes the
/// rare streams that declare a window smaller than 32 kB and explains every refused frame.
zlib_impl zlib_implementation();

/// Switches the zlib implementation of every thread from the next frame on (benchmarks, tests).
void set_zlib_implementation(zlib_impl impl);

/// Byte-shuffle filter for arrays of `element_size`-byte values: byte b of element i goes to
/// position b·n + i, which groups the similar high bytes of floats and helps every codec.
/// `src.size()` must be a multiple of `element_size` and equal `dst.size()`.
void shuffle_bytes(std::span<const std::byte> src, std::size_t element_size,
                   std::span<std::byte> dst) noexcept;

/// The inverse of shuffle_bytes.
void unshuffle_bytes(std::span<const std::byte> src, std::size_t element_size,
                     std::span<std::byte> dst) noexcept;

/// 64-bit XXH3 hash of `bytes` (seed 0): the frame and index checksum of the store format.
std::uint64_t checksum64(std::span<const std::byte> bytes) noexcept;

}  // namespace colflow
