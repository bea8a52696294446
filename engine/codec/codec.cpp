// Adapters from the codec libraries to one-frame compress/decompress. Each adapter checks the
// library's return codes once per frame and turns any failure into one colflow::error.
#include "colflow/codec/codec.hpp"

#include <libdeflate.h>
#include <lz4frame.h>
#include <lz4hc.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "colflow/codec/dosage_codec.hpp"
#include "colflow/error.hpp"
#include "simd/fixed16_internal.hpp"

namespace colflow {
namespace {

constexpr std::array<codec_traits, 6> codec_table = {{
    {codec_id::none, "none", 0, 0, 0},
    {codec_id::zlib, "zlib", 1, 9, 6},
    {codec_id::lz4, "lz4", 1, 12, 1},
    {codec_id::zstd, "zstd", 1, 19, 3},
    {codec_id::dosage_zstd, "dosage-zstd", 1, 19, 3},
    {codec_id::fixed16_zstd, "fixed16-zstd", 1, 19, 3},
}};

[[noreturn]] void corrupt(std::string_view codec, const std::string& what) {
  throw error(errc::corrupt_frame, std::string(codec) + " frame: " + what);
}

void check_level(codec_id codec, int level) {
  const codec_traits& t = traits_of(codec);
  if (level < t.min_level || level > t.max_level)
    throw error(errc::invalid_argument, std::string(t.name) + " level " + std::to_string(level) +
                                            " is outside " + std::to_string(t.min_level) + ".." +
                                            std::to_string(t.max_level));
}

// ---- zlib: a zlib stream (RFC 1950), written and read by two libraries.
//
// libdeflate (the default) compresses and decompresses whole buffers, which is all a frame is:
// its decoded size is in the index. zlib is the reference implementation: it decodes the rare
// streams libdeflate's fast path does not take (a window smaller than 32 kB, which libdeflate
// would not enforce), names what is wrong with a frame libdeflate refuses, and does everything
// when COLFLOW_ZLIB_IMPL=zlib (benchmarks, diagnosis). Both write standard zlib streams and
// read each other's; the bytes of a frame differ between them, never the payload.

// zlib counts in 32-bit uInt, so feed it in slices.
constexpr std::size_t zlib_slice = UINT_MAX / 2;

void zlib_compress_zlib(int level, std::span<const std::byte> in, std::vector<std::byte>& out) {
  z_stream zs{};
  if (deflateInit(&zs, level) != Z_OK) throw error(errc::io_error, "zlib: deflateInit failed");
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&zs, deflateEnd);
  out.resize(deflateBound(&zs, static_cast<uLong>(std::min(in.size(), std::size_t{ULONG_MAX}))) +
             64);
  std::size_t in_pos = 0;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (zs.total_out + 64 > out.size()) out.resize(out.size() * 2);
    const std::size_t in_left = in.size() - in_pos;
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data() + in_pos));
    zs.avail_in = static_cast<uInt>(std::min(in_left, zlib_slice));
    const std::size_t out_pos = zs.total_out;
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + out_pos);
    zs.avail_out = static_cast<uInt>(std::min(out.size() - out_pos, zlib_slice));
    const uInt fed = zs.avail_in;
    rc = deflate(&zs, in_left <= zlib_slice ? Z_FINISH : Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
      throw error(errc::io_error, "zlib: deflate failed");
    in_pos += fed - zs.avail_in;
  }
  out.resize(zs.total_out);
}

struct inflate_context {
  z_stream zs{};
  bool ready = false;
  ~inflate_context() {
    if (ready) inflateEnd(&zs);
  }
};

