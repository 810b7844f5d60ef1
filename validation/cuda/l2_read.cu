// l2_read twin (b20 on; b18 and b19 ran a first version, kept as data): the L2-to-SM read bandwidth
// of one SM and of many, and the latency of a burst of loads (kernels_ir/lib/l2_read.kir). Grid `ctas`
// (one CTA per SM), block `threads`; CTA c owns `region` 16-byte vectors (64 KB) from vector c * region,
// which stay in the L2 between launches. Each thread runs `iters` iterations of 4 independent 16-byte
// loads that skip the L1 (ld.global.cg: LDG.E.128.STRONG.GPU) and sums them: load j of iteration it of
// thread t reads vector (it * 4 + j) * threads + t of its CTA's region, modulo the region. Every SM reads
// its own 64 KB over and over whatever the grid: no L1 reuse, and the same address stream per CTA.
// (b18's first version strode through one 8 MB buffer by the grid's size: its CTAs' address streams
// changed with the grid, and at 64 and 128 CTAs each CTA's vectors fitted in its L1.) Each point's
// `smids` column lists the SM (%smid) of every CTA, from one more launch after the timed ones. Variant
// `cluster8` launches the 1024-thread points in clusters of 8 CTAs, which Hopper places in one GPC,
// `cluster16` (b21 on) in clusters of 16 (a non-portable size: skipped where the device refuses it).
#include <string>
#include <tuple>
#include <vector>

#include "common.cuh"

namespace twins {

static const uint32_t kRegion = 4096;  // vectors per CTA: 64 KB

// region: a power of two (the modulo is a mask); sm_of_cta (if not null): each CTA's %smid
__global__ void l2_read(const float4* __restrict__ src, float* __restrict__ out, int iters, uint32_t region,
                        uint32_t* __restrict__ sm_of_cta) {
  const float4* mine = src + size_t(blockIdx.x) * region;
  float s = 0.0f;
  for (int it = 0; it < iters; ++it) {
    float4 v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j)
      v[j] = __ldcg(mine + (((uint32_t(it) * 4 + j) * blockDim.x + threadIdx.x) & (region - 1)));
#pragma unroll
    for (int j = 0; j < 4; ++j) s += v[j].x + v[j].y + v[j].z + v[j].w;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if (sm_of_cta && threadIdx.x == 0) {
    uint32_t id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    sm_of_cta[blockIdx.x] = id;
  }
}

// A launch configuration of `ctas` CTAs of `threads`, in clusters of `cluster` CTAs when cluster > 1
// (`at` holds the cluster attribute; it must outlive the configuration)
static cudaLaunchConfig_t l2_read_config(int ctas, int threads, int cluster, cudaLaunchAttribute& at) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(unsigned(ctas));
  cfg.blockDim = dim3(unsigned(threads));
  cfg.stream = g.stream;
  at.id = cudaLaunchAttributeClusterDimension;
  at.val.clusterDim.x = unsigned(cluster);
  at.val.clusterDim.y = 1;
  at.val.clusterDim.z = 1;
  cfg.attrs = &at;
  cfg.numAttrs = cluster > 1 ? 1 : 0;
  return cfg;
}

