// Exports of a store (a .bed fileset byte for byte, a PLINK 2 fileset read back, a .npy of the
// decoded matrix) and runs stopped midway: a stopped conversion or export leaves no store, file or
// temporary.
#include <gtest/gtest.h>

#include <fstream>

#include "colflow/cancellation.hpp"
#include "colflow/preprocess/csv_source.hpp"
#include "colflow/preprocess/exporter.hpp"
#include "colflow/preprocess/npy_source.hpp"
#include "colflow/preprocess/pgen_source.hpp"
#include "preprocess_fixture.hpp"

namespace colflow::preprocess_tests {
namespace {

using test::all_datasets;

TEST(ExportTest, BedRoundTripsEverySharedDatasetByteForByte) {
  REQUIRE_SHARED_DATA();
  for (const std::string& name : all_datasets()) {
    if (name.find("smallmode0") != std::string::npos) continue;
    test::temp_dir dir;
    // zstd on the codes goes through the decoding path too (on the smaller sets, for time).
    std::vector<preprocess::codec_choice> codecs = {preprocess::codec_choice::genotype};
    if (name.find("bed-reader") != std::string::npos)
      codecs.push_back(preprocess::codec_choice::genotype_zstd);
    for (auto codec : codecs) {
      const store s = convert_to(name, dir / "s.cf", codec);
      preprocess::export_bed(s, (dir / "out").string(), true);
      auto expected = test::read_file(name + ".bed");
      // The input's padding bits are zeroed in a store (some shared files have them set).
      const std::size_t n = s.num_rows(), bytes = genotype_column_bytes(n);
      if (n % 4 != 0)
        for (std::size_t end = 3 + bytes; end <= expected.size(); end += bytes)
          expected[end - 1] = static_cast<char>(expected[end - 1] & ((1 << (2 * (n % 4))) - 1));
      EXPECT_EQ(test::read_file(dir / "out.bed"), expected) << name;
      // The .bim and .fam hold the same fields.
      EXPECT_EQ(preprocess::count_bim(dir / "out.bim"), s.num_columns());
      const auto fam = preprocess::read_fam(dir / "out.fam");
      ASSERT_EQ(fam.size(), s.num_rows());
      EXPECT_EQ(fam.back().iid, s.samples().back().iid);
      std::filesystem::remove_all(dir / "s.cf");
    }
  }
}

TEST(ExportTest, FloatStoresOfDosagesExportAndStandardisedOnesAreRefused) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  const std::string name = prefix("bed-reader/some_missing");
  const store dosages = convert_to(name, dir / "d.cf", preprocess::codec_choice::lz4,
                                   value_type::float32, false, false);
  preprocess::export_bed(dosages, (dir / "d").string(), false);
  EXPECT_EQ(test::read_file(dir / "d.bed"), test::read_file(name + ".bed"));
  // The same calls in a .pgen (mode 0x02), read back.
  preprocess::export_pfile(dosages, (dir / "p").string(), false);
  preprocess::pgen_source pgen(preprocess::pgen_paths::from_prefix((dir / "p").string()));
  preprocess::bed_source bed(preprocess::plink_paths::from_prefix(name));
  EXPECT_EQ(pgen.storage_mode(), 0x02);
  ASSERT_EQ(pgen.columns(), bed.columns());
  std::vector<std::uint8_t> a(genotype_column_bytes(bed.rows())), b(a.size());
  for (std::uint64_t j = 0; j < bed.columns(); ++j) {
    pgen.read_genotypes(j, a);
    bed.read_genotypes(j, b);
    const std::uint64_t n = bed.rows();
    if (n % 4) b.back() = static_cast<std::uint8_t>(b.back() & ((1u << (2 * (n % 4))) - 1));
    ASSERT_EQ(a, b) << "variant " << j;
  }
  const store z = convert_to(name, dir / "z.cf", preprocess::codec_choice::zstd);
  for (const bool pfile : {false, true}) {
    try {
      if (pfile)
        preprocess::export_pfile(z, (dir / "z").string(), false);
      else
        preprocess::export_bed(z, (dir / "z").string(), false);
      ADD_FAILURE() << "a standardised store was exported as calls";
    } catch (const error& e) {
      EXPECT_EQ(e.kind(), errc::invalid_argument);
      EXPECT_NE(e.message().find("standardised"), std::string::npos) << e.message();
    }
  }
  for (const char* f : {"z.bed", "z.bim", "z.fam", "z.pgen", "z.pvar", "z.psam"})
    EXPECT_FALSE(std::filesystem::exists(dir / f)) << f;
  EXPECT_FALSE(has_temporaries(dir.path()));
}

TEST(ExportTest, NpyHoldsTheDecodedMatrix) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  const store s = convert_to(prefix("bed-reader/some_missing"), dir / "s.cf",
                             preprocess::codec_choice::genotype);
  preprocess::export_npy(s, dir / "m.npy", false, false);
  preprocess::npy_source npy(dir / "m.npy");
  ASSERT_EQ(npy.rows(), s.num_rows());
  ASSERT_EQ(npy.columns(), s.num_columns());
  std::vector<double> a(s.num_rows()), b(s.num_rows());
  for (std::size_t j = 0; j < s.num_columns(); ++j) {
    s.read_column(j, a);
    npy.read_values(j, b);
    ASSERT_EQ(a, b) << "column " << j;
  }
  EXPECT_THROW(preprocess::export_npy(s, dir / "m.npy", false, false), error);  // exists
}