void zlib_decompress_zlib(std::span<const std::byte> in, std::span<std::byte> out) {
  thread_local inflate_context ctx;
  z_stream& zs = ctx.zs;
  if (!ctx.ready) {
    if (inflateInit(&zs) != Z_OK) throw error(errc::io_error, "zlib: inflateInit failed");
    ctx.ready = true;
  } else {
    inflateReset(&zs);
  }
  std::size_t in_pos = 0, out_pos = 0;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data() + in_pos));
    zs.avail_in = static_cast<uInt>(std::min(in.size() - in_pos, zlib_slice));
    // zlib refuses a null next_out even with no room: an empty payload points at a dummy.
    Bytef dummy = 0;
    zs.next_out = out.empty() ? &dummy : reinterpret_cast<Bytef*>(out.data() + out_pos);
    zs.avail_out = static_cast<uInt>(std::min(out.size() - out_pos, zlib_slice));
    const uInt in_avail = zs.avail_in, out_avail = zs.avail_out;
    rc = inflate(&zs, Z_NO_FLUSH);
    in_pos += in_avail - zs.avail_in;
    out_pos += out_avail - zs.avail_out;
    if (rc == Z_STREAM_END) break;
    if (rc == Z_NEED_DICT) corrupt("zlib", "needs a preset dictionary");
    if (rc == Z_DATA_ERROR) corrupt("zlib", zs.msg ? zs.msg : "invalid data");
    if (rc == Z_MEM_ERROR) throw error(errc::io_error, "zlib: out of memory");
    if (in_avail == zs.avail_in && out_avail == zs.avail_out) {
      // No progress: either the input ended early or the output is full (with input left:
      // a stream cut inside its Adler-32 trailer has filled the output and ended its input).
      if (out_pos == out.size() && in_pos < in.size())
        corrupt("zlib", "decodes to more than " + std::to_string(out.size()) + " bytes");
      corrupt("zlib", "truncated after " + std::to_string(in_pos) + " bytes");
    }
  }
  if (out_pos != out.size())
    corrupt("zlib", "decodes to " + std::to_string(out_pos) + " bytes, expected " +
                        std::to_string(out.size()));
  if (in_pos != in.size())
    corrupt("zlib", std::to_string(in.size() - in_pos) + " bytes after the end of the stream");
}

// One libdeflate compressor per level and one decompressor, per thread (a compressor holds its
// level's match finder: from tens of kB at level 1 to about 1 MB at level 9).
struct libdeflate_contexts {
  std::array<libdeflate_compressor*, 13> compressors{};
  libdeflate_decompressor* decompressor = nullptr;
  libdeflate_contexts() = default;
  libdeflate_contexts(const libdeflate_contexts&) = delete;
  libdeflate_contexts& operator=(const libdeflate_contexts&) = delete;
  ~libdeflate_contexts() {
    for (libdeflate_compressor* c : compressors) libdeflate_free_compressor(c);
    libdeflate_free_decompressor(decompressor);
  }
};
thread_local libdeflate_contexts deflate_ctx;

void zlib_compress_libdeflate(int level, std::span<const std::byte> in,
                              std::vector<std::byte>& out) {
  libdeflate_compressor*& c = deflate_ctx.compressors[static_cast<std::size_t>(level)];
  if (!c) c = libdeflate_alloc_compressor(level);
  if (!c)
    throw error(errc::io_error,
                "libdeflate: cannot create a level " + std::to_string(level) + " compressor");
  out.resize(libdeflate_zlib_compress_bound(c, in.size()));
  const std::size_t n = libdeflate_zlib_compress(c, in.data(), in.size(), out.data(), out.size());
  if (n == 0) throw error(errc::io_error, "libdeflate: zlib compression failed");
  out.resize(n);
}

// What the reference decoder says about a frame libdeflate refused: zlib names the fault
// (bad header, invalid code, incorrect data check, truncation, wrong size, trailing bytes).
[[noreturn]] void refused_by_libdeflate(std::span<const std::byte> in, std::span<std::byte> out,
                                        const std::string& why) {
  zlib_decompress_zlib(in, out);  // throws errc::corrupt_frame for everything zlib refuses
  corrupt("zlib", "refused by libdeflate (" + why + ")");
}

void zlib_decompress_libdeflate(std::span<const std::byte> in, std::span<std::byte> out) {
  // zlib enforces the window size the header declares (CINFO); libdeflate accepts any distance
  // up to 32 kB. Both encoders write a 32 kB window (CINFO 7); anything else goes to zlib.
  if (in.size() < 2 || (std::to_integer<unsigned>(in[0]) >> 4) != 7)
    return zlib_decompress_zlib(in, out);
  if (!deflate_ctx.decompressor) deflate_ctx.decompressor = libdeflate_alloc_decompressor();
  if (!deflate_ctx.decompressor)
    throw error(errc::io_error, "libdeflate: cannot create a decompressor");
  std::byte dummy{};
  std::size_t in_used = 0, out_used = 0;
  const libdeflate_result rc = libdeflate_zlib_decompress_ex(
      deflate_ctx.decompressor, in.data(), in.size(), out.empty() ? &dummy : out.data(), out.size(),
      &in_used, &out_used);
  switch (rc) {
    case LIBDEFLATE_SUCCESS:
      if (out_used != out.size())
        refused_by_libdeflate(in, out, "decodes to " + std::to_string(out_used) + " bytes");
      if (in_used != in.size()) refused_by_libdeflate(in, out, "bytes after the stream");
      return;
    case LIBDEFLATE_INSUFFICIENT_SPACE:
      refused_by_libdeflate(in, out,
                            "decodes to more than " + std::to_string(out.size()) + " bytes");
    case LIBDEFLATE_BAD_DATA:
    case LIBDEFLATE_SHORT_OUTPUT:
      break;
  }
  refused_by_libdeflate(in, out, "invalid or truncated data");
}

