// The results the library reports besides the analyses' own figures (BayesR's h² summary and
// per-allele effects, penalised per-unit coefficients and unconverged λ values) and the result
// writers: the same bytes as the colflow command, staged outputs, refused requests.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "colflow/colflow.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

std::string file_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

bayesr_sample sample_at(std::size_t iteration, double h2, std::size_t nonzero) {
  bayesr_sample s;
  s.iteration = iteration;
  s.h2 = h2;
  s.nonzero = nonzero;
  s.pi = {0.9, 0.1};
  return s;
}

TEST(AnalysisOutputTest, BayesRSummaryCoversTheKeptIterationsAfterTheBurnIn) {
  bayesr_result r;
  r.burnin = 2;
  const double h2[] = {0.9, 0.8, 0.2, 0.4, 0.6, 0.3};
  const std::size_t nonzero[] = {50, 40, 3, 5, 4, 8};
  for (std::size_t t = 0; t < 6; ++t) r.trace.push_back(sample_at(t + 1, h2[t], nonzero[t]));
  const bayesr_summary s = summarize(r);
  EXPECT_EQ(s.kept, 4u);
  const double mean = (0.2 + 0.4 + 0.6 + 0.3) / 4;
  EXPECT_NEAR(s.h2.mean, mean, 1e-15);
  double squares = 0;
  for (double x : {0.2, 0.4, 0.6, 0.3}) squares += (x - mean) * (x - mean);
  EXPECT_NEAR(s.h2.sd, std::sqrt(squares / 3), 1e-12);  // the sample SD: n - 1
  EXPECT_NEAR(s.nonzero.mean, 5.0, 1e-15);

  // A thinned trace: only its entries past the burn-in count.
  r.burnin = 3;
  r.trace = {sample_at(2, 0.9, 1), sample_at(4, 0.5, 2), sample_at(6, 0.7, 6)};
  const bayesr_summary t = summarize(r);
  EXPECT_EQ(t.kept, 2u);
  EXPECT_NEAR(t.h2.mean, 0.6, 1e-15);
  EXPECT_NEAR(t.h2.sd, std::sqrt(0.02), 1e-12);
  EXPECT_NEAR(t.nonzero.mean, 4.0, 1e-15);

  // One kept iteration has no spread; none has no summary.
  r.trace = {sample_at(4, 0.5, 2)};
  EXPECT_EQ(summarize(r).h2.sd, 0.0);
  r.trace = {sample_at(3, 0.5, 2)};
  const bayesr_summary none = summarize(r);
  EXPECT_EQ(none.kept, 0u);
  EXPECT_TRUE(std::isnan(none.h2.mean));
  EXPECT_TRUE(std::isnan(none.h2.sd));
  EXPECT_TRUE(std::isnan(none.nonzero.mean));
}

TEST(AnalysisOutputTest, BayesRPerUnitEffectsScaleByThePhenotypeAndColumnSd) {
  bayesr_result r;
  r.phenotype_sd = 3.0;
  r.columns.resize(3);
  r.columns[0].sd = 2.0;
  r.columns[1].sd = 0.0;  // constant
  r.columns[2].sd = 0.5;
  r.beta_mean = {0.1, 0.2, -0.3};
  r.beta_sd = {0.01, 0.02, 0.03};
  const bayesr_per_unit_effects e = per_unit_effects(r);
  ASSERT_EQ(e.beta_mean.size(), 3u);
  EXPECT_DOUBLE_EQ(e.beta_mean[0], 0.1 * 1.5);
  EXPECT_EQ(e.beta_mean[1], 0.0);
  EXPECT_DOUBLE_EQ(e.beta_mean[2], -0.3 * 6.0);
  EXPECT_DOUBLE_EQ(e.beta_sd[0], 0.01 * 1.5);
  EXPECT_EQ(e.beta_sd[1], 0.0);
  EXPECT_DOUBLE_EQ(e.beta_sd[2], 0.03 * 6.0);
  r.beta_sd.pop_back();
  EXPECT_THROW(per_unit_effects(r), error);
}

