// Random numbers named by what they are for. Each draw sequence is Philox4x32-10 keyed by the
// seed, with a counter made of a purpose tag and two indices (an iteration and a column, say)
// plus a running block count. A number therefore depends only on the seed and its name, never
// on the threads, the in-flight depth or where a run was resumed: the property that makes a
// sampler reproducible bit for bit.
#pragma once

#include <Random123/philox.h>

#include <cmath>
#include <cstdint>
#include <numbers>

namespace colflow::detail {

class random_draws {
 public:
  // `purpose` is a small tag (below 256) naming the kind of draw.
  random_draws(std::uint64_t seed, std::uint8_t purpose, std::uint64_t a, std::uint32_t b) noexcept
      : key_{{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)}},
        counter_{{purpose, static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(a >> 32), b}} {
  }

  // Uniform on the open interval (0, 1) with 53 random bits.
  double uniform() noexcept {
    if (used_ > 2) refill();
    const std::uint64_t bits = (std::uint64_t{words_[used_]} << 32) | words_[used_ + 1];
    used_ += 2;
    return (static_cast<double>(bits >> 11) + 0.5) * 0x1p-53;
  }

  // 32 random bits.
  std::uint32_t bits() noexcept {
    if (used_ == 4) refill();
    return words_[used_++];
  }

  // Uniform integer in [0, bound): the multiply-shift map of 32 random bits (its bias, below
  // bound / 2^32, is immaterial for shuffling).
  std::uint32_t below(std::uint32_t bound) noexcept {
    return static_cast<std::uint32_t>((std::uint64_t{bits()} * bound) >> 32);
  }

  double normal() noexcept {
    const double radius = std::sqrt(-2.0 * std::log(uniform()));
    return radius * std::cos(2.0 * std::numbers::pi * uniform());
  }

  // Gamma with this shape (> 0) and scale 1: Marsaglia and Tsang (2000), with the
  // U^(1/shape) boost for shapes below 1.
  double gamma(double shape) noexcept {
    if (shape < 1.0) return gamma(shape + 1.0) * std::pow(uniform(), 1.0 / shape);
    const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
    while (true) {
      double x, v;
      do {
        x = normal();
        v = 1.0 + c * x;
      } while (v <= 0.0);
      v = v * v * v;
      const double u = uniform();
      if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
      if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
    }
  }

  // Scaled inverse chi-square with `df` degrees of freedom and scale `scale`:
  // df · scale / χ²_df, the conjugate draw of a normal variance.
  double scaled_inverse_chi_square(double df, double scale) noexcept {
    return df * scale / (2.0 * gamma(df / 2.0));
  }

 private:
  void refill() noexcept {
    // The first counter word holds the purpose in its low 8 bits; successive blocks of one
    // sequence step the 24 bits above it.
    auto c = counter_;
    c[0] |= blocks_++ << 8;
    const auto r = philox_(c, key_);
    for (int i = 0; i < 4; ++i) words_[i] = r[i];
    used_ = 0;
  }

  r123::Philox4x32 philox_;
  r123::Philox4x32::key_type key_;
  r123::Philox4x32::ctr_type counter_;
  std::uint32_t blocks_ = 0;
  std::uint32_t words_[4] = {};
  int used_ = 4;
};

}  // namespace colflow::detail
