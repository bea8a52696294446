// colflow grm: against an explicit computation, PLINK 2 --make-rel (every shape and form) and
// PLINK 1.9 --make-grm-bin, the same bits at any thread count and memory limit, and errors.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "colflow/colflow.hpp"
#include "kernels/dense_kernels_internal.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

// The definition of grm.hpp, entry by entry, from the stored values.
Eigen::MatrixXd explicit_grm(const store& s, const selection& sel, bool centered,
                             bool mean_impute) {
  const auto n = static_cast<Eigen::Index>(sel.rows.size());
  std::vector<std::vector<double>> x;  // per variant, the selected samples' values (NaN missing)
  std::vector<double> column(s.num_rows());
  for (const std::size_t j : sel.columns) {
    const std::string& chrom = s.columns()[j].chrom;
    if (chrom == "X" || chrom == "Y" || chrom == "MT") continue;
    s.read_column(j, column, decode_as::stored);
    std::vector<double> v;
    for (const std::size_t r : sel.rows) v.push_back(column[r]);
    x.push_back(std::move(v));
  }
  std::vector<double> p;  // per variant, the A1 frequency over the observed calls
  for (const auto& v : x) {
    double obs = 0, total = 0;
    for (const double d : v)
      if (!std::isnan(d)) {
        ++obs;
        total += d;
      }
    p.push_back(total / (2 * obs));
  }
  Eigen::MatrixXd g(n, n);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index k = 0; k <= i; ++k) {
      double sum = 0, count = 0;
      for (std::size_t t = 0; t < x.size(); ++t) {
        const auto& v = x[t];
        const double var = 2 * p[t] * (1 - p[t]);
        const bool both = !std::isnan(v[i]) && !std::isnan(v[k]);
        if (both || mean_impute) ++count;
        if (!both || var < 1e-12) continue;
        const double scale = centered ? 1.0 : 1.0 / var;
        sum += (v[i] - 2 * p[t]) * (v[k] - 2 * p[t]) * scale;
      }
      g(i, k) = g(k, i) = sum / count;
    }
  return g;
}

std::vector<double> read_doubles(const std::filesystem::path& p) {
  const auto bytes = test::read_file(p);
  std::vector<double> v(bytes.size() / 8);
  std::memcpy(v.data(), bytes.data(), v.size() * 8);
  return v;
}

std::vector<float> read_floats(const std::filesystem::path& p) {
  const auto bytes = test::read_file(p);
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), v.size() * 4);
  return v;
}

std::vector<std::vector<std::string>> read_words(const std::filesystem::path& p) {
  std::ifstream in(p);
  EXPECT_TRUE(in) << "cannot read " << p;
  std::vector<std::vector<std::string>> lines;
  for (std::string line; std::getline(in, line);) {
    std::istringstream s(line);
    std::vector<std::string> words;
    for (std::string w; s >> w;) words.push_back(w);
    lines.push_back(words);
  }
  return lines;
}

// Floats that are the same value rounded, maybe from doubles that differ in the last bits.
bool close_floats(float a, float b) {
  return std::fabs(a - b) <= 2e-6f * std::max(1.0f, std::fabs(b));
}

bool have_program(const std::string& name) {
  std::string out;
  return test::run_command("command -v " + name, out) == 0;
}

class GrmStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // 130 samples (three tiles, the last partial) x 200 variants with missing calls.
    test::write_genotype_store(dir / "g.cf", 130, 200, column_encoding{}, 7);
  }
  test::temp_dir dir;
};

