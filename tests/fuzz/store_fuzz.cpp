// Fuzz target: open a store from five fuzzed files (columns.dat, columns.idx, samples.tsv,
// columns.tsv, manifest.json) in both access modes, then verify and decode every column. Only
// colflow::error may come out; anything else (a crash, a sanitizer report, another exception)
// is a bug.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "colflow/colflow.hpp"
#include "fuzz_files.hpp"

namespace {

void read_everything(const colflow::store& s) {
  // Decoding cost is bounded so that a header claiming a huge shape cannot stall the fuzzer
  // (opening has already checked the data file holds every frame it claims).
  if (s.num_rows() > (std::uint64_t{1} << 20) || s.num_columns() > 4096) return;
  std::vector<double> values(s.num_rows());
  for (std::size_t j = 0; j < s.num_columns(); ++j) {
    try {
      s.verify_checksum(j);
    } catch (const colflow::error&) {
    }
    try {
      s.read_column(j, values, colflow::decode_as::standardized);
      s.read_column(j, values, colflow::decode_as::stored);
    } catch (const colflow::error&) {
    }
  }
  (void)s.samples();
  (void)s.columns();
  (void)s.summary();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static colflow::fuzz::fuzz_files files(
      {"columns.dat", "columns.idx", "samples.tsv", "columns.tsv", "manifest.json"}, "s.cf");
  files.write(data, size);
  for (const colflow::access_mode mode :
       {colflow::access_mode::mmap, colflow::access_mode::pread}) {
    try {
      const colflow::store s = colflow::store::open(files.dir(), {mode, false});
      read_everything(s);
    } catch (const colflow::error&) {
    }
  }
  return 0;
}
