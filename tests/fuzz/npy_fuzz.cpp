// Fuzz target: the .npy reader on a fuzzed file: parse the header, read every column (both
// the direct and the blocked C-order paths). Only colflow::error may come out.
#include <cstddef>
#include <cstdint>

#include "colflow/colflow.hpp"
#include "colflow/preprocess/npy_source.hpp"
#include "fuzz_files.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static colflow::fuzz::fuzz_files files({"x.npy"});
  files.write(data, size);
  for (const std::size_t block : {std::size_t{64}, std::size_t{16} << 20}) {
    try {
      colflow::preprocess::npy_options options;
      options.block_bytes = block;
      colflow::preprocess::npy_source source(files / "x.npy", options);
      colflow::fuzz::read_every_column(source);
    } catch (const colflow::error&) {
    }
  }
  return 0;
}