TEST(AnalysisOutputTest, PenalizedPerUnitCoefficientsAndUnconvergedLambdas) {
  penalized_result fit;
  fit.columns.resize(2);
  fit.columns[0].sd = 0.25;
  fit.columns[1].sd = 0.0;
  EXPECT_DOUBLE_EQ(per_unit_coefficient(fit, 0, 0.5), 2.0);
  EXPECT_EQ(per_unit_coefficient(fit, 1, 0.5), 0.0);
  EXPECT_THROW(per_unit_coefficient(fit, 2, 0.5), error);
  fit.path.resize(4);
  fit.path[0].converged = fit.path[2].converged = true;
  EXPECT_EQ(unconverged_lambdas(fit), 2u);
}

// A store, a phenotype file and the command's and the library's outputs side by side.
struct outputs : ::testing::Test {
  test::temp_dir dir;
  std::string d = dir.path().string() + "/";
  std::filesystem::path store_path = dir / "g.cf";
  std::filesystem::path pheno_path = dir / "y.phen";
  store s;
  selection all;
  phenotype_table pheno;
  std::vector<double> y;

  outputs() : s(make(store_path)), all(selection::all(s)) {
    std::ofstream out(pheno_path);
    out << "FID IID Y1 Y/2\n";
    std::mt19937_64 rng(5);
    std::normal_distribution<double> noise;
    for (const sample_info& sample : s.samples())
      out << sample.fid << " " << sample.iid << " " << noise(rng) << " " << noise(rng) << "\n";
    out.close();
    pheno = read_phenotypes(pheno_path, s.samples());
    y.assign(pheno.values.col(0).data(), pheno.values.col(0).data() + pheno.values.rows());
  }
  static store make(const std::filesystem::path& p) {
    test::write_genotype_store(p, 211, 37, column_encoding{codec_id::zstd, 1}, 4);
    return store::open(p);
  }
  void command(const std::string& args) {
    std::string out;
    ASSERT_EQ(test::run_cli(args + " --quiet", out), 0) << args << "\n" << out;
  }
  void expect_same(const std::string& command_file, const std::string& library_file) {
    const std::string a = file_text(d + command_file), b = file_text(d + library_file);
    EXPECT_FALSE(a.empty()) << command_file;
    EXPECT_EQ(a, b) << command_file << " and " << library_file << " differ";
  }
};

TEST_F(outputs, StatsTableIsTheCommands) {
  command("stats " + store_path.string() + " --out " + d + "c.stats.tsv --digits 8");
  write_stats(s, all, column_summaries(s, all), d + "l.stats.tsv", 8);
  expect_same("c.stats.tsv", "l.stats.tsv");
  const test::text_table t = test::read_table(d + "l.stats.tsv");
  EXPECT_EQ(t.rows.size(), 37u);
}

TEST_F(outputs, AssocTablesAreTheCommands) {
  command("assoc " + store_path.string() + " --pheno " + pheno_path.string() + " --out " + d + "c");
  assoc_writer tables(s, pheno.names, d + "l");
  linear_association(s, all, pheno, nullptr, tables.sink());
  const auto& files = tables.commit();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[1], std::filesystem::path(d + "l.Y_2.assoc.tsv"));  // '/' is not a directory
  expect_same("c.Y1.assoc.tsv", "l.Y1.assoc.tsv");
  expect_same("c.Y_2.assoc.tsv", "l.Y_2.assoc.tsv");
}

TEST_F(outputs, PcaFilesAreTheCommands) {
  command("pca " + store_path.string() + " --k 3 --loadings --out " + d + "c");
  pca_options o;
  o.components = 3;
  o.loadings = true;
  const pca_files files = write_pca(s, all, principal_components(s, all, o), d + "l");
  EXPECT_EQ(files.loadings, std::filesystem::path(d + "l.loadings.tsv"));
  for (const char* suffix : {".eigenval", ".eigenvec", ".loadings.tsv"})
    expect_same(std::string("c") + suffix, std::string("l") + suffix);
  // Without loadings, no loadings file.
  o.loadings = false;
  EXPECT_TRUE(write_pca(s, all, principal_components(s, all, o), d + "m").loadings.empty());
  EXPECT_FALSE(std::filesystem::exists(d + "m.loadings.tsv"));
}

