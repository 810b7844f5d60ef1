// gtsim sweep: one kernel or workload over a grid of parameter values, each point an independent
// simulation on a fresh machine, run on threads, shards or MPI ranks. The CSV is the same whatever
// the thread count or sharding: rows are in sweep order (the first --param outermost) and every
// figure comes from a deterministic simulation of its point.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels_ir/exec/program.hpp"

namespace gtsim::cli {

// One --param: names that move together and their values (START:STOP[:STEP], STOP inclusive, or one
// value). Throws InputError naming the argument on a malformed range.
struct SweepAxis {
  std::vector<std::string> names;
  std::vector<int64_t> values;
  std::string arg;
};
SweepAxis parse_sweep_axis(const std::string& arg, const std::string& option = "--param");

// The points of the grid in sweep order: every combination of the axes' values.
std::vector<ir::ParamValues> sweep_points(const std::vector<SweepAxis>& axes);
std::vector<std::string> sweep_param_names(const std::vector<SweepAxis>& axes);

// "I/N" (0 <= I < N); InputError otherwise.
struct Shard {
  uint64_t index = 0, count = 1;
};
Shard parse_shard(const std::string& arg);
bool in_shard(uint64_t point, const Shard& s);

// The CSV's columns after the parameters, and one row's figures.
extern const char* const kSweepColumns;
struct SweepRow {
  uint64_t point = 0;
  std::string line;  // the CSV row, newline-terminated
};

// Runs `simulate(point)` for every point of `shard` on `threads` threads; the rows come back in point
// order. `progress` (may be empty) is called from one thread with (done, total).
std::vector<SweepRow> run_points(const std::vector<ir::ParamValues>& points, const Shard& shard, unsigned threads,
                                 const std::function<std::string(const ir::ParamValues&)>& simulate,
                                 const std::function<void(uint64_t, uint64_t)>& progress);

// The header line of a sweep CSV over `names`, and the header of a shard file (a comment line
// "# gtsim sweep shard I/N of P points" before it) so that `gtsim merge` can check completeness.
std::string sweep_header(const std::vector<std::string>& names);
std::string shard_comment(const Shard& s, uint64_t points);

// gtsim merge: shard files -> the one CSV an unsharded sweep writes. InputError naming the file on
// a missing or repeated shard, a header that differs, or a point count that does not add up.
std::string merge_shards(const std::vector<std::string>& paths);

// --plot: the one axis of `axes` with more than one value (the first axis when none has), or an
// InputError naming --plot when several vary (a curve has one x).
size_t sweep_plot_axis(const std::vector<SweepAxis>& axes);

// The largest power of two dividing n (n > 0), the alignment the lecture colours points by.
int64_t largest_pow2_divisor(int64_t n);

// Draws `y` ("tflops" or "time_us") of the sweep's rows against the plot axis's value, each point
// coloured by the largest power of two dividing it (cli/plot.hpp writes PATH.dat and PATH.gp beside
// the picture). `rows` are the CSV's data lines (sweep_header's columns over `names`).
void write_sweep_plot(const std::string& image, const std::vector<SweepAxis>& axes,
                      const std::vector<std::string>& names, const std::vector<SweepRow>& rows, const std::string& y,
                      const std::string& title);

}  // namespace gtsim::cli
