// Adapters from the codec libraries to one-frame compress/decompress. Each adapter checks the
// library's return codes once per frame and turns any failure into one colflow::error.
#include <lz4frame.h>
#include <lz4hc.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#include <memory>
#include <string>

#include "colflow/codec/codec.hpp"
#include "colflow/error.hpp"

namespace colflow {
namespace {

constexpr std::array<codec_traits, 4> codec_table = {{
    {codec_id::none, "none", 0, 0, 0},
    {codec_id::zlib, "zlib", 1, 9, 6},
    {codec_id::lz4, "lz4", 1, 12, 1},
    {codec_id::zstd, "zstd", 1, 19, 3},
}};

[[noreturn]] void corrupt(std::string_view codec, const std::string& what) {
  throw error(errc::corrupt_frame, std::string(codec) + " frame: " + what);
}

void check_level(codec_id codec, int level) {
  const codec_traits& t = traits_of(codec);
  if (level < t.min_level || level > t.max_level)
    throw error(errc::invalid_argument,
                std::string(t.name) + " level " + std::to_string(level) + " is outside " +
                    std::to_string(t.min_level) + ".." + std::to_string(t.max_level));
}

// ---- zlib: a zlib stream (RFC 1950). zlib counts in 32-bit uInt, so feed it in slices.
constexpr std::size_t zlib_slice = UINT_MAX / 2;

void zlib_compress(int level, std::span<const std::byte> in, std::vector<std::byte>& out) {
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

void zlib_decompress(std::span<const std::byte> in, std::span<std::byte> out) {
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
      // No progress: either the input ended early or the output is full.
      if (out_pos == out.size())
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
  if (LZ4F_isError(n))
    throw error(errc::io_error, std::string("lz4: ") + LZ4F_getErrorName(n));
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
    const std::size_t rc =
        LZ4F_decompress(ctx.dctx, out.data() + out_pos, &out_len, in.data() + in_pos, &in_len,
                        &options);
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
    corrupt("zstd", "decodes to " + std::to_string(n) + " bytes, expected " +
                        std::to_string(out.size()));
}

}  // namespace

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
    case codec_id::zlib: return zlib_compress(level, payload, frame);
    case codec_id::lz4: return lz4_compress(level, payload, frame);
    case codec_id::zstd: return zstd_compress(level, payload, frame);
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
    case codec_id::zlib: return zlib_decompress(frame, payload);
    case codec_id::lz4: return lz4_decompress(frame, payload);
    case codec_id::zstd: return zstd_decompress(frame, payload);
  }
  throw error(errc::corrupt_frame,
              "unknown codec id " + std::to_string(static_cast<unsigned>(codec)));
}

}  // namespace colflow
