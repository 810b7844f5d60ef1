// bank_conflicts twin: grid 528, block 256, shared f32[2048]. Each lane reads word
// (lane * stride) % 2048 `iters` times (unrolled by 8, volatile loads into a running fadd); the
// address is computed once outside the loop.
#include <vector>

#include "common.cuh"

namespace twins {

__global__ void __launch_bounds__(256) bank_conflicts(float* out, int stride, int iters) {
  __shared__ float s[2048];
  for (int i = threadIdx.x; i < 2048; i += 256) s[i] = float(i & 7) * 0.25f;
  __syncthreads();
  uint32_t lane = threadIdx.x & 31;
  volatile float* p = s + ((lane * uint32_t(stride)) % 2048u);
  float acc = 0.0f;
  for (int i = 0; i < iters; i += 8) {
#pragma unroll
    for (int k = 0; k < 8; ++k) acc += *p;
  }
  out[blockIdx.x * 256 + threadIdx.x] = acc;
}

int run_bank_conflicts(const std::vector<std::string>& args) {
  int iters = int(arg_i(args, "iters", 256));
  const uint32_t grid = 528, n = grid * 256;
  float* out;
  CK(cudaMalloc(&out, n * 4));
  std::vector<float> h(n);
  for (int stride : {1, 2, 4, 8, 16, 32, 33, 64}) {
    poison(out, n * 4);
    Timing t = time_launches([&](int) { bank_conflicts<<<grid, 256, 0, g.stream>>>(out, stride, iters); });
    CK(cudaMemcpy(h.data(), out, n * 4, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t w = ((i & 31) * uint32_t(stride)) % 2048u;
      bad += h[i] != float(iters) * float(w & 7) * 0.25f;
    }
    // ideal wavefronts per warp request: max over banks of distinct words hit in that bank
    int waves = 0;
    for (int bank = 0; bank < 32; ++bank) {
      std::vector<uint32_t> words;
      for (uint32_t l = 0; l < 32; ++l) {
        uint32_t w = (l * uint32_t(stride)) % 2048u;
        if (w % 32 == uint32_t(bank) && std::find(words.begin(), words.end(), w) == words.end()) words.push_back(w);
      }
      waves = std::max(waves, int(words.size()));
    }
    Row r = base_row("bank_conflicts", "twin");
    r.set("stride", stride).set("iters", iters).set("grid", grid).set("block", 256).set("ideal_wavefronts", waves);
    emit("bank_conflicts", r.set("check", bad ? "FAIL" : "ok"), &t);
    log("bank_conflicts stride=%d: %.2f us (ideal %d-way) %s\n", stride, t.median_us, waves, bad ? "FAIL" : "ok");
  }
  CK(cudaFree(out));
  return 0;
}

}  // namespace twins
