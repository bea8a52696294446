// What the subcommands of the colflow program share. Each registers its options on the CLI11
// app and returns the function that runs it; command_table.hpp names them all, and main() only
// parses and dispatches.
#pragma once

#include <tbb/global_control.h>

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>

namespace colflow::cli {

// Runs a command once its options are parsed; returns the exit status of the program.
using command = std::function<int()>;

// The three penalised regressions one function registers (cmd_penalized.cpp).
enum class penalty { ridge, lasso, elastic_net };

// The --threads option: caps oneTBB's worker threads while the returned object lives;
// 0 means all cores (nothing is capped).
std::unique_ptr<tbb::global_control> limit_threads(unsigned threads);

// True when stderr is a terminal and progress lines make sense there.
bool stderr_is_terminal();

// "12.3 MB"-style sizes for people.
std::string human_bytes(double bytes);

}  // namespace colflow::cli
