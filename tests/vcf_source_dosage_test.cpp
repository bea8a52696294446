// The VCF/BCF reader's dosages: DS and GP fields of files plink2 writes and of hand-made edge
// cases (rounding boundaries, haploid calls, missing fields) against plink2 reading the same
// file, and bad dosages refused by record and sample.
#include <gtest/gtest.h>

#include <cmath>

#include "vcf_source_fixture.hpp"

namespace colflow::vcf_source_tests {
namespace {

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

}  // namespace
}  // namespace colflow::vcf_source_tests
