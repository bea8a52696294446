// The dosage value type: fixed-point conversions, the store's frames and statistics, the
// converter's three ways with a dosage source (dosage store, hard calls, float store), export,
// and the analyses on a dosage store against the same dosages held as float64.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "colflow/colflow.hpp"
#include "colflow/preprocess/bed_source.hpp"
#include "colflow/preprocess/converter.hpp"
#include "colflow/preprocess/exporter.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

// Random dosages as imputation gives them: mostly near 0, 1 or 2, some anywhere between, some
// missing; column j has A1 frequency growing with j, and column 0 is constant.
std::vector<std::vector<std::uint16_t>> random_dosages(std::uint64_t rows, std::uint64_t columns,
                                                       std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<std::vector<std::uint16_t>> out(columns, std::vector<std::uint16_t>(rows));
  for (std::uint64_t j = 0; j < columns; ++j)
    for (std::uint64_t i = 0; i < rows; ++i) {
      std::uint16_t& v = out[j][i];
      if (j == 0) {
        v = dosage_one;
        continue;
      }
      const double p = 0.05 + 0.9 * static_cast<double>(j) / static_cast<double>(columns);
      const double r = u(rng);
      if (r < 0.03) {
        v = dosage_missing;
      } else if (r < 0.25) {
        v = static_cast<std::uint16_t>(u(rng) * dosage_max);  // uncertain
      } else {
        const int calls = (u(rng) < p) + (u(rng) < p);
        v = static_cast<std::uint16_t>(calls * dosage_one);
      }
    }
  return out;
}

// An in-memory dosage source: the importer's interface fed from vectors.
class vector_dosage_source final : public preprocess::column_source {
 public:
  explicit vector_dosage_source(std::vector<std::vector<std::uint16_t>> columns)
      : columns_(std::move(columns)) {}
  value_type kind() const override { return value_type::dosage; }
  std::uint64_t rows() const override { return columns_[0].size(); }
  std::uint64_t columns() const override { return columns_.size(); }
  std::vector<sample_info> samples() const override { return test::numbered_samples(rows()); }
  column_info column(std::uint64_t j) const override { return test::numbered_column(j); }
  std::string description() const override { return "test dosages"; }
  void read_dosages(std::uint64_t j, std::span<std::uint16_t> out) override {
    check_read(j, out.size());
    std::copy(columns_[j].begin(), columns_[j].end(), out.begin());
  }

 private:
  std::vector<std::vector<std::uint16_t>> columns_;
};

store convert(const std::vector<std::vector<std::uint16_t>>& dosages,
              const std::filesystem::path& out, preprocess::codec_choice codec,
              bool shuffle = false, bool keep_dosages = true, bool standardize = true,
              bool split = true) {
  vector_dosage_source source(dosages);
  preprocess::convert_options o;
  o.out = out;
  o.codec = codec;
  o.shuffle = shuffle;
  o.split_dosages = split;
  o.keep_dosages = keep_dosages;
  o.standardize = standardize;
  preprocess::convert(source, o);
  return store::open(out, {access_mode::mmap, true});
}

TEST(DosageCodecTest, FixedPointRoundTripsAndRoundsHalfUp) {
  EXPECT_EQ(dosage_to_fixed(0.0), 0);
  EXPECT_EQ(dosage_to_fixed(1.0), dosage_one);
  EXPECT_EQ(dosage_to_fixed(2.0), dosage_max);
  EXPECT_EQ(dosage_to_fixed(2.5), dosage_max);
  EXPECT_EQ(dosage_to_fixed(-0.1), 0);
  EXPECT_EQ(dosage_to_fixed(std::nan("")), dosage_missing);
  EXPECT_EQ(dosage_to_fixed(0.5 / dosage_one), 1);  // a half unit rounds up
  EXPECT_EQ(dosage_to_fixed(0.49 / dosage_one), 0);
  for (std::uint32_t v = 0; v <= dosage_max; v += 7)
    EXPECT_EQ(dosage_to_fixed(static_cast<double>(v) / dosage_one), v);
}