// The writer of each colflow zlib level, chosen by measurement (bench/codec_bench,
// BM_zlib_encode: standardised genotype and dosage columns; docs/FORMAT.md, section 5): where
// some libdeflate level gives at least zlib's ratio at that level, faster, the fastest such
// libdeflate level writes it; elsewhere zlib does. 0 means zlib at the colflow level.
constexpr std::array<int, 10> libdeflate_level_for = {0, 1, 0, 0, 4, 0, 0, 0, 0, 0};

zlib_impl initial_zlib_impl() {
  const char* v = std::getenv("COLFLOW_ZLIB_IMPL");
  if (!v || !*v || std::string_view(v) == "libdeflate") return zlib_impl::libdeflate;
  if (std::string_view(v) == "zlib") return zlib_impl::zlib;
  throw error(errc::invalid_argument, std::string("COLFLOW_ZLIB_IMPL is \"") + v +
                                          "\"; expected \"libdeflate\" or \"zlib\"");
}

std::atomic<zlib_impl>& zlib_impl_choice() {
  static std::atomic<zlib_impl> choice{initial_zlib_impl()};
  return choice;
}

void zlib_compress(int level, std::span<const std::byte> in, std::vector<std::byte>& out) {
  const int libdeflate_level = libdeflate_level_for[static_cast<std::size_t>(level)];
  if (zlib_implementation() == zlib_impl::libdeflate && libdeflate_level != 0)
    return zlib_compress_libdeflate(libdeflate_level, in, out);
  zlib_compress_zlib(level, in, out);
}

void zlib_decompress(std::span<const std::byte> in, std::span<std::byte> out) {
  if (zlib_implementation() == zlib_impl::libdeflate) return zlib_decompress_libdeflate(in, out);
  zlib_decompress_zlib(in, out);
}

// ---- lz4: the LZ4 frame format, content size recorded, independent 1 MB blocks.
void lz4_compress(int level, std::span<const std::byte> in, std::vector<std::byte>& out) {
  LZ4F_preferences_t prefs{};
  prefs.frameInfo.blockSizeID = LZ4F_max1MB;
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  prefs.frameInfo.contentSize = in.size();
  // Levels 1-2 are LZ4's fast mode; 3-12 are LZ4 HC (LZ4HC_CLEVEL_MIN is 3).
  prefs.compressionLevel = level < LZ4HC_CLEVEL_MIN ? 0 : level;
  out.resize(LZ4F_compressFrameBound(in.size(), &prefs));
  const std::size_t n = LZ4F_compressFrame(out.data(), out.size(), in.data(), in.size(), &prefs);
  if (LZ4F_isError(n)) throw error(errc::io_error, std::string("lz4: ") + LZ4F_getErrorName(n));
  out.resize(n);
}

struct lz4_context {
  LZ4F_dctx* dctx = nullptr;
  ~lz4_context() { LZ4F_freeDecompressionContext(dctx); }
};

void lz4_decompress(std::span<const std::byte> in, std::span<std::byte> out) {
  thread_local lz4_context ctx;
  if (!ctx.dctx && LZ4F_isError(LZ4F_createDecompressionContext(&ctx.dctx, LZ4F_VERSION)))
    throw error(errc::io_error, "lz4: cannot create a decompression context");
  LZ4F_resetDecompressionContext(ctx.dctx);
  LZ4F_decompressOptions_t options{};
  std::size_t in_pos = 0, out_pos = 0;
  for (;;) {
    std::size_t out_len = out.size() - out_pos, in_len = in.size() - in_pos;
    const std::size_t rc = LZ4F_decompress(ctx.dctx, out.data() + out_pos, &out_len,
                                           in.data() + in_pos, &in_len, &options);
    if (LZ4F_isError(rc)) corrupt("lz4", LZ4F_getErrorName(rc));
    in_pos += in_len;
    out_pos += out_len;
    if (rc == 0) break;  // frame complete
    if (in_len == 0 && out_len == 0) {
      if (out_pos == out.size())
        corrupt("lz4", "decodes to more than " + std::to_string(out.size()) + " bytes");
      corrupt("lz4", "truncated after " + std::to_string(in_pos) + " bytes");
    }
  }
  if (out_pos != out.size())
    corrupt("lz4", "decodes to " + std::to_string(out_pos) + " bytes, expected " +
                       std::to_string(out.size()));
  if (in_pos != in.size())
    corrupt("lz4", std::to_string(in.size() - in_pos) + " bytes after the end of the frame");
}

