// Fuzz target: the VCF/BCF reader (htslib underneath) on a fuzzed file, which htslib detects
// as VCF text, bgzipped VCF or BCF: open it for GT hard calls and for DS and GP dosages, with
// and without splitting multi-allelic records and with half-calls as missing, and read every
// column. Only colflow::error may come out, and every value must be valid.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "colflow/colflow.hpp"
#include "colflow/preprocess/vcf_source.hpp"
#include "fuzz_files.hpp"

namespace {

using colflow::preprocess::vcf_options;

void read_all(const vcf_options& o) {
  try {
    colflow::preprocess::vcf_source source(o);
    if (source.rows() > 100000 || source.columns() > 100000) return;
    for (std::uint64_t j = 0; j < source.columns(); ++j) {
      (void)source.column(j);
      if (source.kind() == colflow::value_type::genotype) {
        std::vector<std::uint8_t> codes(colflow::genotype_column_bytes(source.rows()));
        source.read_genotypes(j, codes);
      } else {
        std::vector<std::uint16_t> dosages(source.rows());
        source.read_dosages(j, dosages);
        if (colflow::first_invalid_dosage(dosages) != dosages.size()) std::abort();
      }
    }
    (void)source.samples();
  } catch (const colflow::error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static colflow::fuzz::fuzz_files files({"x.vcf"});
  files.write(data, size);
  vcf_options o;
  o.path = files / "x.vcf";
  read_all(o);
  o.split_multiallelic = true;
  o.half = vcf_options::half_call::missing;
  read_all(o);
  o.dosage = vcf_options::dosage_field::ds;
  read_all(o);
  o.dosage = vcf_options::dosage_field::gp;
  o.split_multiallelic = false;
  read_all(o);
  return 0;
}
