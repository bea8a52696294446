/// @file store.hpp
/// Reading a colflow store: a directory with a data file of per-column frames, a binary offset
/// index, sample IDs, column descriptions and a manifest (docs/FORMAT.md).
///
/// store::open validates the headers, the version, the store id and every index entry against
/// the real file sizes before anything else is read, so a damaged store is refused up front
/// with a message naming the file and the entry. Opening costs one pass over the index (no
/// frame is read), a read of the small manifest and, for a store of version 1.3 or later, one
/// checksum pass over samples.tsv and columns.tsv; they are parsed (and their record counts
/// checked) only when first asked for.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "colflow/codec/codec.hpp"
#include "colflow/codec/dosage_codec.hpp"
#include "colflow/codec/genotype_codec.hpp"

namespace colflow {

/// The newest store format version this build writes (docs/FORMAT.md, version history). A store
/// is written at the oldest version that can hold it (format_minor_for), so that older readers
/// open every store they could read.
inline constexpr std::uint16_t format_version_major = 1;
inline constexpr std::uint16_t format_version_minor = 4;

/// What a column's decoded payload holds (docs/FORMAT.md, Value_Type).
enum class value_type : std::uint8_t {
  float64 = 1,   ///< n little-endian IEEE-754 doubles
  float32 = 2,   ///< n little-endian IEEE-754 floats
  genotype = 3,  ///< ceil(n/4) bytes of PLINK 2-bit codes
  dosage = 4,    ///< n little-endian uint16 allele dosages in fixed point (dosage_codec.hpp)
};

/// True for the types whose columns are variants with a counted allele (genotype, dosage):
/// their statistics include the A1 frequency and their outputs name chromosome and alleles.
constexpr bool holds_variants(value_type type) noexcept {
  return type == value_type::genotype || type == value_type::dosage;
}

/// The minor version a store of `type` is written at: 3 for every type, the version whose
/// manifest records the checksums of samples.tsv and columns.tsv (docs/FORMAT.md §9.3). Older
/// readers open these stores as before (they ignore the new manifest key); dosage stores were
/// 1.1 and 1.2 before, the others 1.0.
constexpr std::uint16_t format_minor_for(value_type) noexcept { return 3; }

/// "float64", "float32", "genotype" or "dosage".
std::string_view value_type_name(value_type type) noexcept;

/// Bytes of a decoded column of `rows` values of `type`.
std::uint64_t decoded_column_bytes(value_type type, std::uint64_t rows) noexcept;

/// Per-column flags (docs/FORMAT.md, Column_Flags).
namespace column_flag {
inline constexpr std::uint16_t shuffled = 1u << 0;      ///< byte-shuffle filter applied
inline constexpr std::uint16_t standardized = 1u << 1;  ///< values stored already standardised
inline constexpr std::uint16_t constant = 1u << 2;      ///< SD is 0: standardises to all zeros
inline constexpr std::uint16_t all_known = shuffled | standardized | constant;
}  // namespace column_flag

/// One index entry, decoded.
struct column_entry {
  std::uint64_t offset = 0;        ///< absolute byte offset of the frame in the data file
  std::uint64_t frame_size = 0;    ///< bytes of the frame
  std::uint64_t decoded_size = 0;  ///< bytes of the decoded payload
  std::uint64_t checksum = 0;      ///< XXH3-64 of the frame's bytes
  column_stats stats;              ///< statistics of the column's values (docs/DESIGN.md §2)
  codec_id codec = codec_id::none;
  std::int8_t level = 0;  ///< the level it was compressed at (informational)
  std::uint16_t flags = 0;
};

/// A sample: the six fields of a PLINK .fam line, kept verbatim.
struct sample_info {
  std::string fid, iid, father, mother, sex, phenotype;
};

/// A column: the six fields of a PLINK .bim line, kept verbatim; dense stores fill only `id`.
struct column_info {
  std::string chrom, id, cm, pos, a1, a2;
};

/// A run of consecutive columns on one chromosome: columns [first, first + count) have the
/// code `chrom` (as columns() gives it).
struct chromosome_run {
  std::string chrom;
  std::size_t first = 0, count = 0;
};

/// How a store reads its data file.
enum class access_mode {
  mmap,   ///< memory-mapped (default), with madvise hints
  pread,  ///< read() into a per-thread buffer: for file systems where mapping misbehaves
};

struct open_options {
  access_mode access = access_mode::mmap;
  bool verify_checksums = false;  ///< check each frame's checksum before decoding it
};

/// How read_column presents values.
enum class decode_as {
  standardized,  ///< docs/DESIGN.md §2: missing -> 0 (mean-imputed), centred, z'z = n - 1
  stored,        ///< as stored: dosages with NaN for missing calls, or the stored floats
};

/// Shape and sizes of a store, as `colflow info` reports them.
struct store_summary {
  std::uint64_t rows = 0, columns = 0;
  value_type type = value_type::float64;
  std::uint64_t data_bytes = 0, index_bytes = 0, decoded_bytes = 0;
  std::array<std::uint64_t, 256> columns_per_codec{};  ///< indexed by codec id
  std::string source;                                  ///< from the manifest

