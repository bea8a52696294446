// Where the preprocessor's columns come from: a PLINK .bed, a .npy or a CSV matrix.
// The converter reads sources serially, in column order, and encodes the columns in parallel.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "colflow/store/store.hpp"

namespace colflow::preprocess {

class column_source {
 public:
  virtual ~column_source() = default;

  // value_type::genotype for PLINK input (read_genotypes), float64 for dense input
  // (read_values).
  virtual value_type kind() const = 0;
  virtual std::uint64_t rows() const = 0;
  virtual std::uint64_t columns() const = 0;
  // One per row; dense sources make IDs up when the input has none (FID = IID = "row1"...).
  virtual std::vector<sample_info> samples() const = 0;
  // Description of column j; dense sources fill only `id` (a header name or "col1"...).
  virtual column_info column(std::uint64_t j) const = 0;
  // What the manifest records as the source (the input path and format).
  virtual std::string description() const = 0;

  // Column j's 2-bit PLINK codes, genotype_column_bytes(rows()) bytes. Genotype sources only.
  // Called from one thread at a time, usually in increasing j.
  virtual void read_genotypes(std::uint64_t j, std::span<std::uint8_t> codes);
  // Column j's values (NaN = missing), rows() of them. Dense sources only.
  virtual void read_values(std::uint64_t j, std::span<double> values);

 protected:
  // Throws errc::invalid_argument unless j is a column and `size` matches the rows.
  void check_read(std::uint64_t j, std::size_t size) const;
};

}  // namespace colflow::preprocess
