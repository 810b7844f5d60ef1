// store_tile twins (batch b6 on): the naive attention QK GEMM's epilogue alone, to find what holds
// its f32 stores to 2.7 TB/s (b5: attention_parts qk) when a write-only stream reaches 4.6 TB/s.
// Output f32 [BH * T][T], one 128 x 128 tile per CTA of 256 threads (grid T/128, T/128, BH, as
// attn_qk_gemm), the tiles of a CTA written once, nothing read.
//   variant mma:  the mma.sync accumulator layout of attn_qk_gemm's epilogue: warp w holds rows
//                 (w % 2) * 64 + mt * 16 + lane / 4 + h * 8, columns (w / 2) * 32 + nt * 8 +
//                 (lane % 4) * 2, one 8-byte store per (mt, nt, h): 32 STG.64 per warp, each
//                 touching 8 rows (8 lines, one 32-byte sector each).
//   variant rows: the same bytes, row-major: each warp writes 16 whole 512-byte tile rows with one
//                 16-byte store per lane (32 STG.128 per warp, each 4 full lines).
//   variant half: the mma rows, two sectors per row and store: lane % 4 writes 16 bytes at column
//                 (w / 2) * 32 + j * 16 + (lane % 4) * 4 (16 STG.128 per warp, each 8 lines).
// ctas_per_sm (1, 2, 4) is set with dynamic shared memory that the kernel does not touch; attn_qk_gemm
// runs 2 per SM. BH = 64 (1 GiB, beyond the L2) and, from batch b7 on, BH = 1 (16 MiB: the same lines
// every launch, resident in the L2).
#include "common.cuh"

namespace twins {

__global__ void __launch_bounds__(256) store_tile_mma(float* out, int T, float value) {
  extern __shared__ float pad[];
  (void)pad;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int m0 = blockIdx.y * 128 + (warp % 2) * 64, n0 = blockIdx.x * 128 + (warp / 2) * 32;
  float* base = out + size_t(blockIdx.z) * T * T;
#pragma unroll
  for (int mt = 0; mt < 4; ++mt)
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        int r = m0 + mt * 16 + lane / 4 + h * 8, c = n0 + nt * 8 + (lane % 4) * 2;
        float v = value + float(mt * 8 + nt * 2 + h);
        *reinterpret_cast<float2*>(base + size_t(r) * T + c) = make_float2(v, v);
      }
}

__global__ void __launch_bounds__(256) store_tile_rows(float* out, int T, float value) {
  extern __shared__ float pad[];
  (void)pad;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int m0 = blockIdx.y * 128 + warp * 16, n0 = blockIdx.x * 128;
  float* base = out + size_t(blockIdx.z) * T * T;
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    float v = value + float(i);
    *reinterpret_cast<float4*>(base + size_t(m0 + i) * T + n0 + lane * 4) = make_float4(v, v, v, v);
  }
}

__global__ void __launch_bounds__(256) store_tile_half(float* out, int T, float value) {
  extern __shared__ float pad[];
  (void)pad;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int m0 = blockIdx.y * 128 + (warp % 2) * 64, n0 = blockIdx.x * 128 + (warp / 2) * 32;
  float* base = out + size_t(blockIdx.z) * T * T;
#pragma unroll
  for (int mt = 0; mt < 4; ++mt)
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        int r = m0 + mt * 16 + lane / 4 + h * 8, c = n0 + j * 16 + (lane % 4) * 4;
        float v = value + float(mt * 4 + j * 2 + h);
        *reinterpret_cast<float4*>(base + size_t(r) * T + c) = make_float4(v, v, v, v);
      }
}

static void store_tile_point(int variant, int ctas_per_sm, int BH, int T, float* out) {
  // dynamic shared memory that leaves room for ctas_per_sm CTAs (227 KB per SM, 1 KB reserved each)
  int smem = ctas_per_sm >= 8 ? 0 : (228 * 1024) / ctas_per_sm - 1024 - 1024;
  static const char* names[3] = {"mma", "rows", "half"};
  auto fn = variant == 0 ? store_tile_mma : variant == 1 ? store_tile_rows : store_tile_half;
  CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int occ = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, fn, 256, smem));
  dim3 grid(T / 128, T / 128, BH);
  Timing t = time_launches([&](int i) { fn<<<grid, 256, smem, g.stream>>>(out, T, 1.0f + float(i % 2)); });
  CKL();
  CK(cudaDeviceSynchronize());
  // check: the last tile's first row holds the last launch's values (every element written)
  size_t bad = 0;
  {
    std::vector<float> h(T);
    CK(cudaMemcpy(h.data(), out + (size_t(BH) * T - 1) * T, size_t(T) * 4, cudaMemcpyDeviceToHost));
    for (float x : h) bad += !(x >= 1.0f && x < 64.0f);
  }
  double bytes = double(BH) * T * T * 4;
  Row r = base_row("store_tile", names[variant]);
  r.set("BH", BH)
      .set("T", T)
      .set("ctas_per_sm", occ)
      .set("smem", smem)
      .set("bytes", bytes)
      .set("gbps", bytes / (t.median_us * 1e3));
  emit("store_tile", r.set("check", bad ? "FAIL" : "ok"), &t);
  log("store_tile %s %d/SM BH=%d T=%d: %.1f us, %.0f GB/s %s\n", names[variant], occ, BH, T, t.median_us,
      bytes / (t.median_us * 1e3), bad ? "FAIL" : "ok");
}

