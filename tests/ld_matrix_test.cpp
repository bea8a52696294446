// colflow ld --make-ldm: the LD store's values against correlations computed here from the
// decoded dosages; band and sparse against the full matrix and GCTB's rules; GCTB's .ldm files
// written and read back bit for bit; GCTB 2.05 reading colflow's files and colflow reading
// GCTB's (skipped without the peer); the same bytes at 1 and 2 threads; damage refused by name.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <fstream>

#include "colflow/colflow.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

const std::filesystem::path gctb =
    std::filesystem::path(COLFLOW_SHARED_DATA_DIR).parent_path() / "peers" / "bin" / "gctb";

constexpr std::size_t variants = 300;

// uk10k's store, its first `variants` columns, and their dosages (no missing call in uk10k).
struct uk10k_slice {
  test::temp_dir dir;
  std::filesystem::path path = test::uk10k_store(dir.path());
  store s = store::open(path);
  selection sel = first_columns();
  std::vector<std::vector<double>> dosages = decode();

  selection first_columns() const {
    selection out = selection::all(s);
    out.columns.resize(variants);
    return out;
  }
  std::vector<std::vector<double>> decode() const {
    std::vector<std::vector<double>> out(variants, std::vector<double>(s.num_rows()));
    for (std::size_t j = 0; j < variants; ++j) s.read_column(j, out[j], decode_as::stored);
    return out;
  }
  // Pearson's r of two columns, in double, the plain two-pass way.
  double r(std::size_t a, std::size_t b) const {
    const auto& x = dosages[a];
    const auto& y = dosages[b];
    const double n = static_cast<double>(x.size());
    double mx = 0, my = 0;
    for (std::size_t i = 0; i < x.size(); ++i) mx += x[i], my += y[i];
    mx /= n, my /= n;
    double sxy = 0, sxx = 0, syy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      sxy += (x[i] - mx) * (y[i] - my);
      sxx += (x[i] - mx) * (x[i] - mx);
      syy += (y[i] - my) * (y[i] - my);
    }
    return sxy / std::sqrt(sxx * syy);
  }
  // The IDs of the slice, for GCTB's --extract.
  std::filesystem::path id_list() const {
    const auto file = dir / "ids.txt";
    std::ofstream out(file);
    for (std::size_t j = 0; j < variants; ++j) out << s.columns()[j].id << "\n";
    return file;
  }
};

uk10k_slice& slice() {
  static uk10k_slice data;
  return data;
}

// Every column of `m` as a dense vector of `m.size()` values (0 where not held).
std::vector<std::vector<float>> dense(const ld_matrix& m) {
  std::vector<std::vector<float>> out(m.size(), std::vector<float>(m.size(), 0.0f));
  std::vector<std::size_t> order(m.size());
  for (std::size_t j = 0; j < order.size(); ++j) order[j] = j;
  std::size_t expected = 0;
  m.stream(order, [&](const ld_column_view& c) {
    EXPECT_EQ(c.position, expected++);
    c.for_each([&](std::size_t row, float v) { out[c.position][row] = v; });
    return true;
  });
  EXPECT_EQ(expected, m.size());
  return out;
}

ldm_summary make(ldm_kind kind, const std::filesystem::path& out, bool gctb_files = false,
                 std::int64_t window = 10, unsigned value_bits = 32) {
  uk10k_slice& d = slice();
  ldm_options o;
  o.kind = kind;
  o.window = window;
  o.gctb = gctb_files;
  o.value_bits = value_bits;
  return make_ld_matrix(d.s, d.sel, o, out);
}

TEST(LdMatrixTest, FullStoreHoldsTheCorrelationsRoundedToFloat32) {
  REQUIRE_SHARED_DATA();
  uk10k_slice& d = slice();
  test::temp_dir dir;
  const ldm_summary sum = make(ldm_kind::full, dir / "full");
  EXPECT_EQ(sum.values, variants * variants);
  const ld_matrix m = ld_matrix::open(dir / "full");
  EXPECT_EQ(m.kind(), ldm_kind::full);
  EXPECT_EQ(m.samples(), d.s.num_rows());
  ASSERT_EQ(m.size(), variants);
  const auto values = dense(m);
  double worst = 0;
  for (std::size_t a = 0; a < variants; ++a) {
    EXPECT_EQ(m.variants()[a].info.id, d.s.columns()[a].id);
    EXPECT_NEAR(m.variants()[a].a1_freq, d.s.entry(a).stats.a1_freq, 1e-12);
    for (std::size_t b = 0; b < variants; ++b) {
      const double want = a == b ? 1.0 : d.r(a, b);
      worst = std::max(worst, std::abs(values[a][b] - want));
      ASSERT_NEAR(values[a][b], want, 1e-7) << a << ", " << b;
    }
  }
  // The store is smaller than the values as float32 (GCTB's .bin).
  EXPECT_LT(sum.store_bytes, variants * variants * 4);
}

