// The values the samples of a byte of packed 2-bit genotype codes take under a function of their
// codes (a dosage, a call, a missing call), as tables of 256 rows of four: one aligned load
// stands for the decode of four samples. Shared by the kernels that sum over codes without
// decoding them (genotype_dot.cpp, live_lists.cpp), so that they add the same values.
#pragma once

namespace colflow::detail::byte_tables {

constexpr double code_dosage(unsigned code) noexcept {
  return code == 0 ? 2.0 : code == 2 ? 1.0 : 0.0;  // 0b01 (missing) and 0b11 count 0
}

// The second allele's dosage: 2 minus the first's for a call, 0 for a missing one.
constexpr double second_dosage(unsigned code) noexcept {
  return code == 3 ? 2.0 : code == 2 ? 1.0 : 0.0;
}

constexpr double code_call(unsigned code) noexcept { return code == 1 ? 0.0 : 1.0; }
constexpr double code_missing(unsigned code) noexcept { return code == 1 ? 1.0 : 0.0; }

// The four values a byte's samples take under a function of their codes: one aligned load
// stands for the decode of four samples.
struct byte_values {
  alignas(32) double four[256][4];
  constexpr explicit byte_values(double (*value)(unsigned) noexcept) noexcept : four{} {
    for (unsigned b = 0; b < 256; ++b)
      for (unsigned k = 0; k < 4; ++k) four[b][k] = value((b >> (2 * k)) & 3u);
  }
  // A single sample's value: the byte whose first code is `code` and the rest 0b00.
  constexpr double of(unsigned code) const noexcept { return four[code][0]; }
};
inline constexpr byte_values table{code_dosage};
inline constexpr byte_values second_table{second_dosage};
inline constexpr byte_values calls{code_call};  // 1 for a call, 0 for a missing one
inline constexpr byte_values missing_table{code_missing};

// A byte's four values under `values`, then its four missing calls: the two sums of the paired
// kernels, one aligned load of a 512-bit vector or two of 256 bits from one cache line.
struct byte_values_and_missing {
  alignas(64) double eight[256][8];
  constexpr explicit byte_values_and_missing(const byte_values& values) noexcept : eight{} {
    for (unsigned b = 0; b < 256; ++b)
      for (unsigned k = 0; k < 4; ++k) {
        eight[b][k] = values.four[b][k];
        eight[b][4 + k] = missing_table.four[b][k];
      }
  }
};
inline constexpr byte_values_and_missing table_and_missing{table};
inline constexpr byte_values_and_missing second_table_and_missing{second_table};

// The lanes of a byte (bit l: its sample l) that hold a copy of the first allele (`second`
// false) or of the second, or also a missing call (`with_missing`): the samples a sum over the
// byte adds something for, and those an update of the residual changes.
struct byte_lanes {
  unsigned of[2][2][256];  // [second][with_missing][byte]
  constexpr byte_lanes() noexcept : of{} {
    for (unsigned second = 0; second < 2; ++second)
      for (unsigned with_missing = 0; with_missing < 2; ++with_missing)
        for (unsigned b = 0; b < 256; ++b)
          for (unsigned l = 0; l < 4; ++l) {
            const double x = second ? second_table.four[b][l] : table.four[b][l];
            if (x != 0.0 || (with_missing && missing_table.four[b][l] != 0.0))
              of[second][with_missing][b] |= 1u << l;
          }
  }
};
inline constexpr byte_lanes nonzero_lanes{};

}  // namespace colflow::detail::byte_tables
