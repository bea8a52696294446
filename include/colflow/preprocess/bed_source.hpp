/// @file bed_source.hpp
/// PLINK 1 binary input: .fam (samples), .bim (variants) and .bed (2-bit genotype codes), as a
/// column_source of genotypes. Part of libcolflow_preprocess (colflow::preprocess).
///
/// Everything is validated before the first column is read: field counts with line numbers,
/// numeric positions, the .bed magic and mode byte, and the exact .bed size
/// 3 + M·ceil(N/4) with N from the .fam and M from the .bim. The .bim is checked in one pass at
/// open and then streamed, so memory does not grow with the number of variants.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "colflow/preprocess/column_source.hpp"

namespace colflow::preprocess {

/// The three files of a PLINK 1 binary fileset.
struct plink_paths {
  std::filesystem::path bed, bim, fam;
  /// PREFIX.bed, PREFIX.bim, PREFIX.fam (a trailing ".bed" on the prefix is tolerated).
  static plink_paths from_prefix(const std::string& prefix);
};

/// The fields of a line of a whitespace-separated text file (.fam, .bim, Oxford .sample):
/// runs of spaces, tabs and carriage returns separate fields; empty fields do not exist.
std::vector<std::string> split_whitespace(const std::string& line);

/// Parses a .fam file: 6 whitespace-separated fields per line (FID IID father mother sex
/// phenotype), blank lines skipped. Throws colflow::error: errc::not_found when the file is
/// missing, errc::io_error when it cannot be opened, errc::bad_input naming the file and line
/// for a line of another field count or a file without samples.
std::vector<sample_info> read_fam(const std::filesystem::path& fam);

/// Checks a .bim file (6 fields per line, a numeric genetic distance, an integer position) and
/// returns its number of variants. Throws like read_fam.
std::uint64_t count_bim(const std::filesystem::path& bim);

/// Splits a .bim line into a column_info, without validation (count_bim does it).
column_info parse_bim_line(const std::string& line);

/// A PLINK 1 binary fileset read as a genotype column_source: column j is variant j of the
/// .bim, its codes read from the .bed as they are. SNP-major files (mode byte 0x01) are read
/// column by column with pread; individual-major ones (0x00) are transposed a block of
/// variants at a time, in about 64 MB, whatever the file size.
///
/// Errors (colflow::error), all from the constructor: errc::not_found for a missing file,
/// errc::io_error when one cannot be opened or read, errc::bad_input, naming the file, for a
/// .fam or .bim error (see read_fam, count_bim), a .bed shorter than its header, a bad magic
/// number or mode byte, or a .bed whose size does not match the .fam and .bim. Afterwards:
/// errc::invalid_argument for a column asked for out of order (column()) or a bad column or
/// buffer (read_genotypes), errc::io_error if the .bed cannot be read (it shrank).
///
/// Thread safety: none; one thread at a time (the converter's contract, column_source.hpp).
class bed_source final : public column_source {
 public:
  /// Opens and validates the three files (see above).
  explicit bed_source(const plink_paths& paths);
  ~bed_source() override;

  value_type kind() const override { return value_type::genotype; }
  std::uint64_t rows() const override { return samples_.size(); }
  std::uint64_t columns() const override { return variants_; }
  std::vector<sample_info> samples() const override { return samples_; }
  /// Variant j of the .bim. Columns must be asked for in increasing order, each once (the
  /// .bim is streamed): j must be the number of columns asked for so far.
  column_info column(std::uint64_t j) const override;
  /// "PLINK .bed PATH", plus " (individual-major)" for such a file.
  std::string description() const override;
  /// Column j's codes; `codes` holds at least genotype_column_bytes(rows()) bytes. Any order.
  void read_genotypes(std::uint64_t j, std::span<std::uint8_t> codes) override;

  /// True for an individual-major .bed (mode byte 0x00).
  bool individual_major() const noexcept { return individual_major_; }
  /// The size of the .bed in bytes.
  std::uint64_t bed_bytes() const noexcept { return bed_size_; }

 private:
  struct state;
  plink_paths paths_;
  std::vector<sample_info> samples_;
  std::uint64_t variants_ = 0, bed_size_ = 0;
  bool individual_major_ = false;
  std::unique_ptr<state> state_;
};

}  // namespace colflow::preprocess
