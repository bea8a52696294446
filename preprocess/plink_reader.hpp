// PLINK 1 binary input: .fam (samples), .bim (variants) and .bed (2-bit genotype codes).
//
// Everything is validated before the first column is read: field counts with line numbers,
// numeric positions, the .bed magic and mode byte, and the exact .bed size
// 3 + M·ceil(N/4) with N from the .fam and M from the .bim. The .bim is checked in one pass at
// open and then streamed, so memory does not grow with the number of variants.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "column_source.hpp"

namespace colflow::preprocess {

struct plink_paths {
  std::filesystem::path bed, bim, fam;
  // PREFIX.bed, PREFIX.bim, PREFIX.fam (a trailing ".bed" on the prefix is tolerated).
  static plink_paths from_prefix(const std::string& prefix);
};

// Parses a .fam file: 6 whitespace-separated fields per line. Throws errc::bad_input naming
// the file and line, errc::not_found when it is missing.
std::vector<sample_info> read_fam(const std::filesystem::path& fam);

// Checks a .bim file (6 fields per line, numeric cM, integer position) and counts its lines.
std::uint64_t count_bim(const std::filesystem::path& bim);

// Splits a .bim line into a column_info (no validation: count_bim did it).
column_info parse_bim_line(const std::string& line);

class bed_source final : public column_source {
 public:
  explicit bed_source(const plink_paths& paths);
  ~bed_source() override;

  value_type kind() const override { return value_type::genotype; }
  std::uint64_t rows() const override { return samples_.size(); }
  std::uint64_t columns() const override { return variants_; }
  std::vector<sample_info> samples() const override { return samples_; }
  // Columns must be asked for in increasing order (the .bim is streamed).
  column_info column(std::uint64_t j) const override;
  std::string description() const override;
  void read_genotypes(std::uint64_t j, std::span<std::uint8_t> codes) override;

  bool individual_major() const noexcept { return individual_major_; }
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
