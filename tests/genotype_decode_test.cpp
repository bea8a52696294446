// decode_genotypes against its definition, out[i] = lut[code of sample i], for the cases the
// vector decoders handle specially: padding bits set in the partial last byte, an input of
// exactly ceil(n/4) bytes (an over-read shows under AddressSanitizer), unaligned input and
// output, and long columns. Whatever decoder the CPU selects must agree bit for bit.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include "colflow/codec/genotype_codec.hpp"

namespace colflow {
namespace {

template <typename T>
class GenotypeDecodeTest : public testing::Test {};

using float_types = testing::Types<double, float>;
TYPED_TEST_SUITE(GenotypeDecodeTest, float_types);

// Codes with every bit random, the padding bits of the last byte included.
std::vector<std::uint8_t> random_bytes(std::size_t n, std::mt19937_64& rng) {
  std::vector<std::uint8_t> codes(genotype_column_bytes(n));
  for (auto& b : codes) b = static_cast<std::uint8_t>(rng());
  return codes;
}

template <typename T>
genotype_lut<T> distinct_lut() {
  return {T(1.25), std::numeric_limits<T>::quiet_NaN(), T(-0.5), T(-3.75)};
}

// Decodes `codes` (starting `shift` bytes into a buffer) into an output starting `shift`
// values into a buffer, and checks every value bitwise (the table holds a NaN) and that the
// values just past the output are untouched.
template <typename T>
void expect_matches_definition(const std::vector<std::uint8_t>& codes, std::size_t n,
                               std::size_t shift) {
  const genotype_lut<T> lut = distinct_lut<T>();
  std::vector<std::uint8_t> in(shift);
  in.insert(in.end(), codes.begin(), codes.end());
  std::vector<T> out(shift + n + 4, T(99));
  decode_genotypes(std::span(in).subspan(shift), lut, std::span(out).subspan(shift, n));
  for (std::size_t i = 0; i < n; ++i) {
    const T expected = lut[(codes[i / 4] >> (2 * (i % 4))) & 3u];
    ASSERT_EQ(std::memcmp(&out[shift + i], &expected, sizeof(T)), 0)
        << "n=" << n << " i=" << i << " shift=" << shift;
  }
  for (std::size_t i = shift + n; i < out.size(); ++i)
    ASSERT_EQ(out[i], T(99)) << "wrote past the end, n=" << n << " shift=" << shift;
}

TYPED_TEST(GenotypeDecodeTest, MatchesDefinitionWithPaddingBitsSet) {
  std::mt19937_64 rng(5);
  for (std::size_t n = 0; n <= 70; ++n) {
    auto codes = random_bytes(n, rng);
    if (n % 4 != 0) codes.back() |= static_cast<std::uint8_t>(0xFF << (2 * (n % 4)));
    expect_matches_definition<TypeParam>(codes, n, 0);
  }
}

TYPED_TEST(GenotypeDecodeTest, MatchesDefinitionFromUnalignedBuffers) {
  std::mt19937_64 rng(6);
  for (std::size_t shift = 1; shift < 8; ++shift)
    for (std::size_t n : {17u, 33u, 70u})
      expect_matches_definition<TypeParam>(random_bytes(n, rng), n, shift);
}

TYPED_TEST(GenotypeDecodeTest, MatchesDefinitionOnLongColumns) {
  std::mt19937_64 rng(7);
  for (std::size_t n : {10'000u, 100'003u})
    expect_matches_definition<TypeParam>(random_bytes(n, rng), n, 0);
}

}  // namespace
}  // namespace colflow