// Clears the process-wide stop request on the way out of a test, whatever happens.
struct stop_request_guard {
  stop_request_guard() { clear_stop_request(); }
  ~stop_request_guard() { clear_stop_request(); }
};

TEST(CancellationTest, ConversionStopsBetweenColumnsAndLeavesNothing) {
  const stop_request_guard guard;
  test::temp_dir dir;
  {
    std::ofstream csv(dir / "m.csv");
    for (int i = 0; i < 20; ++i) {
      for (int j = 0; j < 40; ++j) csv << (j ? "," : "") << (i * 7 + j * 3) % 3;
      csv << '\n';
    }
  }
  preprocess::csv_source source(dir / "m.csv");
  ASSERT_EQ(source.columns(), 40u);
  preprocess::convert_options o;
  o.out = dir / "c.cf";
  o.codec = preprocess::codec_choice::zstd;
  o.tokens = 2;
  std::uint64_t last_done = 0;
  try {
    preprocess::convert(source, o, [&](const preprocess::convert_progress& p) {
      last_done = p.columns_done;
      if (p.columns_done == 3) request_stop();
    });
    FAIL() << "the conversion ran to the end";
  } catch (const error& e) {
    EXPECT_EQ(e.kind(), errc::cancelled) << e.message();
  }
  EXPECT_GE(last_done, 3u);
  EXPECT_LT(last_done, 40u);  // stopped between columns, not at the end
  EXPECT_FALSE(std::filesystem::exists(dir / "c.cf"));
  EXPECT_FALSE(has_temporaries(dir.path()));

  // Once the request is cleared, the same conversion runs.
  clear_stop_request();
  preprocess::csv_source again(dir / "m.csv");
  EXPECT_EQ(preprocess::convert(again, o).columns, 40u);
}

TEST(CancellationTest, ExportsStopAndLeaveNoFile) {
  const stop_request_guard guard;
  test::temp_dir dir;
  {
    std::ofstream csv(dir / "m.csv");
    for (int i = 0; i < 9; ++i) {
      for (int j = 0; j < 30; ++j) csv << (j ? "," : "") << (i + j) % 3;
      csv << '\n';
    }
  }
  preprocess::csv_source source(dir / "m.csv");
  preprocess::convert_options o;
  o.out = dir / "d.cf";
  o.codec = preprocess::codec_choice::lz4;
  o.standardize = false;  // dosages: exportable as .bed
  preprocess::convert(source, o);
  const store s = store::open(dir / "d.cf");

  request_stop();
  for (const bool float32 : {false, true}) {
    try {
      preprocess::export_npy(s, dir / "m.npy", float32, false);
      ADD_FAILURE() << "the .npy export ran to the end";
    } catch (const error& e) {
      EXPECT_EQ(e.kind(), errc::cancelled) << e.message();
    }
  }
  try {
    preprocess::export_bed(s, (dir / "b").string(), false);
    ADD_FAILURE() << "the .bed export ran to the end";
  } catch (const error& e) {
    EXPECT_EQ(e.kind(), errc::cancelled) << e.message();
  }
  try {
    preprocess::export_pfile(s, (dir / "p").string(), false);
    ADD_FAILURE() << "the .pgen export ran to the end";
  } catch (const error& e) {
    EXPECT_EQ(e.kind(), errc::cancelled) << e.message();
  }
  for (const char* name : {"m.npy", "b.bed", "b.bim", "b.fam", "p.pgen", "p.pvar", "p.psam"})
    EXPECT_FALSE(std::filesystem::exists(dir / name)) << name;
  EXPECT_FALSE(has_temporaries(dir.path()));

  clear_stop_request();
  preprocess::export_bed(s, (dir / "b").string(), false);
  preprocess::export_npy(s, dir / "m.npy", false, false);
  EXPECT_EQ(preprocess::npy_source(dir / "m.npy").columns(), 30u);
  EXPECT_EQ(std::filesystem::file_size(dir / "b.bed"), 3u + 30u * 3u);  // 9 samples: 3 bytes
  preprocess::export_pfile(s, (dir / "p").string(), false);
  EXPECT_EQ(std::filesystem::file_size(dir / "p.pgen"), 12u + 30u * 3u);
  EXPECT_FALSE(has_temporaries(dir.path()));
}

}  // namespace
}  // namespace colflow::preprocess_tests
