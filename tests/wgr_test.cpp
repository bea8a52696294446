// Whole-genome regression and its LOCO files: results independent of threads and in-flight
// depth, the folds, the chromosome codes, and the refusals of bad options, traits and files.
// (Its values against numpy and regenie: python/tests/test_wgr_step1.py, test_wgr_step2.py and
// test_wgr.py.)
#include "colflow/analysis/wgr.hpp"

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <fstream>
#include <random>

#include "analysis/models/wgr/wgr_ridge_internal.hpp"
#include "colflow/colflow.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

class WgrTest : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_SHARED_DATA();
    path_ = dir_.path() / "toy.store";
    std::string out;
    ASSERT_EQ(test::run_cli("preprocess --bed " + test::dataset("bed-reader/toydata.5chrom") +
                                " --out " + path_.string(),
                            out),
              0)
        << out;
  }

  // Every 5th column (2,000 on chromosomes 1-5), two traits, one covariate.
  void load(const store& s, selection& sel, phenotype_table& traits, phenotype_table& covariates) {
    sel = selection::all(s);
    std::vector<std::size_t> some;
    for (std::size_t c = 0; c < sel.columns.size(); c += 5) some.push_back(sel.columns[c]);
    sel.columns = some;
    std::mt19937_64 rng(3);
    std::normal_distribution<double> normal;
    const auto n = static_cast<Eigen::Index>(s.num_rows());
    traits.names = {"T1", "T2"};
    traits.values.resize(n, 2);
    covariates.names = {"C1"};
    covariates.values.resize(n, 1);
    for (Eigen::Index i = 0; i < n; ++i) {
      traits.values(i, 0) = normal(rng);
      traits.values(i, 1) = i % 17 == 0 ? std::nan("") : normal(rng);
      covariates.values(i, 0) = normal(rng);
    }
  }

  test::temp_dir dir_;
  std::filesystem::path path_;
};

TEST_F(WgrTest, ResultsDoNotDependOnThreadsOrInFlightDepth) {
  const store s = store::open(path_);
  selection sel;
  phenotype_table traits, covariates;
  load(s, sel, traits, covariates);
  wgr_options o;
  o.block_size = 150;
  const auto run = [&](std::size_t threads, std::size_t in_flight) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    analysis_options a;
    a.stream.in_flight = in_flight;
    return whole_genome_regression(s, sel, traits, &covariates, o, a);
  };
  const wgr_result one = run(1, 1), many = run(4, 8);
  EXPECT_FALSE(one.leave_one_out);
  EXPECT_EQ(one.columns, 2000u);
  EXPECT_EQ(one.blocks, 15u);  // per chromosome ⌈m/150⌉: 569, 724, 420, 199, 88 columns
  EXPECT_EQ(one.rows.size(), s.num_rows());
  ASSERT_EQ(one.traits.size(), 2u);
  for (std::size_t p = 0; p < 2; ++p) {
    EXPECT_EQ(one.traits[p].chosen, many.traits[p].chosen);
    EXPECT_EQ(one.traits[p].level1_loss, many.traits[p].level1_loss);
    EXPECT_TRUE((one.traits[p].loco.array() == many.traits[p].loco.array()).all());
    // Chromosomes 6-23 have no column: their LOCO prediction is the whole prediction, the
    // same for all of them.
    EXPECT_TRUE((one.traits[p].loco.row(5).array() == one.traits[p].loco.row(22).array()).all());
    EXPECT_FALSE((one.traits[p].loco.row(0).array() == one.traits[p].loco.row(5).array()).all());
  }
  EXPECT_EQ(one.traits[1].values, s.num_rows() - (s.num_rows() + 16) / 17);

  o.validation = wgr_validation::leave_one_out;
  const wgr_result loo = run(1, 1), loo_many = run(4, 8);
  EXPECT_TRUE(loo.leave_one_out);
  EXPECT_TRUE(loo.fold_starts.empty());
  for (std::size_t p = 0; p < 2; ++p) {
    EXPECT_EQ(loo.traits[p].level1_loss, loo_many.traits[p].level1_loss);
    EXPECT_TRUE((loo.traits[p].loco.array() == loo_many.traits[p].loco.array()).all());
    EXPECT_NE(loo.traits[p].level1_loss, one.traits[p].level1_loss);
  }
}

