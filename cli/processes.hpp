// The processes one run of the colflow command is made of: this process alone, or the ranks
// of an MPI launch (`mpirun -np R colflow COMMAND ...`, docs/SCALING.md). A plain run never
// initialises MPI: only a process started by a launcher does.
#pragma once

#include <string>

#include "colflow/communicator.hpp"

namespace colflow::cli {

// Joins the MPI launch that started this process, if one did (and this build has MPI); says
// so on stderr from rank 0. Call once, first thing in main; the session lasts until exit.
void join_processes(int& argc, char**& argv);

// Leaves the launch (MPI_Finalize) at the end of main, after every rank's work.
void leave_processes() noexcept;

// The ranks of the launch, or null for a single process.
communicator* run_processes() noexcept;

// True on the one process that writes outputs and shows progress: rank 0, or the only one.
bool is_writer() noexcept;

// Checks that the command `name` can run on the ranks of this launch (the iterative analyses split
// their samples; the other commands would write the same files from every rank).
void check_runs_on_ranks(const std::string& name);

// Ends the run after an error on this process: on several ranks, every rank at once with
// `code` (so that none waits forever for this one); otherwise returns `code`.
int end_with_error(int code);

}  // namespace colflow::cli
