// The codecs: every codec round-trips, and refuses truncated, extended and wrong-size frames.
#include "colflow/codec/codec.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "colflow/error.hpp"
#include "simd/fixed16_internal.hpp"

namespace colflow {
namespace {

std::vector<std::byte> sample_payload(std::size_t n, std::uint64_t seed) {
  // Doubles with structure (like standardised genotypes): compressible but not trivially.
  std::mt19937_64 rng(seed);
  std::vector<double> v(n);
  for (double& x : v) x = static_cast<double>(rng() % 3) * 0.731 - 0.5;
  const auto b = std::as_bytes(std::span(v));
  return {b.begin(), b.end()};
}

struct codec_case {
  codec_id codec;
  int level;
};

class CodecRoundTripTest : public ::testing::TestWithParam<codec_case> {};

TEST_P(CodecRoundTripTest, DecodesToTheSameBytes) {
  for (std::size_t n : {0u, 1u, 7u, 1000u, 100000u}) {
    const auto payload = sample_payload(n, n);
    std::vector<std::byte> frame;
    compress_frame(GetParam().codec, GetParam().level, payload, frame);
    std::vector<std::byte> out(payload.size(), std::byte{0xAB});
    decompress_frame(GetParam().codec, frame, out);
    EXPECT_EQ(out, payload) << "n=" << n;
  }
}

TEST_P(CodecRoundTripTest, RejectsWrongDecodedSize) {
  const auto payload = sample_payload(1000, 3);
  std::vector<std::byte> frame;
  compress_frame(GetParam().codec, GetParam().level, payload, frame);
  std::vector<std::byte> small(payload.size() - 1), large(payload.size() + 1);
  try {
    decompress_frame(GetParam().codec, frame, small);
    FAIL() << "a too small destination was accepted";
  } catch (const error& e) {
    EXPECT_EQ(e.kind(), errc::corrupt_frame);
  }
  try {
    decompress_frame(GetParam().codec, frame, large);
    FAIL() << "a too large destination was accepted";
  } catch (const error& e) {
    EXPECT_EQ(e.kind(), errc::corrupt_frame);
  }
}

TEST_P(CodecRoundTripTest, RejectsTruncatedAndExtendedFrames) {
  const auto payload = sample_payload(5000, 4);
  std::vector<std::byte> frame;
  compress_frame(GetParam().codec, GetParam().level, payload, frame);
  std::vector<std::byte> out(payload.size());
  for (std::size_t cut = 0; cut < frame.size(); cut += 1 + frame.size() / 97) {
    // Exact-size copies so that ASan sees any read past the end.
    std::vector<std::byte> truncated(frame.begin(), frame.begin() + static_cast<long>(cut));
    EXPECT_THROW(decompress_frame(GetParam().codec, truncated, out), error) << "cut=" << cut;
  }
  auto extended = frame;
  extended.push_back(std::byte{0});
  EXPECT_THROW(decompress_frame(GetParam().codec, extended, out), error);
}

TEST_P(CodecRoundTripTest, GarbledFramesNeverCrash) {
  const auto payload = sample_payload(3000, 5);
  std::vector<std::byte> frame;
  compress_frame(GetParam().codec, GetParam().level, payload, frame);
  std::vector<std::byte> out(payload.size());
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 300; ++trial) {
    auto bad = frame;
    bad[rng() % bad.size()] ^= static_cast<std::byte>(1 + rng() % 255);
    try {
      decompress_frame(GetParam().codec, bad, out);
    } catch (const error& e) {
      EXPECT_EQ(e.kind(), errc::corrupt_frame);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllCodecs, CodecRoundTripTest,
    ::testing::Values(codec_case{codec_id::none, 0}, codec_case{codec_id::zlib, 1},
                      codec_case{codec_id::zlib, 9}, codec_case{codec_id::lz4, 1},
                      codec_case{codec_id::lz4, 12}, codec_case{codec_id::zstd, 1},
                      codec_case{codec_id::zstd, 19}),
    [](const auto& param_info) {
      return std::string(traits_of(param_info.param.codec).name) +
             std::to_string(param_info.param.level);
    });

TEST(CodecTest, IdsAndNamesAreStable) {
  // On-disk ids: changing any of these breaks every existing store.
  EXPECT_EQ(static_cast<int>(codec_id::none), 0);
  EXPECT_EQ(static_cast<int>(codec_id::zlib), 1);
  EXPECT_EQ(static_cast<int>(codec_id::lz4), 2);
  EXPECT_EQ(static_cast<int>(codec_id::zstd), 3);
  EXPECT_EQ(static_cast<int>(codec_id::dosage_zstd), 4);
  EXPECT_EQ(codec_from_name("zstd"), codec_id::zstd);
  EXPECT_EQ(codec_from_name("lz4"), codec_id::lz4);
  EXPECT_FALSE(codec_from_name("brotli").has_value());
  EXPECT_TRUE(is_known_codec(3));
  EXPECT_TRUE(is_known_codec(4));
  EXPECT_EQ(codec_from_name("dosage-zstd"), codec_id::dosage_zstd);
  EXPECT_EQ(static_cast<int>(codec_id::fixed16_zstd), 5);
  EXPECT_EQ(codec_from_name("fixed16-zstd"), codec_id::fixed16_zstd);
  EXPECT_TRUE(is_known_codec(5));
  EXPECT_FALSE(is_known_codec(6));
  EXPECT_THROW(traits_of(static_cast<codec_id>(9)), error);
}

TEST(CodecTest, RejectsLevelsOutOfRange) {
  std::vector<std::byte> frame;
  const std::vector<std::byte> payload(10);
  EXPECT_THROW(compress_frame(codec_id::zlib, 10, payload, frame), error);
  EXPECT_THROW(compress_frame(codec_id::zstd, 0, payload, frame), error);
  EXPECT_THROW(compress_frame(codec_id::lz4, 13, payload, frame), error);
}

TEST(CodecTest, HigherLevelsCompressBetter) {
  const auto payload = sample_payload(50000, 9);
  std::vector<std::byte> fast, strong;
  compress_frame(codec_id::zstd, 1, payload, fast);
  compress_frame(codec_id::zstd, 19, payload, strong);
  EXPECT_LT(strong.size(), fast.size());
  EXPECT_LT(fast.size(), payload.size() / 3);
}

// float32 values q · 2⁻¹⁴: 16-bit q from a smooth walk, as an LD column's, and the extremes.
std::vector<std::byte> fixed16_payload(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> v(n);
  int q = 0;
  for (std::size_t i = 0; i < n; ++i) {
    q = std::clamp(q + static_cast<int>(rng() % 201) - 100, -32768, 32767);
    v[i] = static_cast<float>(q) / 16384.0f;
  }
  for (const int extreme : {-32768, 32767, 16384, -16384, 0})
    if (n > 0) v[rng() % n] = static_cast<float>(extreme) / 16384.0f;
  const auto b = std::as_bytes(std::span(v));
  return {b.begin(), b.end()};
}

TEST(Fixed16ZstdTest, RoundTripsMultiplesOfTwoToTheMinusFourteen) {
  for (std::size_t n : {0u, 1u, 7u, 1000u, 100000u}) {
    const auto payload = fixed16_payload(n, n);
    std::vector<std::byte> frame;
    compress_frame(codec_id::fixed16_zstd, 3, payload, frame);
    // Two bytes a value at most before zstd: the frame is well under the float32 payload.
    if (n >= 1000) {
      EXPECT_LT(frame.size(), payload.size() / 2) << n;
    }
    std::vector<std::byte> out(payload.size(), std::byte{0xAB});
    decompress_frame(codec_id::fixed16_zstd, frame, out);
    EXPECT_EQ(out, payload) << "n=" << n;
  }
}

TEST(Fixed16ZstdTest, RefusesValuesOffTheGridAndPayloadsThatAreNotFloat32) {
  std::vector<std::byte> frame;
  for (const float bad : {0.1f, 2.0f, -2.0001f, std::nanf(""), 1.0f / 32768.0f}) {
    std::vector<float> v = {0.5f, bad, 0.25f};
    try {
      compress_frame(codec_id::fixed16_zstd, 3, std::as_bytes(std::span(v)), frame);
      FAIL() << bad << " was accepted";
    } catch (const error& e) {
      EXPECT_EQ(e.kind(), errc::invalid_argument);
      EXPECT_NE(e.message().find("row 1"), std::string::npos) << e.message();
    }
  }
  const std::vector<std::byte> odd(6);
  EXPECT_THROW(compress_frame(codec_id::fixed16_zstd, 3, odd, frame), error);
  std::int16_t q = 0;
  EXPECT_TRUE(fixed16_of(-2.0f, q));
  EXPECT_EQ(q, -32768);
  EXPECT_FALSE(fixed16_of(2.0f, q));
}

TEST(Fixed16ZstdTest, VectorConversionsEqualTheDefinitionForEverySixteenBitValue) {
  // Every 16-bit value once, from the two byte runs of the codec, in a run whose length leaves
  // a scalar tail; then back, and each value off the grid at places in the vector part and in
  // the tail.
  const std::size_t n = 65536 + 5;
  std::vector<std::uint8_t> low(n), high(n);
  for (std::size_t i = 0; i < n; ++i) {
    low[i] = static_cast<std::uint8_t>(i & 0xff);
    high[i] = static_cast<std::uint8_t>((i >> 8) & 0xff);
  }
  std::vector<float> values(n);
  detail::fixed16_bytes_to_float(low.data(), high.data(), n,
                                 reinterpret_cast<std::byte*>(values.data()));
  std::vector<std::int16_t> back(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto q = static_cast<std::int16_t>(static_cast<std::uint16_t>(low[i] | high[i] << 8));
    ASSERT_EQ(values[i], static_cast<float>(q) * static_cast<float>(fixed16_step)) << i;
  }
  ASSERT_TRUE(detail::float_to_fixed16(values.data(), n, back.data()));
  for (std::size_t i = 0; i < n; ++i) {
    std::int16_t q = 0;
    ASSERT_TRUE(fixed16_of(values[i], q));
    ASSERT_EQ(back[i], q) << i;
  }
  for (const float bad : {0.1f, 2.0f, -2.0001f, std::nanf(""), 1.0f / 32768.0f, 1e30f})
    for (const std::size_t at : {std::size_t{0}, std::size_t{5}, std::size_t{8}, n - 1}) {
      std::vector<float> v(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(n));
      v[at] = bad;
      EXPECT_FALSE(detail::float_to_fixed16(v.data(), n, back.data())) << bad << " at " << at;
    }
}

TEST(Fixed16ZstdTest, RefusesDamagedFramesAndWrongSizes) {
  const auto payload = fixed16_payload(3000, 7);
  std::vector<std::byte> frame;
  compress_frame(codec_id::fixed16_zstd, 3, payload, frame);
  std::vector<std::byte> out(payload.size());
  for (const std::size_t size : {payload.size() - 4, payload.size() + 4, payload.size() - 2}) {
    std::vector<std::byte> wrong(size);
    EXPECT_THROW(decompress_frame(codec_id::fixed16_zstd, frame, wrong), error) << size;
  }
  for (std::size_t cut = 0; cut < frame.size(); cut += 1 + frame.size() / 37) {
    std::vector<std::byte> truncated(frame.begin(), frame.begin() + static_cast<long>(cut));
    EXPECT_THROW(decompress_frame(codec_id::fixed16_zstd, truncated, out), error) << cut;
  }
  std::mt19937_64 rng(43);
  for (int trial = 0; trial < 200; ++trial) {
    auto bad = frame;
    bad[rng() % bad.size()] ^= static_cast<std::byte>(1 + rng() % 255);
    try {
      decompress_frame(codec_id::fixed16_zstd, bad, out);
    } catch (const error& e) {
      EXPECT_EQ(e.kind(), errc::corrupt_frame);
    }
  }
}

TEST(ShuffleTest, RoundTripsAndGroupsBytes) {
  std::vector<std::byte> src(8 * 5);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::byte>(i);
  std::vector<std::byte> shuffled(src.size()), back(src.size());
  shuffle_bytes(src, 8, shuffled);
  // Byte b of element i lands at b*n + i.
  EXPECT_EQ(shuffled[0], std::byte{0});
  EXPECT_EQ(shuffled[1], std::byte{8});
  EXPECT_EQ(shuffled[5], std::byte{1});
  unshuffle_bytes(shuffled, 8, back);
  EXPECT_EQ(back, src);
}

// Every element count around the 16-element vector blocks, for the element sizes with their
// own code paths (4, 8) and a generic one (3): both directions against the definition.
TEST(ShuffleTest, MatchesTheDefinitionForEveryLengthAndElementSize) {
  for (const std::size_t e : {std::size_t{3}, std::size_t{4}, std::size_t{8}}) {
    for (std::size_t n = 0; n <= 70; ++n) {
      std::vector<std::byte> src(e * n), shuffled(src.size()), back(src.size());
      for (std::size_t i = 0; i < src.size(); ++i)
        src[i] = static_cast<std::byte>((i * 37 + n) & 0xFF);
      shuffle_bytes(src, e, shuffled);
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t b = 0; b < e; ++b)
          ASSERT_EQ(shuffled[b * n + i], src[i * e + b]) << "e " << e << " n " << n << " i " << i;
      unshuffle_bytes(shuffled, e, back);
      ASSERT_EQ(back, src) << "e " << e << " n " << n;
    }
  }
}

// ---- zlib frames: libdeflate (the default) and zlib (the reference) side by side.

constexpr zlib_impl both_impls[] = {zlib_impl::libdeflate, zlib_impl::zlib};

const char* impl_name(zlib_impl impl) { return impl == zlib_impl::zlib ? "zlib" : "libdeflate"; }

// Sets the zlib implementation for one test and restores the previous one.
class scoped_zlib_impl {
 public:
  explicit scoped_zlib_impl(zlib_impl impl) : previous_(zlib_implementation()) {
    set_zlib_implementation(impl);
  }
  ~scoped_zlib_impl() { set_zlib_implementation(previous_); }
  scoped_zlib_impl(const scoped_zlib_impl&) = delete;
  scoped_zlib_impl& operator=(const scoped_zlib_impl&) = delete;

