// Simulation speed of the TPU model: host time per simulated bf16 matmul on the v5e config
// (tpu_like and textbook timing), 4096^3 and 8192^3.
#include <benchmark/benchmark.h>

#include "models/tpu/lowering.hpp"
#include "models/tpu/tpu_model.hpp"

namespace {

void BM_TpuMatmul(benchmark::State& state) {
  using namespace gtsim::tpu;
  std::vector<std::string> o;
  if (state.range(1)) o.push_back("mxu.timing=textbook");
  TpuConfig cfg = TpuConfig::load(std::string(GTSIM_SOURCE_DIR) + "/hw_configs/tpu-v5e.yaml", o);
  OpDesc op;
  op.name = "mm";
  op.kind = OpKind::kMatmul;
  op.m = op.k = op.n = uint64_t(state.range(0));
  TpuModel model(cfg);
  uint64_t events = 0;
  for (auto _ : state) {
    RunResult r = model.run(lower(op, cfg).at(0));
    events = r.events;
    benchmark::DoNotOptimize(r.cycles);
  }
  state.counters["events"] = double(events);
}
BENCHMARK(BM_TpuMatmul)
    ->Args({4096, 0})
    ->Args({8192, 0})
    ->Args({4096, 1})
    ->Args({8192, 1})
    ->Unit(benchmark::kMillisecond);

}  // namespace

// The suite's only main for now (bench/CMakeLists.txt links benchmark::benchmark, not
// benchmark_main); move it to a bench_main.cpp when other suites arrive.
