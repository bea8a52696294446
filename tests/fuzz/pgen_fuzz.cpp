// Fuzz target: the PLINK 2 reader on fuzzed .psam, .pvar and .pgen files: open, describe every
// column and read every column's hard calls or dosages, in order and through fetch and decode
// in reverse. Only colflow::error may come out.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "colflow/colflow.hpp"
#include "colflow/preprocess/pgen_source.hpp"
#include "fuzz_files.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static colflow::fuzz::fuzz_files files({"x.psam", "x.pvar", "x.pgen"});
  files.write(data, size);
  try {
    colflow::preprocess::pgen_source source(
        colflow::preprocess::pgen_paths::from_prefix((files / "x").string()));
    if (source.rows() > (std::uint64_t{1} << 20) || source.columns() > 100000) return 0;
    std::vector<std::uint8_t> codes(colflow::genotype_column_bytes(source.rows()));
    std::vector<std::uint16_t> dosages(source.rows());
    const bool dosage = source.kind() == colflow::value_type::dosage;
    for (std::uint64_t j = 0; j < source.columns(); ++j) {
      (void)source.column(j);
      if (dosage) {
        source.read_dosages(j, dosages);
      } else {
        source.read_genotypes(j, codes);
        (void)colflow::count_genotypes(codes, source.rows());
      }
    }
    for (std::uint64_t j = source.columns(); j-- > 0;) {
      if (dosage) {
        source.decode_dosages(*source.fetch(j), dosages);
      } else {
        source.decode_genotypes(*source.fetch(j), codes);
      }
    }
    (void)source.samples();
  } catch (const colflow::error&) {
  }
  return 0;
}
