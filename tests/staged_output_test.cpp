// Tests of the staged-output primitive (include/colflow/io/staged_output.hpp) and of
// cancellation (include/colflow/cancellation.hpp): a commit publishes a whole file or
// directory and replaces an existing one; an uncommitted output leaves nothing; two outputs to
// one target never share a temporary; the sweep removes the temporaries of dead processes of
// this host only; a stop request cancels a stream pass, which leaves the stream reusable, and
// a store writer, which leaves nothing behind.
#include "colflow/io/staged_output.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "colflow/cancellation.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void spill(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  ASSERT_TRUE(out.good()) << p;
}

// The names in a directory, sorted.
std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

// This host's name as temporaries carry it: read back from a real temporary's name
// (.NAME.tmp-HOST-PID-RANDOM), so the test does not restate how the primitive spells it.
std::string host_field(const fs::path& dir) {
  const staged_output probe(dir / "probe");
  const std::string name = probe.path().filename();
  const std::string rest = name.substr(staged_output::temporary_prefix(dir / "probe").size());
  return rest.substr(0, rest.find('-'));
}

// The PID of a process that has ended (a child that exited and was reaped).
pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

TEST(StagedOutputTest, FileCommitPublishesTheWholeFileAndReplacesAnExistingOne) {
  test::temp_dir dir;
  const fs::path target = dir / "result.tsv";
  {
    staged_output out(target);
    EXPECT_EQ(out.target(), target);
    EXPECT_EQ(out.path().parent_path(), dir.path());  // beside the target: one file system
    EXPECT_EQ(out.path().filename().string().rfind(staged_output::temporary_prefix(target), 0), 0u)
        << out.path();
    EXPECT_TRUE(fs::is_regular_file(out.path()));
    spill(out.path(), "first\n");
    EXPECT_FALSE(fs::exists(target));  // nothing under the name before commit()
    out.commit();
    EXPECT_TRUE(out.committed());
  }
  EXPECT_EQ(slurp(target), "first\n");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"result.tsv"});

  {
    staged_output out(target);
    spill(out.path(), "second, longer\n");
    EXPECT_EQ(slurp(target), "first\n");  // the old contents until the rename
    out.commit();
  }
  EXPECT_EQ(slurp(target), "second, longer\n");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"result.tsv"});
}

TEST(StagedOutputTest, DirectoryCommitPublishesTheWholeDirectoryAndReplacesAnExistingOne) {
  test::temp_dir dir;
  const fs::path target = dir / "store.cf";
  {
    staged_output out(target, staged_output::kind::directory);
    EXPECT_TRUE(fs::is_directory(out.path()));
    EXPECT_TRUE(fs::is_empty(out.path()));
    spill(out.path() / "a", "old a");
    spill(out.path() / "old-only", "x");
    out.commit();
  }
  EXPECT_EQ(names_in(target), (std::vector<std::string>{"a", "old-only"}));
  {
    staged_output out(target, staged_output::kind::directory);
    spill(out.path() / "a", "new a");
    spill(out.path() / "b", "new b");
    EXPECT_EQ(slurp(target / "a"), "old a");
    out.commit();
  }
  // The new directory whole, nothing of the old one, and no temporary or moved-aside copy.
  EXPECT_EQ(names_in(target), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(slurp(target / "a"), "new a");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"store.cf"});
}

TEST(StagedOutputTest, DestructionWithoutCommitLeavesNothingAndKeepsTheOldTarget) {
  test::temp_dir dir;
  {
    staged_output file(dir / "f.txt");
    spill(file.path(), "partial");
    staged_output directory(dir / "d.cf", staged_output::kind::directory);
    fs::create_directories(directory.path() / "nested" / "deeper");
    spill(directory.path() / "nested" / "deeper" / "x", "partial");
    EXPECT_EQ(names_in(dir.path()).size(), 2u);
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));

  // An existing target is untouched by an abandoned replacement.
  spill(dir / "kept.txt", "old");
  {
    staged_output out(dir / "kept.txt");
    spill(out.path(), "new, abandoned");
  }
  EXPECT_EQ(slurp(dir / "kept.txt"), "old");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"kept.txt"});

  // Nor does a moved-from output remove what its successor owns.
  {
    staged_output first(dir / "moved.txt");
    staged_output second(std::move(first));
    spill(second.path(), "moved");
    second.commit();
  }
  EXPECT_EQ(slurp(dir / "moved.txt"), "moved");
}

