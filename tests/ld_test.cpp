// colflow ld: the pair kernel against a naive decode on every code path; the table, the text
// matrices and the binary matrices against plink1.9 --r/--r2 run here on the shared PLINK
// datasets (with missing calls, a sample subset and a slice of a larger set); the same bits at
// 1 and 2 threads; the errors.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <array>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "colflow/colflow.hpp"
#include "colflow/kernels/genotype_kernels.hpp"
#include "kernels/genotype_products_internal.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

constexpr const char* plink19 = "/usr/bin/plink1.9";

#define REQUIRE_PLINK19()                \
  REQUIRE_SHARED_DATA();                 \
  if (!std::filesystem::exists(plink19)) \
  GTEST_SKIP() << "plink1.9 (" << plink19 << ") is not installed"

// Naive sums of a pair from the decoded dosages.
genotype_pair_sums naive(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b,
                         const std::vector<std::uint8_t>& keep) {
  genotype_pair_sums s;
  for (std::size_t i = 0; i < keep.size(); ++i) {
    const int x = test::dosage_at(a, i), y = test::dosage_at(b, i);
    if (!keep[i] || x < 0 || y < 0) continue;
    ++s.n;
    s.sum_a += static_cast<std::uint64_t>(x);
    s.sum_b += static_cast<std::uint64_t>(y);
    s.sum_aa += static_cast<std::uint64_t>(x * x);
    s.sum_bb += static_cast<std::uint64_t>(y * y);
    s.sum_ab += static_cast<std::uint64_t>(x * y);
  }
  return s;
}

bool operator==(const genotype_pair_sums& x, const genotype_pair_sums& y) {
  return x.n == y.n && x.sum_a == y.sum_a && x.sum_b == y.sum_b && x.sum_aa == y.sum_aa &&
         x.sum_bb == y.sum_bb && x.sum_ab == y.sum_ab;
}

