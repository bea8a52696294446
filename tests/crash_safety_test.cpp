// Crash safety of what colflow writes: `colflow preprocess` killed with SIGKILL at many moments
// (with and without a store already at the target), interrupted by SIGINT, SIGTERM and SIGHUP
// (nothing left behind), killed with SIGKILL then run again (the stale temporary swept), a
// write error from a file-size limit, and `colflow bayesr` killed at many moments (also while
// writing a checkpoint) then resumed. The program under test is the real colflow binary, run
// in a child process.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <thread>

#include "colflow/colflow.hpp"
#include "colflow/io/staged_output.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

using clock_type = std::chrono::steady_clock;

// Starts the colflow program with `args` (output discarded, or stderr to `stderr_path`). With
// `file_size_limit`, the child may not write files larger than that (RLIMIT_FSIZE; writes past
// it fail with EFBIG).
pid_t spawn(const std::vector<std::string>& args, rlim_t file_size_limit = RLIM_INFINITY,
            const std::filesystem::path& stderr_path = {}) {
  std::vector<std::string> all = {COLFLOW_CLI_PATH};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string err = stderr_path.empty() ? std::string("/dev/null") : stderr_path.string();
  const pid_t pid = ::fork();
  if (pid == 0) {  // only async-signal-safe calls until exec
    const int devnull = ::open("/dev/null", O_WRONLY);
    const int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(devnull, 1);
    ::dup2(err_fd, 2);
    if (file_size_limit != RLIM_INFINITY) {
      ::signal(SIGXFSZ, SIG_IGN);
      const rlimit limit{file_size_limit, file_size_limit};
      ::setrlimit(RLIMIT_FSIZE, &limit);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

// Waits for the child; its exit status, or 128 + signal.
int wait_for(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Waits at most `limit` for the child; its status as wait_for's, or -1 after killing it when
// it did not end in time (a run that ignores a stop request must fail the test, not hang it).
int wait_bounded(pid_t pid, std::chrono::seconds limit) {
  const auto deadline = clock_type::now() + limit;
  while (clock_type::now() < deadline) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  wait_for(pid);
  return -1;
}

// The staged temporaries beside `target` (.NAME.tmp-*), of any process.
std::vector<std::filesystem::path> temporaries_of(const std::filesystem::path& target) {
  std::vector<std::filesystem::path> found;
  const std::string prefix = staged_output::temporary_prefix(target);
  for (const auto& entry : std::filesystem::directory_iterator(target.parent_path()))
    if (entry.path().filename().string().rfind(prefix, 0) == 0) found.push_back(entry.path());
  return found;
}

// Everything in a directory, for failure messages.
std::string listing(const std::filesystem::path& dir) {
  std::string names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names += ' ';
    names += entry.path().filename().string();
  }
  return names.empty() ? " (empty)" : names;
}

// Waits (at most `limit`) until the child is writing the store `target`: its staged directory
// exists with the files the writer creates before the first column. False if the child ended
// or the time ran out first.
bool wait_until_writing(pid_t pid, const std::filesystem::path& target,
                        std::chrono::seconds limit) {
  const auto deadline = clock_type::now() + limit;
  while (clock_type::now() < deadline) {
    for (const auto& temp : temporaries_of(target)) {
      std::error_code ec;
      if (std::filesystem::exists(temp / "columns.tsv", ec)) return true;
    }
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid)
      return false;  // ended (left to be reaped by the caller)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// Runs to completion; the wall time.
double run_timed(const std::vector<std::string>& args) {
  const auto start = clock_type::now();
  EXPECT_EQ(wait_for(spawn(args)), 0);
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

// Kills the program `delay` seconds after its start (or lets it finish first). True if the
// kill landed while it ran.
bool run_and_kill(const std::vector<std::string>& args, double delay) {
  const pid_t pid = spawn(args);
  std::this_thread::sleep_for(std::chrono::duration<double>(delay));
  ::kill(pid, SIGKILL);
  return wait_for(pid) == 128 + SIGKILL;
}

// The column checksums of a store: what identifies its content.
std::vector<std::uint64_t> fingerprint(const store& s) {
  std::vector<std::uint64_t> f;
  for (std::size_t j = 0; j < s.num_columns(); ++j) f.push_back(s.entry(j).checksum);
  return f;
}

// Opens and verifies every frame; the store's fingerprint.
std::vector<std::uint64_t> open_and_verify(const std::filesystem::path& p) {
  const store s = store::open(p);
  std::vector<double> values(s.num_rows());
  for (std::size_t j = 0; j < s.num_columns(); ++j) {
    s.verify_checksum(j);
    s.read_column(j, values, decode_as::stored);
  }
  return fingerprint(s);
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class CrashSafetyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::temp_dir;
    std::string out;
    for (const char* name : {"a", "b"})
      ASSERT_EQ(
          test::run_cli(std::string("simulate --quiet --samples 2000 --variants 8000 --seed ") +
                            (name[0] == 'a' ? "1" : "2") + " --out " + (*dir_ / name).string(),
                        out),
          0)
          << out;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static test::temp_dir* dir_;
};
test::temp_dir* CrashSafetyTest::dir_ = nullptr;

TEST_F(CrashSafetyTest, PreprocessKilledAtThirtyMomentsLeavesNothingOrAWholeStore) {
  const auto target = (*dir_ / "killed.cf").string();
  const std::vector<std::string> args = {
      "preprocess", "--quiet", "--codec", "zstd", "--bed", (*dir_ / "a").string(), "--out", target};
  const double full = run_timed(args);
  const std::vector<std::uint64_t> complete = open_and_verify(target);
  std::filesystem::remove_all(target);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> moment(0.0, 1.1 * full);
  int absent = 0, whole = 0, killed_running = 0;
  for (int k = 0; k < 30; ++k) {
    killed_running += run_and_kill(args, moment(rng));
    if (!std::filesystem::exists(target)) {
      ++absent;
      continue;
    }
    EXPECT_EQ(open_and_verify(target), complete) << "kill " << k;
    ++whole;
    std::filesystem::remove_all(target);
  }
  std::cout << "preprocess (" << full << " s) killed at 30 moments: " << killed_running
            << " while running; afterwards " << absent << " absent, " << whole << " complete\n";
  EXPECT_GT(killed_running, 15);
}

TEST_F(CrashSafetyTest, PreprocessKilledWhileReplacingKeepsTheOldStoreUntilTheNewIsWhole) {
  const auto target = (*dir_ / "replaced.cf").string();
  std::string out;
  ASSERT_EQ(test::run_cli("preprocess --quiet --codec zstd --bed " + (*dir_ / "b").string() +
                              " --out " + target,
                          out),
            0)
      << out;
  const std::vector<std::uint64_t> old_store = open_and_verify(target);
  const std::vector<std::string> args = {
      "preprocess",           "--quiet", "--force", "--codec", "zstd", "--bed",
      (*dir_ / "a").string(), "--out",   target};
  const double full = run_timed(args);
  const std::vector<std::uint64_t> new_store = open_and_verify(target);
  ASSERT_NE(old_store, new_store);
  std::mt19937_64 rng(6);
  std::uniform_real_distribution<double> moment(0.0, 1.1 * full);
  int old_kept = 0, replaced = 0;
  for (int k = 0; k < 12; ++k) {
    if (open_and_verify(target) != old_store) {
      std::filesystem::remove_all(target);
      ASSERT_EQ(test::run_cli("preprocess --quiet --codec zstd --bed " + (*dir_ / "b").string() +
                                  " --out " + target,
                              out),
                0)
          << out;
    }
    run_and_kill(args, moment(rng));
    ASSERT_TRUE(std::filesystem::exists(target))
        << "kill " << k << ": the target name was left empty";
    const std::vector<std::uint64_t> now = open_and_verify(target);
    if (now == old_store) {
      ++old_kept;
    } else {
      EXPECT_EQ(now, new_store) << "kill " << k;
      ++replaced;
    }
  }
  std::cout << "preprocess --force killed at 12 moments: old store intact " << old_kept
            << ", replaced by the whole new one " << replaced << "\n";
  EXPECT_GT(old_kept, 3);
}

TEST_F(CrashSafetyTest, WriteErrorsFailCleanlyAndLeaveNoStore) {
  // A file-size limit below the data file's size: the write fails with EFBIG mid-way.
  for (const rlim_t limit : {rlim_t{4096}, rlim_t{1} << 20, rlim_t{8} << 20}) {
    const auto target = *dir_ / ("limited" + std::to_string(limit) + ".cf");
    const pid_t pid = spawn({"preprocess", "--quiet", "--codec", "none", "--bed",
                             (*dir_ / "a").string(), "--out", target.string()},
                            limit);
    EXPECT_NE(wait_for(pid), 0) << "limit " << limit;
    EXPECT_FALSE(std::filesystem::exists(target)) << "limit " << limit;
    // No hidden temporary directory is left either: the writer removes what it wrote.
    for (const auto& entry : std::filesystem::directory_iterator(dir_->path()))
      EXPECT_EQ(entry.path().filename().string().find(".limited"), std::string::npos)
          << entry.path();
  }
  // The error names the file and the cause (run through the shell to capture stderr).
  std::string out;
  const auto target = (*dir_ / "limited.cf").string();
  EXPECT_NE(test::run_command("ulimit -f 1024; " + std::string(COLFLOW_CLI_PATH) +
                                  " preprocess --quiet --codec none --bed " +
                                  (*dir_ / "a").string() + " --out " + target + " 2>&1",
                              out),
            0);
  EXPECT_NE(out.find("limited.cf"), std::string::npos) << out;
  EXPECT_NE(out.find("too large"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(target));
}

// A preprocess slow enough (zstd at level 19) that a signal sent once it writes lands mid-write.
std::vector<std::string> slow_preprocess(const std::filesystem::path& input,
                                         const std::filesystem::path& target) {
  return {"preprocess", "--quiet", "--codec",      "zstd",  "--level",
          "19",         "--bed",   input.string(), "--out", target.string()};
}

TEST_F(CrashSafetyTest, PreprocessInterruptedBySignalExitsWithItsStatusAndLeavesNothing) {
  for (const auto& [signal_number, name] :
       {std::pair{SIGINT, "SIGINT"}, std::pair{SIGTERM, "SIGTERM"}, std::pair{SIGHUP, "SIGHUP"}}) {
    SCOPED_TRACE(name);
    // A directory of its own, so that "nothing left" means empty.
    const auto out_dir = *dir_ / (std::string("interrupted-") + name);
    std::filesystem::create_directory(out_dir);
    const auto target = out_dir / "store.cf";
    const auto err = *dir_ / (std::string("interrupted-") + name + ".stderr");
    const pid_t pid = spawn(slow_preprocess(*dir_ / "a", target), RLIM_INFINITY, err);
    if (!wait_until_writing(pid, target, std::chrono::seconds(60))) {
      ::kill(pid, SIGKILL);
      ADD_FAILURE() << "preprocess never started writing (exit " << wait_for(pid)
                    << "): " << slurp(err);
      continue;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // some columns in
    ::kill(pid, signal_number);
    EXPECT_EQ(wait_bounded(pid, std::chrono::seconds(60)), 128 + signal_number);
    EXPECT_EQ(slurp(err),
              "colflow: interrupted by " + std::string(name) + " (partial outputs removed)\n");
    // No store, no hidden temporary, nothing at all.
    EXPECT_TRUE(std::filesystem::is_empty(out_dir)) << listing(out_dir);
  }
}

TEST_F(CrashSafetyTest, AfterAKillMinusNineTheNextPreprocessLeavesNoTemporaryBehind) {
  const auto out_dir = *dir_ / "killed-9";
  std::filesystem::create_directory(out_dir);
  const auto target = out_dir / "store.cf";
  const pid_t pid = spawn(slow_preprocess(*dir_ / "a", target));
  ASSERT_TRUE(wait_until_writing(pid, target, std::chrono::seconds(60)))
      << "preprocess never started writing (exit " << wait_for(pid) << ")";
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ::kill(pid, SIGKILL);
  ASSERT_EQ(wait_for(pid), 128 + SIGKILL);
  // A process killed outright cannot clean up: its staged store is left, never the store.
  EXPECT_FALSE(std::filesystem::exists(target));
  ASSERT_EQ(temporaries_of(target).size(), 1u) << listing(out_dir);

  // The next write to the same place removes it (its process no longer exists).
  std::string out;
  ASSERT_EQ(
      test::run_cli(
          "preprocess --quiet --bed " + (*dir_ / "a").string() + " --out " + target.string(), out),
      0)
      << out;
  open_and_verify(target);
  EXPECT_TRUE(temporaries_of(target).empty()) << listing(out_dir);
  EXPECT_EQ(listing(out_dir), " store.cf");
}

TEST_F(CrashSafetyTest, BayesrKilledAnywhereResumesToTheSameChain) {
  const auto d = dir_->path();
  std::string out;
  const std::string store = (d / "small.cf").string();
  ASSERT_EQ(
      test::run_cli("simulate --quiet --samples 400 --variants 1500 --causal 20 --seed 9 --out " +
                        (d / "small").string(),
                    out),
      0);
  ASSERT_EQ(
      test::run_cli("preprocess --quiet --bed " + (d / "small").string() + " --out " + store, out),
      0);
  const auto args = [&](const std::string& prefix, bool resume) {
    std::vector<std::string> a = {"bayesr",
                                  store,
                                  "--quiet",
                                  "--pheno",
                                  (d / "small.phen").string(),
                                  "--iterations",
                                  "300",
                                  "--burnin",
                                  "100",
                                  "--checkpoint-every",
                                  "1",
                                  "--digits",
                                  "17",
                                  "--out",
                                  (d / prefix).string()};
    if (resume) a.push_back("--resume");
    return a;
  };
  const double full = run_timed(args("whole", false));
  const std::string trace = slurp(d / "whole.trace.tsv"), effects = slurp(d / "whole.effects.tsv"),
                    summary = slurp(d / "whole.summary.tsv");
  ASSERT_FALSE(trace.empty());
  ASSERT_FALSE(summary.empty());
  std::mt19937_64 rng(8);
  std::uniform_real_distribution<double> moment(0.02 * full, 0.95 * full);
  int resumed = 0;
  for (int k = 0; k < 12; ++k) {
    const std::string prefix = "killed" + std::to_string(k);
    if (!run_and_kill(args(prefix, false), moment(rng))) continue;
    // Results are written whole and renamed into place, so a kill after the chain ended can
    // leave them; what must never be is a partial one.
    for (const auto& [name, whole] :
         {std::pair{".trace.tsv", &trace}, std::pair{".effects.tsv", &effects},
          std::pair{".summary.tsv", &summary}}) {
      if (std::filesystem::exists(d / (prefix + name))) {
        EXPECT_EQ(slurp(d / (prefix + name)), *whole) << "a killed run left a partial " << name;
      }
    }
    if (!std::filesystem::exists(d / (prefix + ".checkpoint")))
      continue;  // killed before the first
    ASSERT_EQ(wait_for(spawn(args(prefix, true))), 0) << "kill " << k;
    EXPECT_EQ(slurp(d / (prefix + ".trace.tsv")), trace) << "kill " << k;
    EXPECT_EQ(slurp(d / (prefix + ".effects.tsv")), effects) << "kill " << k;
    EXPECT_EQ(slurp(d / (prefix + ".summary.tsv")), summary) << "kill " << k;
    ++resumed;
  }
  std::cout << "bayesr (" << full
            << " s, a checkpoint every iteration) killed at 12 moments: " << resumed
            << " resumed to the uninterrupted chain's outputs, byte for byte\n";
  // Moments are drawn from the uninterrupted run's time; on a loaded machine the killed runs can
  // be faster and end first (those are skipped), so the count varies with the load.
  EXPECT_GE(resumed, 4);
}

// The SBayesR chain on an LD store (its columns read on demand, kept between iterations),
// killed with SIGKILL at moments drawn over an uninterrupted run, then resumed: the result files
// are the uninterrupted chain's, byte for byte, and a kill never leaves a partial one.
TEST_F(CrashSafetyTest, SbayesrKilledAnywhereResumesToTheSameChain) {
  const auto d = dir_->path();
  std::string out;
  ASSERT_EQ(test::run_cli("simulate --quiet --samples 400 --variants 300 --causal 20 --maf-min "
                          "0.05 --seed 9 --out " +
                              (d / "ref").string(),
                          out),
            0)
      << out;
  ASSERT_EQ(test::run_cli("preprocess --quiet --bed " + (d / "ref").string() + " --out " +
                              (d / "ref.cf").string(),
                          out),
            0)
      << out;
  ASSERT_EQ(
      test::run_cli("ld " + (d / "ref.cf").string() +
                        " --quiet --make-ldm band --ld-window 50 --out " + (d / "band").string(),
                    out),
      0)
      << out;
  {
    // Summary statistics of made-up effects on the reference's variants.
    std::ifstream bim(d / "ref.bim");
    std::ofstream ma(d / "gwas.ma");
    ma << "SNP A1 A2 freq b se p N\n";
    std::mt19937_64 rng(4);
    std::normal_distribution<double> normal;
    for (std::string chrom, id, cm, pos, a1, a2; bim >> chrom >> id >> cm >> pos >> a1 >> a2;)
      ma << id << ' ' << a1 << ' ' << a2 << " 0.3 " << 0.03 * normal(rng) << " 0.02 0.5 5000\n";
  }
  const auto args = [&](const std::string& prefix, bool resume) {
    std::vector<std::string> a = {"sbayesr",
                                  "--gwas",
                                  (d / "gwas.ma").string(),
                                  "--ldm",
                                  (d / "band").string(),
                                  "--quiet",
                                  "--iterations",
                                  "400",
                                  "--burnin",
                                  "100",
                                  "--checkpoint-every",
                                  "1",
                                  "--out",
                                  (d / prefix).string()};
    if (resume) a.push_back("--resume");
    return a;
  };
  const double full = run_timed(args("whole", false));
  const std::string parameters = slurp(d / "whole.parRes"), effects = slurp(d / "whole.snpRes");
  ASSERT_FALSE(parameters.empty());
  ASSERT_FALSE(effects.empty());
  std::mt19937_64 rng(8);
  std::uniform_real_distribution<double> moment(0.02 * full, 0.95 * full);
  int resumed = 0;
  for (int k = 0; k < 8; ++k) {
    const std::string prefix = "killed" + std::to_string(k);
    if (!run_and_kill(args(prefix, false), moment(rng))) continue;
    for (const auto& [name, whole] :
         {std::pair{".parRes", &parameters}, std::pair{".snpRes", &effects}}) {
      if (std::filesystem::exists(d / (prefix + name))) {
        EXPECT_EQ(slurp(d / (prefix + name)), *whole) << "a killed run left a partial " << name;
      }
    }
    if (!std::filesystem::exists(d / (prefix + ".checkpoint"))) continue;  // before the first
    ASSERT_EQ(wait_for(spawn(args(prefix, true))), 0) << "kill " << k;
    EXPECT_EQ(slurp(d / (prefix + ".parRes")), parameters) << "kill " << k;
    EXPECT_EQ(slurp(d / (prefix + ".snpRes")), effects) << "kill " << k;
    ++resumed;
  }
  std::cout << "sbayesr (" << full
            << " s, a checkpoint every iteration) killed at 8 moments: " << resumed
            << " resumed to the uninterrupted chain's outputs, byte for byte\n";
  EXPECT_GE(resumed, 3);
}

}  // namespace
}  // namespace colflow