TEST(DosageCodecTest, StatisticsFollowTheGenotypeConventions) {
  // Hard calls as dosages give the genotype statistics exactly.
  std::mt19937_64 rng(3);
  const std::uint64_t n = 1001;
  const auto codes = test::random_genotype_codes(n, 0.3, 0.05, rng);
  std::vector<std::uint16_t> d(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    const int x = test::dosage_at(codes, i);
    d[i] = x < 0 ? dosage_missing : static_cast<std::uint16_t>(x * dosage_one);
  }
  const column_stats g = genotype_stats(count_genotypes(codes, n), n);
  const column_stats s = dosage_stats(d);
  EXPECT_EQ(s.observed, g.observed);
  EXPECT_DOUBLE_EQ(s.mean, g.mean);
  EXPECT_DOUBLE_EQ(s.sd, g.sd);
  EXPECT_DOUBLE_EQ(s.a1_freq, g.a1_freq);

  // Fractional dosages: against a plain two-pass computation.
  const auto cols = random_dosages(777, 3, 9);
  std::vector<double> x;
  for (std::uint16_t v : cols[2])
    if (v != dosage_missing) x.push_back(static_cast<double>(v) / dosage_one);
  double mean = 0, ss = 0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(x.size());
  for (double v : x) ss += (v - mean) * (v - mean);
  const column_stats t = dosage_stats(cols[2]);
  EXPECT_EQ(t.observed, x.size());
  EXPECT_NEAR(t.mean, mean, 1e-14);
  EXPECT_NEAR(t.sd, std::sqrt(ss / 776.0), 1e-13);
  EXPECT_NEAR(t.a1_freq, mean / 2, 1e-14);

  const std::vector<std::uint16_t> none(5, dosage_missing);
  EXPECT_TRUE(std::isnan(dosage_stats(none).mean));
  EXPECT_EQ(dosage_stats(none).sd, 0.0);
}

TEST(DosageCodecTest, HardCallsUseTheDistanceToTheNearestCall) {
  const std::vector<std::uint16_t> d = {0,
                                        dosage_to_fixed(0.1),
                                        dosage_to_fixed(0.1001),
                                        dosage_to_fixed(0.9),
                                        dosage_one,
                                        dosage_to_fixed(1.5),
                                        dosage_to_fixed(1.95),
                                        dosage_max,
                                        dosage_missing};
  std::vector<std::uint8_t> codes(genotype_column_bytes(d.size()), 0xff);
  dosages_to_hard_calls(d, 0.1, codes);
  const int expected[] = {0, 0, -1, 1, 1, -1, 2, 2, -1};
  for (std::size_t i = 0; i < d.size(); ++i) EXPECT_EQ(test::dosage_at(codes, i), expected[i]) << i;
  EXPECT_EQ(codes.back() >> 2, 0) << "padding bits are zero";
  dosages_to_hard_calls(d, 0.5, codes);
  EXPECT_EQ(test::dosage_at(codes, 5), 2) << "1.5 is half-way: rounds up at threshold 0.5";
}