TEST_F(WgrTest, CaseControlTraitsDoNotDependOnThreadsAndRefuseOtherValues) {
  const store s = store::open(path_);
  selection sel;
  phenotype_table traits, covariates;
  load(s, sel, traits, covariates);
  traits.names = {"B"};
  traits.values.conservativeResize(Eigen::NoChange, 1);
  traits.values = (traits.values.array() > 0.3).cast<double>();  // about 38% cases
  wgr_options o;
  o.block_size = 150;
  o.case_control = {true};
  const auto run = [&](std::size_t threads) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    return whole_genome_regression(s, sel, traits, &covariates, o);
  };
  // K folds, then leave-one-out (chosen by itself: fewer than 5,000 samples).
  for (const auto validation : {wgr_validation::folds, wgr_validation::automatic}) {
    o.validation = validation;
    const wgr_result one = run(1), many = run(4);
    ASSERT_EQ(one.traits.size(), 1u);
    EXPECT_TRUE(one.traits[0].case_control);
    EXPECT_EQ(one.leave_one_out, validation == wgr_validation::automatic);
    EXPECT_EQ(one.traits[0].level1_loss, many.traits[0].level1_loss);
    EXPECT_TRUE((one.traits[0].loco.array() == many.traits[0].loco.array()).all());
    // A held-out -log-likelihood per sample, near log 2 for a weakly predicted trait.
    for (const double loss : one.traits[0].level1_loss) EXPECT_GT(loss, 0.3);
  }

  traits.values(3, 0) = 2;
  // Refused before the pass: a stream that reads no column.
  analysis_options none;
  none.stream.in_flight = 1;
  request_stop();
  try {
    whole_genome_regression(s, sel, traits, &covariates, o, none);
    ADD_FAILURE() << "a status of 2 was accepted";
  } catch (const error& e) {
    EXPECT_EQ(e.kind(), errc::invalid_argument) << e.what();
  }
  clear_stop_request();
  o.case_control = {true, false};
  EXPECT_THROW(whole_genome_regression(s, sel, traits, &covariates, o), error);
}

TEST_F(WgrTest, RefusesBadOptionsAndTraits) {
  const store s = store::open(path_);
  selection sel;
  phenotype_table traits, covariates;
  load(s, sel, traits, covariates);
  const auto refused = [&](const wgr_options& o, const phenotype_table& t, const phenotype_table* c,
                           const std::string& message) {
    try {
      whole_genome_regression(s, sel, t, c, o);
      ADD_FAILURE() << "accepted; expected " << message;
    } catch (const error& e) {
      EXPECT_EQ(e.code(), errc::invalid_argument);
      EXPECT_NE(e.message().find(message), std::string::npos) << e.message();
    }
  };
  wgr_options base;
  wgr_options o = base;
  o.block_size = 0;
  refused(o, traits, nullptr, "block size");
  o = base;
  o.folds = 1;
  refused(o, traits, nullptr, "2 folds");
  o = base;
  o.level0_h2 = {0.5, 1.0};
  refused(o, traits, nullptr, "(0, 1)");
  phenotype_table constant = traits;
  constant.values.col(0).setConstant(2.5);
  refused(base, constant, nullptr, "T1 is constant");
  phenotype_table sparse = traits;
  sparse.values.col(1).tail(sparse.values.rows() - 6).setConstant(std::nan(""));
  refused(base, sparse, nullptr, "T2 has 5 values among the samples used: too few");
  phenotype_table twice = covariates;
  twice.names.push_back("C1 again");
  twice.values.conservativeResize(Eigen::NoChange, 2);
  twice.values.col(1) = 2 * twice.values.col(0);
  refused(base, traits, &twice, "collinear");
}

TEST(WgrFoldsTest, ConsecutiveWithTheRestInTheLast) {
  const detail::sample_folds folds(957, 5);
  EXPECT_EQ(folds.starts(), (std::vector<std::size_t>{0, 191, 382, 573, 764, 957}));
  EXPECT_THROW(detail::sample_folds(4, 5), error);
}