TEST(LdKernelTest, PairSumsEqualANaiveDecodeOnEveryPath) {
  std::mt19937_64 rng(7);
  for (std::size_t n :
       {1u, 3u, 31u, 32u, 33u, 64u, 65u, 127u, 255u, 256u, 257u, 1000u, 2049u, 4001u}) {
    constexpr std::size_t cols = 7;
    std::vector<std::vector<std::uint8_t>> codes;
    for (std::size_t j = 0; j < cols; ++j) {
      codes.push_back(test::random_genotype_codes(n, 0.1 + 0.12 * static_cast<double>(j),
                                                  j % 3 == 0 ? 0 : 0.1, rng));
      // Non-zero padding must not count.
      if (n % 4 != 0) codes.back().back() |= static_cast<std::uint8_t>(0xff << (2 * (n % 4)));
    }
    for (bool subset : {false, true}) {
      std::vector<std::uint8_t> keep(n, 1);
      if (subset)
        for (std::size_t i = 0; i < n; ++i) keep[i] = (i % 3 != 1);
      const auto mask = make_sample_mask(keep);
      const std::size_t words = genotype_plane_words(n);
      std::vector<std::uint64_t> planes(cols * 3 * words);
      std::vector<const std::uint64_t*> p(cols);
      for (std::size_t j = 0; j < cols; ++j) {
        make_genotype_planes(
            codes[j], n,
            subset ? std::span<const std::uint8_t>(mask) : std::span<const std::uint8_t>(),
            planes.data() + j * 3 * words);
        p[j] = planes.data() + j * 3 * words;
      }
      std::vector<genotype_pair_sums> fast(cols * cols), portable(cols * cols);
      genotype_pair_products(p.data(), cols, p.data(), cols, words, fast.data());
      detail::genotype_pair_products_portable(p.data(), cols, p.data(), cols, words,
                                              portable.data());
      for (std::size_t i = 0; i < cols; ++i)
        for (std::size_t j = 0; j < cols; ++j) {
          const auto expected = naive(codes[i], codes[j], keep);
          EXPECT_TRUE(fast[i * cols + j] == expected)
              << genotype_pair_products_path() << " n=" << n << " pair " << i << "," << j;
          EXPECT_TRUE(portable[i * cols + j] == expected) << "portable n=" << n;
        }
      // The partial sums are the tile's: sum_ab, and |Oa∧Cb| = Σxa − |Ta∧Cb| where
      // |Ta∧Cb| = (Σxa² − Σxa) / 2; the dots sum_ab; on this CPU's path and the portable loop.
      std::vector<genotype_pair_partials> partials(cols), portable_partials(cols), dots(cols),
          portable_dots(cols);
      for (std::size_t i = 0; i < cols; ++i) {
        genotype_pair_partial_sums(p[i], p.data(), cols, words, partials.data());
        detail::genotype_pair_partial_sums_portable(p[i], p.data(), cols, words,
                                                    portable_partials.data());
        genotype_pair_dots(p[i], p.data(), cols, words, dots.data());
        detail::genotype_pair_dots_portable(p[i], p.data(), cols, words, portable_dots.data());
        for (std::size_t j = 0; j < cols; ++j) {
          const genotype_pair_sums& f = fast[i * cols + j];
          const std::uint64_t one_a = f.sum_a - (f.sum_aa - f.sum_a) / 2,
                              one_b = f.sum_b - (f.sum_bb - f.sum_b) / 2;
          for (const genotype_pair_partials& q : {partials[j], portable_partials[j]}) {
            EXPECT_EQ(q.sum_ab, f.sum_ab) << "n=" << n << " pair " << i << "," << j;
            EXPECT_EQ(q.one_a, one_a) << "n=" << n << " pair " << i << "," << j;
            EXPECT_EQ(q.one_b, one_b) << "n=" << n << " pair " << i << "," << j;
          }
          EXPECT_EQ(dots[j].sum_ab, f.sum_ab) << "n=" << n << " pair " << i << "," << j;
          EXPECT_EQ(portable_dots[j].sum_ab, f.sum_ab) << "portable n=" << n;
        }
      }
      // A column's plane counts are its called samples, Σ[x ≥ 1] and Σ[x = 2].
      for (std::size_t j = 0; j < cols; ++j) {
        const auto self = naive(codes[j], codes[j], keep);
        const std::uint64_t twos = (self.sum_aa - self.sum_a) / 2;
        const std::array<std::uint64_t, 3> expected = {self.n, self.sum_a - twos, twos};
        EXPECT_EQ(genotype_plane_counts(p[j], words), expected) << "n=" << n << " column " << j;
      }
      // A tile's entry is the entry of a call of one pair.
      genotype_pair_sums one;
      genotype_pair_products(&p[2], 1, &p[5], 1, words, &one);
      EXPECT_TRUE(one == fast[2 * cols + 5]);
    }
  }
}

// plink1.9 with `args` (and --keep-allele-order, so that A1 is the .bim's, as colflow's).
void run_plink19(const std::string& args) {
  std::string out;
  ASSERT_EQ(test::run_command(std::string(plink19) + " --keep-allele-order " + args, out), 0)
      << out;
}

// A whitespace-separated text matrix.
std::vector<std::vector<std::string>> read_matrix(const std::filesystem::path& file) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    rows.emplace_back();
    for (std::string f; fields >> f;) rows.back().push_back(f);
  }
  return rows;
}

std::vector<char> bytes_of(const std::filesystem::path& file) { return test::read_file(file); }

// One dataset: our store, our selection and plink's matching --keep/--extract.
struct dataset_case {
  std::string name, bfile;
  bool subset_samples = false;
  std::size_t columns = 0;  // 0: all; else the first `columns` variants
};

class LdVsPlinkTest : public ::testing::TestWithParam<dataset_case> {};

