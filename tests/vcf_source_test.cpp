// The VCF/BCF reader (preprocess/vcf_source.cpp): HapMap3 exported by plink2 as VCF, bgzipped
// VCF and BCF against the .bed it came from; hand-made records (haploid, phased, half-calls,
// DS and GP edge cases) against plink2 reading the same file; multi-allelic records split
// against `bcftools norm -m-`; reads in two steps (fetch in order, decode on several threads)
// against one-step reads; the sample-column parser against htslib's (through bcftools);
// malformed files that must be refused by name.
#include "colflow/preprocess/vcf_source.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <numeric>
#include <random>
#include <thread>
#include <type_traits>

#include "colflow/codec/dosage_codec.hpp"
#include "colflow/codec/genotype_codec.hpp"
#include "colflow/preprocess/bed_source.hpp"
#include "colflow/preprocess/chromosome.hpp"
#include "colflow/preprocess/converter.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

using preprocess::vcf_options;
using preprocess::vcf_source;
using dosage_field = vcf_options::dosage_field;
using half_call = vcf_options::half_call;
namespace fs = std::filesystem;

vcf_options options(const fs::path& path, dosage_field dosage = dosage_field::none,
                    half_call half = half_call::error, bool split = false, unsigned threads = 0) {
  vcf_options o;
  o.path = path;
  o.dosage = dosage;
  o.half = half;
  o.split_multiallelic = split;
  o.threads = threads;
  return o;
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

// Runs a shell command; a failure is a test failure carrying its output.
void run(const std::string& command) {
  std::string out;
  EXPECT_EQ(test::run_command(command, out), 0) << command << "\n" << out;
}

// The header of a VCF with FORMAT GT, DS and GP declared and samples s1..sN.
std::string vcf_header(int samples = 7) {
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
std::string record(const std::string& chrom, int pos, const std::string& id, const std::string& ref,
                   const std::string& alt, const std::string& format,
                   const std::vector<std::string>& samples) {
  std::string line = chrom + "\t" + std::to_string(pos) + "\t" + id + "\t" + ref + "\t" + alt +
                     "\t.\t.\t.\t" + format;
  for (const auto& s : samples) line += "\t" + s;
  return line + "\n";
}

// Masks the padding bits of a column's last byte.
std::vector<std::uint8_t> masked(std::vector<std::uint8_t> codes, std::size_t n) {
  if (n % 4 != 0) codes.back() &= static_cast<std::uint8_t>((1u << (2 * (n % 4))) - 1);
  return codes;
}

struct genotype_columns {
  std::vector<column_info> info;
  std::vector<std::vector<std::uint8_t>> codes;
};

genotype_columns read_genotypes(preprocess::column_source& source) {
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

dosage_columns read_dosages(preprocess::column_source& source) {
  dosage_columns d;
  for (std::uint64_t j = 0; j < source.columns(); ++j) {
    d.info.push_back(source.column(j));
    std::vector<std::uint16_t> v(source.rows(), 0x1234);
    source.read_dosages(j, v);
    d.dosages.push_back(std::move(v));
  }
  return d;
}

// plink2 --vcf FILE ARGS --make-bed: its .bim and .bed columns.
genotype_columns plink2_bed(const fs::path& vcf, const std::string& args, const fs::path& dir) {
  const std::string out = (dir / "plink2_bed").string();
  fs::remove(out + ".bed");
  test::run_plink2("--vcf " + vcf.string() + " " + args + " --make-bed --out " + out);
  preprocess::bed_source bed(preprocess::plink_paths::from_prefix(out));
  return read_genotypes(bed);
}

// plink2 --vcf FILE dosage=FIELD --export A: the ALT dosage of each sample and variant in
// fixed point. plink2 counts REF in .raw and prints the shortest decimal that identifies the
// stored 1/16384 value, so 32768 - round(16384 x) is the value it stores.
std::vector<std::vector<std::uint16_t>> plink2_dosages(const fs::path& vcf,
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
void open_and_read(const vcf_options& o) {
  vcf_source s(o);
  if (s.kind() == value_type::genotype)
    read_genotypes(s);
  else
    read_dosages(s);
}

// ---- HapMap3 through plink2's VCF export ------------------------------------------------

TEST(VcfSourceTest, HapMap3CodesEqualBedInEveryFormat) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  const std::string bfile = test::dataset("hapmap3/HapMap3");
  const std::string x = (dir / "x").string();
  test::run_plink2("--bfile " + bfile + " --export vcf --out " + x);
  test::run_plink2("--bfile " + bfile + " --export vcf bgz --out " + (dir / "z").string());
  run("bcftools view -Ob -o " + (dir / "b.bcf").string() + " " + x + ".vcf");

  preprocess::bed_source bed(preprocess::plink_paths::from_prefix(bfile));
  const auto fam = bed.samples();
  const genotype_columns expected = read_genotypes(bed);
  ASSERT_EQ(expected.codes.size(), 14389u);

  for (const auto& [file, threads] : std::vector<std::pair<fs::path, unsigned>>{
           {x + ".vcf", 0}, {dir / "z.vcf.gz", 2}, {dir / "b.bcf", 2}}) {
    SCOPED_TRACE(file.filename().string());
    vcf_source s(options(file, dosage_field::none, half_call::error, false, threads));
    EXPECT_EQ(s.kind(), value_type::genotype);
    EXPECT_EQ(s.is_bcf(), file.extension() == ".bcf");
    ASSERT_EQ(s.rows(), fam.size());
    ASSERT_EQ(s.columns(), expected.codes.size());
    EXPECT_EQ(s.records(), s.columns());
    // plink2 exports FID_IID as the VCF sample name; reading a VCF, FID is "0".
    const auto samples = s.samples();
    for (std::size_t i = 0; i < fam.size(); ++i) {
      EXPECT_EQ(samples[i].fid, "0");
      EXPECT_EQ(samples[i].iid, fam[i].fid + "_" + fam[i].iid);
      EXPECT_EQ(samples[i].sex, "0");
      EXPECT_EQ(samples[i].phenotype, "-9");
    }
    const genotype_columns got = read_genotypes(s);
    std::size_t differing = 0;
    for (std::size_t j = 0; j < got.codes.size(); ++j) {
      const column_info &a = got.info[j], &b = expected.info[j];
      EXPECT_EQ(preprocess::normalize_chromosome(a.chrom),
                preprocess::normalize_chromosome(b.chrom))
          << j;
      EXPECT_EQ(a.id, b.id);
      EXPECT_EQ(a.cm, "0");
      EXPECT_EQ(a.pos, b.pos);
      EXPECT_EQ(a.a1, b.a1) << a.id;  // plink2 exports A1 as ALT
      EXPECT_EQ(a.a2, b.a2) << a.id;
      if (got.codes[j] != expected.codes[j] && ++differing <= 3)
        ADD_FAILURE() << "column " << j << " (" << a.chrom << " " << a.id << ") differs";
    }
    EXPECT_EQ(differing, 0u);
  }
}

// ---- Genotypes against plink2 ----------------------------------------------------------

// Diploid, phased, haploid (as on chrX of males), missing, an ID ".", a monomorphic record
// (ALT "."), and half-calls in the last record.
std::string genotype_vcf(bool half_calls) {
  std::string v = vcf_header();
  v += record("1", 100, ".", "A", "G", "GT", {"0/0", "0/1", "1/1", "./.", "0|1", "1|0", "1|1"});
  v += record("1", 200, "rs2", "C", ".", "GT", {"0/0", "0/0", "0|0", "./.", "0", ".", "0/0"});
  v += record("X", 300, "rs3", "C", "TA", "GT", {"1", "0", ".", "./.", "1/1", "0/0", ".|."});
  v += record("X", 400, "rs4", "G", "C", "GT:DS", {"0/1:0.5", "1", "0/0", ".", "1/0", "1", "0"});
  if (half_calls)
    v += record("X", 500, "rs5", "A", "G", "GT", {"./1", "1/.", "./0", "0/.", ".|1", "0|.", "./."});
  return v;
}

TEST(VcfSourceTest, GenotypesEqualPlink2) {
  test::temp_dir dir;
  const fs::path f = dir / "g.vcf";
  write_text(f, genotype_vcf(false));
  vcf_source s(options(f));
  EXPECT_EQ(s.rows(), 7u);
  EXPECT_EQ(s.columns(), 4u);
  const genotype_columns ours = read_genotypes(s);
  const genotype_columns theirs = plink2_bed(f, "", dir.path());
  ASSERT_EQ(theirs.codes.size(), ours.codes.size());
  for (std::size_t j = 0; j < ours.codes.size(); ++j) {
    EXPECT_EQ(ours.codes[j], theirs.codes[j]) << "column " << j;
    EXPECT_EQ(ours.info[j].id, theirs.info[j].id);  // "." stays "."
    EXPECT_EQ(ours.info[j].a1, theirs.info[j].a1);  // ALT, "." for the monomorphic record
    EXPECT_EQ(ours.info[j].a2, theirs.info[j].a2);
    EXPECT_EQ(ours.info[j].pos, theirs.info[j].pos);
  }
  // Known values too, not only plink2's: s1..s4 of the first record are 0/0 0/1 1/1 ./.
  EXPECT_EQ(ours.codes[0][0], 0b01001011);
  EXPECT_EQ(ours.info[0].id, ".");
  EXPECT_EQ(ours.info[1].a1, ".");
  // plink2's .fam of a VCF: FID 0, IID the sample name.
  const auto samples = s.samples();
  EXPECT_EQ(samples[6].fid, "0");
  EXPECT_EQ(samples[6].iid, "s7");
  EXPECT_EQ(samples[6].father, "0");
  EXPECT_EQ(s.description(), "VCF " + f.string());
}

TEST(VcfSourceTest, HalfCallsFollowPlink2InEveryMode) {
  test::temp_dir dir;
  const fs::path f = dir / "h.vcf";
  write_text(f, genotype_vcf(true));
  const std::vector<std::pair<half_call, std::string>> modes{
      {half_call::missing, "m"}, {half_call::haploid, "h"}, {half_call::reference, "r"}};
  for (const auto& [mode, flag] : modes) {
    SCOPED_TRACE(flag);
    vcf_source s(options(f, dosage_field::none, mode));
    const genotype_columns ours = read_genotypes(s);
    const genotype_columns theirs = plink2_bed(f, "--vcf-half-call " + flag, dir.path());
    ASSERT_EQ(ours.codes.size(), 5u);
    ASSERT_EQ(theirs.codes.size(), 5u);
    for (std::size_t j = 0; j < 5; ++j) EXPECT_EQ(ours.codes[j], theirs.codes[j]) << j;
  }
  // The half-call record by hand: ./1 1/. ./0 0/. | .|1 0|. ./.
  const auto codes_of = [&](half_call mode) {
    vcf_source s(options(f, dosage_field::none, mode));
    return read_genotypes(s).codes[4];
  };
  EXPECT_EQ(codes_of(half_call::missing), (std::vector<std::uint8_t>{0x55, 0x15}));
  EXPECT_EQ(codes_of(half_call::haploid), (std::vector<std::uint8_t>{0xf0, 0x1c}));
  EXPECT_EQ(codes_of(half_call::reference), (std::vector<std::uint8_t>{0xfa, 0x1e}));
  // The default refuses them, as plink2 does, naming the record and the sample; the records
  // before it are read.
  vcf_source s(options(f));
  std::vector<std::uint8_t> codes(2);
  for (std::uint64_t j = 0; j < 4; ++j) s.read_genotypes(j, codes);
  expect_error([&] { s.read_genotypes(4, codes); }, errc::bad_input,
               {"h.vcf: line 12 (record 5, X:500 rs5), sample 1 's1': GT './1' is a half-call",
                "--vcf-half-call"});
  std::string out;
  EXPECT_NE(test::run_command(
                "plink2 --vcf " + f.string() + " --make-bed --out " + (dir / "e").string(), out),
            0);
  EXPECT_NE(out.find("half-call"), std::string::npos) << out;
}

TEST(VcfSourceTest, VcfGzipAndBcfReadAlike) {
  test::temp_dir dir;
  const fs::path f = dir / "g.vcf";
  write_text(f, genotype_vcf(false));
  run("bgzip -c " + f.string() + " > " + (dir / "g.vcf.gz").string());
  run("bcftools view -Ob -o " + (dir / "g.bcf").string() + " " + f.string());
  run("bcftools view -Ou -o " + (dir / "u.bcf").string() + " " + f.string());
  run("gzip -c " + f.string() + " > " + (dir / "plain-gzip.vcf.gz").string());
  vcf_source plain(options(f));
  const genotype_columns expected = read_genotypes(plain);
  for (const char* name : {"g.vcf.gz", "g.bcf", "u.bcf", "plain-gzip.vcf.gz"})
    for (unsigned threads : {0u, 3u}) {
      SCOPED_TRACE(std::string(name) + " threads " + std::to_string(threads));
      vcf_source s(options(dir / name, dosage_field::none, half_call::error, false, threads));
      const genotype_columns got = read_genotypes(s);
      EXPECT_EQ(got.codes, expected.codes);
      ASSERT_EQ(got.info.size(), expected.info.size());
      for (std::size_t j = 0; j < got.info.size(); ++j) {
        EXPECT_EQ(got.info[j].chrom, expected.info[j].chrom);
        EXPECT_EQ(got.info[j].id, expected.info[j].id);
        EXPECT_EQ(got.info[j].pos, expected.info[j].pos);
        EXPECT_EQ(got.info[j].a1, expected.info[j].a1);
        EXPECT_EQ(got.info[j].a2, expected.info[j].a2);
      }
      EXPECT_EQ(s.description().substr(0, 4),
                std::string(name).ends_with(".bcf") ? "BCF " : "VCF ");
    }
}

TEST(VcfSourceTest, ColumnsAreStreamedInOrder) {
  test::temp_dir dir;
  const fs::path f = dir / "g.vcf";
  write_text(f, genotype_vcf(false));
  vcf_source s(options(f));
  std::vector<std::uint8_t> codes(2), again(2);
  EXPECT_EQ(s.column(0).pos, "100");
  s.read_genotypes(0, codes);
  s.read_genotypes(0, again);  // the current record, again
  EXPECT_EQ(codes, again);
  EXPECT_EQ(s.column(2).id, "rs3");  // skipping forward
  expect_error([&] { s.column(1); }, errc::invalid_argument, {"increasing order"});
  expect_error([&] { s.read_genotypes(4, codes); }, errc::invalid_argument, {"column"});
  std::vector<std::uint8_t> small(1);
  expect_error([&] { s.read_genotypes(3, small); }, errc::invalid_argument, {"buffer"});
  std::vector<std::uint16_t> d(7);
  expect_error([&] { s.read_dosages(3, d); }, errc::invalid_argument, {"genotype source"});
}

// ---- Dosages against plink2 ------------------------------------------------------------

TEST(VcfSourceTest, DsDosagesEqualPlink2) {
  test::temp_dir dir;
  const std::string dummy = "--dummy 200 300 0.05 dosage-freq=0.2 acgt --seed 11";
  // DS-force writes DS for every sample; DS leaves it out for hard calls (read from GT).
  for (const std::string mode : {"DS-force", "DS"}) {
    SCOPED_TRACE(mode);
    const fs::path f = dir / ("d" + mode + ".vcf");
    test::run_plink2(dummy + " --export vcf vcf-dosage=" + mode + " --out " +
                     (dir / ("d" + mode)).string());
    vcf_source s(options(f, dosage_field::ds));
    EXPECT_EQ(s.kind(), value_type::dosage);
    EXPECT_EQ(s.description(), "VCF " + f.string() + ", dosages from DS");
    const dosage_columns ours = read_dosages(s);
    const auto theirs = plink2_dosages(f, "DS", dir.path());
    ASSERT_EQ(ours.dosages.size(), 300u);
    ASSERT_EQ(theirs.size(), 300u);
    std::size_t fractional = 0;
    for (std::size_t j = 0; j < 300; ++j) {
      EXPECT_EQ(ours.dosages[j], theirs[j]) << "variant " << j;
      for (std::uint16_t v : ours.dosages[j]) fractional += v != dosage_missing && v % 16384 != 0;
    }
    EXPECT_GT(fractional, 1000u);  // the comparison covers real dosages, not only hard calls
  }
}

TEST(VcfSourceTest, GpDosagesEqualPlink2) {
  test::temp_dir dir;
  const fs::path f = dir / "gp.vcf";
  test::run_plink2(
      "--dummy 200 300 0.05 dosage-freq=0.2 acgt --seed 12 --export vcf "
      "vcf-dosage=GP --out " +
      (dir / "gp").string());
  vcf_source s(options(f, dosage_field::gp));
  const dosage_columns ours = read_dosages(s);
  const auto theirs = plink2_dosages(f, "GP", dir.path());
  ASSERT_EQ(theirs.size(), ours.dosages.size());
  for (std::size_t j = 0; j < theirs.size(); ++j) EXPECT_EQ(ours.dosages[j], theirs[j]) << j;
}

// Values at and next to the rounding boundaries (k + 1/2) / 16384, haploid doubling, missing
// DS falling back to GT, a record without DS, a record without GT.
TEST(VcfSourceTest, DsEdgeCasesEqualPlink2) {
  test::temp_dir dir;
  const fs::path f = dir / "ds.vcf";
  std::string v = vcf_header();
  v += record("1", 100, "v1", "A", "G", "GT:DS",
              {"0/1:.", "./.:1.5", "0/0:0.00003051757812", "0/0:0.000030517578125",
               "1/1:1.99996948242188", "0:0.3", "1:0.7"});
  v += record("1", 200, "v2", "A", "G", "GT:DS",
              {"0/1", "./.:0.999969482421875", "0/0:0.000091552734375", "0:0.00002",
               "0:0.000015258789062", ".:0.3", "./.:1.000091552734375"});
  v += record("1", 300, "v3", "A", "G", "GT", {"0/1", "./.", "0/0", "0/0", "1/1", "0", "1"});
  v += record("1", 400, "v4", "A", "G", "DS", {"0.1", "0", "1", "2", ".", "1e-1", "1.0e+0"});
  v += record(
      "1", 500, "v5", "A", "G", "GT:DS",
      {"0/0:0.26651", "0/0:1.0513", "0/0:0.072052", "0:0.5", "1:1", "0/1:0.12345", "0/1:1.87654"});
  write_text(f, v);
  vcf_source s(options(f, dosage_field::ds));
  const dosage_columns ours = read_dosages(s);
  const auto theirs = plink2_dosages(f, "DS", dir.path());
  ASSERT_EQ(theirs.size(), ours.dosages.size());
  for (std::size_t j = 0; j < theirs.size(); ++j) EXPECT_EQ(ours.dosages[j], theirs[j]) << j;
  // By hand: DS missing -> GT 0/1; a tie rounds up; just below it rounds down; haploid x2.
  EXPECT_EQ(ours.dosages[0][0], 16384);
  EXPECT_EQ(ours.dosages[0][1], 24576);
  EXPECT_EQ(ours.dosages[0][2], 0);
  EXPECT_EQ(ours.dosages[0][3], 1);
  EXPECT_EQ(ours.dosages[0][5], std::lround(0.6 * 16384));
  EXPECT_EQ(ours.dosages[3][4], dosage_missing);  // no DS, no GT
  // DS 1.0513 is 17224.4992 / 16384: as text it rounds down. htslib's float of it is 17224.5
  // exactly, which rounds up: PLINK 2 reads a BCF's floats as they are, and so does the source.
  EXPECT_EQ(ours.dosages[4][1], 17224);
  const fs::path bcf = dir / "ds.bcf";
  run("bcftools view -Ob -o " + bcf.string() + " " + f.string());
  vcf_source b(options(bcf, dosage_field::ds));
  const dosage_columns from_bcf = read_dosages(b);
  EXPECT_EQ(from_bcf.dosages[4][1], 17225);
  const auto plink2_bcf = plink2_dosages(bcf, "DS", dir.path());
  ASSERT_EQ(plink2_bcf.size(), from_bcf.dosages.size());
  for (std::size_t j = 0; j < plink2_bcf.size(); ++j)
    EXPECT_EQ(from_bcf.dosages[j], plink2_bcf[j]) << j;
}

TEST(VcfSourceTest, GpEdgeCasesEqualPlink2) {
  test::temp_dir dir;
  const fs::path f = dir / "gpe.vcf";
  std::string v = vcf_header();
  // Unnormalised, all zero (missing), haploid with 2 and with 3 values, missing -> GT.
  v += record("1", 100, "v1", "A", "G", "GT:GP",
              {"0/0:0.2,0.3,0.5", "0/0:0.1,0.1,0.1", "0/1:0.5,0.5,0.5", "0/1:0,0,0", "0:0.3,0.7",
               "1:0.3,0.7,0", "./.:."});
  v += record("1", 200, "v2", "A", "G", "GT:GP",
              {"0/1:0.25,0.5,0.25", "0/1", "0/0:.,.,.", "1:0.3,0.6", "./.:0.2,0.2,0.2",
               "1/1:0.4,0.4,0.4", "0/0:0.6,0.3,0.11"});
  v +=
      record("1", 300, "v3", "A", "G", "GT:GP",
             {"0/1:0.5,0.4,0.2", "0/1:0.5,0.5,0.05", "0/0:1,0.0000305,0.000030517578125",
              "./.:0.98,0.01,0.01", "0/0:0.6,0.3,0.09", "0/0:0.2,0.3,0.5,0.1", "0/0:1e-1,0.5,0.4"});
  v += record("1", 400, "v4", "A", "G", "GP",
              {"0.1,0.2,0.7", "1,0,0", ".", "0,0,1", "0.3,0.3,0.3", "0.5,0.25,0.25", "0,1,0"});
  write_text(f, v);
  vcf_source s(options(f, dosage_field::gp));
  const dosage_columns ours = read_dosages(s);
  const auto theirs = plink2_dosages(f, "GP", dir.path());
  ASSERT_EQ(theirs.size(), ours.dosages.size());
  for (std::size_t j = 0; j < theirs.size(); ++j) EXPECT_EQ(ours.dosages[j], theirs[j]) << j;
  EXPECT_EQ(ours.dosages[0][0], std::lround(1.3 * 16384));  // 0.3 + 2 * 0.5
  EXPECT_EQ(ours.dosages[0][3], dosage_missing);            // all zero
  EXPECT_EQ(ours.dosages[0][4], std::lround(1.4 * 16384));  // haploid 2 * 0.7
  EXPECT_EQ(ours.dosages[1][2], 0);                         // GP missing, GT 0/0
}

TEST(VcfSourceTest, BadDosagesAreRefusedByRecordAndSample) {
  test::temp_dir dir;
  const auto check = [&](dosage_field field, const std::string& sample,
                         const std::vector<std::string>& parts) {
    const fs::path f = dir / "bad.vcf";
    write_text(f, vcf_header(2) + record("1", 100, "v1", "A", "G", "GT:DS:GP", {"0/0", "0/0"}) +
                      record("1", 200, "v2", "A", "G", "GT:DS:GP", {"0/1", sample}));
    SCOPED_TRACE(sample);
    expect_error([&] { open_and_read(options(f, field)); }, errc::bad_input, parts);
    // plink2 refuses these too.
    std::string out;
    EXPECT_NE(test::run_command("plink2 --vcf " + f.string() +
                                    " dosage=" + (field == dosage_field::ds ? "DS" : "GP") +
                                    " --make-pgen --out " + (dir / "p").string(),
                                out),
              0)
        << out;
  };
  const std::string at = "bad.vcf: line 9 (record 2, 1:200 v2), sample 2 's2': ";
  check(dosage_field::ds, "0/0:2.5:1,0,0", {at + "DS 2.5 is outside 0..2"});
  check(dosage_field::ds, "0/0:-0.1:1,0,0", {at + "DS -0.1 is outside 0..2"});
  check(dosage_field::ds, "0:1.5:1,0,0", {at + "DS 1.5 is outside 0..1 (a haploid call)"});
  check(dosage_field::gp, "0/0:0:1.1,0,0", {at + "GP value 1 '1.1' is not a probability"});
  check(dosage_field::gp, "0/0:0:0.5,.,0.1", {at + "GP value 2 '.' is not a probability"});
  check(dosage_field::gp, "0/0:0:0.3,0.7", {at + "GP has 2 values, a diploid call needs 3"});
}

// ---- Multi-allelic records ---------------------------------------------------------------

std::string multiallelic_vcf() {
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

TEST(VcfSourceTest, MultiallelicRecordsAreRefusedWithoutSplit) {
  test::temp_dir dir;
  const fs::path f = dir / "m.vcf";
  write_text(f, multiallelic_vcf());
  expect_error([&] { vcf_source s(options(f)); }, errc::bad_input,
               {"m.vcf: line 8 (record 1, 1:100 m1): has 2 ALT alleles (G,T); colflow reads "
                "biallelic records: add --split-multiallelic (one column per ALT allele, as "
                "bcftools norm -m- gives)"});
  run("bcftools view -Ob -o " + (dir / "m.bcf").string() + " " + f.string());
  expect_error([&] { vcf_source s(options(dir / "m.bcf")); }, errc::bad_input,
               {"m.bcf: record 1 (1:100 m1): has 2 ALT alleles (G,T)"});
}

TEST(VcfSourceTest, SplitEqualsBcftoolsNorm) {
  test::temp_dir dir;
  const fs::path f = dir / "m.vcf", split = dir / "split.vcf";
  write_text(f, multiallelic_vcf());
  run("bcftools norm -m- -o " + split.string() + " " + f.string());
  run("bcftools view -Ob -o " + (dir / "m.bcf").string() + " " + f.string());
  for (const fs::path& input : {f, dir / "m.bcf"}) {
    SCOPED_TRACE(input.filename().string());
    // Genotypes (half-calls as missing: "./3" splits into "./0" and "./1").
    {
      vcf_source ours(options(input, dosage_field::none, half_call::missing, true));
      vcf_source theirs(options(split, dosage_field::none, half_call::missing));
      EXPECT_EQ(ours.records(), 3u);
      ASSERT_EQ(ours.columns(), 6u);
      ASSERT_EQ(theirs.columns(), 6u);
      const genotype_columns a = read_genotypes(ours), b = read_genotypes(theirs);
      EXPECT_EQ(a.codes, b.codes);
      for (std::size_t j = 0; j < 6; ++j) {
        EXPECT_EQ(a.info[j].id, b.info[j].id);
        EXPECT_EQ(a.info[j].pos, b.info[j].pos);
        EXPECT_EQ(a.info[j].a1, b.info[j].a1);
        EXPECT_EQ(a.info[j].a2, b.info[j].a2);
      }
      EXPECT_EQ(a.info[1].a1, "T");
      EXPECT_EQ(a.info[5].a1, "<DEL>");
      // And plink2 reads the split file the same way.
      const genotype_columns p = plink2_bed(split, "--vcf-half-call m", dir.path());
      EXPECT_EQ(a.codes, p.codes);
    }
    // DS (Number=A: the value of each ALT allele).
    {
      vcf_source ours(options(input, dosage_field::ds, half_call::missing, true));
      vcf_source theirs(options(split, dosage_field::ds, half_call::missing));
      EXPECT_EQ(read_dosages(ours).dosages, read_dosages(theirs).dosages);
    }
  }
  // GP (Number=G: REF/REF, REF/a, a/a), on the records that have it.
  const fs::path gp = dir / "gp.vcf", gp_split = dir / "gp_split.vcf";
  {
    std::ifstream in(f);
    std::ofstream out(gp);
    for (std::string line; std::getline(in, line);)
      if (line.find("m3") == std::string::npos) out << line << "\n";
  }
  run("bcftools norm -m- -o " + gp_split.string() + " " + gp.string());
  vcf_source ours(options(gp, dosage_field::gp, half_call::missing, true));
  vcf_source theirs(options(gp_split, dosage_field::gp, half_call::missing));
  const dosage_columns a = read_dosages(ours), b = read_dosages(theirs);
  EXPECT_EQ(a.dosages, b.dosages);
  EXPECT_EQ(a.dosages, plink2_dosages(gp_split, "GP", dir.path()));
}

// ---- Two-step reads: fetch in order, decode on several threads -------------------------

// Fetches every column of `s` in order, then decodes them all on `threads` threads at once, in
// a shuffled order: each fetched column must be complete in itself, and decoding must not
// depend on the source's current record or on the other decodes.
template <typename T>
std::vector<std::vector<T>> decode_on_threads(vcf_source& s, unsigned threads) {
  std::vector<std::unique_ptr<preprocess::column_source::fetched>> raw;
  for (std::uint64_t j = 0; j < s.columns(); ++j) {
    (void)s.column(j);
    raw.push_back(s.fetch(j));
    EXPECT_NE(raw.back(), nullptr);
  }
  const std::size_t n = s.rows();
  constexpr bool genotypes = std::is_same_v<T, std::uint8_t>;
  std::vector<std::vector<T>> out(raw.size(),
                                  std::vector<T>(genotypes ? genotype_column_bytes(n) : n, 0x55));
  std::vector<std::size_t> order(raw.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937 rng(17);
  std::shuffle(order.begin(), order.end(), rng);
  std::atomic<std::size_t> next{0};
  std::vector<std::string> errors(threads);
  const vcf_source& decoder = s;
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      try {
        for (std::size_t k; (k = next++) < order.size();) {
          const std::size_t j = order[k];
          if constexpr (genotypes)
            decoder.decode_genotypes(*raw[j], out[j]);
          else
            decoder.decode_dosages(*raw[j], out[j]);
        }
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (auto& t : pool) t.join();
  for (const auto& e : errors) EXPECT_EQ(e, "");
  if constexpr (genotypes)
    for (auto& c : out) c = masked(std::move(c), n);
  return out;
}

TEST(VcfSourceTest, FetchAndDecodeOnThreadsEqualReads) {
  test::temp_dir dir;
  const auto path = [&](const char* name) { return dir / name; };
  write_text(path("g.vcf"), genotype_vcf(false));
  write_text(path("h.vcf"), genotype_vcf(true));
  write_text(path("m.vcf"), multiallelic_vcf());
  {
    std::ifstream in(path("m.vcf"));
    std::ofstream out(path("gp.vcf"));
    for (std::string line; std::getline(in, line);)
      if (line.find("m3") == std::string::npos) out << line << "\n";
  }
  const std::string dummy = "--dummy 150 400 0.05 dosage-freq=0.2 acgt --seed 5 --export vcf";
  test::run_plink2(dummy + " vcf-dosage=DS --out " + path("ds").string());
  test::run_plink2(dummy + " vcf-dosage=GP --out " + path("gpd").string());
  test::run_plink2(dummy + " bgz vcf-dosage=DS-force --out " + path("dsz").string());
  run("bcftools view -Ob -o " + path("h.bcf").string() + " " + path("h.vcf").string());
  run("bcftools view -Ob -o " + path("m.bcf").string() + " " + path("m.vcf").string());
  run("bcftools view -Ob -o " + path("ds.bcf").string() + " " + path("ds.vcf").string());

  const std::vector<vcf_options> genotype_cases{
      options(path("g.vcf")),
      options(path("h.vcf"), dosage_field::none, half_call::missing),
      options(path("h.vcf"), dosage_field::none, half_call::haploid),
      options(path("h.vcf"), dosage_field::none, half_call::reference),
      options(path("m.vcf"), dosage_field::none, half_call::missing, true),
      options(path("h.bcf"), dosage_field::none, half_call::reference),
      options(path("m.bcf"), dosage_field::none, half_call::missing, true, 2),
  };
  for (const vcf_options& o : genotype_cases) {
    SCOPED_TRACE(o.path.filename().string() + " half " + std::to_string(static_cast<int>(o.half)) +
                 (o.split_multiallelic ? " split" : ""));
    vcf_source one_step(o), two_step(o);
    const genotype_columns expected = read_genotypes(one_step);
    ASSERT_GT(expected.codes.size(), 0u);
    EXPECT_EQ(decode_on_threads<std::uint8_t>(two_step, 4), expected.codes);
  }
  const std::vector<vcf_options> dosage_cases{
      options(path("ds.vcf"), dosage_field::ds),
      options(path("gpd.vcf"), dosage_field::gp),
      options(path("dsz.vcf.gz"), dosage_field::ds, half_call::error, false, 2),
      options(path("m.vcf"), dosage_field::ds, half_call::missing, true),
      options(path("gp.vcf"), dosage_field::gp, half_call::missing, true),
      options(path("h.vcf"), dosage_field::ds, half_call::haploid),
      options(path("ds.bcf"), dosage_field::ds),
      options(path("m.bcf"), dosage_field::ds, half_call::missing, true),
  };
  for (const vcf_options& o : dosage_cases) {
    SCOPED_TRACE(o.path.filename().string() + (o.split_multiallelic ? " split" : ""));
    vcf_source one_step(o), two_step(o);
    const dosage_columns expected = read_dosages(one_step);
    ASSERT_GT(expected.dosages.size(), 0u);
    EXPECT_EQ(decode_on_threads<std::uint16_t>(two_step, 4), expected.dosages);
  }
  // The columns of a split record share what was fetched; each still decodes its own ALT.
  vcf_source s(options(path("m.vcf"), dosage_field::none, half_call::missing, true));
  const auto first = s.fetch(0), second = s.fetch(1);
  std::vector<std::uint8_t> a(2), b(2);
  s.decode_genotypes(*second, b);
  s.decode_genotypes(*first, a);
  EXPECT_NE(a, b);
  // A dosage source does not decode genotypes, nor the other way round.
  std::vector<std::uint16_t> d(7);
  expect_error([&] { s.decode_dosages(*first, d); }, errc::invalid_argument, {"genotype source"});
}

// A problem that only decoding finds, in a record far into the file, is named as a read names it
// (file, line, record, sample), whichever thread decodes it, and ends a conversion with no store.
TEST(VcfSourceTest, DecodeErrorsNameTheRecordAndSample) {
  test::temp_dir dir;
  const auto file_with = [&](const std::string& name, const std::string& format,
                             const std::string& bad_sample) {
    std::string v = vcf_header();
    for (int i = 0; i < 300; ++i)
      v += record("1", 1000 + i, "rs" + std::to_string(i), "A", "G", format,
                  {"0/0", "0/1", "1/1", "./.", "0|1", "1", "0"});
    v += record("1", 5000, "rsBad", "A", "G", format,
                {"0/0", "0/1", "1/1", "./.", bad_sample, "1", "0"});
    v += record("1", 5001, "rsLast", "A", "G", format, {"0/0", "0/1", "1/1", "./.", "0", "1", "0"});
    write_text(dir / name, v);
    return dir / name;
  };
  struct bad_case {
    fs::path file;
    dosage_field field;
    std::string message;
  };
  const std::string at = "line 308 (record 301, 1:5000 rsBad), sample 5 's5': ";
  const std::vector<bad_case> cases{
      {file_with("allele.vcf", "GT", "0/2"), dosage_field::none,
       "allele.vcf: " + at + "GT '0/2' names an allele the record does not have (1 ALT)"},
      {file_with("half.vcf", "GT", "./1"), dosage_field::none,
       "half.vcf: " + at + "GT './1' is a half-call"},
      {file_with("text.vcf", "GT", "0/1x"), dosage_field::none,
       "text.vcf: line 308 (record 301): htslib cannot parse it (an invalid character): sample 5 "
       "'s5': GT '0/1x'"},
      {file_with("ds.vcf", "GT:DS", "0/1:2.5"), dosage_field::ds,
       "ds.vcf: " + at + "DS 2.5 is outside 0..2"},
      {file_with("nan.vcf", "GT:DS", "0/1:1.2.3"), dosage_field::ds,
       "nan.vcf: line 308 (record 301): htslib cannot parse it (an invalid character): sample 5 "
       "'s5': DS '1.2.3'"},
  };
  for (const bad_case& c : cases) {
    SCOPED_TRACE(c.file.filename().string());
    const vcf_options o = options(c.file, c.field);
    // Fetching reads the fixed fields only: every column is fetched. Decoding the bad one, on
    // another thread, fails; the others decode.
    {
      vcf_source s(o);
      std::vector<std::unique_ptr<preprocess::column_source::fetched>> raw;
      for (std::uint64_t j = 0; j < s.columns(); ++j) raw.push_back(s.fetch(j));
      ASSERT_EQ(raw.size(), 302u);
      std::string message;
      errc kind = errc::io_error;
      std::thread([&] {
        try {
          std::vector<std::uint8_t> codes(2);
          std::vector<std::uint16_t> dosages(7);
          if (c.field == dosage_field::none)
            s.decode_genotypes(*raw[300], codes);
          else
            s.decode_dosages(*raw[300], dosages);
        } catch (const error& e) {
          kind = e.kind();
          message = e.message();
        }
      }).join();
      EXPECT_EQ(kind, errc::bad_input);
      EXPECT_NE(message.find(c.message), std::string::npos) << message;
      std::vector<std::uint16_t> dosages(7);
      std::vector<std::uint8_t> codes(2);
      if (c.field == dosage_field::none)
        s.decode_genotypes(*raw[301], codes);
      else
        s.decode_dosages(*raw[301], dosages);
    }
    // A read is a fetch and a decode: the same error, from the same column.
    expect_error([&] { open_and_read(o); }, errc::bad_input, {c.message});
    // The converter decodes on its worker threads: the same error, and no store.
    vcf_source s(o);
    preprocess::convert_options co;
    co.out = dir / "store";
    co.codec = c.field == dosage_field::none ? preprocess::codec_choice::genotype
                                             : preprocess::codec_choice::zstd;
    expect_error([&] { preprocess::convert(s, co, {}); }, errc::bad_input, {c.message});
    EXPECT_FALSE(fs::exists(dir / "store"));
  }
}

// The sample columns of VCF text are parsed by colflow, to htslib's rules: a line is refused
// exactly when htslib's parser refuses it (bcftools, which uses it, fails to convert it to BCF),
// and the calls are those htslib reads (the BCF bcftools writes, read back).
TEST(VcfSourceTest, SampleColumnsParseAsHtslibDoes) {
  test::temp_dir dir;
  std::string header = vcf_header(4);
  header.insert(header.find("#CHROM"),
                "##FORMAT=<ID=AD,Number=R,Type=Integer,Description=\"Depths\">\n");
  // GT:DS:AD samples: fields htslib reads, some in unusual ways ("+" and "00" are allele 0, a
  // number is truncated to 32 bits, an empty Integer or Float is read), and fields it refuses.
  const std::vector<std::string> reads{"0/1",          "+/1",       "00/1",
                                       "4294967297/0", "1|0",       "./.",
                                       ".|1",          "1",         ".",
                                       "0/1:0.5:3",    "0/1::",     "0/1:1,,2:-",
                                       "0/1: 0.5:+3",  "0/1:nan:1", "0/1:0x1p-2:1",
                                       "0/1:.",        "0/1:0.5:.", "1/1:1e-1:1,2",
                                       "0|1|1",        "0/2",       "0/1:0.5,:1"};
  const std::vector<std::string> refuses{
      "a/b",           "0/1x",        "0/",         "/1",      "",
      "99999999999/1", "0//1",        "0/1:0.5x:1", "0/1:-:1", "0/1:.x:1",
      "0/1:1e:1",      "0/1:0.5:1.5", "0/1:0.5:x",  ".5",      "0/1:0.5:1:7"};
  std::vector<std::string> samples = reads;
  samples.insert(samples.end(), refuses.begin(), refuses.end());
  for (std::size_t k = 0; k < samples.size(); ++k) {
    for (const bool last : {false, true}) {
      const std::string& x = samples[k];
      SCOPED_TRACE("sample '" + x + "'" + (last ? " last" : ""));
      const std::vector<std::string> columns =
          last ? std::vector<std::string>{"0/0", "1/1", "0|1", x}
               : std::vector<std::string>{"0/0", x, "1/1", "0|1"};
      std::string name = "c";
      name += std::to_string(k);
      name += last ? "l.vcf" : ".vcf";
      const fs::path vcf = dir / name;
      const fs::path bcf = fs::path(vcf).replace_extension(".bcf");
      write_text(vcf, header + record("1", 10, "rs1", "A", "G", "GT:DS:AD", columns) +
                          record("1", 20, "rs2", "A", "G,T", "GT:DS:AD", columns));
      std::string out;
      const bool htslib_reads =
          test::run_command("bcftools view -Ob -o " + bcf.string() + " " + vcf.string(), out) == 0;
      ASSERT_EQ(htslib_reads, k < reads.size()) << out;
      const std::string sample_name = last ? "sample 4 's4'" : "sample 2 's2'";
      if (!htslib_reads) {
        expect_error(
            [&] { open_and_read(options(vcf, dosage_field::none, half_call::missing, true)); },
            errc::bad_input, {"line 9 (record 1): htslib cannot parse it", sample_name});
        continue;
      }
      // Genotypes, every column of both records, or the same refusal (of a bad call).
      for (const half_call half : {half_call::missing, half_call::error}) {
        const auto read_all = [&](const fs::path& f) {
          try {
            vcf_source s(options(f, dosage_field::none, half, true));
            return read_genotypes(s).codes;
          } catch (const error& e) {
            EXPECT_NE(e.message().find(sample_name), std::string::npos) << e.message();
            return std::vector<std::vector<std::uint8_t>>{};
          }
        };
        EXPECT_EQ(read_all(vcf), read_all(bcf));
      }
    }
  }
}

// ---- Malformed input ---------------------------------------------------------------------

TEST(VcfSourceTest, MalformedFilesAreRefusedByName) {
  test::temp_dir dir;
  const fs::path good = dir / "good.vcf";
  std::string body;
  for (int i = 0; i < 3000; ++i)
    body += record("1", 1000 + i, "rs" + std::to_string(i), "A", "G", "GT",
                   {"0/0", "0/1", "1/1", "./.", "0|1", "1", "0"});
  write_text(good, vcf_header() + body);
  const auto path = [&](const char* name) { return (dir / name).string(); };

  // A missing file.
  expect_error([&] { vcf_source s(options(dir / "absent.vcf")); }, errc::not_found, {"absent.vcf"});
  // A text file that is not VCF, and a VCF without its header.
  write_text(dir / "notes.txt", "just some text\nand more\n");
  expect_error([&] { vcf_source s(options(dir / "notes.txt")); }, errc::bad_input,
               {"notes.txt: not a VCF or BCF file"});
  write_text(dir / "binary.vcf", std::string("\x6c\x1b\x01\x00\xff\x93", 6));
  expect_error([&] { vcf_source s(options(dir / "binary.vcf")); }, errc::bad_input,
               {"binary.vcf: not a VCF or BCF file"});
  write_text(dir / "headerless.vcf", body);
  expect_error([&] { vcf_source s(options(dir / "headerless.vcf")); }, errc::bad_input,
               {"headerless.vcf: not a VCF or BCF file", "##fileformat=VCF"});
  // A header without #CHROM line, duplicate sample names, no samples, no records.
  std::string h = vcf_header();
  write_text(dir / "nochrom.vcf", h.substr(0, h.find("#CHROM")) + body);
  expect_error([&] { vcf_source s(options(dir / "nochrom.vcf")); }, errc::bad_input,
               {"nochrom.vcf: cannot read the VCF header: no #CHROM line"});
  std::string dup = h;
  dup.replace(dup.find("\ts7"), 3, "\ts2");
  write_text(dir / "dup.vcf", dup + body);
  expect_error([&] { vcf_source s(options(dir / "dup.vcf")); }, errc::bad_input,
               {"dup.vcf: cannot read the VCF header: sample name 's2' appears twice (samples 2 "
                "and 7)"});
  std::string sites = vcf_header(0);
  sites.erase(sites.find("\tFORMAT"));
  write_text(dir / "sites.vcf", sites + "\n1\t100\trs1\tA\tG\t.\t.\t.\n");
  expect_error([&] { vcf_source s(options(dir / "sites.vcf")); }, errc::bad_input,
               {"sites.vcf: no samples"});
  write_text(dir / "empty.vcf", vcf_header());
  expect_error([&] { vcf_source s(options(dir / "empty.vcf")); }, errc::bad_input,
               {"empty.vcf: no records"});
  // A record with fewer sample columns than the header, and one with more.
  write_text(dir / "short.vcf",
             vcf_header() + body + record("1", 9000, "rsX", "A", "G", "GT", {"0/0", "0/1"}));
  expect_error([&] { vcf_source s(options(dir / "short.vcf")); }, errc::bad_input,
               {"short.vcf: line 3008 (record 3001, 1:9000 rsX): 2 sample columns, the header "
                "names 7 samples"});
  write_text(dir / "long.vcf", vcf_header() + record("1", 9, "rsY", "A", "G", "GT",
                                                     {"0", "0", "0", "0", "0", "0", "0", "0"}));
  expect_error([&] { vcf_source s(options(dir / "long.vcf")); }, errc::bad_input,
               {"long.vcf: line 8 (record 1, 1:9 rsY): 8 sample columns"});
  // A record without GT (or, for dosages, without GT and the dosage field); a dosage field the
  // header lacks; a bad POS.
  write_text(dir / "nogt.vcf", vcf_header() + record("1", 5, "rsZ", "A", "G", "DS",
                                                     {"0", "0", "0", "0", "0", "0", "0"}));
  expect_error([&] { vcf_source s(options(dir / "nogt.vcf")); }, errc::bad_input,
               {"nogt.vcf: line 8 (record 1, 1:5 rsZ): no GT field in FORMAT"});
  expect_error([&] { vcf_source s(options(dir / "nogt.vcf", dosage_field::gp)); }, errc::bad_input,
               {"nogt.vcf: line 8 (record 1, 1:5 rsZ): neither GP nor GT"});
  open_and_read(options(dir / "nogt.vcf", dosage_field::ds));  // DS alone is enough
  std::string no_ds = vcf_header();
  no_ds.erase(no_ds.find("##FORMAT=<ID=DS"),
              no_ds.find("##FORMAT=<ID=GP") - no_ds.find("##FORMAT=<ID=DS"));
  write_text(dir / "nods.vcf", no_ds + body);
  expect_error([&] { vcf_source s(options(dir / "nods.vcf", dosage_field::ds)); }, errc::bad_input,
               {"nods.vcf: the header declares no FORMAT field DS"});
  {
    std::string t =
        vcf_header() + record("1", 5, "rsP", "A", "G", "GT", {"0", "0", "0", "0", "0", "0", "0"});
    t.replace(t.rfind("\t5\t"), 3, "\t5x\t");
    write_text(dir / "pos.vcf", t);
  }
  expect_error([&] { vcf_source s(options(dir / "pos.vcf")); }, errc::bad_input,
               {"pos.vcf: line 8 (record 1, 1:5x rsP): POS '5x' is not an integer"});
  // Genotypes that only the second pass parses: an allele past the ALT alleles, triploid.
  write_text(dir / "allele.vcf", vcf_header() + record("1", 7, "rsA", "A", "G", "GT",
                                                       {"0/0", "0/1", "0/2", "0", "0", "0", "0"}));
  expect_error([&] { open_and_read(options(dir / "allele.vcf")); }, errc::bad_input,
               {"allele.vcf: line 8 (record 1, 1:7 rsA), sample 3 's3': GT '0/2' names an "
                "allele the record does not have"});
  write_text(dir / "triploid.vcf", vcf_header() + record("1", 7, "rsT", "A", "G", "GT",
                                                         {"0/0/1", "0", "0", "0", "0", "0", "0"}));
  expect_error([&] { open_and_read(options(dir / "triploid.vcf")); }, errc::bad_input,
               {"triploid.vcf: line 8 (record 1, 1:7 rsT), sample 1 's1': GT '0/0/1' has "
                "ploidy 3"});
  write_text(dir / "gtchar.vcf", vcf_header() + record("1", 7, "rsC", "A", "G", "GT",
                                                       {"a/b", "0", "0", "0", "0", "0", "0"}));
  expect_error([&] { open_and_read(options(dir / "gtchar.vcf")); }, errc::bad_input,
               {"gtchar.vcf: line 8 (record 1): htslib cannot parse it"});

  // Truncated bgzip files: in the middle of a block, and at a block boundary (which reads as a
  // shorter valid file but for the missing end-of-file marker).
  run("bgzip -c " + good.string() + " > " + path("good.vcf.gz"));
  const auto gz = test::read_file(dir / "good.vcf.gz");
  ASSERT_GT(gz.size(), 1000u);
  test::write_file(dir / "cut.vcf.gz", std::vector<char>(gz.begin(), gz.begin() + gz.size() / 2));
  expect_error([&] { vcf_source s(options(dir / "cut.vcf.gz")); }, errc::bad_input,
               {"cut.vcf.gz: no BGZF end-of-file marker: the file is truncated"});
  test::write_file(dir / "noeof.vcf.gz", std::vector<char>(gz.begin(), gz.end() - 28));
  expect_error([&] { vcf_source s(options(dir / "noeof.vcf.gz")); }, errc::bad_input,
               {"noeof.vcf.gz: no BGZF end-of-file marker"});
  // A corrupt block in the middle (the marker intact) fails the counting pass.
  auto corrupt = gz;
  for (std::size_t i = gz.size() / 2; i < gz.size() / 2 + 64; ++i) corrupt[i] = 'x';
  test::write_file(dir / "corrupt.vcf.gz", corrupt);
  expect_error([&] { vcf_source s(options(dir / "corrupt.vcf.gz")); }, errc::bad_input,
               {"corrupt.vcf.gz: "});
  // A truncated BCF.
  run("bcftools view -Ob -o " + path("good.bcf") + " " + good.string());
  const auto bcf_bytes = test::read_file(dir / "good.bcf");
  test::write_file(dir / "cut.bcf",
                   std::vector<char>(bcf_bytes.begin(), bcf_bytes.begin() + bcf_bytes.size() / 2));
  expect_error([&] { vcf_source s(options(dir / "cut.bcf")); }, errc::bad_input,
               {"cut.bcf: no BGZF end-of-file marker"});
}

TEST(VcfSourceTest, EmptyLineIsRefused) {
  test::temp_dir dir;
  const fs::path f = dir / "blank.vcf";
  write_text(
      f, vcf_header() + record("1", 5, "rs1", "A", "G", "GT", {"0", "0", "0", "0", "0", "0", "0"}) +
             "\n" + record("1", 6, "rs2", "A", "G", "GT", {"0", "0", "0", "0", "0", "0", "0"}));
  expect_error([&] { vcf_source s(options(f)); }, errc::bad_input,
               {"blank.vcf: line 9: empty line"});
}

}  // namespace
}  // namespace colflow
