// colflow pca: randomised SVD against an exact eigendecomposition (hapmap3 and planted
// structure), against plink2 --pca, loadings, subsets, determinism and errors.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <Eigen/Eigenvalues>
#include <cmath>
#include <fstream>
#include <random>

#include "colflow/colflow.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

struct exact_pca {
  Eigen::VectorXd values;   // decreasing, of ZZ'/M
  Eigen::MatrixXd vectors;  // matching unit eigenvectors
};

exact_pca exact(const Eigen::MatrixXd& z, std::size_t used, Eigen::Index k) {
  Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(z.rows(), z.rows());
  gram.selfadjointView<Eigen::Lower>().rankUpdate(z);
  gram.triangularView<Eigen::StrictlyUpper>() = gram.transpose();
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(gram);
  exact_pca e;
  e.values.resize(k);
  e.vectors.resize(z.rows(), k);
  for (Eigen::Index i = 0; i < k; ++i) {
    e.values[i] = eig.eigenvalues()[z.rows() - 1 - i] / static_cast<double>(used);
    e.vectors.col(i) = eig.eigenvectors().col(z.rows() - 1 - i);
  }
  return e;
}

double abs_correlation(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  const Eigen::VectorXd x = a.array() - a.mean(), y = b.array() - b.mean();
  return std::fabs(x.dot(y) / std::sqrt(x.squaredNorm() * y.squaredNorm()));
}

void expect_matches(const pca_result& r, const exact_pca& e, double rel, double corr,
                    const std::string& what) {
  ASSERT_EQ(r.eigenvalues.size(), e.values.size()) << what;
  for (Eigen::Index i = 0; i < e.values.size(); ++i) {
    EXPECT_NEAR(r.eigenvalues[i], e.values[i], rel * e.values[i]) << what << " PC" << i + 1;
    EXPECT_GE(abs_correlation(r.eigenvectors.col(i), e.vectors.col(i)), corr)
        << what << " PC" << i + 1;
    EXPECT_NEAR(r.eigenvectors.col(i).norm(), 1.0, 1e-10) << what;
  }
}

TEST(PcaTest, HapMap3TopFiveMatchAnExactDecomposition) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  std::string out;
  ASSERT_EQ(test::run_cli("preprocess --quiet --bed " + test::dataset("hapmap3/HapMap3") +
                              " --out " + (dir / "h.cf").string(),
                          out),
            0)
      << out;
  const store s = store::open(dir / "h.cf");
  const selection sel = selection::all(s);
  // The default options (hwe scaling is checked against plink2's exact PCA below).
  pca_options o;
  o.components = 5;
  const pca_result r = principal_components(s, sel, o);
  std::size_t used = 0;
  const Eigen::MatrixXd z = test::standardized_matrix(s, sel, false, used);
  EXPECT_EQ(r.columns_used, used);
  EXPECT_EQ(r.passes, 2 + o.power_iterations);
  expect_matches(r, exact(z, used, 5), 1e-3, 0.999, "hapmap3");

  // Ten components: the five beyond lie in the bulk of the spectrum and converge slowly. Each
  // residual bounds its eigenvalue's error, and is large exactly where the error is.
  o.components = 10;
  const pca_result ten = principal_components(s, sel, o);
  const exact_pca e = exact(z, used, 10);
  ASSERT_EQ(ten.residuals.size(), 10);
  for (Eigen::Index i = 0; i < 10; ++i)
    EXPECT_GE(ten.residuals[i], std::fabs(ten.eigenvalues[i] - e.values[i]) / e.values[i])
        << "PC" << i + 1;
  EXPECT_LT(ten.residuals[0], 1e-3);
  EXPECT_GT(ten.residuals[9], 1e-2);  // PC10 is 5-10% off with the default iterations
}