TEST_P(LdVsPlinkTest, TableSquareTriangleAndBinMatchPlink19) {
  REQUIRE_PLINK19();
  const dataset_case& c = GetParam();
  test::temp_dir dir;
  const std::string bfile = test::dataset(c.bfile);
  std::string out;
  const auto cf = dir / "s.cf";
  ASSERT_EQ(test::run_cli("preprocess --quiet --bed " + bfile + " --out " + cf.string(), out), 0)
      << out;
  const store s = store::open(cf);
  selection_files files;
  std::string plink_filter;
  if (c.subset_samples) {
    std::ofstream keep(dir / "keep.txt");
    const auto& samples = s.samples();
    for (std::size_t i = 0; i < samples.size(); ++i)
      if (i % 3 != 1) keep << samples[i].fid << " " << samples[i].iid << "\n";
    files.keep = dir / "keep.txt";
    plink_filter += " --keep " + files.keep.string();
  }
  if (c.columns > 0) {
    std::ofstream extract(dir / "extract.txt");
    for (std::size_t j = 0; j < c.columns && j < s.num_columns(); ++j)
      extract << s.columns()[j].id << "\n";
    files.extract = dir / "extract.txt";
    plink_filter += " --extract " + files.extract.string();
  }
  const selection sel = select(s, files);
  const auto theirs = [&](const std::string& flags, const std::string& prefix) {
    run_plink19("--bfile " + bfile + plink_filter + " " + flags + " --out " +
                (dir / prefix).string());
  };

  // Tables: the default window and threshold, every pair of the window, and inter-chr.
  struct table_case {
    std::string flags;
    ld_options options;
  };
  std::vector<table_case> tables;
  tables.push_back({"--r2", {}});
  {
    ld_options o;
    o.statistic = ld_statistic::r;
    o.min_r2 = 0;
    o.window = 25;
    o.window_kb = 200;
    tables.push_back({"--r --ld-window 25 --ld-window-kb 200 --ld-window-r2 0", o});
  }
  {
    ld_options o;
    o.inter_chr = true;
    o.min_r2 = 0.1;
    tables.push_back({"--r2 inter-chr --ld-window-r2 0.1", o});
  }
  for (const auto& t : tables) {
    theirs(t.flags, "p");
    const ld_result ours = ld(s, sel, t.options);
    const auto ref = test::read_table(dir / "p.ld");
    ASSERT_EQ(ours.pairs.size(), ref.rows.size()) << c.name << " " << t.flags;
    const std::size_t value = ref.header.size() - 1;
    for (std::size_t k = 0; k < ours.pairs.size(); ++k) {
      const ld_pair& p = ours.pairs[k];
      const auto& row = ref.rows[k];
      ASSERT_EQ(s.columns()[sel.columns[p.a]].id, row[2]) << t.flags << " row " << k;
      ASSERT_EQ(s.columns()[sel.columns[p.b]].id, row[5]) << t.flags << " row " << k;
      const double v = t.options.statistic == ld_statistic::r ? p.r : p.r2;
      EXPECT_TRUE(test::same_as_printed(v, row[value]))
          << c.name << " " << t.flags << " row " << k << ": " << v << " vs " << row[value];
    }
    // The command writes what write_ld writes, and its numbers are plink's to the digit.
    write_ld(s, sel, ours, dir / "ours");
    const auto written = test::read_table(dir / "ours.ld");
    EXPECT_EQ(written.header, ref.header);
    ASSERT_EQ(written.rows.size(), ref.rows.size());
  }

  // Matrices, text and binary.
  for (const std::string shape : {"square", "square0", "triangle"}) {
    for (const std::string stat : {"--r", "--r2"}) {
      ld_options o;
      o.statistic = stat == "--r" ? ld_statistic::r : ld_statistic::r2;
      o.shape = shape == "square"    ? ld_shape::square
                : shape == "square0" ? ld_shape::square0
                                     : ld_shape::triangle;
      theirs(stat + " " + shape, "m");
      const ld_result ours = ld(s, sel, o);
      write_ld(s, sel, ours, dir / "ours");
      const auto ref = read_matrix(dir / "m.ld");
      const auto mine = read_matrix(dir / "ours.ld");
      ASSERT_EQ(mine.size(), ref.size()) << shape << stat;
      std::size_t differ = 0;
      for (std::size_t i = 0; i < ref.size(); ++i) {
        ASSERT_EQ(mine[i].size(), ref[i].size()) << shape << stat << " row " << i;
        for (std::size_t j = 0; j < ref[i].size(); ++j) {
          const double v = mine[i][j] == "nan" ? std::nan("") : std::stod(mine[i][j]);
          const double exact =
              ref[i][j] == "0" && j > i ? 0 : ours.matrix[i * sel.columns.size() + j];
          if (!test::same_as_printed(exact, ref[i][j]) || !test::same_as_printed(v, ref[i][j]))
            if (++differ < 5)
              ADD_FAILURE() << c.name << " " << stat << " " << shape << " (" << i << ", " << j
                            << "): " << mine[i][j] << " vs plink " << ref[i][j];
        }
      }
      EXPECT_EQ(differ, 0u);
      // bin and bin4: the same numbers in binary, within a float's or a double's rounding.
      for (const std::string enc : {"bin", "bin4"}) {
        theirs(stat + " " + shape + " " + enc, "b");
        o.encoding = enc == "bin" ? ld_encoding::bin : ld_encoding::bin4;
        ld_result as_bin = ours;
        as_bin.options.encoding = o.encoding;
        write_ld(s, sel, as_bin, dir / "ours");
        const auto a = bytes_of(dir / "ours.ld.bin"), b = bytes_of(dir / "b.ld.bin");
        ASSERT_EQ(a.size(), b.size()) << shape << stat << enc;
        const std::size_t width = enc == "bin" ? 8 : 4;
        std::size_t far = 0;
        for (std::size_t k = 0; k < a.size(); k += width) {
          double x, y;
          if (width == 8) {
            std::memcpy(&x, a.data() + k, 8);
            std::memcpy(&y, b.data() + k, 8);
          } else {
            float fx, fy;
            std::memcpy(&fx, a.data() + k, 4);
            std::memcpy(&fy, b.data() + k, 4);
            x = fx;
            y = fy;
          }
          if (std::isnan(x) != std::isnan(y) ||
              (!std::isnan(x) && std::fabs(x - y) > (width == 8 ? 1e-12 : 1e-6)))
            if (++far < 5)
              ADD_FAILURE() << c.name << " " << stat << " " << shape << " " << enc << " value "
                            << k / width << ": " << x << " vs plink " << y;
        }
        EXPECT_EQ(far, 0u);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Datasets, LdVsPlinkTest,
    ::testing::Values(dataset_case{"SomeMissing", "bed-reader/some_missing", false, 0},
                      dataset_case{"SomeMissingKeep", "bed-reader/some_missing", true, 0},
                      dataset_case{"HapmapYri", "hapmap-yri/plinkhapmap", false, 400},
                      dataset_case{"Hapmap3Slice", "hapmap3/HapMap3", true, 300}),
    [](const auto& p) { return p.param.name; });

// The same bits at 1 and 2 threads and at any in-flight depth, table and matrix, on a store
// with missing calls and a sample subset.
TEST(LdTest, SameBitsAtAnyThreadCount) {
  test::temp_dir dir;
  column_encoding enc;
  test::write_genotype_store(dir / "g.cf", 301, 97, enc, 11);
  const store s = store::open(dir / "g.cf");
  selection sel = selection::all(s);
  for (std::size_t i = 0; i < sel.row_kept.size(); i += 4) sel.row_kept[i] = 0;
  sel.rows.clear();
  for (std::size_t i = 0; i < sel.row_kept.size(); ++i)
    if (sel.row_kept[i]) sel.rows.push_back(i);
  ld_options table;
  table.min_r2 = 0;
  table.window = 40;
  ld_options square;
  square.shape = ld_shape::square;
  square.statistic = ld_statistic::r;
  std::vector<ld_result> results;
  for (int threads : {1, 2}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    analysis_options a;
    a.stream.in_flight = static_cast<std::size_t>(threads);
    results.push_back(ld(s, sel, table, a));
    results.push_back(ld(s, sel, square, a));
  }
  ASSERT_FALSE(results[0].pairs.empty());
  ASSERT_EQ(results[0].pairs.size(), results[2].pairs.size());
  for (std::size_t k = 0; k < results[0].pairs.size(); ++k) {
    const ld_pair &x = results[0].pairs[k], &y = results[2].pairs[k];
    EXPECT_EQ(x.a, y.a);
    EXPECT_EQ(x.b, y.b);
    EXPECT_EQ(std::memcmp(&x.r, &y.r, sizeof x.r), 0);
    EXPECT_EQ(std::memcmp(&x.r2, &y.r2, sizeof x.r2), 0);
  }
  ASSERT_EQ(results[1].matrix.size(), results[3].matrix.size());
  EXPECT_EQ(std::memcmp(results[1].matrix.data(), results[3].matrix.data(),
                        results[1].matrix.size() * sizeof(double)),
            0);
  // The files too.
  write_ld(s, sel, results[0], dir / "a");
  write_ld(s, sel, results[2], dir / "b");
  EXPECT_EQ(test::read_file(dir / "a.ld"), test::read_file(dir / "b.ld"));
}

// Bit for bit, NaN equal to NaN.
bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  // memcmp is given no null pointer, even for no bytes (an empty vector's data() may be null).
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

bool same_result(const ld_result& x, const ld_result& y) {
  if (x.pairs.size() != y.pairs.size()) return false;
  for (std::size_t k = 0; k < x.pairs.size(); ++k) {
    const ld_pair &p = x.pairs[k], &q = y.pairs[k];
    if (p.a != q.a || p.b != q.b || std::memcmp(&p.r, &q.r, sizeof p.r) != 0 ||
        std::memcmp(&p.r2, &q.r2, sizeof p.r2) != 0)
      return false;
  }
  return same_bits(x.matrix, y.matrix) && same_bits(x.a1_freq, y.a1_freq) &&
         x.band_end == y.band_end;
}

// Processes (threads here) sharing the rows: every process holds one process's result.
TEST(LdTest, ProcessesShareTheRowsWithTheSameBits) {
  test::temp_dir dir;
  test::write_genotype_store(dir / "g.cf", 211, 61, column_encoding{}, 3);
  const store s = store::open(dir / "g.cf");
  const selection sel = selection::all(s);
  std::vector<ld_options> shapes(4);
  shapes[0].min_r2 = 0.01;
  shapes[0].window = 20;
  shapes[0].with_freqs = true;
  shapes[1].inter_chr = true;
  shapes[1].min_r2 = 0.02;
  shapes[2].shape = ld_shape::band;
  shapes[2].window = 9;
  shapes[3].shape = ld_shape::square;
  shapes[3].statistic = ld_statistic::r;
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    const ld_result one = ld(s, sel, shapes[k]);
    for (const std::size_t size : {2u, 3u}) {
      std::vector<ld_result> got(size);
      test::on_processes(
          size, [&](std::size_t r, analysis_options& a) { got[r] = ld(s, sel, shapes[k], a); });
      for (std::size_t r = 0; r < size; ++r)
        EXPECT_TRUE(same_result(got[r], one)) << "shape " << k << ", rank " << r << " of " << size;
    }
  }
}

// A dosage store of the same hard calls gives the genotype store's correlations; fractional
// dosages give the correlation over the samples with a dosage in both, computed plainly.
TEST(LdTest, DosageStoresMatchTheGenotypeStoreAndAPlainComputation) {
  test::temp_dir dir;
  const std::size_t n = 203, m = 23;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0, 1);
  writer_options options;
  options.rows = n;
  options.source = "test";
  options.type = value_type::genotype;
  store_writer g(dir / "g.cf", options, test::numbered_samples(n));
  options.type = value_type::dosage;
  store_writer d(dir / "d.cf", options, test::numbered_samples(n));
  store_writer f(dir / "f.cf", options, test::numbered_samples(n));
  std::vector<std::vector<double>> fractional;
  const column_encoding e{codec_id::zstd, 3, false};
  for (std::size_t j = 0; j < m; ++j) {
    const auto codes = test::random_genotype_codes(n, 0.1 + 0.8 * u(rng), 0.08, rng);
    std::vector<std::uint16_t> hard(n), soft(n);
    std::vector<double> x(n);
    for (std::size_t i = 0; i < n; ++i) {
      const int c = test::dosage_at(codes, i);
      hard[i] = c < 0 ? dosage_missing : static_cast<std::uint16_t>(c * dosage_one);
      soft[i] =
          u(rng) < 0.08 ? dosage_missing : static_cast<std::uint16_t>(u(rng) * dosage_max + 0.5);
      x[i] = soft[i] == dosage_missing ? std::nan("") : double(soft[i]) / dosage_one;
    }
    const column_info info = test::numbered_column(j);
    g.append(encode_genotype_column(codes, n, e), info);
    d.append(encode_dosage_column(hard, e), info);
    f.append(encode_dosage_column(soft, e), info);
    fractional.push_back(std::move(x));
  }
  g.finish();
  d.finish();
  f.finish();
  const store gs = store::open(dir / "g.cf"), ds = store::open(dir / "d.cf"),
              fs = store::open(dir / "f.cf");
  ld_options o;
  o.shape = ld_shape::square;
  o.statistic = ld_statistic::r;
  const ld_result a = ld(gs, selection::all(gs), o), b = ld(ds, selection::all(ds), o),
                  c = ld(fs, selection::all(fs), o);
  ASSERT_EQ(a.matrix.size(), b.matrix.size());
  for (std::size_t k = 0; k < a.matrix.size(); ++k) {
    if (std::isnan(a.matrix[k]))
      EXPECT_TRUE(std::isnan(b.matrix[k])) << k;
    else
      EXPECT_NEAR(a.matrix[k], b.matrix[k], 1e-12) << k;
  }
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < m; ++j) {
      if (i == j) {
        EXPECT_EQ(c.matrix[i * m + j], 1);
        continue;
      }
      std::vector<double> x, y;
      for (std::size_t k = 0; k < n; ++k)
        if (!std::isnan(fractional[i][k]) && !std::isnan(fractional[j][k])) {
          x.push_back(fractional[i][k]);
          y.push_back(fractional[j][k]);
        }
      double mx = 0, my = 0;
      for (std::size_t k = 0; k < x.size(); ++k) {
        mx += x[k] / double(x.size());
        my += y[k] / double(x.size());
      }
      double sxy = 0, sxx = 0, syy = 0;
      for (std::size_t k = 0; k < x.size(); ++k) {
        sxy += (x[k] - mx) * (y[k] - my);
        sxx += (x[k] - mx) * (x[k] - mx);
        syy += (y[k] - my) * (y[k] - my);
      }
      EXPECT_NEAR(c.matrix[i * m + j], sxy / std::sqrt(sxx * syy), 1e-9) << i << "," << j;
    }
}