TEST_F(GrmStoreTest, MatchesTheExplicitDefinition) {
  const store s = store::open(dir / "g.cf");
  selection sel = selection::all(s);
  for (const bool centered : {false, true})
    for (const bool mean_impute : {false, true}) {
      grm_options o;
      o.scaling = centered ? grm_scaling::centered : grm_scaling::standardized;
      o.missing = mean_impute ? grm_missing::mean_impute : grm_missing::pairwise;
      o.block_columns = 64;
      const grm_matrix g = grm_dense(s, sel, o);
      const Eigen::MatrixXd e = explicit_grm(s, sel, centered, mean_impute);
      EXPECT_LT((g.values - e).cwiseAbs().maxCoeff(), 1e-12)
          << "centered " << centered << " meanimpute " << mean_impute;
      EXPECT_EQ(g.plan.variants, 200u);
    }
  // A subset of samples: frequencies over the samples kept.
  sel.rows.clear();
  for (std::size_t r = 0; r < s.num_rows(); ++r) {
    sel.row_kept[r] = r % 3 != 1;
    if (sel.row_kept[r]) sel.rows.push_back(r);
  }
  const grm_matrix g = grm_dense(s, sel, {});
  EXPECT_LT((g.values - explicit_grm(s, sel, false, false)).cwiseAbs().maxCoeff(), 1e-12);
}

TEST_F(GrmStoreTest, SameBitsAtAnyThreadCountAndMemoryLimit) {
  const store s = store::open(dir / "g.cf");
  const selection sel = selection::all(s);
  grm_options o;
  o.block_columns = 50;
  grm_matrix one;
  {
    tbb::global_control threads(tbb::global_control::max_allowed_parallelism, 1);
    one = grm_dense(s, sel, o);
  }
  for (const std::size_t threads : {2, 3}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    const grm_matrix other = grm_dense(s, sel, o);
    EXPECT_TRUE(other.values == one.values) << threads << " threads";
    EXPECT_TRUE(other.variants == one.variants) << threads << " threads";
  }
  // A limit that leaves room for bands of 64 rows: three passes, the same bits.
  analysis_options ao;
  ao.stream.in_flight = 2;
  grm_options banded = o;
  const grm_plan whole = plan_grm(s, sel, banded, ao);
  banded.memory_limit = whole.minimum_bytes;
  const grm_matrix bands = grm_dense(s, sel, banded, ao);
  EXPECT_EQ(bands.plan.bands, 3u);
  EXPECT_TRUE(bands.values == one.values);
  EXPECT_TRUE(bands.values == bands.values.transpose());
  // The lower-triangle bands hold the same entries.
  std::size_t rows = 0;
  colflow::grm(s, sel, banded, ao, [&](const grm_band& band) {
    for (Eigen::Index r = 0; r < band.values.rows(); ++r) {
      const auto i = static_cast<Eigen::Index>(band.first_row) + r;
      EXPECT_TRUE(band.values.row(r).head(i + 1) == one.values.row(i).head(i + 1));
      ++rows;
    }
  });
  EXPECT_EQ(rows, 130u);
}

// Single precision: within a few binary32 units of the binary64 matrix, and the same bits at
// any thread count, block size (a multiple of the 128-variant chain) and memory limit.
TEST_F(GrmStoreTest, SinglePrecisionIsCloseToDoubleAndTheSameBitsEverywhere) {
  const store s = store::open(dir / "g.cf");
  const selection sel = selection::all(s);
  const grm_matrix exact = grm_dense(s, sel, {});
  grm_options o;
  o.precision = grm_precision::single;
  grm_matrix one;
  {
    tbb::global_control threads(tbb::global_control::max_allowed_parallelism, 1);
    one = grm_dense(s, sel, o);
  }
  EXPECT_EQ(one.plan.block_columns, 1024u);
  EXPECT_TRUE(one.variants == exact.variants);
  const double worst =
      ((one.values - exact.values).array() / (1.0 + exact.values.array().abs())).abs().maxCoeff();
  EXPECT_LT(worst, 1e-6);
  EXPECT_GT(worst, 0.0);  // the binary32 path was taken
  EXPECT_TRUE(one.values == one.values.transpose());
  for (const std::size_t threads : {2, 3}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    EXPECT_TRUE(grm_dense(s, sel, o).values == one.values) << threads << " threads";
  }
  grm_options small = o;
  small.block_columns = 128;  // 200 variants: a block of 128, then one of 72
  EXPECT_TRUE(grm_dense(s, sel, small).values == one.values);
  analysis_options ao;
  ao.stream.in_flight = 2;
  small.memory_limit = plan_grm(s, sel, small, ao).minimum_bytes;
  const grm_matrix bands = grm_dense(s, sel, small, ao);
  EXPECT_EQ(bands.plan.bands, 3u);
  EXPECT_TRUE(bands.values == one.values);
  small.block_columns = 100;
  EXPECT_THROW(plan_grm(s, sel, small), error);
}

