// The one main() of the gtsim_bench binary; each bench_*.cpp registers its own benchmarks.
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