TEST(StagedOutputTest, TwoOutputsToTheSameTargetNeverShareATemporary) {
  test::temp_dir dir;
  const fs::path target = dir / "same.tsv";
  std::set<fs::path> temporaries;
  {
    std::vector<staged_output> outputs;
    for (int k = 0; k < 8; ++k) {
      outputs.emplace_back(target);
      EXPECT_TRUE(temporaries.insert(outputs.back().path()).second) << outputs.back().path();
    }
    // Each name carries this host and this process.
    const std::string pid = "-" + std::to_string(::getpid()) + "-";
    for (const fs::path& p : temporaries)
      EXPECT_NE(p.filename().string().find(pid), std::string::npos) << p;
    for (std::size_t k = 0; k < outputs.size(); ++k) spill(outputs[k].path(), std::to_string(k));
    outputs[3].commit();
    outputs[5].commit();  // the last commit wins, whole
  }
  EXPECT_EQ(slurp(target), "5");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"same.tsv"});

  // Two directories as well (two runs writing one store).
  staged_output a(dir / "s.cf", staged_output::kind::directory);
  staged_output b(dir / "s.cf", staged_output::kind::directory);
  EXPECT_NE(a.path(), b.path());
}

TEST(StagedOutputTest, TheSweepRemovesOnlyTemporariesOfDeadProcessesOfThisHost) {
  test::temp_dir dir;
  const fs::path target = dir / "t.cf";
  const std::string host = host_field(dir.path());
  ASSERT_FALSE(host.empty());
  EXPECT_TRUE(fs::is_empty(dir.path()));  // the probe removed its temporary
  const std::string prefix = staged_output::temporary_prefix(target);
  const std::string dead = std::to_string(dead_pid()), live = std::to_string(::getpid());

  // Left by a kill -9 on this host: a directory with files in it, and a file.
  const fs::path dead_dir = dir / (prefix + host + "-" + dead + "-0badf00d");
  fs::create_directories(dead_dir / "sub");
  spill(dead_dir / "columns.dat", "partial");
  spill(dead_dir / "sub" / "x", "partial");
  const fs::path dead_file = dir / (prefix + host + "-" + dead + "-12345678");
  spill(dead_file, "partial");
  // Kept: a live process's (this one), another host's with the same PID, another target's,
  // and names that only look like temporaries.
  const fs::path live_dir = dir / (prefix + host + "-" + live + "-abcdef01");
  fs::create_directory(live_dir);
  const fs::path foreign = dir / (prefix + "another_node" + host + "-" + dead + "-abcdef02");
  fs::create_directory(foreign);
  const fs::path other_target =
      dir / (staged_output::temporary_prefix(dir / "u.cf") + host + "-" + dead + "-abcdef03");
  fs::create_directory(other_target);
  const fs::path not_a_pid = dir / (prefix + host + "-12x-abcdef04");
  spill(not_a_pid, "?");

  {
    staged_output out(target, staged_output::kind::directory);  // sweeps first
    EXPECT_FALSE(fs::exists(dead_dir));
    EXPECT_FALSE(fs::exists(dead_file));
    EXPECT_TRUE(fs::exists(live_dir));
    EXPECT_TRUE(fs::exists(foreign));
    EXPECT_TRUE(fs::exists(other_target));
    EXPECT_TRUE(fs::exists(not_a_pid));
    out.commit();
  }
  EXPECT_TRUE(fs::is_directory(target));
  EXPECT_EQ(staged_output::sweep_stale(target), 0u);  // nothing stale is left

  // The same through sweep_stale directly, which counts what it removed.
  fs::create_directory(dead_dir);
  spill(dead_file, "partial");
  EXPECT_EQ(staged_output::sweep_stale(target), 2u);
  EXPECT_EQ(names_in(dir.path()).size(), 5u);  // target, live, foreign, other target, not_a_pid
}

// ==== Cancellation

class CancellationTest : public ::testing::Test {
 protected:
  // A stop request is process-wide: never let one leak into the next test.
  void SetUp() override { clear_stop_request(); }
  void TearDown() override { clear_stop_request(); }
};

