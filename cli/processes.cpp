// This process alone, or the ranks of the MPI launch that started it.
#include "processes.hpp"

#include <iostream>
#include <memory>

#include "colflow/error.hpp"

#if COLFLOW_HAVE_MPI
#include "colflow/mpi/mpi_session.hpp"
#endif

namespace colflow::cli {
namespace {

#if COLFLOW_HAVE_MPI
std::unique_ptr<mpi_session>& session() {
  static std::unique_ptr<mpi_session> s;
  return s;
}
#endif

}  // namespace

void join_processes([[maybe_unused]] int& argc, [[maybe_unused]] char**& argv) {
#if COLFLOW_HAVE_MPI
  if (!mpi_session::launched()) return;
  session() = std::make_unique<mpi_session>(argc, argv);
  const communicator& world = session()->world();
  if (world.size() > 1 && world.rank() == 0)
    std::cerr << "colflow: running on " << world.size() << " MPI ranks\n";
#endif
}

void leave_processes() noexcept {
#if COLFLOW_HAVE_MPI
  session().reset();
#endif
}

communicator* run_processes() noexcept {
#if COLFLOW_HAVE_MPI
  if (session() && session()->world().size() > 1) return &session()->world();
#endif
  return nullptr;
}

bool is_writer() noexcept {
  const communicator* c = run_processes();
  return c == nullptr || c->rank() == 0;
}

void check_runs_on_ranks(const std::string& name) {
  const communicator* c = run_processes();
  if (c == nullptr) return;
  for (const char* on_ranks : {"bayesr", "sbayesr", "ridge", "lasso", "enet", "stats", "assoc",
                               "pca", "wgr", "grm", "ld", "score"})
    if (name == on_ranks) return;
  throw error(errc::invalid_argument,
              "colflow " + name + " runs as one process, not on " + std::to_string(c->size()) +
                  " MPI ranks: on several ranks bayesr, sbayesr, ridge, lasso, enet, stats, assoc, "
                  "pca, wgr, grm, ld and score run (docs/SCALING.md)");
}

int end_with_error(int code) {
#if COLFLOW_HAVE_MPI
  if (run_processes() != nullptr) {
    std::cerr.flush();
    session()->abort(code);
  }
#endif
  return code;
}

}  // namespace colflow::cli
