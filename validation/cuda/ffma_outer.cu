// ffma_outer twin: the 8 x 8 register outer product of gemm_fp32's inner loop, without its global
// loads, tile stores and barriers: the FFMA issue rate of an outer product alone, and with its
// fragments coming from shared memory. Grid `ctas`, block 256 (as gemm_fp32), 64 accumulators per
// thread, static shared 8 KB (two 8 x 128 tiles, as gemm_fp32). Each of `iters` iterations runs 8
// k-steps of 64 FFMA, acc[i][j] += a[i] * b[j]; the variants (`regs`, `shared`, `gemm`) differ in
// where a[8] and b[8] come from (kMode below).
#include <cmath>
#include <vector>

#include "common.cuh"

namespace twins {

__device__ __forceinline__ void lds4(float* v, uint32_t addr) {
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v[0]), "=f"(v[1]), "=f"(v[2]), "=f"(v[3]) : "r"(addr));
}

// A[q] and B[q], q < 1024: the 8 x 128 tiles of mode 2 (mode 1 reads their first 64 words)
__host__ __device__ inline float tile_a(int q) { return 1e-3f * float(q % 61 + 1); }
__host__ __device__ inline float tile_b(int q) { return 2e-3f * float(q % 59 + 1); }
// word of the tile where thread t's fragment h (0: values 0-3, 1: values 4-7) of k-step k starts
__host__ __device__ inline int frag_a(int mode, int t, int k, int h) {
  return mode == 2 ? k * 128 + t / 16 * 8 + 4 * h : 8 * k + 4 * h;
}
__host__ __device__ inline int frag_b(int mode, int t, int k, int h) {
  return mode == 2 ? k * 128 + t % 16 * 8 + 4 * h : 8 * k + 4 * h;
}

// kMode 0 (`regs`): fragments loaded once; 1 (`shared`): every k-step, every lane the same address
// (broadcast: two wavefronts, one per half-warp, and one uniform address per LDS.128); 2 (`gemm`): every k-step at
// gemm_fp32's addresses (thread t reads A rows t / 16 * 8 .. + 7 and B columns t % 16 * 8 .. + 7 of
// 8 x 128 tiles: 2 wavefronts per A load, 8 per B load, as b12 counts them).
template <int kMode>
__global__ void __launch_bounds__(256) ffma_outer(float* out, int iters) {
  __shared__ __align__(16) float As[1024], Bs[1024];
  const int t = threadIdx.x;
  for (int q = t; q < 1024; q += 256) As[q] = tile_a(q), Bs[q] = tile_b(q);
  __syncthreads();
  const auto as = uint32_t(__cvta_generic_to_shared(As)), bs = uint32_t(__cvta_generic_to_shared(Bs));
  float acc[64];
#pragma unroll
  for (int e = 0; e < 64; ++e) acc[e] = 0.0f;
  float a[8], b[8];
  if (kMode == 0) {
#pragma unroll
    for (int e = 0; e < 8; ++e) a[e] = As[e], b[e] = Bs[e];
  }
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      if (kMode != 0) {  // volatile: the tile does not change, but the loads must stay in the loop
        lds4(&a[0], as + 4 * frag_a(kMode, t, k, 0)), lds4(&a[4], as + 4 * frag_a(kMode, t, k, 1));
        lds4(&b[0], bs + 4 * frag_b(kMode, t, k, 0)), lds4(&b[4], bs + 4 * frag_b(kMode, t, k, 1));
      }
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i * 8 + j] = fmaf(a[i], b[j], acc[i * 8 + j]);
    }
  }
  float s = 0.0f;
#pragma unroll
  for (int e = 0; e < 64; ++e) s += acc[e];
  out[blockIdx.x * 256 + t] = s;
}

// The host reference for thread t: the same chains of fmaf in the same order, then the same sum.
static float ffma_outer_ref(int mode, int t, int iters) {
  float acc[64] = {};
  for (int it = 0; it < iters; ++it)
    for (int k = 0; k < 8; ++k) {
      const int kk = mode == 0 ? 0 : k;
      for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 8; ++j)
          acc[i * 8 + j] = std::fma(tile_a(frag_a(mode, t, kk, i / 4) + i % 4),
                                    tile_b(frag_b(mode, t, kk, j / 4) + j % 4), acc[i * 8 + j]);
    }
  float s = 0.0f;
  for (int e = 0; e < 64; ++e) s += acc[e];
  return s;
}

int run_ffma_outer(const std::vector<std::string>& args) {
  const int max_ctas = 264;
  float* out;
  CK(cudaMalloc(&out, size_t(max_ctas) * 256 * 4));
  std::vector<float> h(size_t(max_ctas) * 256);
  const int iters0 = int(arg_i(args, "iters", 256));
  std::vector<int> iter_list = {iters0, iters0 / 2};
  if (g.quick) iter_list = {4};
  const char* names[] = {"regs", "shared", "gemm"};
  for (int mode : {1, 0, 2})
    for (int ctas : {132, 264})
      for (int iters : iter_list) {
        size_t n = size_t(ctas) * 256;
        poison(out, n * 4);
        Timing tm = time_launches([&](int) {
          if (mode == 0)
            ffma_outer<0><<<ctas, 256, 0, g.stream>>>(out, iters);
          else if (mode == 1)
            ffma_outer<1><<<ctas, 256, 0, g.stream>>>(out, iters);
          else
            ffma_outer<2><<<ctas, 256, 0, g.stream>>>(out, iters);
        });
        CKL();
        CK(cudaMemcpy(h.data(), out, n * 4, cudaMemcpyDeviceToHost));
        std::vector<float> ref(256);
        for (int t = 0; t < 256; ++t) ref[size_t(t)] = ffma_outer_ref(mode, t, iters);
        size_t bad = 0;
        for (size_t i = 0; i < n; ++i) bad += h[i] != ref[i % 256];
        const double ffma = double(n) * iters * 8 * 64;  // thread FFMAs
        Row r = base_row("ffma_outer", names[mode]);
        r.set("ctas", ctas).set("iters", iters).set("mode", mode).set("grid", ctas).set("block", 256);
        r.set("warp_ffma_per_cycle_per_sm", ffma / 32.0 / (tm.median_us * 0.5 * (tm.before.sm_mhz + tm.after.sm_mhz)) /
                                                double(std::min(ctas, g.sms)));
        emit("ffma_outer", r.set("check", bad ? "FAIL" : "ok"), &tm);
        log("ffma_outer %s ctas=%d iters=%d: %.2f us %s\n", names[mode], ctas, iters, tm.median_us,
            bad ? "FAIL" : "ok");
      }
  CK(cudaFree(out));
  return 0;
}

}  // namespace twins
