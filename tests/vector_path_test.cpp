// COLFLOW_SIMD (simd/vector_path.hpp): the switch refuses what is not a path or what the CPU
// cannot take, and every command gives the same bytes on every path this CPU has, on a
// genotype store and on a dosage store; a BayesR checkpoint written on one path resumes on
// another to the chain of one uninterrupted run.
#include "colflow/simd/vector_path.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace colflow {
namespace {

constexpr int samples = 240;

int run_on_path(const std::string& path, const std::string& args, std::string& out) {
  return test::run_command("COLFLOW_SIMD=" + path + " " + COLFLOW_CLI_PATH + " " + args, out);
}

const std::string golden_store =
    std::string(COLFLOW_TEST_SOURCE_DIR) + "/golden/v1.3-genotype-zstd.cf";

// The paths this CPU can take, narrowest first: those the command line does not refuse.
std::vector<std::string> available_paths() {
  std::vector<std::string> paths;
  for (const vector_path p : {vector_path::portable, vector_path::avx2, vector_path::avx512}) {
    std::string out;
    if (run_on_path(vector_path_name(p), "info " + golden_store, out) == 0)
      paths.push_back(vector_path_name(p));
  }
  return paths;
}

// A VCF of dosages (DS) for the samples of `fam`, 5% missing, some variants rare.
void write_dosage_vcf(const std::filesystem::path& vcf_path, const std::vector<std::string>& ids) {
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> u(0, 1);
  std::ofstream vcf(vcf_path);
  vcf << "##fileformat=VCFv4.2\n"
      << "##FORMAT=<ID=DS,Number=A,Type=Float,Description=\"dosage\">\n"
      << "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT";
  for (const std::string& id : ids) vcf << "\t" << id;
  vcf << "\n";
  for (int j = 0; j < 90; ++j) {
    vcf << (j < 60 ? "1" : "2") << "\t" << 1000 * (j + 1) << "\tv" << j << "\tA\tC\t.\tPASS\t.\tDS";
    const double p = 0.02 + 0.9 * j / 90.0;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (u(rng) < 0.05)
        vcf << "\t.";
      else
        vcf << "\t" << std::round(std::min(2.0, 4 * p * u(rng)) * 1000) / 1000;
    }
    vcf << "\n";
  }
}

// The simulation's samples, a quantitative and a case/control phenotype (#IID headers), two
// covariates; a genotype store of the simulation and a dosage store of a VCF of the same
// samples.
struct inputs {
  test::temp_dir dir;
  std::string d = dir.path().string();

  inputs() {
    std::string out;
    EXPECT_EQ(
        test::run_cli("simulate --quiet --samples " + std::to_string(samples) +
                          " --variants 150 --causal 10 --missing 0.02 --seed 4 --out " + d + "/sim",
                      out),
        0)
        << out;
    EXPECT_EQ(test::run_cli("preprocess --quiet --bed " + d + "/sim --out " + d + "/g.cf", out), 0)
        << out;
    std::vector<std::string> ids;
    std::ifstream fam(d + "/sim.fam");
    for (std::string fid, iid, rest; fam >> fid >> iid && std::getline(fam, rest);)
      ids.push_back(iid);
    write_dosage_vcf(d + "/d.vcf", ids);
    EXPECT_EQ(test::run_cli(
                  "preprocess --quiet --vcf " + d + "/d.vcf --dosage DS --out " + d + "/d.cf", out),
              0)
        << out;
    std::mt19937_64 rng(2);
    std::normal_distribution<double> normal;
    std::ofstream q(d + "/q.phen"), cc(d + "/cc.phen"), cov(d + "/cov.txt"), cov9(d + "/cov9.txt");
    q << "#IID Q\n";
    cc << "#IID CC\n";
    cov << "#IID C1 C2\n";
    cov9 << "#IID C1 C2 C3 C4 C5 C6 C7 C8 C9\n";
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const double y = normal(rng);
      q << ids[i] << " " << y << "\n";
      cc << ids[i] << " " << (y + normal(rng) > 0.3 ? 2 : 1) << "\n";
      cov << ids[i] << " " << normal(rng) << " " << (i % 3 == 0) << "\n";
      cov9 << ids[i];
      for (int c = 0; c < 9; ++c) cov9 << " " << normal(rng);
      cov9 << "\n";
    }
  }
};

// Each command's files: its arguments after the store, and the suffixes of its outputs.
struct command {
  std::string args;
  std::vector<std::string> files;
};

