// The text parts of a store: samples.tsv, columns.tsv and manifest.json.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "colflow/store/store.hpp"

namespace colflow::detail {

inline constexpr const char* samples_header = "#FID\tIID\tPAT\tMAT\tSEX\tPHENOTYPE";
inline constexpr const char* columns_header = "#CHR\tID\tCM\tPOS\tA1\tA2";

// Throws errc::invalid_argument when a field holds a tab, newline or carriage return, which
// would break the one-record-per-line layout.
std::string format_samples(const std::vector<sample_info>& samples);
std::string format_column_line(const column_info& column);

// Parse and check the record count against the binary header (errc::mismatched_store). With a
// `checksum`, the bytes parsed are first checked against it (check_list_checksum), so that what
// is parsed is what was checked at open even if the file changed since.
std::vector<sample_info> read_samples(const std::filesystem::path& file, std::uint64_t rows,
                                      std::optional<std::uint64_t> checksum = {});
std::vector<column_info> read_columns(const std::filesystem::path& file, std::uint64_t columns,
                                      std::optional<std::uint64_t> checksum = {});
// The first field of columns.tsv's lines, normalised, as runs (store::chromosome_runs); checked
// as read_columns checks.
std::vector<chromosome_run> read_chromosome_runs(const std::filesystem::path& file,
                                                 std::uint64_t columns,
                                                 std::optional<std::uint64_t> checksum = {});

// The minor version from which a store's manifest records the XXH3-64 of samples.tsv and
// columns.tsv (docs/FORMAT.md §9.3), and a reader requires them.
inline constexpr std::uint16_t list_checksums_minor = 3;

// The list checksums a writer records.
struct list_checksums {
  std::uint64_t samples = 0, columns = 0;
  // The attached files (docs/FORMAT.md §9.4): name and XXH3-64, in the order written.
  std::vector<std::pair<std::string, std::uint64_t>> attached;
};

struct manifest {
  std::array<std::uint8_t, 16> store_id{};
  std::string source;
  // Absent in stores older than 1.3 (list_checksums_minor).
  std::optional<std::uint64_t> samples_checksum, columns_checksum;
  // The other names of `checksums`: attached files (docs/FORMAT.md §9.4).
  std::vector<std::pair<std::string, std::uint64_t>> attached;
};

// Throws errc::invalid_argument (or `code`) unless `name` may name an attached file: a plain
// file name of letters, digits, '.', '_' and '-', not starting with '.', not one of the five
// files of a store.
void check_attached_name(const std::string& name, errc code = errc::invalid_argument);

std::string store_id_hex(const std::array<std::uint8_t, 16>& id);

// The manifest's JSON: version, shape, value type, codecs, sizes, list checksums, source and
// creator; `minor` is the headers' Version_Minor.
std::string format_manifest(const std::array<std::uint8_t, 16>& id, std::uint16_t minor,
                            const store_summary& summary, const list_checksums& checksums);
// Parses and validates the keys a reader uses: store_id, source, checksums (errc::corrupt_header
// naming the file when one is malformed; an absent checksum is left empty).
manifest read_manifest(const std::filesystem::path& file);

// XXH3-64 of bytes given in pieces: checksum64 of their concatenation.
class checksum_stream {
 public:
  checksum_stream();
  ~checksum_stream();
  checksum_stream(const checksum_stream&) = delete;
  checksum_stream& operator=(const checksum_stream&) = delete;
  void update(std::span<const std::byte> bytes) noexcept;
  void update(std::string_view text) noexcept;
  std::uint64_t digest() const noexcept;

 private:
  void* state_;  // XXH3_state_t, kept out of this header
};

// XXH3-64 of a whole file, read in pieces. Throws not_found / io_error naming the file.
std::uint64_t checksum_file(const std::filesystem::path& file);

// Throws errc::checksum_mismatch, naming the file, unless `computed` equals `recorded`.
void check_list_checksum(const std::filesystem::path& file, std::uint64_t recorded,
                         std::uint64_t computed);

}  // namespace colflow::detail
