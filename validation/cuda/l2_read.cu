// l2_read twin (batch b18 on): the L2-to-SM read bandwidth per SM and in all, and the latency of a
// burst of loads, from an 8 MB buffer that stays in the L2 (kernels_ir/lib/l2_read.kir). Grid `ctas`
// (one CTA per SM), block `threads`; each thread runs `iters` iterations of 4 independent 16-byte loads
// (LDG.E.128, as gemm_fp32's tile loads) and sums them. Load j of iteration it of thread t in CTA c reads
// vector ((it * 4 + j) * ctas + c) * threads + t, modulo the buffer's vectors.
#include <vector>

#include "common.cuh"

namespace twins {

// nvec: a power of two (the modulo is a mask)
__global__ void l2_read(const float4* __restrict__ src, float* __restrict__ out, int iters, uint32_t nvec) {
  const uint32_t stride = gridDim.x * blockDim.x, base = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0.0f;
  for (int it = 0; it < iters; ++it) {
    float4 v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = src[(base + (uint32_t(it) * 4 + j) * stride) & (nvec - 1)];
#pragma unroll
    for (int j = 0; j < 4; ++j) s += v[j].x + v[j].y + v[j].z + v[j].w;
  }
  out[base] = s;
}

int run_l2_read(const std::vector<std::string>& args) {
  const uint64_t footprint = uint64_t(arg_i(args, "footprint", 8 << 20));  // a power of two
  if (footprint < 16 || (footprint & (footprint - 1))) {
    std::fprintf(stderr, "l2_read: --footprint=%llu is not a power of two of at least 16 bytes\n",
                 (unsigned long long)footprint);
    return 2;
  }
  const uint32_t nvec = uint32_t(footprint / 16);
  float *src, *out;
  CK(cudaMalloc(&src, footprint));
  CK(cudaMalloc(&out, size_t(g.sms) * 1024 * 4));
  // every element 1/64: a thread's sum is exactly iters * 16 / 64 (small integers and quarters in fp32)
  std::vector<float> ones(footprint / 4, 1.0f / 64);
  CK(cudaMemcpy(src, ones.data(), footprint, cudaMemcpyHostToDevice));
  std::vector<float> h(size_t(g.sms) * 1024);
  std::vector<int> ctas_list = {1, 8, 33, 66, g.sms};
  std::vector<int> iters_list = {64, 128};
  if (g.quick) ctas_list = {1, 8}, iters_list = {2};
  for (int threads : {256, 1024})
    for (int ctas : ctas_list)
      for (int iters : iters_list) {
        const size_t n = size_t(ctas) * threads;
        poison(out, n * 4);
        Timing tm = time_launches([&](int) {
          l2_read<<<ctas, threads, 0, g.stream>>>(reinterpret_cast<const float4*>(src), out, iters, nvec);
        });
        CKL();
        CK(cudaMemcpy(h.data(), out, n * 4, cudaMemcpyDeviceToHost));
        const float want = float(iters) * 16.0f / 64.0f;
        size_t bad = 0;
        for (size_t i = 0; i < n; ++i) bad += h[i] != want;
        const double bytes = double(n) * iters * 4 * 16;
        const double mhz = 0.5 * (tm.before.sm_mhz + tm.after.sm_mhz);
        Row r = base_row("l2_read", threads == 1024 ? "bandwidth" : "burst");
        r.set("ctas", ctas).set("threads", threads).set("iters", iters).set("footprint", int64_t(footprint));
        r.set("grid", ctas).set("block", threads).set("bytes", bytes);
        r.set("bytes_per_cycle_per_sm", bytes / (tm.median_us * mhz) / ctas);
        emit("l2_read", r.set("check", bad ? "FAIL" : "ok"), &tm);
        log("l2_read ctas=%d threads=%d iters=%d: %.2f us, %.1f B/cycle/SM %s\n", ctas, threads, iters, tm.median_us,
            bytes / (tm.median_us * mhz) / ctas, bad ? "FAIL" : "ok");
      }
  CK(cudaFree(src));
  CK(cudaFree(out));
  return 0;
}

}  // namespace twins