TEST_F(GrmStoreTest, ProcessesMakeTheBandsInRoundsWithTheSameBits) {
  const store s = store::open(dir / "g.cf");
  const selection sel = selection::all(s);
  grm_options o;
  o.block_columns = 50;
  const grm_matrix one = grm_dense(s, sel, o);
  for (const bool full_rows : {false, true}) {
    o.full_rows = full_rows;
    // 130 rows in bands of 64: 3 bands, on 2 processes 2 rounds (the second one band), on 3 one.
    for (const std::size_t size : {2u, 3u}) {
      std::vector<Eigen::MatrixXd> got(size, Eigen::MatrixXd::Zero(130, 130));
      std::vector<std::size_t> next_row(size, 0), bands(size, 0), processes(size, 0);
      test::on_processes(size, [&](std::size_t r, analysis_options& ao) {
        const grm_plan plan = colflow::grm(s, sel, o, ao, [&](const grm_band& band) {
          EXPECT_EQ(band.first_row, next_row[r]);  // every band, in row order
          next_row[r] += static_cast<std::size_t>(band.values.rows());
          got[r]
              .middleRows(static_cast<Eigen::Index>(band.first_row), band.values.rows())
              .leftCols(band.values.cols()) = band.values;
        });
        bands[r] = plan.bands;
        processes[r] = plan.processes;
      });
      for (std::size_t r = 0; r < size; ++r) {
        EXPECT_EQ(bands[r], 3u);
        EXPECT_EQ(processes[r], size);
        EXPECT_EQ(next_row[r], 130u);
        const Eigen::MatrixXd expected =
            full_rows ? one.values : Eigen::MatrixXd(one.values.triangularView<Eigen::Lower>());
        EXPECT_TRUE(got[r] == expected)
            << size << " processes, rank " << r << " full " << full_rows;
      }
    }
  }
}

TEST_F(GrmStoreTest, RefusesALimitBelowOneBandAndWritesNothing) {
  const store s = store::open(dir / "g.cf");
  const selection sel = selection::all(s);
  grm_options o;
  o.memory_limit = 1000;
  try {
    plan_grm(s, sel, o);
    ADD_FAILURE() << "no error";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
    EXPECT_NE(std::string(e.what()).find("memory limit"), std::string::npos) << e.what();
  }
  std::string out;
  EXPECT_NE(test::run_cli("grm " + (dir / "g.cf").string() + " --quiet --memory 1 --out " +
                              (dir / "r").string(),
                          out),
            0);
  EXPECT_NE(out.find("memory limit of 1.0 MiB"), std::string::npos) << out;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(entry.path().filename().string().rfind("r", 0), std::string::npos) << entry.path();
  // A float store has no allele frequencies.
  test::write_float_store(dir / "f.cf", value_type::float64, 10, 5, column_encoding{});
  const store f = store::open(dir / "f.cf");
  EXPECT_THROW(plan_grm(f, selection::all(f), {}), error);
}

TEST_F(GrmStoreTest, WriterRefusesASquareFromLowerBands) {
  const store s = store::open(dir / "g.cf");
  const selection sel = selection::all(s);
  grm_outputs outputs;
  outputs.rel = true;
  outputs.shape = rel_shape::square;
  {
    grm_writer w(s, sel, dir / "sq", outputs);
    EXPECT_THROW(colflow::grm(s, sel, {}, {}, [&](const grm_band& b) { w.write(b); }), error);
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "sq.rel"));
}

