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

}  // namespace twins
