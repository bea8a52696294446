/// @file column_source.hpp
/// The one interface every input format implements: a matrix of samples in rows and variables
/// (variants, features) in columns, read one column at a time.
///
/// Part of the importer library, libcolflow_preprocess (CMake target colflow::preprocess), not
/// of libcolflow. The converter (converter.hpp) turns any column_source into a store and knows
/// nothing else about the input: a new format (VCF, BGEN, ...) is a new implementation of this
/// class, and the converter does not change. The formats shipped are PLINK 1 binary
/// (bed_source.hpp), BGEN (bgen_source.hpp), VCF/BCF (vcf_source.hpp), NumPy .npy
/// (npy_source.hpp), CSV text (csv_source.hpp) and a matrix in memory (matrix_source.hpp);
/// concatenated_source.hpp joins several, and inputs.hpp opens the command's inputs.
///
/// A source is one of three kinds:
/// - a genotype source (kind() == value_type::genotype) hands out each column as PLINK 2-bit
///   codes (read_genotypes), which a genotype store keeps as they are;
/// - a dosage source (kind() == value_type::dosage) hands out each column as allele dosages in
///   16-bit fixed point (read_dosages; codec/dosage_codec.hpp), which a dosage store keeps as
///   they are and a genotype store turns into hard calls;
/// - a dense source (kind() == value_type::float64) hands out each column as doubles, NaN for a
///   missing value (read_values).
///
/// How the converter calls a source: the shape and the samples first (kind, rows, columns,
/// samples, description), then, for j = 0, 1, ..., columns() - 1 in this order, column(j)
/// followed by read_genotypes(j), read_dosages(j) or read_values(j). Calls come from one thread at
/// a time, not always the same one. An implementation may therefore stream its input and may refuse
/// columns asked for out of order (bed_source does, for column()).
///
/// Reading in two steps: a source whose reads are mostly decoding (decompressing a block,
/// parsing a line of text) may also implement fetch and decode. fetch(j) is called where a
/// read would be (in column order, one thread at a time) and returns column j's raw bytes, or
/// null to be read with read_genotypes/read_dosages instead; decode_genotypes/decode_dosages
/// then turn the fetched bytes into the column on any thread, concurrently for different
/// columns, so that the converter decodes as many columns at once as it has threads.
///
/// Errors: implementations throw colflow::error, naming the file and, where it applies, the
/// line or column, as described by each source. Validating the input in the constructor, before
/// the first column is read, is the rule: a conversion that fails half-way still leaves no
/// store behind, but it costs the time spent.
///
/// Thread safety: none unless an implementation says otherwise; one thread at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "colflow/error.hpp"
#include "colflow/store/store.hpp"

namespace colflow::preprocess {

/// The error every importer raises for a malformed input file: errc::bad_input with the
/// message "NAME: what", followed by " (PATH)" when the file name alone does not locate it.
error input_error(const std::filesystem::path& file, const std::string& what);

/// A matrix read column by column (see the file comment for the calling contract).
class column_source {
 public:
  virtual ~column_source() = default;

  /// value_type::genotype for a source of PLINK codes (read_genotypes), value_type::dosage for
  /// a source of dosages (read_dosages), value_type::float64 for a dense source (read_values).
  virtual value_type kind() const = 0;
  /// Number of samples N (rows), at least 1.
  virtual std::uint64_t rows() const = 0;
  /// Number of columns M, at least 1.
  virtual std::uint64_t columns() const = 0;
  /// One entry per row, in row order. Dense sources make IDs up when the input has none
  /// (FID = IID = "row1", "row2", ...; father, mother and sex "0", phenotype "-9").
  virtual std::vector<sample_info> samples() const = 0;
  /// The description of column j that the store records. Dense sources fill only `id` (a
  /// header name, or "col1", "col2", ...).
  virtual column_info column(std::uint64_t j) const = 0;
  /// What the store's manifest records as its source: the format and the input path, e.g.
  /// "PLINK .bed data/x.bed" or "CSV file data/x.csv".
  virtual std::string description() const = 0;
  /// What the reading drops or changes that a user should hear of, one sentence each (e.g.
  /// "dropped the phase of 12 variants"); the command prints them after the conversion. The
  /// default: none. Complete only once every column has been read.
  virtual std::vector<std::string> notes() const { return {}; }

  /// Writes column j's 2-bit PLINK codes into `codes`, which holds genotype_column_bytes(rows())
  /// bytes (codec/genotype_codec.hpp): sample i in bits 2 (i mod 4) of byte i / 4, padding
  /// bits zero. Genotype sources only: the default throws errc::invalid_argument.
  virtual void read_genotypes(std::uint64_t j, std::span<std::uint8_t> codes);
  /// Writes column j's dosages of the counted allele (column(j).a1) into `dosages`, which holds
  /// rows() values: fixed point, dosage_one per allele copy, dosage_missing for a missing value
  /// (codec/dosage_codec.hpp). Dosage sources only: the default throws errc::invalid_argument.
  virtual void read_dosages(std::uint64_t j, std::span<std::uint16_t> dosages);
  /// True for a dosage source whose input also holds hard calls of its own (a .pgen's, which
  /// plink2 made by its --hard-call-threshold when it wrote the file): read_genotypes (and
  /// decode_genotypes) then give those calls. Default: false.
  virtual bool has_hard_calls() const { return false; }
  /// Column j's undecoded input, whatever a source needs to decode it later without touching
  /// its files or its state.
  class fetched {
   public:
    virtual ~fetched() = default;
    /// The bytes of input it holds, about: the converter gathers columns into batches of a
    /// similar size of input.
    virtual std::size_t size() const noexcept = 0;
  };
  /// Column j's raw input for decode_genotypes/decode_dosages, or null (the default) for a
  /// source that reads with read_genotypes/read_dosages.
  virtual std::unique_ptr<fetched> fetch(std::uint64_t j);
  /// Decodes what fetch returned into `codes` (as read_genotypes). Thread-safe: may run
  /// concurrently with other decodes and with fetch. The default throws errc::invalid_argument.
  virtual void decode_genotypes(const fetched& raw, std::span<std::uint8_t> codes) const;
  /// Decodes what fetch returned into `dosages` (as read_dosages). Thread-safe like
  /// decode_genotypes. The default throws errc::invalid_argument.
  virtual void decode_dosages(const fetched& raw, std::span<std::uint16_t> dosages) const;
  /// Writes column j's values into `values`, which holds rows() doubles; NaN is a missing
  /// value. Dense sources only: the default throws errc::invalid_argument.
  virtual void read_values(std::uint64_t j, std::span<double> values);

 protected:
  /// For implementations: throws errc::invalid_argument, naming the source, unless
  /// j < columns() and size == rows().
  void check_read(std::uint64_t j, std::size_t size) const;
};

}  // namespace colflow::preprocess
