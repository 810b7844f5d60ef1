// empty twin: grid 1, block 32, one store by thread 0. Launch overhead, measured three ways:
// back-to-back stream launches (per-launch time over a batch), CUDA-graph replay (per kernel
// node), and events around one launch (submit-to-complete as the GPU's front end sees it).
#include <chrono>

#include "common.cuh"

namespace twins {

__global__ void empty(int* out) {
  if (threadIdx.x == 0) out[0] = 1;
}

int run_empty(const std::vector<std::string>&) {
  int* out;
  CK(cudaMalloc(&out, 4));
  auto launch = [&](int) { empty<<<1, 32, 0, g.stream>>>(out); };
  if (g.ncu) {
    launch(0);
    CK(cudaDeviceSynchronize());
    return 0;
  }
  for (int k = 0; k < 2; ++k) {  // twice: the second shows the spread
    Timing tb = time_launches(launch, 1000, 9, 100);
    emit("empty", base_row("empty", "back_to_back").set("grid", 1).set("block", 32), &tb);
    Timing tg = time_graph(launch, 1000, 9);
    emit("empty", base_row("empty", "graph_replay").set("grid", 1).set("block", 32), &tg);
    Timing t1 = time_launches(launch, 1, 51, 10);
    emit("empty", base_row("empty", "single_launch_events").set("grid", 1).set("block", 32), &t1);
    // host cost of one cudaLaunchKernel call (no sync), median of 9 batches of 1000
    std::vector<double> v;
    for (int r = 0; r < 9; ++r) {
      CK(cudaDeviceSynchronize());
      auto a = std::chrono::steady_clock::now();
      for (int i = 0; i < 1000; ++i) launch(i);
      auto b = std::chrono::steady_clock::now();
      v.push_back(std::chrono::duration<double, std::micro>(b - a).count() / 1000);
    }
    CK(cudaDeviceSynchronize());
    std::sort(v.begin(), v.end());
    Timing th;
    th.median_us = v[4], th.min_us = v[0], th.max_us = v[8], th.repeats = 9, th.per_rep = 1000;
    th.before = th.after = read_clocks();
    emit("empty", base_row("empty", "host_launch_call").set("grid", 1).set("block", 32), &th);
    log("empty: back-to-back %.2f us, graph %.2f us, single %.2f us, host call %.2f us\n", tb.median_us,
        tg.median_us, t1.median_us, th.median_us);
  }
  int h = 0;
  CK(cudaMemcpy(&h, out, 4, cudaMemcpyDeviceToHost));
  CK(cudaFree(out));
  return h == 1 ? 0 : 1;
}

}  // namespace twins
