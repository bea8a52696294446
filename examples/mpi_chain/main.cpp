// mpi_chain: BayesR on MPI ranks from a program of one's own. Every rank opens the same store
// and calls the same analysis with the launch's communicator; the samples are split among the
// ranks at the sample blocks, and every rank ends with the chain one process would have made.
// Rank 0 writes it.
//
//   mpirun -np 2 mpi_chain STORE PHENO PREFIX     (or without mpirun: one process)
#include <colflow/colflow.hpp>
#include <colflow/mpi/mpi_session.hpp>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: mpi_chain STORE PHENO PREFIX\n");
    return 2;
  }
  // One session for the program's life: MPI_Init_thread here, MPI_Finalize at the end.
  colflow::mpi_session mpi(argc, argv);
  colflow::communicator& world = mpi.world();
  try {
    const colflow::store s = colflow::store::open(argv[1]);
    const colflow::selection all = colflow::selection::all(s);
    const colflow::phenotype_table pheno = colflow::read_phenotypes(argv[2], s.samples());
    const std::vector<double> y(pheno.values.col(0).data(),
                                pheno.values.col(0).data() + pheno.values.rows());

    colflow::analysis_options on_ranks;
    on_ranks.processes = &world;  // the only change from a single-process program
    colflow::bayesr_options chain;
    chain.iterations = 30;
    chain.burnin = 10;
    const colflow::bayesr_result r = colflow::bayesr(s, all, y, chain, on_ranks);

    if (world.rank() == 0) {
      const colflow::bayesr_files files = colflow::write_bayesr(s, all, r, argv[3]);
      const colflow::bayesr_summary h2 = colflow::summarize(r);
      std::printf("%d rank(s): posterior mean h2 %.6f over %zu kept iterations, wrote %s\n",
                  world.size(), h2.h2.mean, h2.kept, files.trace.c_str());
    }
  } catch (const colflow::error& e) {
    std::fprintf(stderr, "mpi_chain (rank %d): %s\n", world.rank(), e.message().c_str());
    mpi.abort(1);  // the other ranks may be waiting in a collective: end them all
  }
  return 0;
}
