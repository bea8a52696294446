#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "colflow/codec/codec.hpp"
#include "colflow/error.hpp"

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

INSTANTIATE_TEST_SUITE_P(AllCodecs, CodecRoundTripTest,
                         ::testing::Values(codec_case{codec_id::none, 0},
                                           codec_case{codec_id::zlib, 1},
                                           codec_case{codec_id::zlib, 9},
                                           codec_case{codec_id::lz4, 1},
                                           codec_case{codec_id::lz4, 12},
                                           codec_case{codec_id::zstd, 1},
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
  EXPECT_EQ(codec_from_name("zstd"), codec_id::zstd);
  EXPECT_EQ(codec_from_name("lz4"), codec_id::lz4);
  EXPECT_FALSE(codec_from_name("brotli").has_value());
  EXPECT_TRUE(is_known_codec(3));
  EXPECT_FALSE(is_known_codec(4));
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
      for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::byte>((i * 37 + n) & 0xFF);
      shuffle_bytes(src, e, shuffled);
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t b = 0; b < e; ++b)
          ASSERT_EQ(shuffled[b * n + i], src[i * e + b]) << "e " << e << " n " << n << " i " << i;
      unshuffle_bytes(shuffled, e, back);
      ASSERT_EQ(back, src) << "e " << e << " n " << n;
    }
  }
}

TEST(ChecksumTest, IsXxh3OfTheBytes) {
  // Known XXH3-64 values (seed 0): empty input and "abc".
  EXPECT_EQ(checksum64({}), 0x2D06800538D394C2ULL);
  const char abc[] = "abc";
  EXPECT_EQ(checksum64(std::as_bytes(std::span(abc, 3))), 0x78AF5F94892F3950ULL);
}

}  // namespace
}  // namespace colflow
