// Fuzz target: the PLINK reader on fuzzed .bed, .bim and .fam files: open, describe every
// column and read every column's codes. Only colflow::error may come out.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "colflow/colflow.hpp"
#include "colflow/preprocess/bed_source.hpp"
#include "fuzz_files.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static colflow::fuzz::fuzz_files files({"x.fam", "x.bim", "x.bed"});
  files.write(data, size);
  try {
    colflow::preprocess::bed_source source(
        colflow::preprocess::plink_paths::from_prefix((files / "x").string()));
    if (source.rows() > (std::uint64_t{1} << 20) || source.columns() > 100000) return 0;
    std::vector<std::uint8_t> codes(colflow::genotype_column_bytes(source.rows()));
    for (std::uint64_t j = 0; j < source.columns(); ++j) {
      (void)source.column(j);
      source.read_genotypes(j, codes);
      (void)colflow::count_genotypes(codes, source.rows());
    }
    (void)source.samples();
  } catch (const colflow::error&) {
  }
  return 0;
}
