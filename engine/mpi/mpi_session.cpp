// The communicator over MPI, and the session that initialises and finalises MPI.
#include "colflow/mpi/mpi_session.hpp"

#include <mpi.h>

#include <climits>
#include <cstdlib>
#include <string>
#include <vector>

#include "colflow/error.hpp"

namespace colflow {
namespace {

// A communicator over an MPI communicator: all_gather is MPI_Allgatherv.
class mpi_communicator final : public communicator {
 public:
  explicit mpi_communicator(MPI_Comm comm) : comm_(comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }

  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }

  void all_gather(std::span<const double> mine, std::span<double> all,
                  std::span<const std::size_t> counts) override {
    if (counts.size() != static_cast<std::size_t>(size_))
      throw error(errc::invalid_argument, "all_gather: one count per rank is needed");
    counts_.resize(counts.size());
    offsets_.resize(counts.size());
    std::size_t at = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      if (counts[r] > INT_MAX || at > INT_MAX)
        throw error(errc::invalid_argument, "all_gather: more than INT_MAX values");
      counts_[r] = static_cast<int>(counts[r]);
      offsets_[r] = static_cast<int>(at);
      at += counts[r];
    }
    if (at > all.size() || mine.size() != counts[static_cast<std::size_t>(rank_)])
      throw error(errc::invalid_argument, "all_gather: the buffers do not fit the counts");
    const int rc = MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE,
                                  all.data(), counts_.data(), offsets_.data(), MPI_DOUBLE, comm_);
    if (rc != MPI_SUCCESS) throw error(errc::io_error, "MPI_Allgatherv failed");
  }

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  std::vector<int> counts_, offsets_;
};

}  // namespace

struct mpi_session::impl {
  bool initialised_here = false;
  std::unique_ptr<mpi_communicator> world;
};

bool mpi_session::launched() noexcept {
  // Open MPI, MPICH/Hydra and PMIx (Slurm's srun) set these in every process they start.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (std::getenv(name) != nullptr) return true;
  return false;
}

mpi_session::mpi_session(int& argc, char**& argv) : impl_(std::make_unique<impl>()) {
  int ready = 0;
  MPI_Initialized(&ready);
  int provided = MPI_THREAD_SINGLE;
  if (ready) {
    MPI_Query_thread(&provided);
  } else {
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
      throw error(errc::io_error, "MPI_Init_thread failed");
    impl_->initialised_here = true;
  }
  if (provided < MPI_THREAD_SERIALIZED)
    throw error(errc::invalid_argument,
                "MPI gives thread level " + std::to_string(provided) +
                    ", colflow needs MPI_THREAD_SERIALIZED (collectives from the compute thread)");
  impl_->world = std::make_unique<mpi_communicator>(MPI_COMM_WORLD);
}

mpi_session::~mpi_session() {
  impl_->world.reset();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (impl_->initialised_here && !finalized) MPI_Finalize();
}

communicator& mpi_session::world() noexcept { return *impl_->world; }

void mpi_session::abort(int code) noexcept {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; this is for the compiler and odd MPIs
}

}  // namespace colflow