  /// The matrix held as doubles, what analyses would otherwise read: rows × columns × 8.
  double float64_bytes() const noexcept {
    return 8.0 * static_cast<double>(rows) * static_cast<double>(columns);
  }
  /// decoded_bytes / data_bytes: the codecs' ratio on the payload (0 without data).
  double compression_ratio() const noexcept {
    return data_bytes ? static_cast<double>(decoded_bytes) / static_cast<double>(data_bytes) : 0;
  }
  /// float64_bytes() / data_bytes: the store against a float64 matrix (0 without data).
  double ratio_vs_float64() const noexcept {
    return data_bytes ? float64_bytes() / static_cast<double>(data_bytes) : 0;
  }
};

/// A read-only open store. Movable, not copyable. All const members are safe to call from
/// many threads at once.
class store {
 public:
  /// Opens and validates the store directory `path`, checking samples.tsv and columns.tsv
  /// against the checksums of the manifest (version 1.3 and later). Throws colflow::error:
  /// not_found, bad_magic, unsupported_version, corrupt_header, corrupt_index,
  /// mismatched_store, checksum_mismatch, io_error.
  static store open(const std::filesystem::path& path, const open_options& options = {});

  store(store&&) noexcept;
  store& operator=(store&&) noexcept;
  ~store();

  const std::filesystem::path& path() const noexcept;
  std::uint64_t num_rows() const noexcept;
  std::uint64_t num_columns() const noexcept;
  value_type type() const noexcept;
  std::array<std::uint8_t, 16> store_id() const noexcept;
  /// store_id() as 32 lowercase hex digits, as `colflow info` prints it.
  std::string store_id_text() const;
  access_mode access() const noexcept;
  /// Version_Minor of the store's headers: the format version it was written at (1.x).
  std::uint16_t version_minor() const noexcept;
  /// True when the manifest records the checksums of samples.tsv and columns.tsv (stores of
  /// version 1.3 and later); open() checked both files against them.
  bool has_list_checksums() const noexcept;

  /// Reads samples.tsv and columns.tsv again and checks them against the checksums the
  /// manifest records (nothing to check when has_list_checksums() is false). Throws
  /// errc::checksum_mismatch naming the file, not_found or io_error.
  void verify_list_checksums() const;

  /// The names of the files attached to the store (docs/FORMAT.md §9.4: an LD store's
  /// `ld.tsv`), whose checksums the manifest records; open() and verify_list_checksums() check
  /// them with the lists.
  std::vector<std::string> attached_files() const;
  /// The bytes of the attached file `name`, checked against the manifest's checksum. Throws
  /// errc::not_found when the store has no such attached file, checksum_mismatch naming the
  /// file, io_error.
  std::string read_attached(const std::string& name) const;

  /// Entry `j` of the index (j < num_columns(), unchecked).
  column_entry entry(std::size_t j) const noexcept;

  /// The samples (rows), parsed from samples.tsv on first use; the bytes parsed are checked
  /// against the manifest's checksum first (errc::checksum_mismatch), when it records one.
  const std::vector<sample_info>& samples() const;
  /// The column descriptions, parsed from columns.tsv on first use; checked as samples() is.
  const std::vector<column_info>& columns() const;
  /// The columns' chromosomes as runs of consecutive columns, read from columns.tsv (checked as
  /// columns() is) without the rest of its lines: what a pass needs to know of the columns
  /// before it starts, in a fraction of columns()'s time, which can then parse the rest beside
  /// the pass. Read anew at each call.
  std::vector<chromosome_run> chromosome_runs() const;
  /// Shape, sizes, codec counts and source.
  store_summary summary() const;

