// Turning one column into a frame plus the fields of its index entry. Pure functions of their
// inputs: the preprocessor calls them from many threads at once.
#include <bit>
#include <cmath>
#include <cstring>

#include "colflow/error.hpp"
#include "colflow/store/store_writer.hpp"

static_assert(std::endian::native == std::endian::little,
              "colflow stores little-endian floats as they are in memory");

namespace colflow {
namespace {

void finish_frame(encoded_column& col, std::span<const std::byte> payload,
                  const column_encoding& enc) {
  compress_frame(enc.codec, enc.level, payload, col.frame);
  col.decoded_size = payload.size();
  col.checksum = checksum64(col.frame);
  col.codec = enc.codec;
  col.level = static_cast<std::int8_t>(enc.level);
  if (col.stats.sd == 0) col.flags |= column_flag::constant;
}

}  // namespace

column_stats dense_stats(std::span<const double> values) noexcept {
  column_stats s;
  s.a1_freq = std::numeric_limits<double>::quiet_NaN();
  double sum = 0;
  for (double v : values)
    if (!std::isnan(v)) {
      sum += v;
      ++s.observed;
    }
  if (s.observed == 0) {
    s.mean = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  s.mean = sum / static_cast<double>(s.observed);
  // Two passes: the sum of squared deviations from the mean does not cancel catastrophically.
  double ss = 0;
  for (double v : values)
    if (!std::isnan(v)) ss += (v - s.mean) * (v - s.mean);
  if (values.size() >= 2) s.sd = std::sqrt(ss / static_cast<double>(values.size() - 1));
  return s;
}

encoded_column encode_genotype_column(std::span<const std::uint8_t> codes, std::uint64_t rows,
                                      const column_encoding& encoding) {
  const std::size_t bytes = genotype_column_bytes(rows);
  if (codes.size() < bytes)
    throw error(errc::invalid_argument, "genotype column of " + std::to_string(codes.size()) +
                                            " bytes, expected " + std::to_string(bytes));
  // Padding bits are zeroed so that equal genotypes always give equal frames and checksums.
  std::vector<std::uint8_t> payload(codes.begin(), codes.begin() + static_cast<long>(bytes));
  if (rows % 4 != 0) payload.back() &= static_cast<std::uint8_t>((1u << (2 * (rows % 4))) - 1);
  encoded_column col;
  col.stats = genotype_stats(count_genotypes(payload, rows), rows);
  finish_frame(col, std::as_bytes(std::span(payload)), encoding);
  return col;
}

encoded_column encode_dosage_column(std::span<const std::uint16_t> values,
                                    const column_encoding& encoding) {
  const std::size_t bad = first_invalid_dosage(values);
  if (bad != values.size())
    throw error(errc::invalid_argument, "row " + std::to_string(bad) + ": dosage value " +
                                            std::to_string(values[bad]) + " is past 2 copies (" +
                                            std::to_string(dosage_max) + ") and not missing");
  encoded_column col;
  col.stats = dosage_stats(values);
  std::span<const std::byte> payload = std::as_bytes(values);
  std::vector<std::byte> shuffled;
  if (encoding.shuffle) {
    shuffled.resize(payload.size());
    shuffle_bytes(payload, sizeof(std::uint16_t), shuffled);
    payload = shuffled;
    col.flags |= column_flag::shuffled;
  }
  finish_frame(col, payload, encoding);
  return col;
}

encoded_column encode_float_column(std::span<const double> values, value_type type,
                                   const column_stats& stats, std::uint16_t flags,
                                   const column_encoding& encoding) {
  if (type != value_type::float64 && type != value_type::float32)
    throw error(
        errc::invalid_argument,
        "encode_float_column: " + std::string(value_type_name(type)) + " is not a float type");
  if ((flags & ~column_flag::standardized) != 0)
    throw error(errc::invalid_argument,
                "encode_float_column: only the standardized flag may be set");
  if (!std::isfinite(stats.sd) || (stats.observed > 0 && !std::isfinite(stats.mean)))
    throw error(errc::invalid_argument, "column has infinite values");
  for (double v : values)
    if (std::isinf(v)) throw error(errc::invalid_argument, "column has infinite values");

  std::vector<std::byte> payload;
  std::size_t element = 8;
  if (type == value_type::float64) {
    const auto b = std::as_bytes(values);
    payload.assign(b.begin(), b.end());
  } else {
    element = 4;
    payload.resize(values.size() * 4);
    for (std::size_t i = 0; i < values.size(); ++i) {
      const float f = static_cast<float>(values[i]);
      std::memcpy(payload.data() + 4 * i, &f, 4);
    }
  }
  encoded_column col;
  col.stats = stats;
  col.flags = flags;
  if (encoding.shuffle) {
    std::vector<std::byte> shuffled(payload.size());
    shuffle_bytes(payload, element, shuffled);
    payload.swap(shuffled);
    col.flags |= column_flag::shuffled;
  }
  finish_frame(col, payload, encoding);
  return col;
}

}  // namespace colflow
