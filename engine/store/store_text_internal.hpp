// The text parts of a store: samples.tsv, columns.tsv and manifest.json.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "colflow/store/store.hpp"

namespace colflow::detail {

inline constexpr const char* samples_header = "#FID\tIID\tPAT\tMAT\tSEX\tPHENOTYPE";
inline constexpr const char* columns_header = "#CHR\tID\tCM\tPOS\tA1\tA2";

// Throws errc::invalid_argument when a field holds a tab, newline or carriage return, which
// would break the one-record-per-line layout.
std::string format_samples(const std::vector<sample_info>& samples);
std::string format_column_line(const column_info& column);

// Parse and check the record count against the binary header (errc::mismatched_store).
std::vector<sample_info> read_samples(const std::filesystem::path& file, std::uint64_t rows);
std::vector<column_info> read_columns(const std::filesystem::path& file, std::uint64_t columns);

struct manifest {
  std::array<std::uint8_t, 16> store_id{};
  std::string source;
};

std::string store_id_hex(const std::array<std::uint8_t, 16>& id);

// The manifest's JSON: version, shape, value type, codecs, sizes, source and creator.
std::string format_manifest(const std::array<std::uint8_t, 16>& id, const store_summary& summary);
manifest read_manifest(const std::filesystem::path& file);

}  // namespace colflow::detail
