// The colflow program as a user runs it: exit codes, messages, JSON keys.
#include <gtest/gtest.h>

#include <cctype>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "test_support.hpp"

namespace colflow {
namespace {

int run(const std::string& args, std::string& output) { return test::run_cli(args, output); }

TEST(CliTest, PrintsVersionAndHelp) {
  std::string out;
  EXPECT_EQ(run("--version", out), 0);
  EXPECT_NE(out.find("colflow " + std::string(version())), std::string::npos) << out;
  EXPECT_EQ(run("--help", out), 0);
  EXPECT_NE(out.find("verify"), std::string::npos) << out;
  EXPECT_EQ(run("info --help", out), 0);
  EXPECT_NE(out.find("--json"), std::string::npos) << out;
  EXPECT_NE(run("", out), 0);
  EXPECT_NE(run("frobnicate", out), 0);
}

// `colflow plot` runs the colflow-plot found on PATH; here a script standing in for it, which
// prints its arguments and exits 3, and a PATH without it.
TEST(CliTest, PlotRunsColflowPlotOnPathOrSaysWhatToInstall) {
  test::temp_dir dir;
  std::filesystem::create_directories(dir / "bin");
  const std::string script = "#!/bin/sh\necho \"colflow-plot got: $*\"\nexit 3\n";
  test::write_file(dir / "bin" / "colflow-plot", std::vector<char>(script.begin(), script.end()));
  std::filesystem::permissions(dir / "bin" / "colflow-plot", std::filesystem::perms::owner_all);
  std::string on_path = "env PATH=";
  on_path.append((dir / "bin").string()).append(" ").append(COLFLOW_CLI_PATH);
  std::string out;
  EXPECT_EQ(test::run_command(on_path + " plot qq scan.tsv --out qq.png", out), 3) << out;
  EXPECT_EQ(out, "colflow-plot got: qq scan.tsv --out qq.png\n");
  EXPECT_EQ(test::run_command(on_path + " plot --help", out), 3) << out;
  EXPECT_NE(out.find("Usage: colflow plot"), std::string::npos) << out;
  EXPECT_NE(out.find("colflow-plot got: --help"), std::string::npos) << out;

  std::string without = "env PATH=";
  without.append(dir.path().string()).append(" ").append(COLFLOW_CLI_PATH);
  EXPECT_EQ(test::run_command(without + " plot qq scan.tsv --out qq.png", out), 1) << out;
  EXPECT_EQ(out,
            "colflow plot: colflow-plot was not found on PATH; install the Python package with "
            "its pictures: pip install './python[plot]'\n");
  EXPECT_EQ(test::run_command(without + " plot --help", out), 0) << out;
  EXPECT_NE(out.find("runs colflow-plot ARGS..."), std::string::npos) << out;
}

TEST(CliTest, InfoReportsShapeCodecsAndSizes) {
  test::temp_dir dir;
  test::write_genotype_store(dir / "g.cf", 100, 12, {codec_id::zstd, 3, false});
  std::string out;
  ASSERT_EQ(run("info " + (dir / "g.cf").string() + " --json", out), 0) << out;
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["rows"], 100);
  EXPECT_EQ(j["columns"], 12);
  EXPECT_EQ(j["value_type"], "genotype");
  EXPECT_EQ(j["codecs"]["zstd"], 12);
  EXPECT_EQ(j["decoded_bytes"], 12 * 25);
  EXPECT_EQ(j["data_bytes"], std::filesystem::file_size(dir / "g.cf" / "columns.dat"));
  EXPECT_EQ(j["index_bytes"], 64 + 12 * 72);
  EXPECT_EQ(j["float64_bytes"], 12 * 100 * 8);
  EXPECT_EQ(j["source"], "test");
  ASSERT_EQ(run("info " + (dir / "g.cf").string(), out), 0) << out;
  EXPECT_NE(out.find("value type   genotype"), std::string::npos) << out;
  EXPECT_NE(out.find("zstd 12"), std::string::npos) << out;
}

// --out is checked before anything runs: empty, or in a directory that does not exist.
TEST(CliTest, OutInAMissingDirectoryIsRefusedBeforeTheRun) {
  test::temp_dir dir;
  test::write_genotype_store(dir / "g.cf", 40, 5, {codec_id::none, 0, false});
  std::string out;
  const std::string store = (dir / "g.cf").string();
  EXPECT_NE(run("stats " + store + " --out " + (dir / "no" / "s.tsv").string(), out), 0);
  EXPECT_NE(out.find("--out: must name a file in an existing directory"), std::string::npos) << out;
  EXPECT_NE(run("qc " + store + " --maf 0.1 --write-snplist --out ''", out), 0);
  EXPECT_NE(out.find("--out: must name a file, got an empty string"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(dir / "no"));
}

// A damaged frame: `colflow verify` names its column; an analysis with --verify refuses the
// store, naming it too; without --verify an analysis decodes what is there (checksums on
// request, docs/FORMAT.md §4).
TEST(CliTest, AnalysisWithVerifyRefusesADamagedFrame) {
  test::temp_dir dir;
  const auto path = dir / "g.cf";
  test::write_genotype_store(path, 40, 5, {codec_id::none, 0, false});
  const store s = store::open(path);
  const column_entry e = s.entry(3);
  auto data = test::read_file(path / "columns.dat");
  data[e.offset + 1] ^= 0x01;
  test::write_file(path / "columns.dat", data);
  std::string out;
  const std::string hardy = "hardy " + path.string() + " --quiet --out " + (dir / "h").string();
  EXPECT_EQ(run(hardy, out), 0) << out;
  EXPECT_EQ(run(hardy + "v --verify", out), 1);
  EXPECT_NE(out.find("column 3: frame checksum mismatch"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(dir / "hv.hardy"));
}

TEST(CliTest, VerifyAcceptsASoundStoreAndNamesTheFirstBadColumn) {
  test::temp_dir dir;
  const auto path = dir / "f.cf";
  test::write_float_store(path, value_type::float64, 50, 6, {codec_id::lz4, 1, true});
  std::string out;
  ASSERT_EQ(run("verify " + path.string(), out), 0) << out;
  EXPECT_NE(out.find("ok: 6 columns"), std::string::npos) << out;

  const store s = store::open(path);
  const column_entry e = s.entry(4);
  auto data = test::read_file(path / "columns.dat");
  data[e.offset + e.frame_size / 2] ^= 0x20;
  test::write_file(path / "columns.dat", data);
  EXPECT_EQ(run("verify " + path.string(), out), 1);
  EXPECT_NE(out.find("column 4: frame checksum mismatch"), std::string::npos) << out;
  EXPECT_NE(out.find("columns.dat"), std::string::npos) << out;
}

// One changed byte in a sample ID (IID S3 -> S4) or a variant ID (rs2 -> rs3): the lists stay
// well formed, so only their checksums (format 1.3) can tell. verify names the file; an
// analysis refuses at open, before it writes anything.
TEST(CliTest, VerifyAndAnalysesNameAChangedListFile) {
  const struct {
    const char* file;
    std::string id;
    std::size_t byte;
  } damages[] = {{"samples.tsv", "\tS3\t", 2}, {"columns.tsv", "\trs2\t", 3}};
  for (const auto& d : damages) {
    test::temp_dir dir;
    const auto path = dir / "g.cf";
    test::write_genotype_store(path, 9, 5, {codec_id::zstd, 3, false});
    std::string out;
    ASSERT_EQ(run("verify " + path.string(), out), 0) << out;
    EXPECT_EQ(out.find("no list checksums"), std::string::npos) << out;
    auto bytes = test::read_file(path / d.file);
    const std::size_t at = std::string_view(bytes.data(), bytes.size()).find(d.id);
    ASSERT_NE(at, std::string_view::npos);
    ++bytes[at + d.byte];
    test::write_file(path / d.file, bytes);
    const std::string named =
        std::string("checksum mismatch: ") + d.file + " (" + (path / d.file).string() + ")";
    EXPECT_EQ(run("verify " + path.string(), out), 1);
    EXPECT_NE(out.find(named), std::string::npos) << out;
    EXPECT_NE(out.find("recorded 0x"), std::string::npos) << out;
    const auto result = dir / "stats.tsv";
    EXPECT_EQ(run("stats " + path.string() + " --quiet --out " + result.string(), out), 1);
    EXPECT_NE(out.find(named), std::string::npos) << out;
    std::set<std::string> left;
    for (const auto& e : std::filesystem::directory_iterator(dir.path()))
      left.insert(e.path().filename().string());
    EXPECT_EQ(left, std::set<std::string>{"g.cf"}) << "stats wrote something";
  }
}

// A store written before format 1.3 (the committed golden stores) verifies, with a line saying
// that its lists carry no checksums.
TEST(CliTest, VerifySaysAnOlderStoreCarriesNoListChecksums) {
  const auto golden =
      std::filesystem::path(COLFLOW_TEST_SOURCE_DIR) / "golden" / "genotype-zstd.cf";
  std::string out;
  ASSERT_EQ(run("verify " + golden.string(), out), 0) << out;
  EXPECT_NE(out.find("note: format 1.0 store: it carries no list checksums"), std::string::npos)
      << out;
  EXPECT_NE(out.find("ok: 3 columns"), std::string::npos) << out;
  ASSERT_EQ(run("info --json " + golden.string(), out), 0) << out;
  EXPECT_EQ(nlohmann::json::parse(out)["format_version"], "1.0");
}

// The store tests/data/old-store/numeric_chromosomes-77f7e1c.cf, written by the code of commit
// 77f7e1c (format 1.0, PLINK 1's numeric chromosome codes), verifies and opens in `info`.
TEST(CliTest, VerifyAndInfoAcceptTheStoreOfCommit77f7e1c) {
  const auto old = std::filesystem::path(COLFLOW_TEST_SOURCE_DIR) / "data" / "old-store" /
                   "numeric_chromosomes-77f7e1c.cf";
  std::string out;
  ASSERT_EQ(run("verify " + old.string(), out), 0) << out;
  EXPECT_NE(out.find("note: format 1.0 store: it carries no list checksums"), std::string::npos)
      << out;
  EXPECT_NE(out.find("ok: 16 columns"), std::string::npos) << out;
  ASSERT_EQ(run("info --json " + old.string(), out), 0) << out;
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["format_version"], "1.0");
  EXPECT_EQ(j["rows"], 50);
  EXPECT_EQ(j["columns"], 16);
  EXPECT_EQ(j["value_type"], "genotype");
  EXPECT_EQ(j["decoded_bytes"], 16 * 13);
  ASSERT_EQ(run("info " + old.string(), out), 0) << out;
  EXPECT_NE(out.find("value type   genotype"), std::string::npos) << out;
}

TEST(CliTest, BenchReportsEveryModeAsJson) {
  test::temp_dir dir;
  test::write_genotype_store(dir / "g.cf", 300, 40, {codec_id::zstd, 1, false});
  std::string out;
  ASSERT_EQ(run("bench " + (dir / "g.cf").string() + " --passes 2 --json", out), 0) << out;
  const auto j = nlohmann::json::parse(out);
  ASSERT_EQ(j.size(), 3u);
  std::set<std::string> modes;
  for (const auto& r : j) {
    modes.insert(r["mode"].get<std::string>());
    EXPECT_GT(r["seconds_per_pass"].get<double>(), 0.0);
    EXPECT_GT(r["decoded_gb_per_s"].get<double>(), 0.0);
    const double busy = r["compute_busy_fraction"].get<double>();
    EXPECT_GT(busy, 0.0);
    EXPECT_LE(busy, 1.0 + 1e-9);
    EXPECT_GT(r["peak_rss_bytes"].get<std::uint64_t>(), 0u);
  }
  EXPECT_EQ(modes, (std::set<std::string>{"pipelined", "sequential", "ram"}));
  ASSERT_EQ(run("bench " + (dir / "g.cf").string() +
                    " --passes 1 --warmup 0 --mode sequential --kernel sum",
                out),
            0)
      << out;
  EXPECT_NE(out.find("sequential"), std::string::npos) << out;
  EXPECT_NE(run("bench " + (dir / "g.cf").string() + " --mode warp", out), 0);
}

// A numeric option as --help lists it: "  --name TYPE[:RULE] [x N]", TYPE INT, UINT or FLOAT,
// RULE POSITIVE, NONNEGATIVE or "in [lo - hi]". An empty name for any other line.
struct numeric_option {
  std::string name, rule, hi;
  int count = 1;
};

numeric_option numeric_option_of(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string word; in >> word;) w.push_back(word);
  numeric_option o;
  if (line.rfind("  --", 0) != 0 || w.size() < 2) return o;
  const std::string& type = w[1];
  if (type.rfind("INT", 0) != 0 && type.rfind("UINT", 0) != 0 && type.rfind("FLOAT", 0) != 0)
    return o;
  o.name = w[0].substr(0, w[0].find(','));  // "--block-size,--bsize": the first name
  std::size_t next = 2;
  const std::size_t colon = type.find(':');
  if (colon != std::string::npos) o.rule = type.substr(colon + 1);
  if (o.rule == "in" && w.size() >= 5 && w[2].front() == '[') {  // "in [lo - hi]"
    o.hi = w[4].substr(0, w[4].find(']'));
    next = 5;
  }
  if (w.size() > next + 1 && w[next] == "x" &&
      std::isdigit(static_cast<unsigned char>(w[next + 1][0])))
    o.count = std::stoi(w[next + 1]);
  return o;
}

// Every numeric option of every command, as its --help lists it, given a value that is not a
// number, one outside the range its help states, and one value too few: each refused with a
// message that starts with the option's name and is colflow's, not the parser's defaults.
TEST(CliTest, EveryNumericOptionIsRefusedInColflowsWords) {
  std::string out;
  ASSERT_EQ(run("--help", out), 0);
  std::vector<std::string> commands;
  {
    std::istringstream help(out.substr(out.find("Subcommands:")));
    std::string line;
    std::getline(help, line);
    while (std::getline(help, line) && line.rfind("  ", 0) == 0) {
      std::istringstream words(line);
      commands.emplace_back();
      words >> commands.back();
    }
  }
  ASSERT_GE(commands.size(), 16u) << out;
  std::size_t checked = 0;
  // An option that several commands list the same way (the filters, --threads, --digits) is
  // declared once, with its rule, and refused by the same code: tried on the first command
  // that lists it. A command that declared it without the rule would list it otherwise.
  std::set<std::string> tried;
  for (const std::string& command : commands) {
    ASSERT_EQ(run(command + " --help", out), 0) << command;
    std::istringstream help(out);
    for (std::string line; std::getline(help, line);) {
      const numeric_option o = numeric_option_of(line);
      if (o.name.empty()) continue;
      if (!tried.insert(o.name + " " + o.rule + " " + o.hi + " " + std::to_string(o.count)).second)
        continue;
      const std::string &name = o.name, &rule = o.rule, &hi = o.hi;
      const int count = o.count;
      std::vector<std::string> bad = {"x"};
      if (rule == "POSITIVE") bad.push_back("0");
      if (rule == "NONNEGATIVE") bad.push_back("-1");
      if (!hi.empty())
        bad.push_back(hi.find('.') == std::string::npos ? std::to_string(std::stoll(hi) + 1)
                                                        : std::to_string(std::stod(hi) * 2 + 1));
      std::vector<std::string> given;
      for (const std::string& value : bad) {
        std::string args = command + " " + name;
        for (int k = 0; k < count; ++k) args += " " + value;
        given.push_back(args);
      }
      if (count > 1) {
        std::string args = command + " " + name;
        for (int k = 0; k < count - 1; ++k) args += " 1";
        given.push_back(args);
      }
      for (const std::string& args : given) {
        EXPECT_NE(run(args, out), 0) << args;
        // One line: colflow's prefix, the option, the rule; then where the options are listed.
        EXPECT_EQ(out.rfind("colflow: error: " + name + ": ", 0), 0u) << args << "\n" << out;
        EXPECT_EQ(out.find('\n'), out.size() - 1) << args << "\n" << out;
        for (const char* parser : {"Could not convert", "At least", "At Most", "required but",
                                   "not in range", "1797693134862315708"})
          EXPECT_EQ(out.find(parser), std::string::npos) << args << "\n" << out;
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 80u);
}

TEST(CliTest, OptionMessagesNameTheRuleAndTheValue) {
  std::string out;
  const auto expect_message = [&](const std::string& args, const std::string& message) {
    EXPECT_NE(run(args, out), 0) << args;
    EXPECT_NE(out.find(message), std::string::npos) << args << "\n" << out;
    EXPECT_EQ(out.find("1797693134862315708"), std::string::npos) << args << "\n" << out;
  };
  expect_message("bayesr S --pheno p --out o --iterations 0",
                 "--iterations: must be a positive integer, got 0");
  expect_message("bayesr S --pheno p --out o --iterations 2.5",
                 "--iterations: must be a positive integer, got 2.5");
  expect_message("bayesr S --pheno p --out o --thin -1",
                 "--thin: must be a positive integer, got -1");
  expect_message("bayesr S --pheno p --out o --burnin x",
                 "--burnin: must be a non-negative integer, got x");
  expect_message("bayesr S --pheno p --out o --mixture 0.01,-1",
                 "--mixture: must be a positive number, got -1");
  expect_message("bayesr S --pheno p --out o --mode fast",
                 "--mode: must be one of auto, pipelined, sequential or in-memory, got fast");
  expect_message("pca S --out o --k 0", "--k: must be an integer from 1 to 10000, got 0");
  expect_message("pca S --out o --iterations 101",
                 "--iterations: must be an integer from 0 to 100, got 101");
  expect_message("lasso S --pheno p --out o --lambda 0",
                 "--lambda: must be a positive number, got 0");
  expect_message("lasso S --pheno p --out o --lambda-min-ratio 2",
                 "--lambda-min-ratio: must be a number from 0 to 1, got 2");
  expect_message("enet S --pheno p --out o --alpha nan",
                 "--alpha: must be a number from 0 to 1, got nan");
  expect_message("ridge S --pheno p --out o --max-sweeps 0",
                 "--max-sweeps: must be a positive integer, got 0");
  expect_message("stats S --out o --threads -1",
                 "--threads: must be a non-negative integer, got -1");
  expect_message("stats S --out o --digits 18",
                 "--digits: must be an integer from 1 to 17, got 18");
  expect_message("hardy S --out o --hard-call-threshold 0.6",
                 "--hard-call-threshold: must be a number from 0 to 0.5, got 0.6");
  expect_message("hardy S --midp", "--out is required");
  expect_message(
      "assoc S --pheno p --out o --in-flight 99999999999999999999",
      "--in-flight: must be a non-negative integer, got 99999999999999999999 (too large)");
  expect_message("bench S --passes 0", "--passes: must be an integer from 1 to 1000, got 0");
  expect_message("bench S --kernel fma", "--kernel: must be one of dot-axpy, sum or none, got fma");
}

TEST(CliTest, ReportsMissingAndInvalidStores) {
  test::temp_dir dir;
  std::string out;
  EXPECT_EQ(run("info " + (dir / "nothing").string(), out), 1);
  EXPECT_NE(out.find("no store at"), std::string::npos) << out;
  EXPECT_EQ(run("verify " + dir.path().string(), out), 1);
  EXPECT_NE(out.find("columns.idx is missing"), std::string::npos) << out;
}

}  // namespace
}  // namespace colflow
