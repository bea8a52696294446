// The VCF/BCF reader (preprocess/vcf_source.cpp): HapMap3 exported by plink2 as VCF, bgzipped
// VCF and BCF against the .bed it came from; hand-made records (haploid, phased, half-calls)
// against plink2 reading the same file; multi-allelic records split against `bcftools norm -m-`.
// The dosages (DS and GP) are tested in vcf_source_dosage_test.cpp, the two-step reads in
// vcf_source_decode_test.cpp, the sample-column parser and malformed files in
// vcf_source_malformed_test.cpp.
#include "colflow/preprocess/vcf_source.hpp"

#include <gtest/gtest.h>

#include <utility>

#include "colflow/preprocess/bed_source.hpp"
#include "colflow/preprocess/chromosome.hpp"
#include "vcf_source_fixture.hpp"

namespace colflow::vcf_source_tests {
namespace {

// plink2 --vcf FILE ARGS --make-bed: its .bim and .bed columns.
genotype_columns plink2_bed(const fs::path& vcf, const std::string& args, const fs::path& dir) {
  const std::string out = (dir / "plink2_bed").string();
  fs::remove(out + ".bed");
  test::run_plink2("--vcf " + vcf.string() + " " + args + " --make-bed --out " + out);
  preprocess::bed_source bed(preprocess::plink_paths::from_prefix(out));
  return read_genotypes(bed);
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

// ---- Multi-allelic records ---------------------------------------------------------------

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

}  // namespace
}  // namespace colflow::vcf_source_tests
