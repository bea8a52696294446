/// @file mpi_session.hpp
/// colflow on MPI ranks (docs/DESIGN.md §4.9): the `colflow_mpi` library, built where CMake
/// finds MPI. The core library never includes MPI; this layer implements its communicator.
#pragma once

#include <memory>

#include "colflow/communicator.hpp"

namespace colflow {

/// MPI for one program run: initialised when the session is made (unless the program already
/// did), finalised when it ends (if it initialised). Its world() is every rank of the launch.
class mpi_session {
 public:
  /// True when an MPI launcher (mpirun, mpiexec, srun) started this process, read from the
  /// environment that launchers set: a plain run then never pays for MPI's initialisation.
  static bool launched() noexcept;

  /// MPI_Init_thread asking for MPI_THREAD_SERIALIZED: the collectives of a pass are called
  /// from the thread that runs the compute stage, which need not be the main thread. Throws
  /// colflow::error when MPI cannot give that.
  mpi_session(int& argc, char**& argv);
  ~mpi_session();
  mpi_session(const mpi_session&) = delete;
  mpi_session& operator=(const mpi_session&) = delete;

  /// Every rank of the launch (MPI_COMM_WORLD).
  communicator& world() noexcept;

  /// Ends every rank of the launch at once with `code` (MPI_Abort): after an error on one
  /// rank, so that no other waits for it forever in a collective.
  [[noreturn]] void abort(int code) noexcept;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace colflow
