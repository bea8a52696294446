// The VCF/BCF reader's refusals: the sample columns of VCF text parsed to htslib's rules (a line
// refused exactly when htslib refuses it), and malformed files refused by name.
#include <gtest/gtest.h>

#include "vcf_source_fixture.hpp"

namespace colflow::vcf_source_tests {
namespace {

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
}  // namespace colflow::vcf_source_tests
