// Fuzz target: the BGEN reader on a fuzzed .bgen and .sample: open (with the .sample when the
// input has one, else with the identifiers in the .bgen), describe every variant and read every
// variant's dosages, in both allele orders. Only colflow::error may come out, and every dosage
// must be a valid fixed-point value.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "colflow/colflow.hpp"
#include "colflow/preprocess/bgen_source.hpp"
#include "fuzz_files.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static colflow::fuzz::fuzz_files files({"x.bgen", "x.sample"});
  files.write(data, size);
  for (const bool ref_first : {false, true}) {
    try {
      colflow::preprocess::bgen_options o;
      o.bgen = files / "x.bgen";
      if (std::filesystem::file_size(files / "x.sample") > 0) o.sample = files / "x.sample";
      o.ref_first = ref_first;
      colflow::preprocess::bgen_source source(o);
      if (source.rows() > (std::uint64_t{1} << 20) || source.columns() > 100000) return 0;
      std::vector<std::uint16_t> dosages(source.rows());
      for (std::uint64_t j = 0; j < source.columns(); ++j) {
        (void)source.column(j);
        source.read_dosages(j, dosages);
        if (colflow::first_invalid_dosage(dosages) != dosages.size()) std::abort();
      }
      (void)source.samples();
    } catch (const colflow::error&) {
    }
  }
  return 0;
}