TEST(PcaTest, HweScalingEqualsPlink2Pca) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  const std::string name = test::dataset("hapmap3/HapMap3"), d = dir.path().string() + "/";
  std::string out;
  ASSERT_EQ(test::run_cli("preprocess --quiet --bed " + name + " --out " + d + "h.cf", out), 0)
      << out;
  // plink2 --pca uses the autosomes and the pseudo-autosomal XY (it skips X, Y and MT).
  {
    const store s = store::open(d + "h.cf");
    std::ofstream list(d + "autosomes.txt");
    for (const column_info& c : s.columns())
      if (c.chrom != "X" && c.chrom != "23" && c.chrom != "Y" && c.chrom != "24" &&
          c.chrom != "MT" && c.chrom != "26")
        list << c.id << "\n";
  }
  // Default iterations: within 1e-3; ten: PLINK's printed digits.
  ASSERT_EQ(test::run_cli("pca " + d + "h.cf --quiet --k 5 --scale hwe --digits 10 --extract " + d +
                              "autosomes.txt --out " + d + "c",
                          out),
            0)
      << out;
  ASSERT_EQ(
      test::run_cli("pca " + d +
                        "h.cf --quiet --k 5 --scale hwe --digits 10 --iterations 10 --extract " +
                        d + "autosomes.txt --out " + d + "c10",
                    out),
      0)
      << out;
  const std::string p2 = test::plink2_input(name, dir.path());
  // 'meanimpute': missing calls count as the mean, as in colflow (docs/DESIGN.md §2). Without it,
  // plink2 rescales each pair of samples by the variants both have called, which is not a
  // product with one standardised matrix; the two differ by 0.2-0.4% on hapmap3's eigenvalues.
  test::run_plink2("--bfile " + p2 + " --pca 5 meanimpute --out " + d + "pm");
  test::run_plink2("--bfile " + p2 + " --pca 5 --out " + d + "pp");
  const auto values = [](const std::string& f) {
    std::ifstream in(f);
    std::vector<double> v;
    for (double x; in >> x;) v.push_back(x);
    return v;
  };
  const auto ours = values(d + "c.eigenval"), ours10 = values(d + "c10.eigenval"),
             mean_imputed = values(d + "pm.eigenval"), pairwise = values(d + "pp.eigenval");
  ASSERT_EQ(ours.size(), 5u);
  ASSERT_EQ(mean_imputed.size(), 5u);
  ASSERT_EQ(pairwise.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_NEAR(ours[i], mean_imputed[i], 1e-3 * mean_imputed[i]) << "PC" << i + 1;
    EXPECT_NEAR(ours10[i], mean_imputed[i], 6e-6 * mean_imputed[i]) << "PC" << i + 1;
    EXPECT_NEAR(ours[i], pairwise[i], 5e-3 * pairwise[i]) << "PC" << i + 1;
  }
  const test::text_table a = test::read_table(d + "c.eigenvec"),
                         m = test::read_table(d + "pm.eigenvec"),
                         p = test::read_table(d + "pp.eigenvec");
  ASSERT_EQ(a.rows.size(), 957u);
  ASSERT_EQ(m.rows.size(), 957u);
  for (std::size_t c = 0; c < 5; ++c) {
    Eigen::VectorXd x(957), y(957), w(957);
    for (std::size_t i = 0; i < 957; ++i) {
      x[static_cast<Eigen::Index>(i)] = std::stod(a.rows[i][2 + c]);
      y[static_cast<Eigen::Index>(i)] = std::stod(m.rows[i][2 + c]);
      w[static_cast<Eigen::Index>(i)] = std::stod(p.rows[i][2 + c]);
    }
    EXPECT_GE(abs_correlation(x, y), 0.999) << "PC" << c + 1 << " vs --pca meanimpute";
    EXPECT_GE(abs_correlation(x, w), 0.999) << "PC" << c + 1 << " vs --pca";
  }
}

// Genotypes of three populations with different allele frequencies: two clear components.
void write_structured_store(const std::filesystem::path& path, std::uint64_t n, std::uint64_t m) {
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> unif;
  store_writer w(path, writer_options{value_type::genotype, n, false, "test", {}},
                 test::numbered_samples(n));
  for (std::uint64_t j = 0; j < m; ++j) {
    const double p0 = 0.05 + 0.9 * unif(rng);
    const double p1 = std::clamp(p0 + 0.8 * (unif(rng) - 0.5), 0.01, 0.99);
    const double p2 = std::clamp(p0 - 0.8 * (unif(rng) - 0.5), 0.01, 0.99);
    std::vector<std::uint8_t> codes(genotype_column_bytes(n), 0);
    for (std::uint64_t i = 0; i < n; ++i) {
      const double p = i < n / 3 ? p0 : i < 2 * n / 3 ? p1 : p2;
      const int d = (unif(rng) < p) + (unif(rng) < p);
      const unsigned code = unif(rng) < 0.02 ? 1u : d == 2 ? 0u : d == 1 ? 2u : 3u;
      codes[i / 4] = static_cast<std::uint8_t>(codes[i / 4] | (code << (2 * (i % 4))));
    }
    if (j == 7) std::fill(codes.begin(), codes.end(), std::uint8_t{0xff});  // monomorphic
    w.append(encode_genotype_column(codes, n, column_encoding{codec_id::zstd, 1}),
             test::numbered_column(j));
  }
  w.finish();
}