// The tile product of this CPU's path (AVX-512, AVX2 or portable) against each entry's chain of
// std::fma written out, on sizes that leave remainders of every vector width; and A·Aᵀ exactly
// symmetric. In binary64 and binary32.
template <typename Real>
void expect_fused_chains() {
  std::mt19937_64 rng(3);
  std::normal_distribution<Real> normal;
  for (const std::size_t n : {1, 7, 16, 23, 40, 64}) {
    const std::size_t lda = 70, b = 37, l = n + 3;
    std::vector<Real> a(lda * b), bt(lda * b), y(n * l), expected(n * l);
    for (Real& v : a) v = normal(rng);
    for (Real& v : bt) v = normal(rng);
    for (Real& v : y) v = normal(rng);
    for (std::size_t c = 0; c < l; ++c)
      for (std::size_t i = 0; i < n; ++i) {
        Real acc = y[i + c * n];
        for (std::size_t k = 0; k < b; ++k) acc = std::fma(a[i + k * lda], bt[c + k * lda], acc);
        expected[i + c * n] = acc;
      }
    detail::multiply_add_transposed(a.data(), lda, n, b, bt.data(), lda, l, y.data(), n);
    EXPECT_EQ(0, std::memcmp(y.data(), expected.data(), y.size() * sizeof(Real)))
        << "n " << n << ", " << sizeof(Real) << "-byte values";

    std::vector<Real> square(n * n, Real(0));
    detail::multiply_add_transposed(a.data(), lda, n, b, a.data(), lda, n, square.data(), n);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < i; ++j) ASSERT_EQ(square[i + j * n], square[j + i * n]);
  }
}

TEST(GrmKernelTest, EveryEntryIsOneFusedChainOnEveryPath) {
  expect_fused_chains<double>();
  expect_fused_chains<float>();
}

TEST(GrmDosageTest, DosageStoreMatchesTheExplicitDefinition) {
  // A VCF of 70 samples x 40 variants with DS dosages, a few missing, through the importer.
  test::temp_dir dir;
  {
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> u(0, 1);
    std::ofstream vcf(dir / "d.vcf");
    vcf << "##fileformat=VCFv4.2\n"
        << "##FORMAT=<ID=DS,Number=A,Type=Float,Description=\"dosage\">\n"
        << "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT";
    for (int i = 0; i < 70; ++i) vcf << "\ts" << i;
    vcf << "\n";
    for (int j = 0; j < 40; ++j) {
      vcf << "1\t" << 100 + j << "\tv" << j << "\tA\tC\t.\tPASS\t.\tDS";
      const double p = 0.1 + 0.8 * j / 40.0;
      for (int i = 0; i < 70; ++i) {
        if (u(rng) < 0.05)
          vcf << "\t.";
        else
          vcf << "\t" << std::round(std::min(2.0, 4 * p * u(rng)) * 1000) / 1000;
      }
      vcf << "\n";
    }
  }
  std::string out;
  ASSERT_EQ(test::run_cli("preprocess --quiet --vcf " + (dir / "d.vcf").string() +
                              " --dosage DS --out " + (dir / "d.cf").string(),
                          out),
            0)
      << out;
  const store s = store::open(dir / "d.cf");
  ASSERT_EQ(s.type(), value_type::dosage);
  const selection sel = selection::all(s);
  for (const bool centered : {false, true}) {
    grm_options o;
    o.scaling = centered ? grm_scaling::centered : grm_scaling::standardized;
    const grm_matrix g = grm_dense(s, sel, o);
    EXPECT_LT((g.values - explicit_grm(s, sel, centered, false)).cwiseAbs().maxCoeff(), 1e-12);
  }
}

// The store of a PLINK dataset and plink2's copy of it, under `dir`.
struct plink_pair {
  std::string store, bfile;
};

