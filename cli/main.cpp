// The colflow program: argument parsing, dispatch and the stop signals (the commands are the
// rows of command_table.cpp, each in its cmd_NAME.cpp). Every failure is one line on stderr naming
// the file and the problem, and a non-zero exit.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "colflow/cancellation.hpp"
#include "colflow/colflow.hpp"
#include "command_table.hpp"
#include "option_errors.hpp"
#include "processes.hpp"

namespace {

// The first stop signal received, 0 before any.
volatile std::sig_atomic_t stop_signal = 0;

// SIGINT, SIGTERM, SIGHUP: ask the running command to stop (it then removes its partial
// outputs and ends with errc::cancelled). A second signal takes the default action, so that a
// run that does not stop soon enough can still be interrupted. Async-signal-safe calls only.
extern "C" void on_stop_signal(int signal_number) {
  if (stop_signal != 0) {
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    ::sigemptyset(&default_action.sa_mask);
    ::sigaction(signal_number, &default_action, nullptr);
    ::raise(signal_number);  // delivered when the handler returns (the signal is blocked now)
    return;
  }
  stop_signal = signal_number;
  colflow::request_stop();
}

// The signal handlers belong to the program, not to the library (colflow/cancellation.hpp).
void install_signal_handlers() {
  // A file-size limit (RLIMIT_FSIZE) must fail the write with EFBIG, reported and cleaned up
  // like a full disk, not kill the process half-way through a store.
  std::signal(SIGXFSZ, SIG_IGN);
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  ::sigemptyset(&action.sa_mask);
  // One stop handler at a time, whichever of the three signals arrives.
  for (const int s : {SIGINT, SIGTERM, SIGHUP}) ::sigaddset(&action.sa_mask, s);
  action.sa_flags = SA_RESTART;
  for (const int s : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(s, &action, nullptr);
}

const char* signal_name(int signal_number) {
  switch (signal_number) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "a signal";
  }
}

// A command that failed after a stop signal arrived was interrupted, whatever error the stop
// surfaced as: one line naming the signal, and the shell's convention for a signal's status.
int interrupted() {
  const int s = stop_signal;
  std::cerr << "colflow: interrupted by " << signal_name(s) << " (partial outputs removed)\n";
  return 128 + s;
}

// Every command of the table (command_table.hpp) as a subcommand of `app`, with what runs it,
// in the table's order.
std::vector<std::pair<CLI::App*, colflow::cli::command>> add_commands(CLI::App& app) {
  std::vector<std::pair<CLI::App*, colflow::cli::command>> commands;
  for (const colflow::cli::command_entry& entry : colflow::cli::command_table()) {
    CLI::App* sub = app.add_subcommand(std::string(entry.name), std::string(entry.description));
    commands.emplace_back(sub, entry.add_options(*sub));
  }
  return commands;
}

// `colflow --list-commands`, alone: the command table for the tests (command_table.hpp). Read
// before CLI11 parses, so that it needs no subcommand and --help neither shows it nor changes.
bool asks_for_command_list(int argc, char** argv) {
  return argc == 2 && std::string_view(argv[1]) == "--list-commands";
}

}  // namespace

int main(int argc, char** argv) {
  if (asks_for_command_list(argc, argv)) {
    colflow::cli::list_commands(std::cout);
    return 0;
  }
  install_signal_handlers();
  CLI::App app{
      "colflow: per-column compressed genotype stores, streamed through a self-balancing\n"
      "flow graph of parallel decompression and serial compute.\n"};
  app.name("colflow");
  app.set_version_flag("--version", "colflow " + std::string(colflow::version()) +
                                        " (store format " +
                                        std::to_string(colflow::format_version_major) + "." +
                                        std::to_string(colflow::format_version_minor) + ")");
  app.require_subcommand(1);
  colflow::cli::use_option_error_messages(app);
  app.footer("Run 'colflow COMMAND --help' for the options of a command.");

  const auto commands = add_commands(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  // Under an MPI launcher, the ranks of the run (processes.hpp); an error on any rank ends them
  // all, with its message.
  const auto run_command = [&]() -> int {
    try {
      colflow::cli::join_processes(argc, argv);
      colflow::check_vector_path();  // COLFLOW_SIMD, before any work
      for (const auto& [sub, run] : commands)
        if (sub->parsed()) {
          colflow::cli::check_runs_on_ranks(sub->get_name());
          return run();
        }
    } catch (const colflow::error& e) {
      if (stop_signal != 0) return colflow::cli::end_with_error(interrupted());
      std::cerr << "colflow: error: " << e.message() << "\n";
      return colflow::cli::end_with_error(1);
    } catch (const std::exception& e) {
      if (stop_signal != 0) return colflow::cli::end_with_error(interrupted());
      std::cerr << "colflow: error: " << e.what() << "\n";
      return colflow::cli::end_with_error(1);
    }
    return 0;
  };
  const int code = run_command();
  colflow::cli::leave_processes();
  return code;
}