TEST_F(outputs, PenalizedFilesAreTheCommands) {
  command("lasso " + store_path.string() + " --pheno " + pheno_path.string() +
          " --nlambda 6 --out " + d + "c --predict " + store_path.string());
  command("ridge " + store_path.string() + " --pheno " + pheno_path.string() +
          " --nlambda 3 --out " + d + "cr");
  penalized_options o;
  o.n_lambda = 6;
  const penalized_result fit = penalized_regression(s, all, y, o);
  write_penalized(s, all, fit, d + "l");
  const column_match match = match_columns(s, all, s);
  EXPECT_EQ(write_predictions(s, fit, predict(s, fit, match), d + "l"),
            std::filesystem::path(d + "l.pred.tsv"));
  for (const char* suffix : {".coef.tsv", ".path.tsv", ".pred.tsv"})
    expect_same(std::string("c") + suffix, std::string("l") + suffix);
  o.alpha = 0;
  o.n_lambda = 3;
  const penalized_result ridge = penalized_regression(s, all, y, o);
  write_penalized(s, all, ridge, d + "lr", coefficient_rows::all);
  expect_same("cr.coef.tsv", "lr.coef.tsv");
  // Every column at every λ, zeros included.
  EXPECT_EQ(test::read_table(d + "lr.coef.tsv").rows.size(), 3u * 37u);
}

TEST_F(outputs, BayesRFilesAreTheCommandsAndSummariseThePosterior) {
  command("bayesr " + store_path.string() + " --pheno " + pheno_path.string() +
          " --iterations 12 --burnin 4 --thin 2 --out " + d + "c");
  bayesr_options o;
  o.iterations = 12;
  o.burnin = 4;
  o.thin = 2;
  const bayesr_result r = bayesr(s, all, y, o);
  write_bayesr(s, all, r, d + "l");
  expect_same("c.trace.tsv", "l.trace.tsv");
  expect_same("c.effects.tsv", "l.effects.tsv");
  expect_same("c.summary.tsv", "l.summary.tsv");
  EXPECT_EQ(summarize(r).kept, r.posterior_samples);
  EXPECT_EQ(summarize(r).kept, 4u);  // iterations 6, 8, 10, 12

  // A chain whose thinning kept nothing still names every class in the trace's header.
  o.iterations = 3;
  o.burnin = 0;
  o.thin = 5;
  const bayesr_result empty = bayesr(s, all, y, o);
  ASSERT_TRUE(empty.trace.empty());
  write_bayesr(s, all, empty, d + "e");
  EXPECT_EQ(file_text(d + "e.trace.tsv"),
            "ITER\tMU\tSIGMA2_G\tSIGMA2_E\tH2\tVAR_G\tNONZERO\tPI_0\tPI_1\tPI_2\tPI_3\n");
}

TEST_F(outputs, WritersRefuseBadDigitsAndResultsOfAnotherSelectionAndLeaveNothing) {
  const auto summaries = column_summaries(s, all);
  EXPECT_THROW(write_stats(s, all, summaries, d + "x.tsv", 0), error);
  EXPECT_THROW(write_stats(s, all, summaries, d + "x.tsv", 18), error);
  selection fewer = all;
  fewer.columns.pop_back();
  EXPECT_THROW(write_stats(s, fewer, summaries, d + "x.tsv"), error);
  EXPECT_FALSE(std::filesystem::exists(d + "x.tsv"));

  bayesr_options o;
  o.iterations = 2;
  o.burnin = 0;
  const bayesr_result r = bayesr(s, all, y, o);
  EXPECT_THROW(write_bayesr(s, fewer, r, d + "x"), error);
  EXPECT_FALSE(std::filesystem::exists(d + "x.trace.tsv"));
  EXPECT_FALSE(std::filesystem::exists(d + "x.summary.tsv"));

  {
    // An abandoned scan's tables never appear; a wrong number of results is refused.
    assoc_writer tables(s, pheno.names, d + "x");
    const assoc_result one[1];
    EXPECT_THROW(tables.add(0, 0, one), error);
  }
  EXPECT_FALSE(std::filesystem::exists(d + "x.Y1.assoc.tsv"));
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos)
        << entry.path() << " left behind";
}

}  // namespace
}  // namespace colflow