 private:
  zlib_impl previous_;
};

std::vector<std::byte> zlib_frame(zlib_impl impl, int level, std::span<const std::byte> payload) {
  const scoped_zlib_impl use(impl);
  std::vector<std::byte> frame;
  compress_frame(codec_id::zlib, level, payload, frame);
  return frame;
}

// The message of the corrupt_frame error decoding `frame` into `size` bytes with `impl`.
std::string zlib_refusal(zlib_impl impl, std::span<const std::byte> frame, std::size_t size) {
  const scoped_zlib_impl use(impl);
  std::vector<std::byte> out(size);
  try {
    decompress_frame(codec_id::zlib, frame, out);
  } catch (const error& e) {
    EXPECT_EQ(e.kind(), errc::corrupt_frame) << e.what();
    return e.what();
  }
  ADD_FAILURE() << impl_name(impl) << " accepted the frame";
  return {};
}

std::vector<std::byte> with_zlib(std::span<const std::byte> payload, int level, int window_bits,
                                 std::span<const std::byte> dictionary = {}) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY), Z_OK);
  if (!dictionary.empty()) {
    EXPECT_EQ(deflateSetDictionary(&zs, reinterpret_cast<const Bytef*>(dictionary.data()),
                                   static_cast<uInt>(dictionary.size())),
              Z_OK);
  }
  std::vector<std::byte> out(deflateBound(&zs, static_cast<uLong>(payload.size())));
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(payload.data()));
  zs.avail_in = static_cast<uInt>(payload.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

TEST(ZlibTest, TheDefaultIsLibdeflate) {
  // The test runs without COLFLOW_ZLIB_IMPL (ctest does not set it).
  if (std::getenv("COLFLOW_ZLIB_IMPL")) GTEST_SKIP() << "COLFLOW_ZLIB_IMPL is set";
  EXPECT_EQ(zlib_implementation(), zlib_impl::libdeflate);
}

TEST(ZlibTest, EachImplementationReadsTheOthersFramesAtEveryLevel) {
  for (const std::size_t n : {0u, 1u, 1000u, 100000u}) {
    const auto payload = sample_payload(n, n + 11);
    for (int level = 1; level <= 9; ++level) {
      for (const zlib_impl writer : both_impls) {
        const auto frame = zlib_frame(writer, level, payload);
        ASSERT_GE(frame.size(), 6u);
        EXPECT_EQ(std::to_integer<int>(frame[0]), 0x78) << "a 32 kB window, deflate";
        for (const zlib_impl reader : both_impls) {
          const scoped_zlib_impl use(reader);
          std::vector<std::byte> out(payload.size(), std::byte{0xAB});
          decompress_frame(codec_id::zlib, frame, out);
          EXPECT_EQ(out, payload) << "n " << n << " level " << level << " written by "
                                  << impl_name(writer) << ", read by " << impl_name(reader);
        }
      }
    }
  }
}

// A standardised genotype column (Hardy-Weinberg, A1 frequency p, 1% missing as 0) or, with
// `dosage`, the allele counts 0/1/2 with missing NaN: the columns a zlib float store holds.
std::vector<std::byte> genotype_column(std::size_t n, double p, bool dosage, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double mean = 2 * (1 - p), sd = std::sqrt(2 * p * (1 - p));
  std::vector<double> v(n);
  for (double& x : v) {
    if (unit(rng) < 0.01) {
      x = dosage ? std::nan("") : 0.0;
      continue;
    }
    const double u = unit(rng);
    const double count = u < p * p ? 0.0 : u < p * p + 2 * p * (1 - p) ? 1.0 : 2.0;
    x = dosage ? count : (count - mean) / sd;
  }
  const auto b = std::as_bytes(std::span(v));
  return {b.begin(), b.end()};
}

TEST(ZlibTest, EveryLevelCompressesAtLeastAsWellAsZlib) {
  // libdeflate writes a level only where it compresses at least as well as zlib at that level
  // (docs/FORMAT.md, section 5); elsewhere zlib writes it, byte for byte as before.
  for (const bool dosage : {false, true}) {
    for (const double p : {0.05, 0.2, 0.45}) {
      const auto payload = genotype_column(10000, p, dosage, 31);
      for (int level = 1; level <= 9; ++level) {
        const auto ours = zlib_frame(zlib_impl::libdeflate, level, payload);
        const auto reference = zlib_frame(zlib_impl::zlib, level, payload);
        EXPECT_LE(ours.size(), reference.size())
            << (dosage ? "dosage" : "standardised") << " p " << p << " level " << level;
        if (level != 1 && level != 4) {
          EXPECT_EQ(ours, reference) << "zlib writes level " << level;
        }
      }
    }
  }
}

TEST(ZlibTest, StreamsOfOtherEncodersDecode) {
  // Any standard zlib stream is a valid frame, a smaller window included (zlib enforces it).
  const auto payload = sample_payload(30000, 8);
  for (const int window_bits : {9, 12, 15}) {
    const auto frame = with_zlib(payload, 6, window_bits);
    for (const zlib_impl reader : both_impls) {
      const scoped_zlib_impl use(reader);
      std::vector<std::byte> out(payload.size());
      decompress_frame(codec_id::zlib, frame, out);
      EXPECT_EQ(out, payload) << "window bits " << window_bits << ", " << impl_name(reader);
    }
  }
}

TEST(ZlibTest, RefusesDamagedFramesWithTheSameMessageInBothImplementations) {
  const auto payload = sample_payload(5000, 12);
  const auto frame = zlib_frame(zlib_impl::libdeflate, 6, payload);
  struct damage {
    std::string name, expected;
    std::vector<std::byte> frame;
  };
  std::vector<damage> cases;
  auto bad_adler = frame;
  bad_adler.back() ^= std::byte{0x01};
  cases.push_back({"bad Adler-32", "incorrect data check", bad_adler});
  cases.push_back(
      {"truncated Adler-32", "truncated", std::vector<std::byte>(frame.begin(), frame.end() - 2)});
  cases.push_back({"truncated deflate data", "truncated",
                   std::vector<std::byte>(frame.begin(), frame.begin() + 40)});
  cases.push_back(
      {"header only", "truncated", std::vector<std::byte>(frame.begin(), frame.begin() + 2)});
  cases.push_back(
      {"one byte", "truncated", std::vector<std::byte>(frame.begin(), frame.begin() + 1)});
  cases.push_back({"empty", "truncated", {}});
  auto trailing = frame;
  trailing.push_back(std::byte{0});
  trailing.push_back(std::byte{0});
  cases.push_back({"trailing bytes", "2 bytes after the end of the stream", trailing});
  auto bad_check = frame;
  bad_check[1] ^= std::byte{0x01};
  cases.push_back({"bad header check", "incorrect header check", bad_check});
  auto bad_method = frame;
  bad_method[0] = std::byte{0x79};  // method 9
  cases.push_back({"unknown method", "header", bad_method});
  const std::byte dictionary[] = {std::byte{1}, std::byte{2}, std::byte{3}};
  cases.push_back(
      {"preset dictionary", "needs a preset dictionary", with_zlib(payload, 6, 15, dictionary)});
  auto bad_block = frame;
  bad_block[2] |= std::byte{0x06};  // block type 3: reserved
  cases.push_back({"reserved block type", "invalid block type", bad_block});

  for (const damage& d : cases) {
    const std::string reference = zlib_refusal(zlib_impl::zlib, d.frame, payload.size());
    EXPECT_EQ(zlib_refusal(zlib_impl::libdeflate, d.frame, payload.size()), reference) << d.name;
    EXPECT_NE(reference.find(d.expected), std::string::npos) << d.name << ": " << reference;
    EXPECT_EQ(reference.rfind("zlib frame: ", 0), 0u) << reference;
  }
  // The wrong payload size, both ways.
  for (const std::size_t size : {payload.size() - 1, payload.size() + 1}) {
    const std::string reference = zlib_refusal(zlib_impl::zlib, frame, size);
    EXPECT_EQ(zlib_refusal(zlib_impl::libdeflate, frame, size), reference);
    EXPECT_NE(reference.find("decodes to"), std::string::npos) << reference;
  }
}

TEST(ZlibTest, BothImplementationsAgreeOnGarbledFrames) {
  // A differential test: whatever one decoder accepts the other accepts, with the same bytes.
  const auto payload = sample_payload(3000, 15);
  std::mt19937_64 rng(77);
  int refused = 0;
  for (const int level : {1, 6, 9}) {
    const auto frame = zlib_frame(zlib_impl::libdeflate, level, payload);
    for (int trial = 0; trial < 400; ++trial) {
      auto bad = frame;
      for (int flips = 1 + static_cast<int>(rng() % 3); flips > 0; --flips)
        bad[rng() % bad.size()] ^= static_cast<std::byte>(1 + rng() % 255);
      std::vector<std::byte> by_libdeflate(payload.size()), by_zlib(payload.size());
      std::string libdeflate_error, zlib_error;
      try {
        const scoped_zlib_impl use(zlib_impl::libdeflate);
        decompress_frame(codec_id::zlib, bad, by_libdeflate);
      } catch (const error& e) {
        libdeflate_error = e.what();
      }
      try {
        const scoped_zlib_impl use(zlib_impl::zlib);
        decompress_frame(codec_id::zlib, bad, by_zlib);
      } catch (const error& e) {
        zlib_error = e.what();
      }
      ASSERT_EQ(libdeflate_error, zlib_error) << "level " << level << " trial " << trial;
      if (zlib_error.empty()) {
        EXPECT_EQ(by_libdeflate, by_zlib);
      } else {
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, 1000);  // nearly every damage is caught: the Adler-32 covers the payload
}

TEST(ChecksumTest, IsXxh3OfTheBytes) {
  // Known XXH3-64 values (seed 0): empty input and "abc".
  EXPECT_EQ(checksum64({}), 0x2D06800538D394C2ULL);
  const char abc[] = "abc";
  EXPECT_EQ(checksum64(std::as_bytes(std::span(abc, 3))), 0x78AF5F94892F3950ULL);
}

}  // namespace
}  // namespace colflow
