/// @file store_writer.hpp
/// Writing a store: encode columns into frames (thread-safe, pure), then append them in order
/// and finish atomically.
///
/// The writer builds the store in a staged directory beside the target (colflow/io/
/// staged_output.hpp) and publishes it only in finish(): files are flushed and fsync'ed, the
/// index written last, then the directory is fsync'ed and renamed (or exchanged with an
/// existing store by renameat2(RENAME_EXCHANGE)). An interrupted run therefore never leaves
/// anything that opens as a store under the target name, and never damages an existing store
/// there; a failed or cancelled one leaves nothing at all.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "colflow/codec/codec.hpp"
#include "colflow/store/store.hpp"

namespace colflow {

/// How to encode a column.
struct column_encoding {
  codec_id codec = codec_id::zstd;
  int level = 3;
  bool shuffle = false;  ///< byte-shuffle float payloads before compressing (ignored for genotypes)
};

/// A column ready to be appended: its frame and everything its index entry records.
struct encoded_column {
  std::vector<std::byte> frame;
  std::uint64_t decoded_size = 0;
  std::uint64_t checksum = 0;
  column_stats stats;
  codec_id codec = codec_id::none;
  std::int8_t level = 0;
  std::uint16_t flags = 0;
};

/// Statistics of a dense column (NaN = missing): observed count, mean, SD (docs/DESIGN.md §2);
/// a1_freq is NaN.
column_stats dense_stats(std::span<const double> values) noexcept;

/// Encodes a genotype column of `rows` samples from its 2-bit codes (padding bits are zeroed
/// in the stored payload). Computes the statistics from the codes.
encoded_column encode_genotype_column(std::span<const std::uint8_t> codes, std::uint64_t rows,
                                      const column_encoding& encoding);

/// Encodes a dosage column (dosage_codec.hpp) from its fixed-point values; `encoding.shuffle`
/// byte-shuffles the 16-bit values. Computes the statistics from the values. Throws
/// errc::invalid_argument for a value that is neither a dosage (0..dosage_max) nor missing.
encoded_column encode_dosage_column(std::span<const std::uint16_t> values,
                                    const column_encoding& encoding);

/// Encodes a float column as `type` (float64 or float32) with the given statistics and flags
/// (column_flag::standardized when `values` are already standardised).
encoded_column encode_float_column(std::span<const double> values, value_type type,
                                   const column_stats& stats, std::uint16_t flags,
                                   const column_encoding& encoding);

/// A small text file written into the store beside its lists, its checksum recorded in the
/// manifest (docs/FORMAT.md §9.4): what a kind of store adds to the format (an LD store's
/// `ld.tsv`).
struct attached_file {
  std::string name;  ///< a plain file name (letters, digits, '.', '_', '-'; not the store's own)
  std::string text;
};

/// What the writer needs to know before the first column.
struct writer_options {
  value_type type = value_type::float64;
  std::uint64_t rows = 0;
  bool overwrite = false;               ///< replace an existing store at the path (on success only)
  std::string source;                   ///< free text for the manifest: where the data came from
  std::vector<attached_file> attached;  ///< files attached to the store, written by finish()
};

/// Builds a store column by column. Not thread-safe: append from one thread, in order.
/// Destroying a writer without finish() removes everything it wrote. After a stop request
/// (colflow/cancellation.hpp), append() and finish() throw errc::cancelled and publish nothing.
class store_writer {
 public:
  /// Starts a store at `path` for `samples` (one per row). Throws errc::already_exists when
  /// `path` exists and options.overwrite is false, errc::invalid_argument for bad options.
  store_writer(const std::filesystem::path& path, const writer_options& options,
               std::vector<sample_info> samples);
  store_writer(store_writer&&) noexcept;
  store_writer& operator=(store_writer&&) noexcept;
  ~store_writer();

  /// Appends the next column. Throws errc::invalid_argument when the column does not fit the
  /// store (decoded size, flags), errc::io_error on a write error.
  void append(const encoded_column& column, const column_info& info);

  /// Number of columns appended so far.
  std::uint64_t num_columns() const noexcept;

  /// Writes the index and manifest, makes everything durable and moves the store into place.
  void finish();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace colflow
