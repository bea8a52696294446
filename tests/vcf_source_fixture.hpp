// Shared by the VCF/BCF reader's tests (vcf_source*_test.cpp): hand-written VCF text (header,
// records, the genotype and multi-allelic files several suites read), every column of a source
// read at once, plink2's dosages of a file, and an error matcher.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "colflow/codec/dosage_codec.hpp"
#include "colflow/codec/genotype_codec.hpp"
#include "colflow/preprocess/vcf_source.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"

namespace colflow::vcf_source_tests {

using preprocess::vcf_options;
using preprocess::vcf_source;
using dosage_field = vcf_options::dosage_field;
using half_call = vcf_options::half_call;
namespace fs = std::filesystem;

inline vcf_options options(const fs::path& path, dosage_field dosage = dosage_field::none,
                           half_call half = half_call::error, bool split = false,
                           unsigned threads = 0) {
  vcf_options o;
  o.path = path;
  o.dosage = dosage;
  o.half = half;
  o.split_multiallelic = split;
  o.threads = threads;
  return o;
}

inline void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

// Runs a shell command; a failure is a test failure carrying its output.
inline void run(const std::string& command) {
  std::string out;
  EXPECT_EQ(test::run_command(command, out), 0) << command << "\n" << out;
}

// The header of a VCF with FORMAT GT, DS and GP declared and samples s1..sN.
inline std::string vcf_header(int samples = 7) {
  std::string h =
      "##fileformat=VCFv4.2\n##contig=<ID=1>\n##contig=<ID=X>\n"
      "##FORMAT=<ID=GT,Number=1,Type=String,Description=\"Genotype\">\n"
      "##FORMAT=<ID=DS,Number=A,Type=Float,Description=\"ALT dosage\">\n"
      "##FORMAT=<ID=GP,Number=G,Type=Float,Description=\"Genotype probabilities\">\n"
      "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT";
  for (int i = 1; i <= samples; ++i) h += "\ts" + std::to_string(i);
  return h + "\n";
}

// A record line: CHROM POS ID REF ALT . . . FORMAT samples...
inline std::string record(const std::string& chrom, int pos, const std::string& id,
                          const std::string& ref, const std::string& alt, const std::string& format,
                          const std::vector<std::string>& samples) {
  std::string line = chrom + "\t" + std::to_string(pos) + "\t" + id + "\t" + ref + "\t" + alt +
                     "\t.\t.\t.\t" + format;
  for (const auto& s : samples) line += "\t" + s;
  return line + "\n";
}

// Masks the padding bits of a column's last byte.
inline std::vector<std::uint8_t> masked(std::vector<std::uint8_t> codes, std::size_t n) {
  if (n % 4 != 0) codes.back() &= static_cast<std::uint8_t>((1u << (2 * (n % 4))) - 1);
  return codes;
}

struct genotype_columns {
  std::vector<column_info> info;
  std::vector<std::vector<std::uint8_t>> codes;
};

inline genotype_columns read_genotypes(preprocess::column_source& source) {
  genotype_columns g;
  const std::size_t n = source.rows();
  for (std::uint64_t j = 0; j < source.columns(); ++j) {
    g.info.push_back(source.column(j));
    std::vector<std::uint8_t> codes(genotype_column_bytes(n), 0xff);
    source.read_genotypes(j, codes);
    g.codes.push_back(masked(std::move(codes), n));
  }
  return g;
}

struct dosage_columns {
  std::vector<column_info> info;
  std::vector<std::vector<std::uint16_t>> dosages;
};

inline dosage_columns read_dosages(preprocess::column_source& source) {
  dosage_columns d;
  for (std::uint64_t j = 0; j < source.columns(); ++j) {
    d.info.push_back(source.column(j));
    std::vector<std::uint16_t> v(source.rows(), 0x1234);
    source.read_dosages(j, v);
    d.dosages.push_back(std::move(v));
  }
  return d;
}

// plink2 --vcf FILE dosage=FIELD --export A: the ALT dosage of each sample and variant in
// fixed point. plink2 counts REF in .raw and prints the shortest decimal that identifies the
// stored 1/16384 value, so 32768 - round(16384 x) is the value it stores.
inline std::vector<std::vector<std::uint16_t>> plink2_dosages(const fs::path& vcf,
                                                              const std::string& field,
                                                              const fs::path& dir) {
  const std::string out = (dir / "plink2_raw").string();
  fs::remove(out + ".raw");
  // GP-force: plink2 refuses dosage=GP when the header declares DS too.
  test::run_plink2((vcf.extension() == ".bcf" ? "--bcf " : "--vcf ") + vcf.string() +
                   " dosage=" + (field == "GP" ? "GP-force" : field) + " --export A --out " + out);
  const test::text_table t = test::read_table(out + ".raw");
  const std::size_t variants = t.header.size() - 6;
  std::vector<std::vector<std::uint16_t>> d(variants);
  for (const auto& row : t.rows)
    for (std::size_t v = 0; v < variants; ++v) {
      const std::string& x = row[6 + v];
      d[v].push_back(x == "NA" ? dosage_missing
                               : static_cast<std::uint16_t>(
                                     dosage_max - std::lround(std::stod(x) * dosage_one)));
    }
  return d;
}

// Runs `body`, expecting a colflow::error of `kind` whose message holds every one of `parts`.
template <typename F>
void expect_error(F&& body, errc kind, const std::vector<std::string>& parts) {
  try {
    body();
    ADD_FAILURE() << "no error; expected one containing '" << parts.front() << "'";
  } catch (const error& e) {
    EXPECT_EQ(e.kind(), kind) << e.message();
    for (const auto& p : parts)
      EXPECT_NE(e.message().find(p), std::string::npos)
          << "message '" << e.message() << "' lacks '" << p << "'";
  }
}

// Opens and reads every column: errors of the second pass surface too.
inline void open_and_read(const vcf_options& o) {
  vcf_source s(o);
  if (s.kind() == value_type::genotype)
    read_genotypes(s);
  else
    read_dosages(s);
}

// ---- Files read by several suites

// Diploid, phased, haploid (as on chrX of males), missing, an ID ".", a monomorphic record
// (ALT "."), and half-calls in the last record.
inline std::string genotype_vcf(bool half_calls) {
  std::string v = vcf_header();
  v += record("1", 100, ".", "A", "G", "GT", {"0/0", "0/1", "1/1", "./.", "0|1", "1|0", "1|1"});
  v += record("1", 200, "rs2", "C", ".", "GT", {"0/0", "0/0", "0|0", "./.", "0", ".", "0/0"});
  v += record("X", 300, "rs3", "C", "TA", "GT", {"1", "0", ".", "./.", "1/1", "0/0", ".|."});
  v += record("X", 400, "rs4", "G", "C", "GT:DS", {"0/1:0.5", "1", "0/0", ".", "1/0", "1", "0"});
  if (half_calls)
    v += record("X", 500, "rs5", "A", "G", "GT", {"./1", "1/.", "./0", "0/.", ".|1", "0|.", "./."});
  return v;
}

inline std::string multiallelic_vcf() {
  std::string v = vcf_header();
  v += record(
      "1", 100, "m1", "A", "G,T", "GT:DS:GP",
      {"0/0:0,0:1,0,0,0,0,0", "0/1:1,0:0,1,0,0,0,0", "1/2:1,1:0,0,0,0,1,0", "2/2:0,2:0,0,0,0,0,1",
       "./.:.,.:.", "2:0,1:0,0,1", "1|2:0.9,1.1:0.1,0.2,0.1,0.2,0.3,0.1"});
  v += record("1", 200, "b2", "C", "T", "GT:DS:GP",
              {"0/0:0:1,0,0", "0/1:1:0,1,0", "1/1:2:0,0,1", "./.:.:.", "0:0:1,0", "1:1:0,1",
               "0|1:0.5:0.6,0.3,0.1"});
  v += record(
      "1", 300, "m3", "AT", "A,ATT,<DEL>", "GT:DS",
      {"0/1:1,0,0", "1/2:1,1,0", "2/2:0,2,0", "0/3:0,0,1", "3|1:1,0,1", "./3:0,0,1", "2:0,1,0"});
  return v;
}

}  // namespace colflow::vcf_source_tests