TEST(DosageStoreTest, EveryEncodingDecodesToTheDosages) {
  test::temp_dir dir;
  const std::uint64_t rows = 1234, columns = 6;
  const auto dosages = random_dosages(rows, columns, 1);
  std::vector<double> got(rows), z(rows);
  for (preprocess::codec_choice c : {preprocess::codec_choice::none, preprocess::codec_choice::zlib,
                                     preprocess::codec_choice::lz4, preprocess::codec_choice::zstd,
                                     preprocess::codec_choice::auto_select})
    for (int layout = 0; layout < 3; ++layout) {
      // zstd on the split layout (dosage-zstd, the default), and the codecs on the 16-bit
      // values as they are or shuffled.
      const bool split = layout == 0, shuffle = layout == 2;
      const std::string name =
          std::string(preprocess::codec_choice_name(c)) + (split     ? "+split"
                                                           : shuffle ? "+shuffle"
                                                                     : "");
      SCOPED_TRACE(name);
      const store s = convert(dosages, dir / name, c, shuffle, true, true, split);
      ASSERT_EQ(s.type(), value_type::dosage);
      EXPECT_EQ(s.summary().decoded_bytes, columns * rows * 2);
      for (std::size_t j = 0; j < columns; ++j) {
        const column_entry e = s.entry(j);
        if (c == preprocess::codec_choice::zstd) {
          EXPECT_EQ(e.codec == codec_id::dosage_zstd, split);
        }
        if (e.codec != codec_id::dosage_zstd) {
          EXPECT_EQ((e.flags & column_flag::shuffled) != 0, shuffle);
        }
        const column_stats st = dosage_stats(dosages[j]);
        EXPECT_EQ(e.stats.observed, st.observed);
        EXPECT_EQ(e.stats.mean, st.mean);
        EXPECT_EQ(e.stats.sd, st.sd);
        EXPECT_EQ((e.flags & column_flag::constant) != 0, j == 0);
        s.read_column(j, got, decode_as::stored);
        s.read_column(j, z, decode_as::standardized);
        for (std::size_t i = 0; i < rows; ++i) {
          const std::uint16_t v = dosages[j][i];
          if (v == dosage_missing) {
            ASSERT_TRUE(std::isnan(got[i]));
            ASSERT_EQ(z[i], 0.0);
          } else {
            ASSERT_EQ(got[i], static_cast<double>(v) / dosage_one);
            ASSERT_EQ(z[i], j == 0 ? 0.0 : (got[i] - st.mean) / st.sd);
          }
        }
      }
      EXPECT_EQ(verify(s).columns, columns);
    }
}

// Since 1.3 (list checksums in the manifest) every store is written as 1.3; dosage stores were
// 1.2 (the dosage-zstd codec) and the others 1.0 before.
TEST(DosageStoreTest, ADosageStoreIsFormatVersion1Point3AsEveryStore) {
  test::temp_dir dir;
  convert(random_dosages(40, 2, 2), dir / "d", preprocess::codec_choice::zstd);
  const auto bytes = test::read_file(dir / "d" / "columns.dat");
  EXPECT_EQ(bytes[8], 1);
  EXPECT_EQ(bytes[10], 3) << "minor version 3: list checksums (the dosage-zstd codec since 1.2)";
  EXPECT_EQ(bytes[48], 4) << "Value_Type dosage";
  test::write_genotype_store(dir / "g", 40, 2, {codec_id::none, 0, false});
  EXPECT_EQ(test::read_file(dir / "g" / "columns.dat")[10], 3);
}

