// gtsim sweep under MPI (mpirun -np N gtsim sweep ...): each rank runs shard rank/size and rank 0
// writes the merged CSV. Built with MPI where CMake finds it (Debian's libopenmpi-dev); without it,
// or outside mpirun, the sweep runs as one process.
#pragma once

#include <string>
#include <vector>

#include "cli/sweep.hpp"

namespace gtsim::cli {

struct MpiSession {
  int rank = 0, size = 1;
};

// Initializes MPI once when the process was started by mpirun (and gtsim was built with MPI);
// otherwise {0, 1}. MPI_Finalize runs at exit.
MpiSession mpi_session();

// Every rank's rows (rank r holds points r, r + size, ...) gathered on rank 0 in sweep order;
// "" on other ranks.
std::string mpi_gather_rows(const MpiSession& s, const std::vector<SweepRow>& rows, uint64_t points);

}  // namespace gtsim::cli