// The band: the square matrix's values in the window of each row, in the documented file.
TEST(LdTest, BandHoldsTheWindowOfTheSquareMatrix) {
  test::temp_dir dir;
  column_encoding enc;
  test::write_genotype_store(dir / "g.cf", 157, 41, enc, 9);
  const store s = store::open(dir / "g.cf");
  const selection sel = selection::all(s);
  ld_options sq;
  sq.shape = ld_shape::square;
  sq.statistic = ld_statistic::r;
  const ld_result square = ld(s, sel, sq);
  ld_options o = sq;
  o.shape = ld_shape::band;
  o.window = 6;
  o.window_kb = 0.003;  // positions 1 bp apart (numbered_column): 3 bp limit before 6 variants
  const ld_result band = ld(s, sel, o);
  const std::size_t m = sel.columns.size();
  ASSERT_EQ(band.band_end.size(), m);
  std::size_t k = 0;
  for (std::size_t i = 0; i < m; ++i) {
    EXPECT_EQ(band.band_end[i], std::min(m, i + 4)) << i;  // 3 bp: three further variants
    for (std::size_t j = i; j < band.band_end[i]; ++j, ++k) {
      const double a = band.matrix[k], b = square.matrix[i * m + j];
      EXPECT_TRUE(std::memcmp(&a, &b, sizeof a) == 0) << i << "," << j;
    }
  }
  ASSERT_EQ(k, band.matrix.size());
  o.encoding = ld_encoding::bin4;
  ld_result as_float = band;
  as_float.options.encoding = ld_encoding::bin4;
  EXPECT_EQ(write_ld(s, sel, as_float, dir / "x"), dir / "x.ldband");
  const auto bytes = test::read_file(dir / "x.ldband");
  ASSERT_EQ(bytes.size(), 40 + 8 * m + 4 * k);
  EXPECT_EQ(std::string(bytes.data(), 8), "CFLDBAND");
  std::uint32_t version, width, statistic;
  std::uint64_t n, values, end0;
  std::memcpy(&version, bytes.data() + 8, 4);
  std::memcpy(&width, bytes.data() + 12, 4);
  std::memcpy(&n, bytes.data() + 16, 8);
  std::memcpy(&values, bytes.data() + 24, 8);
  std::memcpy(&statistic, bytes.data() + 32, 4);
  std::memcpy(&end0, bytes.data() + 40, 8);
  EXPECT_EQ(version, 1u);
  EXPECT_EQ(width, 4u);
  EXPECT_EQ(n, m);
  EXPECT_EQ(values, k);
  EXPECT_EQ(statistic, 0u);
  EXPECT_EQ(end0, 4u);
  float second;
  std::memcpy(&second, bytes.data() + 40 + 8 * m + 4, 4);
  const float want = static_cast<float>(band.matrix[1]);
  EXPECT_TRUE(std::memcmp(&second, &want, 4) == 0 || (std::isnan(second) && std::isnan(want)));
  EXPECT_EQ(test::read_table(dir / "x.ldband.vars").rows.size(), m);
}

