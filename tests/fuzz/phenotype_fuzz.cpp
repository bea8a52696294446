// Fuzz target: the phenotype/covariate reader on a fuzzed file, matched against five samples,
// with the first column and with a named one. Only colflow::error may come out.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "colflow/colflow.hpp"
#include "fuzz_files.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static colflow::fuzz::fuzz_files files({"p.txt"});
  static const std::vector<colflow::sample_info> samples = {{"F1", "S1", "0", "0", "1", "-9"},
                                                            {"F1", "S2", "0", "0", "2", "-9"},
                                                            {"F2", "S3", "0", "0", "1", "-9"},
                                                            {"S4", "S4", "0", "0", "0", "-9"},
                                                            {"0", "S5", "0", "0", "1", "-9"}};
  files.write(data, size);
  for (const std::vector<std::string>& names :
       {std::vector<std::string>{}, std::vector<std::string>{"height", "PHENO2"}}) {
    try {
      const colflow::phenotype_table t =
          colflow::read_phenotypes(files / "p.txt", samples, names, "PHENO");
      (void)t.values.sum();
    } catch (const colflow::error&) {
    }
  }
  return 0;
}