TEST(DosageStoreTest, AValuePastTwoCopiesIsRefusedAsCorrupt) {
  test::temp_dir dir;
  auto dosages = random_dosages(64, 2, 4);
  const store s0 =
      convert(dosages, dir / "d", preprocess::codec_choice::none, false, true, true, false);
  const std::uint64_t offset = s0.entry(1).offset + 2 * 10;
  auto bytes = test::read_file(dir / "d" / "columns.dat");
  bytes[offset] = 0x01;
  bytes[offset + 1] = static_cast<char>(0x90);  // 0x9001 = 36865: past 32768, not missing
  test::write_file(dir / "d" / "columns.dat", bytes);
  const store s = store::open(dir / "d");  // checksums not verified on read
  std::vector<double> out(64);
  try {
    s.read_column(1, out, decode_as::stored);
    FAIL() << "a value past two copies was decoded";
  } catch (const error& e) {
    EXPECT_EQ(e.kind(), errc::corrupt_frame);
    EXPECT_NE(e.message().find("row 10"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("column 1"), std::string::npos) << e.message();
  }
  // The writer refuses such a value too.
  dosages[1][3] = 40000;
  EXPECT_THROW(convert(dosages, dir / "e", preprocess::codec_choice::zstd), error);
  EXPECT_FALSE(std::filesystem::exists(dir / "e"));
}

TEST(DosageCodecTest, TheSplitLayoutRoundTripsAndHasTheSizeOfItsParts) {
  for (std::uint64_t rows : {1, 2, 3, 4, 5, 7, 8, 9, 63, 1000}) {
    SCOPED_TRACE("rows " + std::to_string(rows));
    for (const auto& column : random_dosages(rows, 8, rows)) {
      std::vector<std::byte> payload;
      split_dosages(column, payload);
      std::size_t others = 0, missing = 0;
      for (std::uint16_t v : column)
        if (v % dosage_one != 0 || v > dosage_max) {
          ++others;
          missing += v == dosage_missing;
        }
      EXPECT_EQ(payload.size(), (rows + 3) / 4 + (others + 7) / 8 + 2 * (others - missing));
      EXPECT_GE(payload.size(), split_dosage_min_bytes(rows));
      EXPECT_LE(payload.size(), split_dosage_max_bytes(rows));
      std::vector<std::uint16_t> back(rows, 12345);
      join_dosages(payload, back);
      EXPECT_EQ(back, column);
      // Every shorter or longer payload is refused, never read past.
      for (std::size_t cut : {std::size_t{0}, payload.size() / 2, payload.size() - 1}) {
        if (cut >= payload.size()) continue;
        EXPECT_THROW(join_dosages(std::span(payload).first(cut), back), error) << cut;
      }
      payload.push_back(std::byte{0});
      EXPECT_THROW(join_dosages(payload, back), error);
    }
  }
  // Kinds filling whole 64-bit words, and a mixture ending on one.
  for (const std::vector<std::uint16_t>& column :
       {std::vector<std::uint16_t>(128, dosage_missing), std::vector<std::uint16_t>(64, 7)}) {
    std::vector<std::byte> payload;
    split_dosages(column, payload);
    std::vector<std::uint16_t> back(column.size());
    join_dosages(payload, back);
    EXPECT_EQ(back, column);
  }
  // Whole copies only: the codes alone, four rows a byte, the first row in the low bits.
  const std::vector<std::uint16_t> whole = {0, dosage_one, dosage_max, 0, dosage_max};
  std::vector<std::byte> payload;
  split_dosages(whole, payload);
  ASSERT_EQ(payload.size(), 2u);
  EXPECT_EQ(static_cast<unsigned>(payload[0]), 0b00'10'01'00u);
  EXPECT_EQ(static_cast<unsigned>(payload[1]), 0b10u);
}

TEST(DosageCodecTest, DamagedDosageZstdFramesAreRefused) {
  const std::uint64_t rows = 64;
  const auto column = random_dosages(rows, 2, 4)[1];
  std::vector<std::byte> split;
  split_dosages(column, split);
  // A zstd frame of a (damaged) split layout, decoded as a dosage-zstd frame of `rows` values.
  const auto refused = [&](const std::vector<std::byte>& layout, const std::string& expected) {
    std::vector<std::byte> frame;
    compress_frame(codec_id::zstd, 3, layout, frame);
    std::vector<std::byte> payload(2 * rows);
    try {
      decompress_frame(codec_id::dosage_zstd, frame, payload);
      ADD_FAILURE() << "a damaged dosage-zstd frame was decoded";
    } catch (const error& err) {
      EXPECT_EQ(err.kind(), errc::corrupt_frame);
      EXPECT_NE(err.message().find(expected), std::string::npos) << err.message();
    }
  };
  std::vector<std::byte> payload(2 * rows), frame;
  compress_frame(codec_id::zstd, 3, split, frame);
  decompress_frame(codec_id::dosage_zstd, frame, payload);
  EXPECT_EQ(std::memcmp(payload.data(), column.data(), payload.size()), 0);
  // A row turned from whole into "other": the codes announce more bytes than there are.
  auto changed = split;
  std::size_t b = 0;
  while ((static_cast<unsigned>(changed[b]) & 3u) == 3u) ++b;
  changed[b] |= std::byte{3};
  refused(changed, "bytes");
  // A value among the others that is a whole number of copies: never written, so refused.
  std::size_t others = 0, missing = 0;
  for (std::uint16_t v : column)
    if (v % dosage_one != 0) {
      ++others;
      missing += v == dosage_missing;
    }
  ASSERT_GT(others, missing);
  changed = split;
  const std::size_t low = (rows + 3) / 4 + (others + 7) / 8;
  changed[low] = std::byte{0};
  changed[low + others - missing] = std::byte{0x40};  // 0x4000: one copy
  refused(changed, "whole number of copies");
  // A size that no split layout of 64 rows has.
  refused(std::vector<std::byte>(2, std::byte{0}), "outside the 16..");
  // An odd payload is not 16-bit values.
  std::vector<std::byte> odd(2 * rows + 1);
  EXPECT_THROW(decompress_frame(codec_id::dosage_zstd, frame, odd), error);
  EXPECT_THROW(compress_frame(codec_id::dosage_zstd, 3, odd, frame), error);
}

TEST(DosageStoreTest, ADamagedDosageZstdFrameIsRefusedNamingTheColumn) {
  test::temp_dir dir;
  const store s0 = convert(random_dosages(64, 2, 4), dir / "d", preprocess::codec_choice::zstd);
  const column_entry e = s0.entry(1);
  ASSERT_EQ(e.codec, codec_id::dosage_zstd);
  auto bytes = test::read_file(dir / "d" / "columns.dat");
  bytes[e.offset] = static_cast<char>(bytes[e.offset] ^ 0x5A);  // zstd's magic number
  test::write_file(dir / "d" / "columns.dat", bytes);
  const store s = store::open(dir / "d");  // checksums not verified on read
  std::vector<double> out(64);
  try {
    s.read_column(1, out, decode_as::stored);
    FAIL() << "a damaged dosage-zstd frame was decoded";
  } catch (const error& err) {
    EXPECT_EQ(err.kind(), errc::corrupt_frame);
    EXPECT_NE(err.message().find("column 1"), std::string::npos) << err.message();
  }
  EXPECT_THROW(verify(store::open(dir / "d")), error);
}

TEST(DosageStoreTest, GenotypeCodecsStoreTheHardCallsAndExportBedWritesThem) {
  test::temp_dir dir;
  const std::uint64_t rows = 501;
  const auto dosages = random_dosages(rows, 5, 5);
  const store g = convert(dosages, dir / "g", preprocess::codec_choice::genotype);
  ASSERT_EQ(g.type(), value_type::genotype);
  std::vector<std::uint8_t> expected(genotype_column_bytes(rows));
  std::vector<std::byte> codes(genotype_column_bytes(rows));
  for (std::size_t j = 0; j < 5; ++j) {
    dosages_to_hard_calls(dosages[j], 0.1, expected);
    g.read_payload(j, codes);
    EXPECT_EQ(std::memcmp(codes.data(), expected.data(), codes.size()), 0) << j;
  }
  // export --bed of the dosage store: the same hard calls, so the same .bed bytes as the
  // genotype store's export.
  const store d = convert(dosages, dir / "d", preprocess::codec_choice::zstd, true);
  preprocess::export_bed(d, (dir / "from_dosages").string(), false);
  preprocess::export_bed(g, (dir / "from_calls").string(), false);
  EXPECT_EQ(test::read_file(dir / "from_dosages.bed"), test::read_file(dir / "from_calls.bed"));
  EXPECT_EQ(test::read_file(dir / "from_dosages.bim"), test::read_file(dir / "from_calls.bim"));
  EXPECT_THROW(preprocess::export_bed(d, (dir / "x").string(), false, {}, 0.7), error);
}

TEST(DosageStoreTest, AnalysesOnADosageStoreEqualThemOnTheSameDosagesAsFloat64) {
  test::temp_dir dir;
  const std::uint64_t rows = 700, columns = 12;
  const auto dosages = random_dosages(rows, columns, 6);
  const store d = convert(dosages, dir / "d", preprocess::codec_choice::zstd, true);
  const store f = convert(dosages, dir / "f", preprocess::codec_choice::none, false,
                          /*keep_dosages=*/false, /*standardize=*/false);
  ASSERT_EQ(f.type(), value_type::float64);

  const selection all_d = selection::all(d), all_f = selection::all(f);
  const auto sd = column_summaries(d, all_d), sf = column_summaries(f, all_f);
  for (std::size_t j = 0; j < columns; ++j) {
    EXPECT_EQ(sd[j].observed, sf[j].observed);
    EXPECT_NEAR(sd[j].mean, sf[j].mean, 1e-13);
    EXPECT_NEAR(sd[j].sd, sf[j].sd, 1e-13);
    EXPECT_NEAR(sd[j].a1_freq, sf[j].mean / 2, 1e-13);
  }
  // With a subset of the samples the statistics are recomputed from the decoded dosages.
  selection half = selection::all(d);
  half.rows.clear();
  for (std::size_t i = 0; i < rows; i += 2) half.rows.push_back(i);
  std::fill(half.row_kept.begin(), half.row_kept.end(), 0);
  for (std::size_t i : half.rows) half.row_kept[i] = 1;
  const auto sh = column_summaries(d, half);
  for (std::size_t j = 1; j < columns; ++j) {
    double sum = 0;
    std::uint64_t obs = 0;
    for (std::size_t i = 0; i < rows; i += 2)
      if (dosages[j][i] != dosage_missing) {
        sum += static_cast<double>(dosages[j][i]) / dosage_one;
        ++obs;
      }
    EXPECT_EQ(sh[j].observed, obs);
    EXPECT_NEAR(sh[j].a1_freq, sum / static_cast<double>(obs) / 2, 1e-13);
  }

  // Association: the same estimates from both stores.
  phenotype_table pheno;
  pheno.names = {"Q"};
  std::mt19937_64 rng(8);
  std::normal_distribution<double> normal;
  pheno.values.resize(static_cast<Eigen::Index>(rows), 1);
  for (std::size_t i = 0; i < rows; ++i)
    pheno.values(static_cast<Eigen::Index>(i), 0) =
        0.8 * (dosages[5][i] == dosage_missing ? 0.0
                                               : static_cast<double>(dosages[5][i]) / dosage_one) +
        normal(rng);
  std::vector<assoc_result> rd(columns), rf(columns);
  linear_association(
      d, all_d, pheno, nullptr,
      [&](std::size_t k, std::size_t, std::span<const assoc_result> r) { rd[k] = r[0]; });
  linear_association(
      f, all_f, pheno, nullptr,
      [&](std::size_t k, std::size_t, std::span<const assoc_result> r) { rf[k] = r[0]; });
  for (std::size_t j = 0; j < columns; ++j) {
    EXPECT_EQ(rd[j].status, rf[j].status) << j;
    EXPECT_EQ(rd[j].n_obs, rf[j].n_obs) << j;
    if (rd[j].status != assoc_status::ok) continue;
    EXPECT_NEAR(rd[j].beta, rf[j].beta, 1e-10 * std::abs(rf[j].beta) + 1e-12) << j;
    EXPECT_NEAR(rd[j].se, rf[j].se, 1e-10 * rf[j].se) << j;
  }
  EXPECT_EQ(rd[0].status, assoc_status::constant);
  EXPECT_LT(rd[5].p, 1e-6) << "the column the phenotype was made from";
}

// PCA of a dosage store of hard calls equals that of the genotype store of the same calls,
// with either scaling and with a subset of the samples (the dosage path decodes values, the
// genotype path looks the codes up: the same standardised values).
TEST(DosageStoreTest, PcaOfHardCallDosagesEqualsPcaOfTheGenotypeStore) {
  test::temp_dir dir;
  const std::uint64_t rows = 300, columns = 40;
  auto dosages = random_dosages(rows, columns, 11);
  for (auto& column : dosages)
    for (std::uint16_t& v : column)
      if (v != dosage_missing)
        v = static_cast<std::uint16_t>((v + dosage_one / 2) / dosage_one * dosage_one);
  const store d = convert(dosages, dir / "d", preprocess::codec_choice::zstd, true);
  const store g = convert(dosages, dir / "g", preprocess::codec_choice::genotype);
  ASSERT_EQ(g.type(), value_type::genotype);
  for (const bool subset : {false, true})
    for (const pca_scaling scaling : {pca_scaling::standardized, pca_scaling::hwe}) {
      SCOPED_TRACE(std::string(subset ? "subset " : "all ") +
                   (scaling == pca_scaling::hwe ? "hwe" : "standardized"));
      selection sd = selection::all(d), sg = selection::all(g);
      if (subset)
        for (selection* s : {&sd, &sg}) {
          s->rows.clear();
          for (std::size_t i = 0; i < rows; ++i) {
            s->row_kept[i] = i % 3 != 0;
            if (s->row_kept[i]) s->rows.push_back(i);
          }
        }
      pca_options o;
      o.components = 3;
      o.scaling = scaling;
      const pca_result a = principal_components(d, sd, o), b = principal_components(g, sg, o);
      ASSERT_EQ(a.columns_used, b.columns_used);
      for (Eigen::Index k = 0; k < 3; ++k) {
        EXPECT_NEAR(a.eigenvalues[k], b.eigenvalues[k], 1e-10 * b.eigenvalues[k]);
        EXPECT_NEAR(std::abs(a.eigenvectors.col(k).dot(b.eigenvectors.col(k))), 1.0, 1e-9);
      }
    }
}

// The lasso on a dosage store equals the lasso on the same dosages held as float64 (both read
// through the dense path), and on hard calls the lasso on the genotype store (packed kernels).
TEST(DosageStoreTest, LassoOnADosageStoreEqualsTheFloatAndGenotypeStores) {
  test::temp_dir dir;
  const std::uint64_t rows = 400, columns = 30;
  const auto dosages = random_dosages(rows, columns, 12);
  auto calls = dosages;
  for (auto& column : calls)
    for (std::uint16_t& v : column)
      if (v != dosage_missing)
        v = static_cast<std::uint16_t>((v + dosage_one / 2) / dosage_one * dosage_one);
  std::mt19937_64 rng(13);
  std::normal_distribution<double> normal;
  std::vector<double> y(rows);
  for (std::size_t i = 0; i < rows; ++i) {
    const auto dose = [&](std::size_t j) {
      return calls[j][i] == dosage_missing ? 1.0 : static_cast<double>(calls[j][i]) / dosage_one;
    };
    y[i] = 0.5 * dose(3) - 0.4 * dose(17) + normal(rng);
  }
  penalized_options o;
  o.n_lambda = 8;
  const auto fit = [&](const store& s) { return penalized_regression(s, selection::all(s), y, o); };
  const auto same = [](const penalized_result& a, const penalized_result& b, double tolerance) {
    ASSERT_EQ(a.path.size(), b.path.size());
    for (std::size_t k = 0; k < a.path.size(); ++k) {
      EXPECT_NEAR(a.path[k].lambda, b.path[k].lambda, tolerance * b.path[k].lambda);
      ASSERT_EQ(a.coefficients[k].size(), b.coefficients[k].size()) << "lambda " << k;
      for (std::size_t c = 0; c < a.coefficients[k].size(); ++c) {
        EXPECT_EQ(a.coefficients[k][c].first, b.coefficients[k][c].first);
        EXPECT_NEAR(a.coefficients[k][c].second, b.coefficients[k][c].second, tolerance);
      }
    }
    EXPECT_GT(a.coefficients.back().size(), 1u);
  };
  const store d = convert(dosages, dir / "d", preprocess::codec_choice::zstd, true);
  const store f = convert(dosages, dir / "f", preprocess::codec_choice::none, false,
                          /*keep_dosages=*/false, /*standardize=*/false);
  same(fit(d), fit(f), 1e-12);
  const store dc = convert(calls, dir / "dc", preprocess::codec_choice::zstd, true);
  const store g = convert(calls, dir / "g", preprocess::codec_choice::genotype);
  same(fit(dc), fit(g), 1e-9);
}

}  // namespace
}  // namespace colflow