// ---- zstd: one zstd frame with its content size.
struct zstd_contexts {
  ZSTD_CCtx* cctx = nullptr;
  ZSTD_DCtx* dctx = nullptr;
  ~zstd_contexts() {
    ZSTD_freeCCtx(cctx);
    ZSTD_freeDCtx(dctx);
  }
};
thread_local zstd_contexts zstd_ctx;

void zstd_compress(int level, std::span<const std::byte> in, std::vector<std::byte>& out) {
  if (!zstd_ctx.cctx) zstd_ctx.cctx = ZSTD_createCCtx();
  if (!zstd_ctx.cctx) throw error(errc::io_error, "zstd: cannot create a compression context");
  out.resize(ZSTD_compressBound(in.size()));
  const std::size_t n =
      ZSTD_compressCCtx(zstd_ctx.cctx, out.data(), out.size(), in.data(), in.size(), level);
  if (ZSTD_isError(n)) throw error(errc::io_error, std::string("zstd: ") + ZSTD_getErrorName(n));
  out.resize(n);
}

void zstd_decompress(std::span<const std::byte> in, std::span<std::byte> out) {
  if (!zstd_ctx.dctx) zstd_ctx.dctx = ZSTD_createDCtx();
  if (!zstd_ctx.dctx) throw error(errc::io_error, "zstd: cannot create a decompression context");
  const std::size_t frame_size = ZSTD_findFrameCompressedSize(in.data(), in.size());
  if (ZSTD_isError(frame_size)) corrupt("zstd", ZSTD_getErrorName(frame_size));
  if (frame_size != in.size())
    corrupt("zstd", std::to_string(in.size() - frame_size) + " bytes after the end of the frame");
  const unsigned long long content = ZSTD_getFrameContentSize(in.data(), in.size());
  if (content == ZSTD_CONTENTSIZE_ERROR) corrupt("zstd", "invalid frame header");
  if (content != ZSTD_CONTENTSIZE_UNKNOWN && content != out.size())
    corrupt("zstd", "frame declares " + std::to_string(content) + " bytes, expected " +
                        std::to_string(out.size()));
  const std::size_t n =
      ZSTD_decompressDCtx(zstd_ctx.dctx, out.data(), out.size(), in.data(), in.size());
  if (ZSTD_isError(n)) corrupt("zstd", ZSTD_getErrorName(n));
  if (n != out.size())
    corrupt("zstd",
            "decodes to " + std::to_string(n) + " bytes, expected " + std::to_string(out.size()));
}

// dosage-zstd: the 16-bit values split (dosage_codec.hpp), then zstd. The frame records the
// split layout's size, which depends on the values; the payload's size gives the rows.
void dosage_zstd_compress(int level, std::span<const std::byte> in, std::vector<std::byte>& out) {
  if (in.size() % 2 != 0)
    throw error(errc::invalid_argument, "dosage-zstd: a payload of " + std::to_string(in.size()) +
                                            " bytes is not 16-bit values");
  std::vector<std::uint16_t> values(in.size() / 2);
  if (!in.empty()) std::memcpy(values.data(), in.data(), in.size());
  std::vector<std::byte> split;
  split_dosages(values, split);
  zstd_compress(level, split, out);
}

void dosage_zstd_decompress(std::span<const std::byte> in, std::span<std::byte> out) {
  if (out.size() % 2 != 0)
    corrupt("dosage-zstd",
            "a payload of " + std::to_string(out.size()) + " bytes is not 16-bit values");
  const std::size_t rows = out.size() / 2;
  const unsigned long long content = ZSTD_getFrameContentSize(in.data(), in.size());
  if (content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN)
    corrupt("dosage-zstd", "the zstd frame does not declare its size");
  if (content < split_dosage_min_bytes(rows) || content > split_dosage_max_bytes(rows))
    corrupt("dosage-zstd", "the zstd frame declares " + std::to_string(content) +
                               " bytes, outside the " +
                               std::to_string(split_dosage_min_bytes(rows)) + ".." +
                               std::to_string(split_dosage_max_bytes(rows)) +
                               " of a split column of " + std::to_string(rows) + " rows");
  thread_local std::vector<std::byte> split;
  thread_local std::vector<std::uint16_t> values;
  split.resize(static_cast<std::size_t>(content));
  zstd_decompress(in, split);
  values.resize(rows);
  try {
    join_dosages(split, values);
  } catch (const error& e) {
    corrupt("dosage-zstd", e.message());
  }
  if (rows) std::memcpy(out.data(), values.data(), out.size());
}