TEST(WgrChromosomeTest, AutosomesAndXAreNumberedOthersLeftOut) {
  EXPECT_EQ(wgr_chromosome("1"), 1);
  EXPECT_EQ(wgr_chromosome("22"), 22);
  EXPECT_EQ(wgr_chromosome("X"), 23);
  EXPECT_EQ(wgr_chromosome("23"), 23);
  EXPECT_EQ(wgr_chromosome("chr7"), 7);
  EXPECT_EQ(wgr_chromosome("07"), 7);
  EXPECT_EQ(wgr_chromosome("chrX"), 23);
  EXPECT_EQ(wgr_chromosome("x"), 23);
  for (const char* other : {"Y", "XY", "MT", "24", "0", "", "chrUn_gl000220", "100", "99", "PAR1"})
    EXPECT_EQ(wgr_chromosome(other), 0) << other;
}

TEST(LocoFileTest, MalformedFilesAreRefusedNamingFileAndLine) {
  test::temp_dir dir;
  const std::vector<sample_info> samples = test::numbered_samples(3);
  const std::string header = "FID_IID S1_S1 S2_S2 S3_S3\n";
  std::string chromosomes;
  for (int c = 1; c <= 23; ++c) chromosomes += std::to_string(c) + " 0.1 -0.2 NA\n";
  const auto refused = [&](const std::string& text, const std::string& message) {
    std::ofstream(dir.path() / "t.loco") << text;
    std::ofstream(dir.path() / "t_pred.list") << "T1 t.loco\n";
    try {
      read_loco(dir.path() / "t_pred.list", samples);
      ADD_FAILURE() << "accepted; expected " << message;
    } catch (const error& e) {
      EXPECT_NE(e.message().find(message), std::string::npos) << e.message();
      EXPECT_NE(e.message().find("t.loco"), std::string::npos) << e.message();
    }
  };
  std::ofstream(dir.path() / "t.loco") << header << chromosomes;
  std::ofstream(dir.path() / "t_pred.list") << "T1 t.loco\n";
  const loco_predictions ok = read_loco(dir.path() / "t_pred.list", samples);
  ASSERT_EQ(ok.traits, std::vector<std::string>{"T1"});
  EXPECT_EQ(ok.values[0](22, 1), -0.2);
  EXPECT_TRUE(std::isnan(ok.values[0](0, 2)));

  refused("IID S1_S1\n" + chromosomes, ":1: the header must start with FID_IID");
  refused("FID_IID S1_S1 S1_S1\n" + chromosomes, "S1_S1 is listed twice");
  refused("FID_IID x_1 x_2\n" + chromosomes, "no sample of the store");
  refused(header + "2 0 0 0\n" + chromosomes, ":2: expected the line of chromosome 1");
  refused(header + "1 0 0\n", ":2: 2 values for 3 samples");
  refused(header + "1 0 zero 0\n", "'zero' is not a number");
  refused(header + "1 0 0 0\n", ":3: missing");
}

TEST(WgrLevel1Test, AStopRequestEndsEitherLevel1) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd w(60, 10);
  for (Eigen::Index i = 0; i < w.size(); ++i) w.data()[i] = normal(rng);
  Eigen::VectorXd y(60), offset = Eigen::VectorXd::Zero(60);
  for (Eigen::Index i = 0; i < 60; ++i) y[i] = i % 3 == 0;
  const detail::sample_folds folds(60, 5);
  const std::vector<double> taus = {10, 1};
  const std::vector<std::pair<Eigen::Index, Eigen::Index>> chromosomes = {{0, 5}, {5, 10}};
  const auto stopped = [](const auto& run) {
    request_stop();
    try {
      run();
      ADD_FAILURE() << "level 1 ran to its end";
    } catch (const error& e) {
      EXPECT_EQ(e.kind(), errc::cancelled) << e.what();
    }
    clear_stop_request();
  };
  stopped([&] { detail::level1_ridge(w, y, folds, taus, chromosomes); });
  stopped([&] { detail::level1_logistic(w, y, offset, folds, taus, chromosomes); });
  stopped([&] { detail::level1_ridge_loo(w, y, taus, chromosomes); });
  stopped([&] { detail::level1_logistic_loo(w, y, offset, taus, chromosomes, false); });
  EXPECT_EQ(detail::level1_logistic(w, y, offset, folds, taus, chromosomes).loss.size(), 2u);
}

}  // namespace
}  // namespace colflow