TEST_F(CancellationTest, TheFlagIsSetAndCleared) {
  EXPECT_FALSE(stop_requested());
  EXPECT_NO_THROW(throw_if_stop_requested());
  request_stop();
  request_stop();  // idempotent
  EXPECT_TRUE(stop_requested());
  try {
    throw_if_stop_requested();
    ADD_FAILURE() << "no exception";
  } catch (const error& e) {
    EXPECT_EQ(e.kind(), errc::cancelled);
  }
  clear_stop_request();
  EXPECT_FALSE(stop_requested());
}

TEST_F(CancellationTest, AStopRequestCancelsAStreamPassBetweenColumnsAndTheStreamWorksAfterwards) {
  test::temp_dir dir;
  constexpr std::uint64_t rows = 301, columns = 200;
  test::write_genotype_store(dir / "g.cf", rows, columns, {codec_id::zstd, 3, false});
  const store s = store::open(dir / "g.cf");
  const std::vector<std::size_t> order = all_columns(columns);
  for (const std::size_t per_block : {std::size_t{1}, std::size_t{7}}) {
    stream_options o;
    o.in_flight = 4;
    o.block_bytes = per_block * rows * sizeof(double);
    column_stream<double> stream(s, o);
    for (const bool pipelined : {true, false}) {
      SCOPED_TRACE(std::string(pipelined ? "pipelined" : "sequential") + ", " +
                   std::to_string(per_block) + " columns per block");
      const auto run = [&](const column_kernel<double>& k) {
        return pipelined ? stream.run(order, k) : stream.run_sequential(order, k);
      };
      // Asked at position 50: the kernel has seen 0..50 in order and nothing after.
      std::vector<std::size_t> seen;
      const column_kernel<double> stopping = [&](const column_view<double>& v) {
        seen.push_back(v.position);
        if (v.position == 50) request_stop();
        return true;
      };
      try {
        run(stopping);
        ADD_FAILURE() << "the pass was not cancelled";
      } catch (const error& e) {
        EXPECT_EQ(e.kind(), errc::cancelled) << e.message();
      }
      ASSERT_EQ(seen.size(), 51u);
      for (std::size_t k = 0; k < seen.size(); ++k) EXPECT_EQ(seen[k], k);

      // While the request stands, a pass does not start computing.
      seen.clear();
      EXPECT_THROW(run(stopping), error);
      EXPECT_TRUE(seen.empty());

      // Withdrawn, the same stream runs whole passes again.
      clear_stop_request();
      double sum = 0;
      const pass_stats st = run([&](const column_view<double>& v) {
        sum += v.values.sum();
        return true;
      });
      EXPECT_EQ(st.columns, columns);
      EXPECT_FALSE(st.stopped_early);
      EXPECT_TRUE(std::isfinite(sum));
    }
  }
}

TEST_F(CancellationTest, AStopRequestAbandonsAStoreWriterAndLeavesNothing) {
  test::temp_dir dir;
  constexpr std::uint64_t rows = 40;
  std::mt19937_64 rng(3);
  const auto codes = test::random_genotype_codes(rows, 0.3, 0.02, rng);
  const encoded_column column = encode_genotype_column(codes, rows, {codec_id::zstd, 3, false});
  writer_options wo;
  wo.type = value_type::genotype;
  wo.rows = rows;
  {
    store_writer w(dir / "g.cf", wo, test::numbered_samples(rows));
    for (std::uint64_t j = 0; j < 5; ++j) w.append(column, test::numbered_column(j));
    request_stop();
    try {
      w.append(column, test::numbered_column(5));
      ADD_FAILURE() << "append after a stop request";
    } catch (const error& e) {
      EXPECT_EQ(e.kind(), errc::cancelled);
    }
    EXPECT_THROW(w.finish(), error);             // nor is the store published
    EXPECT_EQ(names_in(dir.path()).size(), 1u);  // its staged directory, until the writer goes
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));

  // A writer that was never told to stop publishes as before.
  clear_stop_request();
  {
    store_writer w(dir / "g.cf", wo, test::numbered_samples(rows));
    for (std::uint64_t j = 0; j < 5; ++j) w.append(column, test::numbered_column(j));
    w.finish();
  }
  EXPECT_EQ(store::open(dir / "g.cf").num_columns(), 5u);
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"g.cf"});
}

}  // namespace
}  // namespace colflow