// fixed16-zstd: float32 values q · 2⁻¹⁴ as their 16-bit q, the low bytes of all then the high
// bytes (the high bytes of small correlations are nearly all 0x00 or 0xFF), in one zstd frame of
// exactly 2 bytes a value.
void fixed16_zstd_compress(int level, std::span<const std::byte> in, std::vector<std::byte>& out) {
  if (in.size() % 4 != 0)
    throw error(errc::invalid_argument, "fixed16-zstd: a payload of " + std::to_string(in.size()) +
                                            " bytes is not float32 values");
  const std::size_t n = in.size() / 4;
  std::vector<std::byte> planes(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    float v;
    std::memcpy(&v, in.data() + 4 * i, 4);
    std::int16_t q;
    if (!fixed16_of(v, q))
      throw error(errc::invalid_argument, "fixed16-zstd: value " + std::to_string(v) + " at row " +
                                              std::to_string(i) +
                                              " is not a multiple of 2^-14 within 16 bits");
    const auto u = static_cast<std::uint16_t>(q);
    planes[i] = static_cast<std::byte>(u & 0xff);
    planes[n + i] = static_cast<std::byte>(u >> 8);
  }
  zstd_compress(level, planes, out);
}

void fixed16_zstd_decompress(std::span<const std::byte> in, std::span<std::byte> out) {
  if (out.size() % 4 != 0)
    corrupt("fixed16-zstd",
            "a payload of " + std::to_string(out.size()) + " bytes is not float32 values");
  const std::size_t n = out.size() / 4;
  thread_local std::vector<std::byte> planes;
  planes.resize(2 * n);
  // zstd_decompress refuses a frame that does not hold exactly 2n bytes.
  zstd_decompress(in, planes);
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(planes.data());
  detail::fixed16_bytes_to_float(bytes, bytes + n, n, out.data());
}

}  // namespace

zlib_impl zlib_implementation() { return zlib_impl_choice().load(std::memory_order_relaxed); }

void set_zlib_implementation(zlib_impl impl) {
  zlib_impl_choice().store(impl, std::memory_order_relaxed);
}

const codec_traits& traits_of(codec_id id) {
  const auto raw = static_cast<std::uint8_t>(id);
  if (!is_known_codec(raw))
    throw error(errc::invalid_argument, "unknown codec id " + std::to_string(raw));
  return codec_table[raw];
}

std::span<const codec_traits> all_codecs() noexcept { return codec_table; }

bool is_known_codec(std::uint8_t raw) noexcept { return raw < codec_table.size(); }

std::optional<codec_id> codec_from_name(std::string_view name) noexcept {
  for (const codec_traits& t : codec_table)
    if (t.name == name) return t.id;
  return std::nullopt;
}

void compress_frame(codec_id codec, int level, std::span<const std::byte> payload,
                    std::vector<std::byte>& frame) {
  check_level(codec, level);
  switch (codec) {
    case codec_id::none:
      frame.assign(payload.begin(), payload.end());
      return;
    case codec_id::zlib:
      return zlib_compress(level, payload, frame);
    case codec_id::lz4:
      return lz4_compress(level, payload, frame);
    case codec_id::zstd:
      return zstd_compress(level, payload, frame);
    case codec_id::dosage_zstd:
      return dosage_zstd_compress(level, payload, frame);
    case codec_id::fixed16_zstd:
      return fixed16_zstd_compress(level, payload, frame);
  }
}

void decompress_frame(codec_id codec, std::span<const std::byte> frame,
                      std::span<std::byte> payload) {
  switch (codec) {
    case codec_id::none:
      if (frame.size() != payload.size())
        corrupt("none", "holds " + std::to_string(frame.size()) + " bytes, expected " +
                            std::to_string(payload.size()));
      if (!payload.empty()) std::memcpy(payload.data(), frame.data(), payload.size());
      return;
    case codec_id::zlib:
      return zlib_decompress(frame, payload);
    case codec_id::lz4:
      return lz4_decompress(frame, payload);
    case codec_id::zstd:
      return zstd_decompress(frame, payload);
    case codec_id::dosage_zstd:
      return dosage_zstd_decompress(frame, payload);
    case codec_id::fixed16_zstd:
      return fixed16_zstd_decompress(frame, payload);
  }
  throw error(errc::corrupt_frame,
              "unknown codec id " + std::to_string(static_cast<unsigned>(codec)));
}

}  // namespace colflow