std::vector<command> commands(const std::string& d) {
  const std::string q = " --pheno " + d + "/q.phen", cov = " --covar " + d + "/cov.txt";
  return {
      {"stats", {""}},
      {"assoc" + q + cov, {".Q.assoc.tsv"}},
      {"assoc --pheno " + d + "/cc.phen" + cov, {".CC.logistic.tsv"}},
      // 11 coefficients: the logistic pass's code for any width (kernels/logistic_sums.cpp).
      {"assoc --pheno " + d + "/cc.phen --covar " + d + "/cov9.txt", {".CC.logistic.tsv"}},
      {"lasso" + q + " --nlambda 4 --lambda-min-ratio 0.2", {".path.tsv", ".coef.tsv"}},
      {"bayesr" + q + " --iterations 8 --burnin 2", {".trace.tsv", ".effects.tsv", ".summary.tsv"}},
      {"pca --k 3", {".eigenval", ".eigenvec"}},
      {"grm --make-rel square bin", {".rel.bin"}},
      {"grm --make-grm-bin", {".grm.bin", ".grm.N.bin"}},  // binary32 products
      {"ld --r2 --ld-window-r2 0", {".ld"}},
  };
}

TEST(VectorPathTest, SwitchRefusesWhatIsNotAPathOrBeyondTheCpu) {
  std::string out;
  EXPECT_EQ(run_on_path("sse4", "--version", out), 0) << "--version does no work";
  EXPECT_EQ(run_on_path("sse4", "info " + golden_store, out), 1);
  EXPECT_NE(out.find("COLFLOW_SIMD=sse4: not a vector path (portable, avx2 or avx512)"),
            std::string::npos)
      << out;
  const std::vector<std::string> paths = available_paths();
  ASSERT_FALSE(paths.empty());
  EXPECT_EQ(paths.front(), "portable");
  if (paths.back() != "avx512") {
    EXPECT_EQ(run_on_path("avx512", "info " + golden_store, out), 1);
    EXPECT_NE(out.find("COLFLOW_SIMD=avx512: this CPU cannot take it (its widest path is " +
                       paths.back() + ")"),
              std::string::npos)
        << out;
  }
}

// Runs `c` on the store d/STORE.cf on every path and expects each of its files to have the same
// bytes on all of them.
void expect_same_bytes_on_every_path(const std::vector<std::string>& paths, const std::string& d,
                                     const std::string& store, const command& c) {
  std::string out;
  std::vector<std::vector<std::vector<char>>> outputs;
  for (const std::string& path : paths) {
    const std::string prefix = d + "/" + store + "-" + path;
    ASSERT_EQ(run_on_path(path,
                          c.args.substr(0, c.args.find(' ')) + " " + d + "/" + store +
                              ".cf --quiet --digits 17 --threads 2" +
                              c.args.substr(std::min(c.args.size(), c.args.find(' '))) + " --out " +
                              prefix,
                          out),
              0)
        << path << ": " << c.args << "\n"
        << out;
    outputs.emplace_back();
    for (const std::string& f : c.files) outputs.back().push_back(test::read_file(prefix + f));
  }
  for (std::size_t p = 1; p < paths.size(); ++p)
    for (std::size_t k = 0; k < c.files.size(); ++k) {
      EXPECT_FALSE(outputs[0][k].empty()) << store << " " << c.args << c.files[k];
      EXPECT_EQ(outputs[0][k], outputs[p][k])
          << store << " store, " << c.args << ": " << c.files[k] << " differs between " << paths[0]
          << " and " << paths[p];
    }
}

TEST(VectorPathTest, EveryCommandGivesTheSameBytesOnEveryPath) {
  inputs in;
  const std::vector<std::string> paths = available_paths();
  ASSERT_FALSE(paths.empty());
  for (const std::string store : {"g", "d"})
    for (const command& c : commands(in.d)) expect_same_bytes_on_every_path(paths, in.d, store, c);
}

// KING counts hard calls: on the genotype store alone (kernels/king_counts.cpp).
TEST(VectorPathTest, KingGivesTheSameBytesOnEveryPath) {
  inputs in;
  const std::vector<std::string> paths = available_paths();
  ASSERT_FALSE(paths.empty());
  expect_same_bytes_on_every_path(paths, in.d, "g",
                                  {"king --make-king-table counts cols=+ibs1 --king-cutoff 0.02",
                                   {".kin0", ".king.cutoff.in.id", ".king.cutoff.out.id"}});
}

// Most variants rare, A1 the rare allele or the common one, 1% of calls missing, over two
// sample blocks and a part block: the sums that add only the bytes holding the rarer allele or
// a missing call (kernels/genotype_dot.cpp) give the bytes of the full sums, which the
// portable path adds.
TEST(VectorPathTest, RareVariantSolversGiveTheSameBytesOnEveryPath) {
  const test::temp_dir dir;
  const std::string d = dir.path().string();
  std::string out;
  ASSERT_EQ(test::run_cli("simulate --quiet --samples 9000 --variants 40 --causal 5 --maf-min "
                          "0.0005 --missing 0.01 --seed 12 --out " +
                              d + "/rare",
                          out),
            0)
      << out;
  ASSERT_EQ(test::run_cli("preprocess --quiet --bed " + d + "/rare --out " + d + "/r.cf", out), 0)
      << out;
  const std::string pheno = " --pheno " + d + "/rare.phen";
  const std::vector<std::string> paths = available_paths();
  for (const command& c : {command{"bayesr" + pheno + " --iterations 6 --burnin 2",
                                   {".trace.tsv", ".effects.tsv", ".summary.tsv"}},
                           command{"lasso" + pheno + " --nlambda 4 --lambda-min-ratio 0.2",
                                   {".path.tsv", ".coef.tsv"}}})
    expect_same_bytes_on_every_path(paths, d, "r", c);
}