TEST(LdMatrixTest, SixteenBitStoreHoldsEachRRoundedToAMultipleOfTwoToTheMinusFourteen) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  const ldm_summary exact = make(ldm_kind::full, dir / "full");
  const ldm_summary rounded = make(ldm_kind::full, dir / "full16", false, 10, 16);
  const auto full = dense(ld_matrix::open(dir / "full"));
  const auto full16 = dense(ld_matrix::open(dir / "full16"));
  double worst = 0;
  for (std::size_t a = 0; a < variants; ++a)
    for (std::size_t b = 0; b < variants; ++b) {
      // r rounded to the nearest multiple of 2^-14: on that grid, and at most half a step from
      // r as float32 (which may itself sit on the other side of a half step, by its rounding).
      std::int16_t q = 0;
      ASSERT_TRUE(fixed16_of(full16[a][b], q)) << a << ", " << b;
      const double off = std::abs(static_cast<double>(full16[a][b]) - full[a][b]);
      ASSERT_LE(off, 0.5 / 16384.0 + 1e-7) << a << ", " << b;
      worst = std::max(worst, off);
    }
  EXPECT_GT(worst, 0.25 / 16384.0);  // the test sees values rounded
  // 16 bits a value before the codec: at most half the float32 store, and a 1.4 store (the
  // version of fixed16-zstd) where the float32 one stays 1.3.
  EXPECT_LT(rounded.store_bytes, exact.store_bytes / 2 + exact.store_bytes / 10);
  EXPECT_EQ(store::open(dir / "full16").version_minor(), 4);
  EXPECT_EQ(store::open(dir / "full").version_minor(), 3);
  EXPECT_EQ(store::open(dir / "full16").summary().columns_per_codec[5], variants);
  // Only zstd, unshuffled, holds the 16-bit values; 16 and 32 are the widths.
  ldm_options o;
  o.value_bits = 16;
  o.encoding.shuffle = true;
  EXPECT_THROW(check_ldm_options(o), error);
  o.encoding = {codec_id::lz4, 1, false};
  EXPECT_THROW(check_ldm_options(o), error);
  o.encoding = {codec_id::zstd, 9, false};
  EXPECT_NO_THROW(check_ldm_options(o));
  o.value_bits = 8;
  EXPECT_THROW(check_ldm_options(o), error);
}

TEST(LdMatrixTest, BandAndSparseHoldTheirPairsOfTheFullMatrix) {
  REQUIRE_SHARED_DATA();
  uk10k_slice& d = slice();
  test::temp_dir dir;
  make(ldm_kind::full, dir / "full");
  make(ldm_kind::band, dir / "band", false, 20);
  make(ldm_kind::sparse, dir / "sparse");
  const auto full = dense(ld_matrix::open(dir / "full"));
  const auto band = dense(ld_matrix::open(dir / "band"));
  const auto sparse = dense(ld_matrix::open(dir / "sparse"));
  const float n = static_cast<float>(d.s.num_rows());
  std::size_t dropped = 0;
  for (std::size_t a = 0; a < variants; ++a)
    for (std::size_t b = 0; b < variants; ++b) {
      const bool near = (a > b ? a - b : b - a) < 20;  // --ld-window 20 on one chromosome
      EXPECT_EQ(band[a][b], near ? full[a][b] : 0.0f) << a << ", " << b;
      const float r = full[a][b];
      const bool kept = a == b || !(r * r * n < 10.0f);
      EXPECT_EQ(sparse[a][b], kept ? r : 0.0f) << a << ", " << b;
      dropped += kept ? 0 : 1;
    }
  EXPECT_GT(dropped, variants * variants / 4);  // the test sees pairs dropped

  // --ld-min-r2 0 keeps every pair (not --chisq's default), and says so in ld.json.
  ldm_options every;
  every.kind = ldm_kind::sparse;
  every.min_r2 = 0.0;
  make_ld_matrix(d.s, d.sel, every, dir / "sparse0");
  EXPECT_EQ(dense(ld_matrix::open(dir / "sparse0")), full);
  const auto json = test::read_file(dir / "sparse0" / "ld.json");
  EXPECT_NE(std::string(json.begin(), json.end()).find("\"min_r2\": 0"), std::string::npos);
}

