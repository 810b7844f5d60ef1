#include "cli/sweep_mpi.hpp"

#include <cstdlib>

#include "sim/error.hpp"

#ifdef GTSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace gtsim::cli {

namespace {
bool started_by_mpirun() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}
}  // namespace

#ifdef GTSIM_HAVE_MPI

MpiSession mpi_session() {
  static MpiSession s = [] {
    MpiSession m;
    if (!started_by_mpirun()) return m;
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    std::atexit([] { MPI_Finalize(); });
    MPI_Comm_rank(MPI_COMM_WORLD, &m.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m.size);
    return m;
  }();
  return s;
}

std::string mpi_gather_rows(const MpiSession& s, const std::vector<SweepRow>& rows, uint64_t points) {
  std::string mine;
  for (const auto& r : rows) mine += r.line;
  int len = int(mine.size());
  std::vector<int> lens(size_t(s.size)), offs(size_t(s.size));
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string all;
  if (s.rank == 0) {
    int total = 0;
    for (int r = 0; r < s.size; ++r) offs[size_t(r)] = total, total += lens[size_t(r)];
    all.resize(size_t(total));
  }
  MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), offs.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  if (s.rank != 0) return "";
  // rank r's text holds its rows in order; interleave them back into sweep order
  std::vector<std::vector<std::string>> per(size_t(s.size));
  for (int r = 0; r < s.size; ++r) {
    size_t b = size_t(offs[size_t(r)]), e = b + size_t(lens[size_t(r)]);
    while (b < e) {
      size_t nl = all.find('\n', b);
      per[size_t(r)].push_back(all.substr(b, nl + 1 - b));
      b = nl + 1;
    }
  }
  std::string out;
  for (uint64_t p = 0; p < points; ++p) {
    auto& v = per[p % uint64_t(s.size)];
    size_t i = p / uint64_t(s.size);
    if (i >= v.size()) throw SimulationError("mpi: rank " + std::to_string(p % uint64_t(s.size)) + " sent too few rows");
    out += v[i];
  }
  return out;
}

#else

MpiSession mpi_session() {
  if (started_by_mpirun())
    throw InputError(SourcePos{"gtsim sweep"},
                     "started by mpirun, but this gtsim was built without MPI (install libopenmpi-dev and rebuild), "
                     "expected a build with MPI or --shard I/N with gtsim merge");
  return {};
}

std::string mpi_gather_rows(const MpiSession&, const std::vector<SweepRow>&, uint64_t) { return ""; }

#endif

}  // namespace gtsim::cli
