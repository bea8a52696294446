// The subcommands of the colflow program. Each registers its options on the CLI11 app and
// returns the function that runs it; main() only parses and dispatches.
#pragma once

#include <tbb/global_control.h>

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>

namespace colflow::cli {

using command = std::function<int()>;

command add_info(CLI::App& app);
command add_verify(CLI::App& app);
command add_preprocess(CLI::App& app);
command add_simulate(CLI::App& app);
command add_export(CLI::App& app);
command add_bench(CLI::App& app);
command add_stats(CLI::App& app);
command add_ld(CLI::App& app);
command add_assoc(CLI::App& app);
command add_pca(CLI::App& app);
command add_grm(CLI::App& app);
command add_bayesr(CLI::App& app);
command add_score(CLI::App& app);
command add_wgr(CLI::App& app);

enum class penalty { ridge, lasso, elastic_net };
command add_penalized(CLI::App& app, penalty kind);

// The --threads option: caps oneTBB's worker threads while the returned object lives;
// 0 means all cores (nothing is capped).
std::unique_ptr<tbb::global_control> limit_threads(unsigned threads);

// True when stderr is a terminal and progress lines make sense there.
bool stderr_is_terminal();

// "12.3 MB"-style sizes for people.
std::string human_bytes(double bytes);

}  // namespace colflow::cli