// SBayesR's residual updates from LD columns (kernels/ld_update.cpp), from LD stores of float32
// and of 16-bit values (columns read on demand and kept) and from LD held in memory: summary
// statistics of made-up effects on the simulation's variants.
TEST(VectorPathTest, SBayesRGivesTheSameBytesOnEveryPath) {
  const test::temp_dir dir;
  const std::string d = dir.path().string();
  std::string out;
  // No variant constant in the reference, whose LD would be undefined.
  ASSERT_EQ(
      test::run_cli("simulate --quiet --samples " + std::to_string(samples) +
                        " --variants 150 --causal 10 --maf-min 0.1 --seed 4 --out " + d + "/sim",
                    out),
      0)
      << out;
  ASSERT_EQ(test::run_cli("preprocess --quiet --bed " + d + "/sim --out " + d + "/g.cf", out), 0)
      << out;
  {
    std::ifstream bim(d + "/sim.bim");
    std::ofstream ma(d + "/s.ma");
    ma << "SNP A1 A2 freq b se p N\n";
    std::mt19937_64 rng(3);
    std::normal_distribution<double> normal;
    for (std::string chrom, id, cm, pos, a1, a2; bim >> chrom >> id >> cm >> pos >> a1 >> a2;)
      ma << id << ' ' << a1 << ' ' << a2 << " 0.3 " << 0.05 * normal(rng) << " 0.06 0.5 " << samples
         << '\n';
  }
  ASSERT_EQ(
      test::run_cli("ld " + d + "/g.cf --quiet --make-ldm band --ld-window 20 --out " + d + "/band",
                    out),
      0)
      << out;
  // And every pair in 16 bits (kept in 16 bits, updated four columns at a time).
  ASSERT_EQ(
      test::run_cli(
          "ld " + d + "/g.cf --quiet --make-ldm full --ldm-bits 16 --out " + d + "/full16", out),
      0)
      << out;
  const std::vector<std::string> paths = available_paths();
  for (const std::string& ldm : {d + "/band", d + "/full16", d + "/g.cf --ld-window 20"}) {
    std::vector<std::vector<char>> outputs;
    for (const std::string& path : paths) {
      const std::string prefix = d + "/s-" + path;
      ASSERT_EQ(run_on_path(path,
                            "sbayesr --gwas " + d + "/s.ma --ldm " + ldm +
                                " --iterations 40 --burnin 10 --quiet --out " + prefix,
                            out),
                0)
          << path << ": " << ldm << "\n"
          << out;
      outputs.emplace_back();
      for (const std::string f : {".parRes", ".snpRes"}) {
        const std::vector<char> bytes = test::read_file(prefix + f);
        outputs.back().insert(outputs.back().end(), bytes.begin(), bytes.end());
      }
      EXPECT_FALSE(outputs.back().empty());
      EXPECT_EQ(outputs.front(), outputs.back()) << ldm << ": " << paths.front() << ", " << path;
    }
  }
}

TEST(VectorPathTest, CheckpointResumesOnAnotherPathToTheSameChain) {
  inputs in;
  const std::vector<std::string> paths = available_paths();
  const std::string first = paths.back(), second = paths.front();  // widest, then portable
  std::string out;
  const std::string bayesr = "bayesr " + in.d + "/g.cf --quiet --digits 17 --pheno " + in.d +
                             "/q.phen --burnin 2 --seed 5 --checkpoint-every 3";
  ASSERT_EQ(run_on_path(first, bayesr + " --iterations 6 --out " + in.d + "/c", out), 0) << out;
  ASSERT_EQ(run_on_path(second, bayesr + " --iterations 12 --resume --out " + in.d + "/c", out), 0)
      << out;
  ASSERT_EQ(run_on_path(first, bayesr + " --iterations 12 --out " + in.d + "/whole", out), 0)
      << out;
  for (const std::string f : {".trace.tsv", ".effects.tsv", ".summary.tsv"})
    EXPECT_EQ(test::read_file(in.d + "/c" + f), test::read_file(in.d + "/whole" + f))
        << f << ": written on " << first << ", resumed on " << second;
}

}  // namespace
}  // namespace colflow