// Whether clusters of 16 CTAs of 1024 threads can run (non-portable: opted into here)
static bool cluster16_ok() {
  if (cudaFuncSetAttribute(l2_read, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess) {
    cudaGetLastError();
    log("l2_read: clusters of 16 not allowed on this device; skipped\n");
    return false;
  }
  cudaLaunchAttribute at;
  const cudaLaunchConfig_t cfg = l2_read_config(16, 1024, 16, at);
  int n = 0;
  if (cudaOccupancyMaxActiveClusters(&n, l2_read, &cfg) != cudaSuccess || n < 1) {
    cudaGetLastError();
    log("l2_read: clusters of 16 cannot run (max active clusters %d); skipped\n", n);
    return false;
  }
  log("l2_read: up to %d clusters of 16 at once\n", n);
  return true;
}

// one launch of l2_read, in clusters of `cluster` CTAs when cluster > 1
static void launch_l2_read(int ctas, int threads, int cluster, const float* src, float* out, int iters,
                           uint32_t* sm_of_cta) {
  cudaLaunchAttribute at;
  const cudaLaunchConfig_t cfg = l2_read_config(ctas, threads, cluster, at);
  CK(cudaLaunchKernelEx(&cfg, l2_read, reinterpret_cast<const float4*>(src), out, iters, kRegion, sm_of_cta));
}

int run_l2_read(const std::vector<std::string>& args) {
  const uint64_t footprint = uint64_t(g.sms) * kRegion * 16;  // 8.25 MB on 132 SMs
  float *src, *out;
  uint32_t* smids;
  CK(cudaMalloc(&src, footprint));
  CK(cudaMalloc(&out, size_t(g.sms) * 1024 * 4));
  CK(cudaMalloc(&smids, size_t(g.sms) * 4));
  // every element 1/64: a thread's sum is exactly iters * 16 / 64 (small integers and quarters in fp32)
  std::vector<float> ones(footprint / 4, 1.0f / 64);
  CK(cudaMemcpy(src, ones.data(), footprint, cudaMemcpyHostToDevice));
  std::vector<float> h(size_t(g.sms) * 1024);
  // (threads, cluster, ctas): 256 and 1024 threads without clusters, then 1024 in clusters of 8 and 16
  std::vector<std::tuple<int, int, int>> shapes;
  for (int threads : {256, 1024})
    for (int ctas : {1, 2, 4, 8, 16, 33, 66, g.sms}) shapes.emplace_back(threads, 1, ctas);
  if (arg_i(args, "clusters", 1))
    for (int ctas : {8, 16, 32, 64, g.sms / 8 * 8}) shapes.emplace_back(1024, 8, ctas);
  if (arg_i(args, "clusters", 1) && cluster16_ok())
    for (int ctas : {16, 32, 64, 128}) shapes.emplace_back(1024, 16, ctas);
  std::vector<int> iters_list = {64, 128};
  if (g.quick) shapes = {{256, 1, 1}, {256, 1, 8}, {1024, 8, 8}}, iters_list = {2};
  std::vector<uint32_t> hs(size_t(g.sms));
  for (const auto& shape : shapes)
    for (int iters : iters_list) {
      const int threads = std::get<0>(shape), cluster = std::get<1>(shape), ctas = std::get<2>(shape);
      const size_t n = size_t(ctas) * threads;
      poison(out, n * 4);
      Timing tm = time_launches([&](int) { launch_l2_read(ctas, threads, cluster, src, out, iters, nullptr); });
      CKL();
      std::string smid_list;
      if (!g.ncu) {  // one more launch (not timed, not under Nsight Compute): where the CTAs ran
        launch_l2_read(ctas, threads, cluster, src, out, iters, smids);
        CK(cudaMemcpy(hs.data(), smids, size_t(ctas) * 4, cudaMemcpyDeviceToHost));
        for (int c = 0; c < ctas; ++c) smid_list += (c ? ";" : "") + std::to_string(hs[size_t(c)]);
      }
      CK(cudaMemcpy(h.data(), out, n * 4, cudaMemcpyDeviceToHost));
      const float want = float(iters) * 16.0f / 64.0f;
      size_t bad = 0;
      for (size_t i = 0; i < n; ++i) bad += h[i] != want;
      const double bytes = double(n) * iters * 4 * 16;
      const double mhz = 0.5 * (tm.before.sm_mhz + tm.after.sm_mhz);
      Row r = base_row("l2_read", cluster == 16     ? "cluster16"
                                  : cluster > 1     ? "cluster8"
                                  : threads == 1024 ? "bandwidth"
                                                    : "burst");
      r.set("ctas", ctas).set("threads", threads).set("iters", iters).set("region_bytes", int64_t(kRegion) * 16);
      r.set("grid", ctas).set("block", threads).set("bytes", bytes);
      r.set("bytes_per_cycle_per_sm", bytes / (tm.median_us * mhz) / ctas).set("cluster", cluster);
      r.set("smids", smid_list);
      emit("l2_read", r.set("check", bad ? "FAIL" : "ok"), &tm);
      log("l2_read ctas=%d threads=%d cluster=%d iters=%d: %.2f us, %.1f B/cycle/SM %s\n", ctas, threads, cluster,
          iters, tm.median_us, bytes / (tm.median_us * mhz) / ctas, bad ? "FAIL" : "ok");
    }
  CK(cudaFree(src));
  CK(cudaFree(out));
  CK(cudaFree(smids));
  return 0;
}

}  // namespace twins