plink_pair prepare(const std::string& name, const test::temp_dir& dir) {
  std::string out;
  const std::string st = (dir / "s.cf").string();
  EXPECT_EQ(test::run_cli("preprocess --quiet --bed " + name + " --out " + st, out), 0) << out;
  return {st, name};
}

// colflow's and plink2's .rel files for the same modifiers.
void compare_rel(const plink_pair& p, const test::temp_dir& dir, const std::string& modifiers,
                 const std::string& extract = "") {
  SCOPED_TRACE(modifiers);
  std::string out;
  const std::string c = (dir / "c").string(), q = (dir / "q").string();
  const std::string ex = extract.empty() ? "" : " --extract " + extract;
  ASSERT_EQ(
      test::run_cli("grm " + p.store + " --quiet" + ex + " --make-rel " + modifiers + " --out " + c,
                    out),
      0)
      << out;
  test::run_plink2("--bfile " + p.bfile + ex + " --make-rel " + modifiers + " --out " + q +
                   " --silent");
  const bool bin = modifiers.find("bin") != std::string::npos;
  const bool bin4 = modifiers.find("bin4") != std::string::npos;
  EXPECT_EQ(read_words(c + ".rel.id"), read_words(q + ".rel.id"));
  if (!bin) {
    const auto ours = read_words(c + ".rel"), theirs = read_words(q + ".rel");
    ASSERT_EQ(ours.size(), theirs.size());
    std::size_t checked = 0;
    for (std::size_t i = 0; i < ours.size(); ++i) {
      ASSERT_EQ(ours[i].size(), theirs[i].size()) << "line " << i + 1;
      for (std::size_t j = 0; j < ours[i].size(); ++j, ++checked)
        EXPECT_TRUE(test::same_as_printed(std::stod(ours[i][j]), theirs[i][j]))
            << "line " << i + 1 << " field " << j + 1 << ": " << ours[i][j] << " vs "
            << theirs[i][j];
    }
    EXPECT_GT(checked, 0u);
  } else if (!bin4) {
    const auto ours = read_doubles(c + ".rel.bin"), theirs = read_doubles(q + ".rel.bin");
    ASSERT_EQ(ours.size(), theirs.size());
    for (std::size_t i = 0; i < ours.size(); ++i)
      ASSERT_NEAR(ours[i], theirs[i], 1e-12 * std::max(1.0, std::fabs(theirs[i]))) << i;
  } else {
    const auto ours = read_floats(c + ".rel.bin"), theirs = read_floats(q + ".rel.bin");
    ASSERT_EQ(ours.size(), theirs.size());
    for (std::size_t i = 0; i < ours.size(); ++i)
      ASSERT_TRUE(close_floats(ours[i], theirs[i])) << i << ": " << ours[i] << " " << theirs[i];
  }
}

TEST(GrmPlinkTest, EveryShapeAndFormEqualsPlink2MakeRel) {
  REQUIRE_SHARED_DATA();
  if (!have_program("plink2")) GTEST_SKIP() << "plink2 is not installed";
  test::temp_dir dir;
  const plink_pair p = prepare(test::dataset("bed-reader/some_missing"), dir);
  for (const char* shape : {"triangle", "square", "square0"})
    for (const char* form : {"", "bin", "bin4"})
      compare_rel(p, dir, std::string(shape) + (*form ? " " : "") + form);
  compare_rel(p, dir, "cov");
  compare_rel(p, dir, "meanimpute");
  compare_rel(p, dir, "cov meanimpute bin");
}