TEST(LdMatrixTest, GctbFilesReadBackBitForBitAndBytesDoNotDependOnThreads) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  for (const ldm_kind kind : {ldm_kind::full, ldm_kind::band, ldm_kind::sparse}) {
    const std::string name(ldm_kind_name(kind));
    {
      tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
      make(kind, dir / (name + "1"), true);
    }
    make(kind, dir / (name + "2"), true);
    for (const char* ext : {".info", ".bin"})
      EXPECT_EQ(test::read_file(dir / (name + "1.ldm." + name + ext)),
                test::read_file(dir / (name + "2.ldm." + name + ext)))
          << name << ext;
    // The frames (the header holds the random Store_Id).
    const auto frames = [&](const std::string& store) {
      const auto bytes = test::read_file(dir / store / "columns.dat");
      return std::vector<char>(bytes.begin() + 64, bytes.end());
    };
    EXPECT_EQ(frames(name + "1"), frames(name + "2")) << name;
    const ld_matrix ours = ld_matrix::open(dir / (name + "1"));
    const ld_matrix theirs = ld_matrix::open(dir / (name + "1.ldm." + name));
    EXPECT_EQ(theirs.source_format(), "GCTB .ldm." + name);
    EXPECT_EQ(theirs.kind(), kind);
    EXPECT_EQ(theirs.values(), ours.values());
    EXPECT_EQ(dense(theirs), dense(ours)) << name;
    for (std::size_t j = 0; j < variants; ++j)
      EXPECT_EQ(theirs.variants()[j].info.id, ours.variants()[j].info.id);
    // Named by either of its files, as GCTB's users often do.
    for (const char* ext : {".info", ".bin"})
      EXPECT_EQ(dense(ld_matrix::open(dir / (name + "1.ldm." + name + ext))), dense(theirs))
          << name << ext;
  }
}

// GCTB 2.05's own full matrix of the same variants: colflow reads it, and its values are
// colflow's within float32 rounding of a sum over 3,642 samples; its info file is ours but
// for the last digit of the float sums.
TEST(LdMatrixTest, ReadsGctbsMatrixAndGctbReadsColflows) {
  REQUIRE_SHARED_DATA();
  if (!std::filesystem::exists(gctb)) GTEST_SKIP() << "GCTB (" << gctb << ") is absent";
  uk10k_slice& d = slice();
  test::temp_dir dir;
  std::string out;
  const std::string bfile = test::dataset("uk10k/uk10k_chr1_1mb");
  ASSERT_EQ(
      test::run_command(gctb.string() + " --bfile " + bfile + " --extract " + d.id_list().string() +
                            " --make-full-ldm --out " + (dir / "gctb").string(),
                        out),
      0)
      << out;
  make(ldm_kind::full, dir / "ours", true);
  const auto theirs = dense(ld_matrix::open(dir / "gctb.ldm.full"));
  const auto ours = dense(ld_matrix::open(dir / "ours"));
  for (std::size_t a = 0; a < variants; ++a)
    for (std::size_t b = 0; b < variants; ++b)
      ASSERT_NEAR(theirs[a][b], ours[a][b], 1e-5) << a << ", " << b;
  const test::text_table ti = test::read_table(dir / "gctb.ldm.full.info");
  const test::text_table oi = test::read_table(dir / "ours.ldm.full.info");
  ASSERT_EQ(ti.header, oi.header);
  ASSERT_EQ(ti.rows.size(), oi.rows.size());
  for (std::size_t j = 0; j < ti.rows.size(); ++j)
    for (std::size_t f = 0; f < 13; ++f)
      EXPECT_EQ(ti.rows[j][f], oi.rows[j][f]) << "line " << j + 2 << " field " << f;
  // GCTB reads colflow's matrix: SBayesR on it, from summary statistics of these variants.
  {
    std::ofstream ma(dir / "g.ma");
    ma << "SNP A1 A2 freq b se p N\n";
    for (std::size_t j = 0; j < variants; ++j) {
      const column_info& c = d.s.columns()[j];
      const double p = d.s.entry(j).stats.a1_freq;
      ma << c.id << " " << c.a1 << " " << c.a2 << " " << p << " " << (j % 7 == 0 ? 0.05 : 0.001)
         << " 0.02 0.5 3642\n";
    }
  }
  ASSERT_EQ(test::run_command(
                gctb.string() + " --sbayes R --ldm " + (dir / "ours.ldm.full").string() +
                    " --gwas-summary " + (dir / "g.ma").string() +
                    " --chain-length 20 --burn-in 10 --seed 1 --out " + (dir / "sbr").string(),
                out),
            0)
      << out;
  EXPECT_NE(out.find(std::to_string(variants) + " SNPs"), std::string::npos) << out;
  EXPECT_TRUE(std::filesystem::exists(dir / "sbr.parRes")) << out;
}