  /// Decodes column `j` into `out` (out.size() == num_rows()). For a genotype store the
  /// values come from the 2-bit codes through the column's lookup table; a float store
  /// not stored standardised is standardised on the fly for decode_as::standardized.
  /// Throws errc::corrupt_frame / checksum_mismatch naming the column and file.
  void read_column(std::size_t j, std::span<double> out,
                   decode_as as = decode_as::standardized) const;
  void read_column(std::size_t j, std::span<float> out,
                   decode_as as = decode_as::standardized) const;

  /// Decodes column `j`'s payload (out.size() == entry(j).decoded_size): the 2-bit codes of
  /// a genotype store, the (unshuffled) little-endian floats of a float store.
  void read_payload(std::size_t j, std::span<std::byte> out) const;

  /// Copies column `j`'s frame, as stored, into `frame`.
  void read_frame(std::size_t j, std::vector<std::byte>& frame) const;

  /// The frame of column `j` inside the mapping (mmap access only; empty in pread mode).
  /// Valid while the store is open.
  std::span<const std::byte> mapped_frame(std::size_t j) const noexcept;

  /// Maps into this process the pages of the frames of columns [first, last] that the page cache
  /// holds (mmap access; nothing in pread mode), so that a pass over them faults on none: a
  /// batch of mappings costs less than a fault per few pages. Pages out of the page cache are
  /// left to the pass (not read: at most the system's read-ahead next to mapped ones). Meant
  /// for a thread of its own
  /// while the pass gets ready; returns early once `stop` is true.
  void map_resident_pages(std::size_t first, std::size_t last,
                          const std::atomic<bool>& stop) const noexcept;

  /// Takes the mapped pages of the frames of columns [first, last] out of this process's
  /// resident memory (mmap access; nothing in pread mode): for a single pass that has finished
  /// with them, so that its resident set holds what it computes, not the store it read. The
  /// pages stay in the page cache, and reading the columns again maps them again.
  void drop_pages(std::size_t first, std::size_t last) const noexcept;

  /// Readies the mapping for a pass over the columns in `order` (mmap access; hints only,
  /// never a change of what is read). An ascending order that reads most of the span it
  /// covers is left to the system's read-ahead. Any other order (shuffled, or a few columns
  /// far apart), when a tenth or more of its frames' pages are out of the page cache, turns
  /// that read-ahead off (each fault would read megabytes around one frame of a few kilobytes,
  /// and under memory pressure evict frames not yet read) and returns true: the pass should
  /// then prefetch() each column a little before it reads it.
  bool prepare_pass(std::span<const std::size_t> order) const noexcept;

  /// Starts reading column `j`'s frame into the page cache without waiting (mmap access).
  void prefetch(std::size_t j) const noexcept;

  /// Readies the mapping for columns read one at a time in no order known in advance (an
  /// SBayesR chain reading the LD columns of the effects that change; mmap access, hints
  /// only): turns the system's read-ahead off, as prepare_pass() does for a shuffled pass out of
  /// the page cache, since each fault would read far more than the frame it needs and, under
  /// memory pressure, evict frames still wanted. A reader should then prefetch() each column
  /// as it reads it (one request for its frame, not a fault a page). A later prepare_pass()
  /// sets the hints for its own order.
  void prepare_random_reads() const noexcept;

  /// Checks column `j`'s frame checksum. Throws errc::checksum_mismatch.
  void verify_checksum(std::size_t j) const;

  /// Throws errc::io_error when the data file shrank under this store's mapping (another
  /// program truncated or rewrote it) and a read touched the lost part. Such a read does not
  /// kill the process with SIGBUS: it sees zeros, and the reads of this class and the passes
  /// of column_stream call this check after using the mapping, so the zeros never pass for
  /// data. In pread mode a shrunk file fails the read itself.
  void check_mapping() const;

 private:
  struct impl;
  explicit store(std::unique_ptr<impl> p) noexcept;
  std::unique_ptr<impl> impl_;
};

}  // namespace colflow