int run_store_tile(const std::vector<std::string>& args) {
  (void)args;
  const int BH = g.quick ? 2 : 64, T = 2048;
  float* out = nullptr;
  CK(cudaMalloc(&out, size_t(BH) * T * T * 4));
  for (int occ : {2, 1, 4})
    for (int v : {0, 1}) store_tile_point(v, occ, BH, T, out);
  store_tile_point(2, 2, BH, T, out);                         // half, beyond the L2
  for (int v : {0, 1, 2}) store_tile_point(v, 2, 1, T, out);  // BH = 1: 16 MiB, L2-resident
  CK(cudaFree(out));
  return 0;
}

// store_rate (experiment b35): the rate at which an SM's stores leave it, by store shape and by the
// number of SMs storing. nctas CTAs (one per SM: 120000 bytes of dynamic shared memory each), `warps`
// warps each, every CTA rewriting its own 128 KiB (L2-resident for all 132: 16.5 MiB) 32 times; each
// warp writes 1024 bytes per step as two STG.128:
//   pattern 0 (lines): each store 512 contiguous bytes: 4 whole lines, 16 whole sectors
//   pattern 1 (halves): gemm_fp32's epilogue: lane l at row l / 16 (512 bytes apart), 32-byte stride,
//                       the second store the other halves: 8 lines, 32 half sectors each
//   pattern 2 (sectors): store_tile's half: 8 rows of 128 bytes, 4 lanes a row, the second store the
//                        row's other 64 bytes: 8 lines, 16 whole sectors each
// Each CTA's clock64 cycles from its first store to its barrier after the last are recorded (the
// median and maximum over CTAs), beside the launch time.
template <int PAT>
__global__ void __launch_bounds__(1024)
    store_rate(float* out, int region_floats, int passes, float value, long long* cycles) {
  extern __shared__ float pad[];
  (void)pad;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nw = blockDim.x / 32;
  float* base = out + size_t(blockIdx.x) * region_floats;
  const int steps = region_floats / 256;
  const int o = PAT == 0 ? lane * 4 : PAT == 1 ? (lane / 16) * 128 + (lane % 16) * 8 : (lane / 4) * 32 + (lane % 4) * 4;
  const int second = PAT == 0 ? 128 : PAT == 1 ? 4 : 16;
  long long t0 = clock64();
  for (int p = 0; p < passes; ++p) {
    float v = value + float(p);
    for (int s = warp; s < steps; s += nw) {
      float* w = base + size_t(s) * 256 + o;
      *reinterpret_cast<float4*>(w) = make_float4(v, v, v, v);
      *reinterpret_cast<float4*>(w + second) = make_float4(v, v, v, v);
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) cycles[blockIdx.x] = clock64() - t0;
}

static void store_rate_point(int pat, int nctas, int warps, float* out, long long* dcyc) {
  static const char* names[3] = {"lines", "halves", "sectors"};
  auto fn = pat == 0 ? store_rate<0> : pat == 1 ? store_rate<1> : store_rate<2>;
  const int smem = 120000, region = 32768, passes = g.quick ? 2 : 32;
  CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  Timing t = time_launches(
      [&](int i) { fn<<<nctas, warps * 32, smem, g.stream>>>(out, region, passes, 1.0f + float(i % 2), dcyc); });
  CKL();
  CK(cudaDeviceSynchronize());
  std::vector<long long> c(nctas);
  CK(cudaMemcpy(c.data(), dcyc, size_t(nctas) * 8, cudaMemcpyDeviceToHost));
  std::sort(c.begin(), c.end());
  std::vector<float> h(256);
  CK(cudaMemcpy(h.data(), out + size_t(nctas - 1) * region, 256 * 4, cudaMemcpyDeviceToHost));
  size_t bad = 0;
  for (float x : h) bad += !(x >= 1.0f && x < 64.0f);
  const double bytes_cta = double(region) * 4 * passes, med = double(c[nctas / 2]), mx = double(c.back());
  Row r = base_row("store_rate", names[pat]);
  r.set("ctas", nctas)
      .set("warps", warps)
      .set("bytes_per_cta", bytes_cta)
      .set("cta_cycles_median", med)
      .set("cta_cycles_max", mx)
      .set("bytes_per_sm_cycle", bytes_cta / med)
      .set("gbps", bytes_cta * nctas / (t.median_us * 1e3));
  emit("store_rate", r.set("check", bad ? "FAIL" : "ok"), &t);
  log("store_rate %s ctas=%d warps=%d: %.1f us, %.1f B/SM-cycle (CTA median %.0f cycles), %.0f GB/s %s\n", names[pat],
      nctas, warps, t.median_us, bytes_cta / med, med, bytes_cta * nctas / (t.median_us * 1e3), bad ? "FAIL" : "ok");
}

int run_store_rate(const std::vector<std::string>& args) {
  const int region = 32768, n = g.sms;
  float* out = nullptr;
  long long* dcyc = nullptr;
  CK(cudaMalloc(&out, size_t(n) * region * 4));
  CK(cudaMalloc(&dcyc, size_t(n) * 8));
  std::vector<int> counts = g.quick ? std::vector<int>{n} : std::vector<int>{1, 8, 33, 66, n};
  // --srate_ctas=N (with --ncu=1 under Nsight Compute): each pattern once at N CTAs of 8 warps
  if (int only = int(arg_i(args, "srate_ctas", 0)); only > 0) counts = {std::min(only, n)};
  for (int warps : {8, 32})
    for (int pat : {0, 1, 2})
      if (warps == 8 || arg_i(args, "srate_ctas", 0) == 0)
        for (int c : counts) store_rate_point(pat, c, warps, out, dcyc);
  CK(cudaFree(out));
  CK(cudaFree(dcyc));
  return 0;
}

}  // namespace twins