TEST(LdMatrixTest, DamagedStoreIsRefusedByName) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  make(ldm_kind::band, dir / "band");
  {
    // A byte of column 5's frame.
    const store s = store::open(dir / "band");
    auto bytes = test::read_file(dir / "band" / "columns.dat");
    bytes[s.entry(5).offset + s.entry(5).frame_size / 2] ^= 0x10;
    test::write_file(dir / "band" / "columns.dat", bytes);
    try {
      verify(store::open(dir / "band"));
      FAIL() << "a damaged frame verified";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), make_error_code(errc::checksum_mismatch));
      EXPECT_NE(std::string(e.what()).find("column 5"), std::string::npos) << e.what();
    }
    // Read as an LD matrix (as sbayesr reads it): the damaged column is refused, the others read.
    const ld_matrix m = ld_matrix::open(dir / "band");
    std::vector<std::uint32_t> rows;
    std::vector<float> values;
    EXPECT_NO_THROW(m.read_column(4, rows, values));
    try {
      m.read_column(5, rows, values);
      FAIL() << "a damaged LD column read";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), make_error_code(errc::checksum_mismatch));
      EXPECT_NE(std::string(e.what()).find("column 5"), std::string::npos) << e.what();
    }
  }
  make(ldm_kind::band, dir / "band2");
  {
    // The variant table attached to the store.
    auto bytes = test::read_file(dir / "band2" / "ld.tsv");
    bytes[bytes.size() - 3] = bytes[bytes.size() - 3] == '1' ? '2' : '1';
    test::write_file(dir / "band2" / "ld.tsv", bytes);
    try {
      ld_matrix::open(dir / "band2");
      FAIL() << "a damaged ld.tsv opened";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), make_error_code(errc::checksum_mismatch));
      EXPECT_NE(std::string(e.what()).find("ld.tsv"), std::string::npos) << e.what();
    }
  }
  {
    // The manifest names an attached file outside the store.
    auto text = test::read_file(dir / "band2" / "manifest.json");
    std::string json(text.begin(), text.end());
    json.replace(json.find("\"ld.tsv\""), 8, "\"../ld.tsv\"");
    test::write_file(dir / "band2" / "manifest.json", std::vector<char>(json.begin(), json.end()));
    try {
      store::open(dir / "band2");
      FAIL() << "a manifest naming ../ld.tsv opened";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), make_error_code(errc::corrupt_header));
      EXPECT_NE(std::string(e.what()).find("manifest.json"), std::string::npos) << e.what();
    }
  }
  // A GCTB .bin one value short.
  make(ldm_kind::full, dir / "full", true);
  auto bin = test::read_file(dir / "full.ldm.full.bin");
  bin.resize(bin.size() - 4);
  test::write_file(dir / "full.ldm.full.bin", bin);
  try {
    ld_matrix::open(dir / "full.ldm.full");
    FAIL() << "a short .bin opened";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::corrupt_index));
    EXPECT_NE(std::string(e.what()).find("full.ldm.full.bin"), std::string::npos) << e.what();
  }
  // A plain store is not an LD store.
  try {
    ld_matrix::open(slice().path);
    FAIL() << "a genotype store opened as an LD matrix";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
  }
}

// Without overwrite, an existing store or GCTB file is refused before the matrix is computed,
// and left as it was.
TEST(LdMatrixTest, ExistingOutputsAreRefusedUnlessOverwritten) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  make(ldm_kind::full, dir / "m", true);
  std::filesystem::remove_all(dir / "m");
  const auto before = test::read_file(dir / "m.ldm.full.info");
  try {
    make(ldm_kind::full, dir / "m", true);
    FAIL() << "GCTB's files were replaced";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::already_exists));
    EXPECT_NE(std::string(e.what()).find("m.ldm.full.info"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "m"));
  EXPECT_EQ(test::read_file(dir / "m.ldm.full.info"), before);
  ldm_options o;
  o.gctb = true;
  o.overwrite = true;
  EXPECT_NO_THROW(make_ld_matrix(slice().s, slice().sel, o, dir / "m"));
}

TEST(LdMatrixTest, ReadsColflowsLdband) {
  REQUIRE_SHARED_DATA();
  uk10k_slice& d = slice();
  test::temp_dir dir;
  ld_options lo;
  lo.statistic = ld_statistic::r;
  lo.shape = ld_shape::band;
  lo.encoding = ld_encoding::bin4;
  lo.window = 20;
  write_ld(d.s, d.sel, ld(d.s, d.sel, lo), dir / "b");
  make(ldm_kind::band, dir / "store", false, 20);
  const ld_matrix band = ld_matrix::open(dir / "b.ldband");
  EXPECT_EQ(band.source_format(), "colflow .ldband");
  EXPECT_EQ(dense(band), dense(ld_matrix::open(dir / "store")));
}

}  // namespace
}  // namespace colflow
