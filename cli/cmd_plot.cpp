// colflow plot: runs the Python package's `colflow-plot` with the same arguments.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"

namespace colflow::cli {

namespace {

constexpr const char* plot_program = "colflow-plot";
constexpr const char* install_hint =
    "colflow plot: colflow-plot was not found on PATH; install the Python package with its "
    "pictures: pip install './python[plot]'";

// Replaces this process with `colflow-plot ARGS...` found on PATH, so that its output, its
// exit status and its signals are the program's own. Returns only when it cannot be started:
// 1, after one line saying what to install (or why it failed).
int run_colflow_plot(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(plot_program));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::cout.flush();
  ::execvp(plot_program, argv.data());
  const int failure = errno;
  if (failure == ENOENT) {
    std::cerr << install_hint << '\n';
  } else {
    std::cerr << "colflow plot: cannot run colflow-plot: " << std::strerror(failure) << '\n';
  }
  return 1;
}

bool asks_for_help(const std::vector<std::string>& args) {
  return !args.empty() && (args.front() == "--help" || args.front() == "-h");
}

}  // namespace

command add_plot(CLI::App& app) {
  // Every argument passes through, --help included: colflow-plot parses them all.
  app.prefix_command();
  app.allow_extras();
  app.set_help_flag();
  app.footer(
      "colflow plot ARGS... runs colflow-plot ARGS..., the command of the Python package's\n"
      "pictures (docs/PYTHON.md, \"Pictures\"), found on PATH:\n"
      "  colflow plot manhattan scan.PHENO.assoc.tsv --out scan.png\n"
      "  colflow plot qq scan.PHENO.assoc.tsv --out qq.svg\n"
      "  colflow plot trace fit.trace.tsv --out trace.png\n"
      "Its help follows when it is installed (pip install './python[plot]').");
  return [sub = &app] {
    const std::vector<std::string> args = sub->remaining();
    if (asks_for_help(args)) {
      std::cout << sub->help(sub->get_parent()->get_name()) << '\n';
      if (run_colflow_plot({"--help"}) != 0) return 0;  // the line above says what to install
    }
    return run_colflow_plot(args);
  };
}

}  // namespace colflow::cli