TEST(GrmPlinkTest, HapMapEqualsPlink2MakeRel) {
  REQUIRE_SHARED_DATA();
  if (!have_program("plink2")) GTEST_SKIP() << "plink2 is not installed";
  {
    test::temp_dir dir;  // YRI: 60 samples, X variants left out
    const plink_pair p = prepare(test::dataset("hapmap-yri/plinkhapmap"), dir);
    compare_rel(p, dir, "bin");
  }
  test::temp_dir dir;  // hapmap3: 957 samples, the first 1,500 variants and those on XY and MT
  const plink_pair p = prepare(test::dataset("hapmap3/HapMap3"), dir);
  {
    std::ofstream list(dir / "slice.txt");
    std::ifstream bim(p.bfile + ".bim");
    std::size_t k = 0;
    for (std::string line; std::getline(bim, line); ++k) {
      std::istringstream f(line);
      std::string chrom, id;
      f >> chrom >> id;
      if (k < 1500 || chrom == "25" || chrom == "26" || chrom == "23") list << id << "\n";
    }
  }
  compare_rel(p, dir, "bin", (dir / "slice.txt").string());
}

TEST(GrmPlinkTest, GctaFilesEqualPlink19MakeGrmBin) {
  REQUIRE_SHARED_DATA();
  if (!have_program("plink1.9")) GTEST_SKIP() << "plink1.9 is not installed";
  for (const char* name : {"bed-reader/some_missing", "hapmap-yri/plinkhapmap"}) {
    SCOPED_TRACE(name);
    test::temp_dir dir;
    const plink_pair p = prepare(test::dataset(name), dir);
    std::string out;
    const std::string c = (dir / "c").string(), q = (dir / "q").string();
    ASSERT_EQ(test::run_command(
                  "plink1.9 --bfile " + p.bfile + " --make-grm-bin --out " + q + " --silent", out),
              0)
        << out;
    const auto theirs = read_floats(q + ".grm.bin");
    // binary32 products (the default for these binary32 files) and binary64 ones.
    for (const char* precision : {"", " --precision double"}) {
      SCOPED_TRACE(precision);
      ASSERT_EQ(test::run_cli("grm " + p.store + " --make-grm-bin --out " + c + precision, out), 0)
          << out;
      EXPECT_NE(out.find(*precision == 0 ? "binary32 products" : "binary64 products"),
                std::string::npos)
          << out;
      EXPECT_EQ(read_words(c + ".grm.id"), read_words(q + ".grm.id"));
      const auto ours = read_floats(c + ".grm.bin");
      ASSERT_EQ(ours.size(), theirs.size());
      for (std::size_t i = 0; i < ours.size(); ++i)
        ASSERT_TRUE(close_floats(ours[i], theirs[i])) << i << ": " << ours[i] << " " << theirs[i];
      EXPECT_EQ(read_floats(c + ".grm.N.bin"), read_floats(q + ".grm.N.bin"));
    }
  }
}

TEST(GrmCliTest, BothOutputsAtOnceAndConflictingModifiers) {
  test::temp_dir dir;
  test::write_genotype_store(dir / "g.cf", 7, 20, column_encoding{}, 3);
  std::string out;
  const std::string st = (dir / "g.cf").string(), c = (dir / "c").string();
  ASSERT_EQ(test::run_cli("grm " + st + " --quiet --make-rel --make-grm-bin --out " + c, out), 0)
      << out;
  for (const char* suffix : {".rel", ".rel.id", ".grm.bin", ".grm.N.bin", ".grm.id"})
    EXPECT_TRUE(std::filesystem::exists(c + suffix)) << suffix;
  EXPECT_EQ(read_words(c + ".rel").size(), 7u);
  EXPECT_EQ(read_floats(c + ".grm.bin").size(), 28u);
  EXPECT_NE(test::run_cli("grm " + st + " --quiet --make-rel cov --make-grm-bin --out " +
                              (dir / "x").string(),
                          out),
            0);
  EXPECT_NE(out.find("cov and meanimpute"), std::string::npos) << out;
  EXPECT_NE(test::run_cli(
                "grm " + st + " --quiet --make-rel bin bin4 --out " + (dir / "x").string(), out),
            0);
  EXPECT_FALSE(std::filesystem::exists(dir / "x.rel.bin"));
}

}  // namespace
}  // namespace colflow
