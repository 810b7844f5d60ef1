// mma_shared twin (kernels_ir/lib/mma_shared.kir): how the tensor cores and the shared-memory pipe
// share an SM when a GEMM's main loop feeds one from the other. A calibration microbenchmark: it
// runs pieces of gemm_tiled's main loop (validation/cuda/gemm.cu) on its occupancy (grid 2 x SMs,
// 256 threads, __launch_bounds__(256, 2), the same 49152 B of swizzled shared tiles), each warp
// running `iters` k-tiles of two k16 steps:
//   variant 0 ldmatrix  : 4 ldmatrix.x4 (A) + 2 ldmatrix.x4.trans (B) per k16 step, no mma
//   variant 1 mma       : 16 mma.sync.m16n8k16 bf16 per k16 step on register fragments, no ldmatrix
//   variant 2 both      : gemm_tiled's k16 step: the 6 ldmatrix, then the 16 mma that use them
//   variant 3 pipeline  : variant 2 plus, per k-tile, gemm_tiled's cp.async refill (4 x 16 B per
//                         thread from an L2-resident 2 MiB source), commit, wait_group 1, bar.sync
// The fragments read are whatever the shared tiles hold (zeros, then the copied data); the result
// is a checksum of the accumulators, compared between two launches (a deterministic kernel gives
// the same bits).
#include <cstring>
#include <vector>

#include "apps.cuh"

namespace twins {

namespace {
constexpr int kBM = 128, kBN = 128, kBK = 32, kStages = 3;
constexpr int kSrcTiles = 64;  // the cp.async source: 64 k-tiles of A and B, 2 MiB, stays in L2
static_assert(kBK == kSwzK && kBN == kSwzN, "swz_a / swz_b (apps.cuh) assume gemm_tiled's BK and BN");
}  // namespace

template <int V>
__global__ void __launch_bounds__(256, 2) mma_shared(const bf16* src, float* out, int iters) {
  __shared__ alignas(128) bf16 As[kStages * kBM * kBK];
  __shared__ alignas(128) bf16 Bs[kStages * kBK * kBN];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm0 = (warp % 2) * 64, wn0 = (warp / 2) * 32;
  for (int i = threadIdx.x; i < kStages * kBM * kBK; i += 256) As[i] = Bs[i] = __float2bfloat16(0.0f);
  __syncthreads();
  float acc[4][4][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;
  uint32_t af[4][4], bfr[2][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int r = 0; r < 4; ++r) af[i][r] = 0x3c003c00u ^ (lane * 0x00010001u), bfr[i / 2][r] = af[i][r];
  uint32_t sink = 0;
#pragma unroll 1
  for (int kt = 0; kt < iters; ++kt) {
    const int st = kt % kStages;
    if constexpr (V == 3) {
      cp_wait<kStages - 2>();
      __syncthreads();
      const int ls = (kt + kStages - 1) % kStages, tile = (blockIdx.x + kt) % kSrcTiles;
      const bf16* a_src = src + size_t(tile) * (kBM * kBK + kBK * kBN);
      const bf16* b_src = a_src + kBM * kBK;
#pragma unroll
      for (int l = 0; l < 2; ++l) {
        int e = (l * 256 + threadIdx.x) * 8, r = e / kBK, c = e % kBK;
        cp_async<16>(As + ls * kBM * kBK + swz_a(r, c), a_src + e, true);
      }
#pragma unroll
      for (int l = 0; l < 2; ++l) {
        int e = (l * 256 + threadIdx.x) * 8, r = e / kBN, c = e % kBN;
        cp_async<16>(Bs + ls * kBK * kBN + swz_b(r, c), b_src + e, true);
      }
      cp_commit();
    }
#pragma unroll
    for (int kk = 0; kk < kBK / 16; ++kk) {
      if constexpr (V != 1) {
#pragma unroll
        for (int i = 0; i < 4; ++i)
          ldsm_x4(af[i], As + st * kBM * kBK + swz_a(wm0 + i * 16 + lane % 16, kk * 16 + (lane / 16) * 8));
#pragma unroll
        for (int j2 = 0; j2 < 2; ++j2)
          ldsm_x4_t(bfr[j2], Bs + st * kBK * kBN + swz_b(kk * 16 + lane % 16, wn0 + j2 * 16 + (lane / 16) * 8));
      }
      if constexpr (V != 0) {
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
          for (int j = 0; j < 4; ++j) mma_bf16(acc[i][j], af[i], bfr[j / 2][(j % 2) * 2], bfr[j / 2][(j % 2) * 2 + 1]);
      }
    }
  }
  if constexpr (V == 3) cp_wait<0>();
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int r = 0; r < 4; ++r) sink ^= af[i][r] ^ bfr[i / 2][r];
  float s = __uint_as_float(sink & 0x3fffffffu) * 0.0f;
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) s += acc[i][j][r];
  out[blockIdx.x * 256 + threadIdx.x] = s;
}

