// The golden stores in tests/golden/ were written by make_golden, six with format 1.0 and one
// with format 1.3 (golden_cases.hpp). Reading them must keep giving the same values: any
// accidental change of the format fails here.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "golden_cases.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

const std::filesystem::path golden_dir = std::filesystem::path(COLFLOW_TEST_SOURCE_DIR) / "golden";

struct expected_column {
  std::vector<double> standardized, stored;
};

std::vector<expected_column> read_expected(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::vector<expected_column> out;
  std::string line;
  while (std::getline(in, line)) {
    expected_column c;
    std::istringstream s(line);
    std::string token;
    bool after_bar = false;
    while (s >> token) {
      if (token == "|") {
        after_bar = true;
        continue;
      }
      (after_bar ? c.stored : c.standardized).push_back(std::strtod(token.c_str(), nullptr));
    }
    out.push_back(std::move(c));
  }
  return out;
}

void expect_same(double actual, double expected, const std::string& where) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(actual)) << where;
  } else {
    EXPECT_EQ(actual, expected) << where;
  }
}

class GoldenStoreTest : public ::testing::TestWithParam<golden::golden_case> {};

TEST_P(GoldenStoreTest, DecodesToTheRecordedValues) {
  const golden::golden_case& g = GetParam();
  const auto path = golden_dir / (g.name + ".cf");
  const store s = store::open(path, {access_mode::mmap, true});
  ASSERT_EQ(s.num_rows(), golden::rows);
  ASSERT_EQ(s.num_columns(), golden::columns);
  EXPECT_EQ(s.type(), g.type);
  EXPECT_EQ(s.summary().source, "golden test store");
  EXPECT_EQ(s.samples()[6].iid, "I6");
  EXPECT_EQ(s.columns()[2].pos, "300");

  const auto expected = read_expected(golden_dir / (g.name + ".expected"));
  ASSERT_EQ(expected.size(), golden::columns);
  std::vector<double> z(golden::rows), v(golden::rows);
  for (std::uint64_t j = 0; j < golden::columns; ++j) {
    s.verify_checksum(j);
    EXPECT_EQ(s.entry(j).codec, g.encoding.codec);
    s.read_column(j, z, decode_as::standardized);
    s.read_column(j, v, decode_as::stored);
    ASSERT_EQ(expected[j].standardized.size(), golden::rows);
    ASSERT_EQ(expected[j].stored.size(), golden::rows);
    for (std::uint64_t i = 0; i < golden::rows; ++i) {
      const std::string where =
          g.name + " column " + std::to_string(j) + " row " + std::to_string(i);
      expect_same(z[i], expected[j].standardized[i], where);
      expect_same(v[i], expected[j].stored[i], where);
    }
    // The recorded values are themselves right: they follow the definition of the case.
    if (g.type == value_type::genotype) {
      const auto codes = golden::genotype_codes(j);
      for (std::uint64_t i = 0; i < golden::rows; ++i) {
        const int d = test::dosage_at(codes, i);
        expect_same(v[i], d < 0 ? std::nan("") : static_cast<double>(d),
                    g.name + " dosage row " + std::to_string(i));
      }
      std::vector<std::byte> payload(2);
      s.read_payload(j, payload);
      EXPECT_EQ(std::to_integer<int>(payload[1]) & 0b11000000, 0) << "padding bits not zeroed";
    } else {
      const auto values = golden::dense_values(j);
      for (std::uint64_t i = 0; i < golden::rows; ++i)
        expect_same(v[i], values[i], g.name + " value row " + std::to_string(i));
    }
  }
}