TEST(PcaTest, SubsetsLoadingsAndThreadCountsGiveTheExactAnswer) {
  test::temp_dir dir;
  const std::uint64_t n = 150, m = 400;
  write_structured_store(dir / "g.cf", n, m);
  const store s = store::open(dir / "g.cf");
  selection sel = selection::all(s);
  sel.rows.clear();
  for (std::size_t i = 0; i < n; ++i) {
    sel.row_kept[i] = i % 7 != 3;
    if (sel.row_kept[i]) sel.rows.push_back(i);
  }
  sel.columns.clear();
  for (std::size_t j = 0; j < m; ++j)
    if (j % 5 != 1) sel.columns.push_back(j);
  pca_options o;
  o.components = 2;
  o.power_iterations = 8;
  o.loadings = true;
  o.block_columns = 16;  // several blocks and a partial one
  const pca_result r = principal_components(s, sel, o);
  std::size_t used = 0;
  const Eigen::MatrixXd z = test::standardized_matrix(s, sel, false, used);
  EXPECT_EQ(used, sel.columns.size() - 1);  // column 7 is constant
  expect_matches(r, exact(z, used, 2), 1e-6, 0.99999, "subset");
  ASSERT_EQ(r.eigenvectors.rows(), static_cast<Eigen::Index>(sel.rows.size()));
  // Loadings are the unit right singular vectors: Zᵀu = σv (by construction) and Zv ≈ σu.
  ASSERT_EQ(r.loadings.rows(), static_cast<Eigen::Index>(sel.columns.size()));
  for (Eigen::Index i = 0; i < 2; ++i) {
    const double sigma = std::sqrt(r.eigenvalues[i] * static_cast<double>(used));
    EXPECT_NEAR(r.loadings.col(i).norm(), 1.0, 1e-6);
    EXPECT_LT((z.transpose() * r.eigenvectors.col(i) - sigma * r.loadings.col(i)).norm(),
              1e-9 * sigma);
    EXPECT_LT((z * r.loadings.col(i) - sigma * r.eigenvectors.col(i)).norm(), 1e-3 * sigma);
  }
  // The sign convention: the largest entry of each eigenvector is positive.
  for (Eigen::Index i = 0; i < 2; ++i) {
    Eigen::Index at = 0;
    r.eigenvectors.col(i).cwiseAbs().maxCoeff(&at);
    EXPECT_GT(r.eigenvectors(at, i), 0);
  }
  // Any thread count, in-flight depth or block grouping of the stream: the same bits.
  tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
  analysis_options a;
  a.stream.in_flight = 1;
  a.stream.block_bytes = 64;
  const pca_result serial = principal_components(s, sel, o, a);
  EXPECT_EQ(serial.eigenvalues, r.eigenvalues);
  EXPECT_EQ(serial.eigenvectors, r.eigenvectors);
  EXPECT_EQ(serial.loadings, r.loadings);
}

TEST(PcaTest, DenseStoresAndBadRequests) {
  test::temp_dir dir;
  test::write_float_store(dir / "f.cf", value_type::float32, 40, 30,
                          column_encoding{codec_id::zstd, 3, true});
  const store f = store::open(dir / "f.cf");
  pca_options o;
  o.components = 4;
  o.power_iterations = 10;
  const pca_result r = principal_components(f, selection::all(f), o);
  std::size_t used = 0;
  const Eigen::MatrixXd z = test::standardized_matrix(f, selection::all(f), false, used);
  expect_matches(r, exact(z, used, 4), 1e-4, 0.999, "dense");

  o.scaling = pca_scaling::hwe;
  EXPECT_THROW(principal_components(f, selection::all(f), o), error);
  o.scaling = pca_scaling::standardized;
  o.components = 41;
  EXPECT_THROW(principal_components(f, selection::all(f), o), error);
  o.components = 0;
  EXPECT_THROW(principal_components(f, selection::all(f), o), error);

  std::string out;
  EXPECT_EQ(test::run_cli("pca " + (dir / "f.cf").string() + " --k 5 --scale hwe --out " +
                              (dir / "p").string(),
                          out),
            1);
  EXPECT_NE(out.find("hwe scaling needs a genotype or dosage store"), std::string::npos) << out;
  ASSERT_EQ(test::run_cli("pca " + (dir / "f.cf").string() + " --k 2 --loadings --out " +
                              (dir / "p").string(),
                          out),
            0)
      << out;
  EXPECT_EQ(test::read_table(dir / "p.eigenvec").rows.size(), 40u);
  EXPECT_EQ(test::read_table(dir / "p.eigenvec").header,
            (std::vector<std::string>{"FID", "IID", "PC1", "PC2"}));
  EXPECT_EQ(test::read_table(dir / "p.loadings.tsv").rows.size(), 30u);
}

}  // namespace
}  // namespace colflow