static const char* kMsName[4] = {"ldmatrix", "mma", "both", "pipeline"};

double point_mma_shared(int variant, int iters, const char* file) {
  const int grid = 2 * g.sms;
  const size_t src_elems = size_t(kSrcTiles) * (kBM * kBK + kBK * kBN);
  bf16* src;
  float* out;
  CK(cudaMalloc(&src, src_elems * 2));
  CK(cudaMalloc(&out, size_t(grid) * 256 * 4));
  {
    std::vector<bf16> h(src_elems);
    uint64_t seed = 11;
    for (auto& x : h) x = __float2bfloat16(float(int(splitmix64(seed) % 2001) - 1000) / 1000.0f);
    CK(cudaMemcpy(src, h.data(), src_elems * 2, cudaMemcpyHostToDevice));
  }
  poison(out, size_t(grid) * 256 * 4);
  auto launch = [&](int) {
    switch (variant) {
      case 0:
        mma_shared<0><<<grid, 256, 0, g.stream>>>(src, out, iters);
        break;
      case 1:
        mma_shared<1><<<grid, 256, 0, g.stream>>>(src, out, iters);
        break;
      case 2:
        mma_shared<2><<<grid, 256, 0, g.stream>>>(src, out, iters);
        break;
      default:
        mma_shared<3><<<grid, 256, 0, g.stream>>>(src, out, iters);
        break;
    }
    CKL();
  };
  launch(0);
  CK(cudaStreamSynchronize(g.stream));
  std::vector<float> first(size_t(grid) * 256), h(first.size());
  CK(cudaMemcpy(first.data(), out, first.size() * 4, cudaMemcpyDeviceToHost));
  Timing t = time_launches(launch);
  CK(cudaMemcpy(h.data(), out, h.size() * 4, cudaMemcpyDeviceToHost));
  CK(cudaFree(src));
  CK(cudaFree(out));
  size_t bad = 0;
  for (size_t i = 0; i < h.size(); ++i) bad += std::memcmp(&h[i], &first[i], 4) != 0 || !std::isfinite(h[i]);
  double mhz = 0.5 * (t.before.sm_mhz + t.after.sm_mhz);
  // per SM: 2 CTAs x 8 warps x iters k-tiles x 2 k16 steps
  double ktiles_per_sm = 2.0 * iters;
  Row r = base_row("mma_shared", kMsName[variant]);
  r.set("variant_id", variant).set("iters", iters).set("grid", grid).set("block", 256);
  r.set("ldmatrix_x4", variant == 1 ? 0.0 : 12.0 * 8 * grid * double(iters));
  r.set("mma", variant == 0 ? 0.0 : 32.0 * 8 * grid * double(iters));
  r.set("cycles_per_ktile_per_sm", t.median_us * mhz / ktiles_per_sm);
  emit(file, r.set("check", bad ? "FAIL" : "ok"), &t);
  log("mma_shared %s iters=%d: %.2f us, %.1f cycles per CTA k-tile per SM %s\n", kMsName[variant], iters, t.median_us,
      t.median_us * mhz / ktiles_per_sm, bad ? "FAIL" : "ok");
  return t.median_us;
}

int run_mma_shared(const std::vector<std::string>& args) {
  int iters = int(arg_i(args, "iters", 2048));
  if (g.quick) iters = 8;
  for (int v = 0; v < 4; ++v) point_mma_shared(v, iters, "mma_shared");
  if (!g.quick)
    for (int v = 0; v < 4; ++v) point_mma_shared(v, iters / 4, "mma_shared");  // the slope removes the fixed costs
  return 0;
}

}  // namespace twins