// A genotype store of random codes whose variants sit at the given chromosomes and cM.
void write_mapped_store(const std::filesystem::path& path, std::uint64_t n,
                        const std::vector<std::pair<std::string, std::string>>& chrom_cm) {
  writer_options o;
  o.type = value_type::genotype;
  o.rows = n;
  store_writer w(path, o, test::numbered_samples(n));
  std::mt19937_64 rng(17);
  for (std::size_t j = 0; j < chrom_cm.size(); ++j) {
    column_info c = test::numbered_column(j);
    c.chrom = chrom_cm[j].first;
    c.cm = chrom_cm[j].second;
    const auto codes = test::random_genotype_codes(n, 0.3, 0.05, rng);
    w.append(encode_genotype_column(codes, n, column_encoding{}), c);
  }
  w.finish();
}

// --ld-window-cm: the window follows the genetic map, chromosome by chromosome, in place of the
// base pairs; the band's values are the square matrix's.
TEST(LdTest, CentimorganWindowFollowsTheGeneticMap) {
  test::temp_dir dir;
  std::vector<std::pair<std::string, std::string>> map;
  std::vector<double> cm;
  for (std::size_t j = 0; j < 30; ++j) {
    cm.push_back(j < 18 ? 0.25 * static_cast<double>(j * j % 7 + j) : 0.5 * static_cast<double>(j));
    map.emplace_back(j < 18 ? "1" : "2", std::to_string(cm.back()));
  }
  write_mapped_store(dir / "g.cf", 90, map);
  const store s = store::open(dir / "g.cf");
  const selection sel = selection::all(s);
  ld_options sq;
  sq.shape = ld_shape::square;
  const ld_result square = ld(s, sel, sq);
  ld_options o;
  o.shape = ld_shape::band;
  o.window = 1000;
  o.window_cm = 1.5;
  const ld_result band = ld(s, sel, o);
  std::size_t k = 0;
  for (std::size_t i = 0; i < cm.size(); ++i) {
    std::size_t end = i + 1;  // stops at the first variant too far or on another chromosome
    while (end < cm.size() && (end < 18) == (i < 18) && cm[end] - cm[i] <= 1.5) ++end;
    EXPECT_EQ(band.band_end[i], end) << i;
    for (std::size_t j = i; j < band.band_end[i]; ++j, ++k)
      EXPECT_TRUE(std::memcmp(&band.matrix[k], &square.matrix[i * cm.size() + j], 8) == 0);
  }
  // The table's pairs are the band's, less the diagonal.
  o.shape = ld_shape::table;
  o.min_r2 = 0;
  const ld_result table = ld(s, sel, o);
  std::size_t pairs = 0;
  for (std::size_t i = 0; i < cm.size(); ++i) pairs += band.band_end[i] - i - 1;
  EXPECT_EQ(table.pairs.size(), pairs);

  // No map (every variant at 0 cM), a position that is not a number, and a bad distance.
  write_mapped_store(dir / "flat.cf", 20, {{"1", "0"}, {"1", "0"}, {"1", "0"}});
  write_mapped_store(dir / "bad.cf", 20, {{"1", "0.5"}, {"1", "x"}});
  for (const auto& [name, message] :
       {std::pair{"flat.cf", "has no genetic map"}, std::pair{"bad.cf", "has no position in cM"}}) {
    const store f = store::open(dir / name);
    try {
      ld(f, selection::all(f), o);
      ADD_FAILURE() << name << ": no error";
    } catch (const error& e) {
      EXPECT_NE(std::string(e.what()).find("--ld-window-cm"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
  o.window_cm = -1;
  EXPECT_THROW(check_ld_options(o), error);
  o.window_cm = 2;
  o.inter_chr = true;
  EXPECT_THROW(check_ld_options(o), error);
}

TEST(LdTest, ErrorsNameTheOptionAndWriteNothing) {
  test::temp_dir dir;
  column_encoding enc;
  test::write_genotype_store(dir / "g.cf", 40, 10, enc, 3);
  const store s = store::open(dir / "g.cf");
  const auto expect_error = [&](ld_options o, const std::string& named) {
    try {
      ld(s, selection::all(s), o);
      ADD_FAILURE() << "no error for " << named;
    } catch (const error& e) {
      EXPECT_EQ(e.code(), errc::invalid_argument);
      EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
    }
  };
  ld_options o;
  o.window = 0;
  expect_error(o, "--ld-window");
  o.window = -3;
  expect_error(o, "--ld-window");
  o = {};
  o.window_kb = 0;
  expect_error(o, "--ld-window-kb");
  o = {};
  o.min_r2 = 1.5;
  expect_error(o, "--ld-window-r2");
  o = {};
  o.shape = ld_shape::square;
  o.inter_chr = true;
  expect_error(o, "inter-chr");

  // A dense store has no variants.
  test::write_float_store(dir / "f.cf", value_type::float64, 20, 4, enc, 1);
  const store f = store::open(dir / "f.cf");
  EXPECT_THROW(ld(f, selection::all(f), ld_options{}), error);

  // The command: a clear message, exit 1, no file.
  std::string out;
  const std::string base =
      "ld " + (dir / "g.cf").string() + " --quiet --out " + (dir / "x").string();
  EXPECT_NE(test::run_cli(base + " --r2 --ld-window 0", out), 0);
  EXPECT_NE(out.find("--ld-window"), std::string::npos) << out;
  EXPECT_NE(test::run_cli(base + " --r2 --ld-window-kb -1", out), 0);
  EXPECT_NE(out.find("--ld-window-kb"), std::string::npos) << out;
  EXPECT_NE(test::run_cli(base + " --r2 dprime", out), 0);
  EXPECT_NE(out.find("dprime"), std::string::npos) << out;
  EXPECT_NE(test::run_cli(base, out), 0);
  EXPECT_NE(out.find("--r"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(dir / "x.ld"));
  // And a run that works.
  ASSERT_EQ(test::run_cli(base + " --r2 square bin4", out), 0) << out;
  EXPECT_EQ(std::filesystem::file_size(dir / "x.ld.bin"), 10u * 10u * 4u);
  ASSERT_EQ(test::run_cli(base + " --r --ld-window-r2 0", out), 0) << out;
  EXPECT_TRUE(std::filesystem::exists(dir / "x.ld"));
}

}  // namespace
}  // namespace colflow
