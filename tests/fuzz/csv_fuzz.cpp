// Fuzz target: the CSV/TSV reader on a fuzzed file, with detected and explicit header and ID
// settings: parse, describe and read every column. Only colflow::error may come out.
#include <cstddef>
#include <cstdint>

#include "colflow/colflow.hpp"
#include "colflow/preprocess/csv_source.hpp"
#include "fuzz_files.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static colflow::fuzz::fuzz_files files({"x.csv"});
  files.write(data, size);
  using colflow::preprocess::csv_presence;
  for (const csv_presence presence :
       {csv_presence::detect, csv_presence::present, csv_presence::absent}) {
    try {
      colflow::preprocess::csv_options options;
      options.header = presence;
      options.ids = presence;
      colflow::preprocess::csv_source source(files / "x.csv", options);
      colflow::fuzz::read_every_column(source);
    } catch (const colflow::error&) {
    }
  }
  return 0;
}