TEST_P(GoldenStoreTest, HeadersHoldTheVersion1Layout) {
  const auto path = golden_dir / (GetParam().name + ".cf");
  const auto data = test::read_file(path / "columns.dat");
  const auto index = test::read_file(path / "columns.idx");
  ASSERT_GE(data.size(), 64u);
  ASSERT_EQ(index.size(), 64u + 3u * 72u);
  const unsigned char data_magic[] = {0x89, 'C', 'F', 'D', 0x0D, 0x0A, 0x1A, 0x0A};
  const unsigned char index_magic[] = {0x89, 'C', 'F', 'I', 0x0D, 0x0A, 0x1A, 0x0A};
  EXPECT_EQ(std::memcmp(data.data(), data_magic, 8), 0);
  EXPECT_EQ(std::memcmp(index.data(), index_magic, 8), 0);
  EXPECT_EQ(data[8], 1);                  // Version_Major
  EXPECT_EQ(data[10], GetParam().minor);  // Version_Minor
  EXPECT_EQ(index[10], GetParam().minor);
  EXPECT_EQ(std::memcmp(data.data() + 16, index.data() + 16, 16), 0);  // Store_Id
  EXPECT_EQ(data[32], 7);                                              // Num_Rows
  EXPECT_EQ(index[40], 3);                                             // Num_Columns
  EXPECT_EQ(index[48], static_cast<char>(GetParam().type));            // Value_Type
  EXPECT_EQ(index[50], 72);                                            // Entry_Size
  EXPECT_EQ(index[64 + 0], 64);  // the first frame starts right after the data header
  EXPECT_EQ(index[64 + 64], static_cast<char>(GetParam().encoding.codec));  // Codec_Id
}

// The lists as text, made from the definition of the golden stores (docs/FORMAT.md §9).
std::string expected_text(bool samples) {
  std::string text =
      samples ? "#FID\tIID\tPAT\tMAT\tSEX\tPHENOTYPE\n" : "#CHR\tID\tCM\tPOS\tA1\tA2\n";
  if (samples) {
    for (const sample_info& i : golden::samples())
      text += i.fid + '\t' + i.iid + '\t' + i.father + '\t' + i.mother + '\t' + i.sex + '\t' +
              i.phenotype + '\n';
  } else {
    for (std::uint64_t j = 0; j < golden::columns; ++j) {
      const column_info c = golden::column(j);
      text += c.chrom + '\t' + c.id + '\t' + c.cm + '\t' + c.pos + '\t' + c.a1 + '\t' + c.a2 + '\n';
    }
  }
  return text;
}

std::string hex16(std::uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

// Since 1.3 the manifest records the XXH3-64 of both lists; the stores of 1.0 record none and
// open and verify as before.
TEST_P(GoldenStoreTest, ManifestRecordsTheListChecksumsFromVersion1Point3) {
  const golden::golden_case& g = GetParam();
  const auto path = golden_dir / (g.name + ".cf");
  const std::string samples = expected_text(true), columns = expected_text(false);
  const auto file_text = [&](const char* name) {
    const auto bytes = test::read_file(path / name);
    return std::string(bytes.begin(), bytes.end());
  };
  ASSERT_EQ(file_text("samples.tsv"), samples);
  ASSERT_EQ(file_text("columns.tsv"), columns);
  const auto manifest = nlohmann::json::parse(file_text("manifest.json"));
  EXPECT_EQ(manifest["format_version"], "1." + std::to_string(g.minor));
  const store s = store::open(path);
  EXPECT_EQ(s.version_minor(), g.minor);
  const verify_report report = verify(s);
  EXPECT_EQ(report.columns, golden::columns);
  if (g.minor < 3) {
    EXPECT_FALSE(manifest.contains("checksums"));
    EXPECT_FALSE(s.has_list_checksums());
    EXPECT_FALSE(report.list_checksums);
    return;
  }
  EXPECT_TRUE(s.has_list_checksums());
  EXPECT_TRUE(report.list_checksums);
  // XXH3-64 of the text made above, as 16 lowercase hex digits.
  EXPECT_EQ(manifest["checksums"]["samples.tsv"],
            hex16(checksum64(std::as_bytes(std::span(samples)))));
  EXPECT_EQ(manifest["checksums"]["columns.tsv"],
            hex16(checksum64(std::as_bytes(std::span(columns)))));
}

INSTANTIATE_TEST_SUITE_P(AllGolden, GoldenStoreTest, ::testing::ValuesIn(golden::cases()),
                         [](const auto& param_info) {
                           std::string n = param_info.param.name;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

}  // namespace
}  // namespace colflow
