// The colflow program: argument parsing, dispatch and the stop signals (the commands are in
// cmd_*.cpp). Every failure is one line on stderr naming the file and the problem, and a
// non-zero exit.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>
#include <map>

#include "colflow/cancellation.hpp"
#include "colflow/colflow.hpp"
#include "commands.hpp"
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

}  // namespace

int main(int argc, char** argv) {
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

  std::map<CLI::App*, colflow::cli::command> commands;
  const auto add = [&](CLI::App* sub, colflow::cli::command run) { commands[sub] = run; };
  {
    auto* info = app.add_subcommand("info", "Describe a store: shape, codecs, sizes, ratio");
    add(info, colflow::cli::add_info(*info));
    auto* verify =
        app.add_subcommand("verify", "Check every checksum and decode every column of a store");
    add(verify, colflow::cli::add_verify(*verify));
    auto* preprocess = app.add_subcommand(
        "preprocess", "Convert PLINK .bed/.bim/.fam, BGEN, VCF/BCF or a dense matrix into a store");
    add(preprocess, colflow::cli::add_preprocess(*preprocess));
    auto* simulate = app.add_subcommand(
        "simulate", "Write simulated PLINK genotypes, a phenotype and the true effects");
    add(simulate, colflow::cli::add_simulate(*simulate));
    auto* exporter = app.add_subcommand("export", "Write a store back as PLINK files or .npy");
    add(exporter, colflow::cli::add_export(*exporter));
    auto* bench = app.add_subcommand(
        "bench", "Measure how fast a store streams: pipelined, sequential, in RAM");
    add(bench, colflow::cli::add_bench(*bench));
    auto* stats = app.add_subcommand(
        "stats", "Per-column statistics: calls, missing rate, A1 frequency, mean, SD");
    add(stats, colflow::cli::add_stats(*stats));
    auto* ld = app.add_subcommand("ld", "LD between variants: r or r2 as plink --r/--r2");
    add(ld, colflow::cli::add_ld(*ld));
    auto* assoc = app.add_subcommand(
        "assoc",
        "Association scan: linear or logistic (Firth) regression on each column, as plink2 --glm");
    add(assoc, colflow::cli::add_assoc(*assoc));
    auto* pca =
        app.add_subcommand("pca", "Principal components by randomised SVD over streaming passes");
    add(pca, colflow::cli::add_pca(*pca));
    auto* grm = app.add_subcommand(
        "grm", "Genomic relationship matrix (PLINK 2 --make-rel, PLINK 1.9 --make-grm-bin)");
    add(grm, colflow::cli::add_grm(*grm));
    using colflow::cli::penalty;
    auto* ridge = app.add_subcommand("ridge", "Ridge regression path by coordinate descent");
    add(ridge, colflow::cli::add_penalized(*ridge, penalty::ridge));
    auto* lasso = app.add_subcommand("lasso", "Lasso path by coordinate descent, with screening");
    add(lasso, colflow::cli::add_penalized(*lasso, penalty::lasso));
    auto* enet = app.add_subcommand("enet", "Elastic-net path by coordinate descent (--alpha)");
    add(enet, colflow::cli::add_penalized(*enet, penalty::elastic_net));
    auto* bayesr = app.add_subcommand(
        "bayesr", "BayesR Gibbs sampler: mixture-of-normals effects, h2, inclusion probabilities");
    add(bayesr, colflow::cli::add_bayesr(*bayesr));
    auto* score = app.add_subcommand(
        "score", "Polygenic scores: weighted allele counts per sample, as plink2 --score");
    add(score, colflow::cli::add_score(*score));
    auto* wgr = app.add_subcommand(
        "wgr", "Whole-genome regression, regenie's step 1: LOCO predictions for assoc --loco");
    add(wgr, colflow::cli::add_wgr(*wgr));
  }

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
