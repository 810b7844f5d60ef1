// tile_loop twin: gemm_fp32's tile loop (VEC 4: validation/cuda/gemm_fp32.cu) with `kSteps` (0, 1, 2, 4
// or 8) of its 8 k-steps of math per tile: 8 is gemm_fp32 itself, 0 keeps only the tile's global loads, shared
// stores and two barriers (plus one shared load of each tile per thread, summed, so the stores are
// used). The time per tile at 0 is what gemm_fp32 spends outside its k-step loop, which ffma_outer
// (b13) times alone. Grid (N / 128, M / 128), block 256, static shared 8192 B. M = N = K = n.
// kLoads false (variant suffix `_noload`, b22 on): the tile's values are made in registers from the
// tile and thread index (fa, fb below) instead of loaded: the same shared stores, barriers and math
// without the L2's latency.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <vector>

#include "common.cuh"

namespace twins {

// the no-load variant's tile values: multiples of 1/8 in [-1/2, 1/2] (every sum stays exact)
__host__ __device__ inline float fa(int kt, int t, int e) { return float((kt * 3 + t * 5 + e) % 9 - 4) * 0.125f; }
__host__ __device__ inline float fb(int kt, int t, int e) { return float((kt * 7 + t * 3 + e * 2) % 9 - 4) * 0.125f; }

// kStamp (b36, `tile_stamp`): lane 0 of each warp reads the SM clock right after the tile's first barrier
// (s0), right before its second (s1) and right after it (s2), for tiles n / 16 and n / 16 + 1, kept in
// registers (selected, no branch) and stored at the end: stamps[cta * 72 + warp * 6 + tile * 3 + i]; b38: also
// right before the first barrier (after the tile's shared stores issued), stamps[cta * 72 + 48 + warp * 2 +
// tile], and the CTA's SM (%smid) at stamps[cta * 72 + 64]; b40: thread 0's SM cycles from the loop's start to its end
// at stamps[cta * 72 + 65] and the globaltimer (ns) at both at [66, 67] and [68, 69] (lo, hi).
template <int kSteps, bool kLoads = true, bool kStamp = false, bool kCg = false>
__global__ void __launch_bounds__(256)
    tile_loop(const float* A, const float* B, float* C, int n, unsigned* stamps = nullptr) {
  __shared__ __align__(16) float As[8 * 128];  // transposed: As[k * 128 + m]
  __shared__ __align__(16) float Bs[8 * 128];
  const int t = threadIdx.x;
  const int m0 = blockIdx.y * 128, n0 = blockIdx.x * 128;
  const int tm = t / 16 * 8, tn = t % 16 * 8;
  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;
  float s = 0.f;
  unsigned st[6] = {0, 0, 0, 0, 0, 0}, pre[2] = {0, 0};
  long long span0 = 0;  // b40: the CTA's SM clock when its tile loop starts (thread 0)
  unsigned long long gt0 = 0;
  if constexpr (kStamp)
    if (t == 0) {
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(gt0)::"memory");
      span0 = clock64();
    }
  const int kT = n / 16;
  auto stamp = [&](int kt, int i) {
    if constexpr (kStamp) {
      const unsigned c = unsigned(clock());
      st[i] = kt == kT ? c : st[i];
      st[3 + i] = kt == kT + 1 ? c : st[3 + i];
    }
  };
  for (int kt = 0; kt < n / 8; ++kt) {
    const int k0 = kt * 8;
    const int q = t * 4;
    const int ar = q / 8, ac = q % 8, br = q / 128, bc = q % 128;
    float4 a, b;
    if constexpr (kLoads && kCg) {  // b37: the same loads past the L1 (LDG.E.128.STRONG.GPU / .CG)
      a = __ldcg(reinterpret_cast<const float4*>(A + size_t(m0 + ar) * n + k0 + ac));
      b = __ldcg(reinterpret_cast<const float4*>(B + size_t(k0 + br) * n + n0 + bc));
    } else if constexpr (kLoads) {
      a = *reinterpret_cast<const float4*>(A + size_t(m0 + ar) * n + k0 + ac);
      b = *reinterpret_cast<const float4*>(B + size_t(k0 + br) * n + n0 + bc);
    } else {
      a = make_float4(fa(kt, t, 0), fa(kt, t, 1), fa(kt, t, 2), fa(kt, t, 3));
      b = make_float4(fb(kt, t, 0), fb(kt, t, 1), fb(kt, t, 2), fb(kt, t, 3));
    }
    As[(ac + 0) * 128 + ar] = a.x;
    As[(ac + 1) * 128 + ar] = a.y;
    As[(ac + 2) * 128 + ar] = a.z;
    As[(ac + 3) * 128 + ar] = a.w;
    *reinterpret_cast<float4*>(Bs + br * 128 + bc) = b;
    if constexpr (kStamp) {
      const unsigned c = unsigned(clock());
      pre[0] = kt == kT ? c : pre[0];
      pre[1] = kt == kT + 1 ? c : pre[1];
    }
    __syncthreads();
    stamp(kt, 0);
    if constexpr (kSteps == 0) {
      s += As[t];
      s += Bs[t];
    }
#pragma unroll
    for (int k = 0; k < kSteps; ++k) {
      float4 a0 = *reinterpret_cast<const float4*>(As + k * 128 + tm);
      float4 a1 = *reinterpret_cast<const float4*>(As + k * 128 + tm + 4);
      float4 b0 = *reinterpret_cast<const float4*>(Bs + k * 128 + tn);
      float4 b1 = *reinterpret_cast<const float4*>(Bs + k * 128 + tn + 4);
      const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    stamp(kt, 1);
    __syncthreads();
    stamp(kt, 2);
  }
  if constexpr (kStamp)
    if (t % 32 == 0) {
      unsigned* mine = stamps + (size_t(blockIdx.y) * gridDim.x + blockIdx.x) * 72;
      if (t == 0) {  // b40: the loop's span on this CTA's SM, and when it started and ended (globaltimer, ns)
        const long long span1 = clock64();
        unsigned long long gt1;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(gt1)::"memory");
        unsigned smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        mine[64] = smid;
        mine[65] = unsigned(span1 - span0);
        mine[66] = unsigned(gt0);
        mine[67] = unsigned(gt0 >> 32);
        mine[68] = unsigned(gt1);
        mine[69] = unsigned(gt1 >> 32);
      }
      for (int i = 0; i < 6; ++i) mine[t / 32 * 6 + i] = st[i];
      mine[48 + t / 32 * 2] = pre[0];
      mine[48 + t / 32 * 2 + 1] = pre[1];
    }
  if constexpr (kSteps == 0) {
    C[size_t(m0 + tm) * n + n0 + tn] = s;
  } else {
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int j = 0; j < 2; ++j)
        *reinterpret_cast<float4*>(C + size_t(m0 + tm + i) * n + n0 + tn + 4 * j) =
            make_float4(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2], acc[i][4 * j + 3]);
  }
}

using TileLoopKernel = void (*)(const float*, const float*, float*, int, unsigned*);
static const int kTileLoopSteps[] = {0, 1, 2, 4, 8};

// tile_loop<steps, loads> for steps in kTileLoopSteps
static TileLoopKernel tile_loop_kernel(int steps, bool loads) {
  static const TileLoopKernel k[2][5] = {
      {tile_loop<0, false>, tile_loop<1, false>, tile_loop<2, false>, tile_loop<4, false>, tile_loop<8, false>},
      {tile_loop<0, true>, tile_loop<1, true>, tile_loop<2, true>, tile_loop<4, true>, tile_loop<8, true>}};
  const int at = int(std::find(std::begin(kTileLoopSteps), std::end(kTileLoopSteps), steps) - kTileLoopSteps);
  return k[loads ? 1 : 0][at];
}

// pad_smem=BYTES: every launch also asks for BYTES of dynamic shared memory it does not use, which
// limits the CTAs per SM (120000: one; 100000 still fits two), to time the tile loop without a second CTA on the SM.
int run_tile_loop(const std::vector<std::string>& args) {
  const int pad = int(arg_i(args, "pad_smem", 0));
  if (pad > 0)
    for (bool loads : {false, true})
      for (int steps : kTileLoopSteps)
        CK(cudaFuncSetAttribute(tile_loop_kernel(steps, loads), cudaFuncAttributeMaxDynamicSharedMemorySize, pad));
  int ctas_per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&ctas_per_sm, tile_loop_kernel(8, true), 256, size_t(pad)));
  const bool noload = arg_i(args, "noload", 0) != 0;  // b22: also the variants without global loads
  for (int n : g.quick ? std::vector<int>{256} : std::vector<int>{1024, 2048}) {
    const size_t nn = size_t(n) * n;
    float *A, *B, *C;
    CK(cudaMalloc(&A, nn * 4));
    CK(cudaMalloc(&B, nn * 4));
    CK(cudaMalloc(&C, nn * 4));
    std::vector<float> ha(nn), hb(nn), hc(nn);
    uint64_t seed = 0x7115u + uint64_t(n);
    for (auto* h : {&ha, &hb})  // multiples of 1/8 in [-1/2, 1/2]: every sum below is exact
      for (float& x : *h) x = float(int(splitmix64(seed) % 9) - 4) * 0.125f;
    CK(cudaMemcpy(A, ha.data(), nn * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(B, hb.data(), nn * 4, cudaMemcpyHostToDevice));
    dim3 grid(n / 128, n / 128);
    for (int variant = 0; variant < (noload ? 2 : 1); ++variant)
      for (int steps : kTileLoopSteps) {
        const bool loads = variant == 0;
        poison(C, nn * 4);
        const TileLoopKernel kernel = tile_loop_kernel(steps, loads);
        Timing t = time_launches([&](int) { kernel<<<grid, 256, pad, g.stream>>>(A, B, C, n, nullptr); });
        CKL();
        CK(cudaMemcpy(hc.data(), C, nn * 4, cudaMemcpyDeviceToHost));
        size_t bad = 0, checked = 0;
        uint64_t pick = 0x51u;
        // the tile values as the kernel sees them: As[k][m] of tile kt (loader thread (m * 8 + k) / 4, element
        // k % 4), Bs[k][c] (loader thread (k * 128 + c) / 4, element c % 4)
        auto av = [&](int m0, int kt, int m, int k) {
          return loads ? ha[size_t(m0 + m) * n + kt * 8 + k] : fa(kt, (m * 8 + k) / 4, k % 4);
        };
        auto bv = [&](int n0, int kt, int k, int c) {
          return loads ? hb[size_t(kt * 8 + k) * n + n0 + c] : fb(kt, (k * 128 + c) / 4, c % 4);
        };
        for (int e = 0; e < 512; ++e, ++checked) {  // sampled outputs; the values make every sum exact
          const int r = int(splitmix64(pick) % uint64_t(n)), c = int(splitmix64(pick) % uint64_t(n));
          if (steps == 0) {  // thread t of CTA (c / 128, r / 128) with tm = r % 128, tn = c % 128
            const int rr = r / 8 * 8, cc = c / 8 * 8, t = (rr % 128) / 8 * 16 + (cc % 128) / 8;
            const int m0 = rr / 128 * 128, n0 = cc / 128 * 128;
            float s = 0.f;
            for (int kt = 0; kt < n / 8; ++kt) {
              s += av(m0, kt, t % 128, t / 128);
              s += bv(n0, kt, t / 128, t % 128);
            }
            bad += hc[size_t(rr) * n + cc] != s;
          } else {  // the first `steps` k of every 8
            double s = 0;
            for (int k = 0; k < n; ++k)
              if (k % 8 < steps)
                s +=
                    double(av(r / 128 * 128, k / 8, r % 128, k % 8)) * double(bv(c / 128 * 128, k / 8, k % 8, c % 128));
            bad += hc[size_t(r) * n + c] != float(s);
          }
        }
        const char* names[2][3] = {{"math", "part", "loads"}, {"math_noload", "part_noload", "loads_noload"}};
        Row row = base_row("tile_loop", names[loads ? 0 : 1][steps == 8 ? 0 : steps ? 1 : 2]);
        row.set("n", n).set("ksteps", steps).set("grid_x", n / 128).set("grid_y", n / 128).set("block", 256);
        row.set("tiles_per_cta", n / 8).set("checked", int64_t(checked));
        row.set("pad_smem", pad).set("ctas_per_sm_max", ctas_per_sm);
        emit("tile_loop", row.set("check", bad ? "FAIL" : "ok"), &t);
        const double mhz = 0.5 * (t.before.sm_mhz + t.after.sm_mhz);
        log("tile_loop n=%d ksteps=%d pad_smem=%d (%d CTAs/SM): %.2f us (%.1f cycles per tile at %.0f MHz) %s\n", n,
            steps, pad, ctas_per_sm, t.median_us, t.median_us * mhz / (n / 8), mhz, bad ? "FAIL" : "ok");
      }
    for (float* p : {A, B, C}) CK(cudaFree(p));
  }
  return 0;
}

// b36 `tile_stamp`: where a tile's time goes, per warp. tile_loop<ks, loads, true> at n = 1024 (one CTA per SM)
// and 2048 (two), ks 8 (gemm_fp32), 1 and 0, with and without global loads; per warp the medians over CTAs
// and the two stamped tiles of s0, s1, s2 and the next tile's s0, each less the CTA's earliest s0 of the
// tile (the first barrier's release), in SM cycles. The same kernel without stamps is timed beside it.
int run_tile_stamp(const std::vector<std::string>& args) {
  (void)args;
  for (int n : g.quick ? std::vector<int>{256} : std::vector<int>{1024, 2048}) {
    const size_t nn = size_t(n) * n;
    float *A, *B, *C;
    unsigned* S;
    const int ctas = (n / 128) * (n / 128);
    CK(cudaMalloc(&A, nn * 4));
    CK(cudaMalloc(&B, nn * 4));
    CK(cudaMalloc(&C, nn * 4));
    CK(cudaMalloc(&S, size_t(ctas) * 72 * 4));
    std::vector<float> ha(nn);
    uint64_t seed = 0x7116u + uint64_t(n);
    for (float& x : ha) x = float(int(splitmix64(seed) % 9) - 4) * 0.125f;
    CK(cudaMemcpy(A, ha.data(), nn * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(B, ha.data(), nn * 4, cudaMemcpyHostToDevice));
    dim3 grid(n / 128, n / 128);
    struct V {
      int ks;
      bool loads;
      const char* name;
      TileLoopKernel plain, stamped;
    };
    const V vs[] = {{8, true, "loads", tile_loop<8, true>, tile_loop<8, true, true>},
                    {8, false, "noload", tile_loop<8, false>, tile_loop<8, false, true>},
                    {1, true, "loads", tile_loop<1, true>, tile_loop<1, true, true>},
                    {1, false, "noload", tile_loop<1, false>, tile_loop<1, false, true>},
                    {0, true, "loads", tile_loop<0, true>, tile_loop<0, true, true>},
                    {0, false, "noload", tile_loop<0, false>, tile_loop<0, false, true>},
                    {8, true, "loads_cg", tile_loop<8, true, false, true>, tile_loop<8, true, true, true>},
                    {1, true, "loads_cg", tile_loop<1, true, false, true>, tile_loop<1, true, true, true>},
                    {0, true, "loads_cg", tile_loop<0, true, false, true>, tile_loop<0, true, true, true>}};
    for (const V& v : vs) {
      poison(C, nn * 4);  // both runs start from poison: the 0-step kernels write one output per thread
      Timing plain = time_launches([&](int) { v.plain<<<grid, 256, 0, g.stream>>>(A, B, C, n, nullptr); });
      CKL();
      std::vector<float> c_plain(nn), c_stamped(nn);  // b39: the stamped kernel must compute what the plain one does
      CK(cudaMemcpy(c_plain.data(), C, nn * 4, cudaMemcpyDeviceToHost));
      poison(C, nn * 4);
      CK(cudaMemset(S, 0, size_t(ctas) * 72 * 4));
      Timing stamped = time_launches([&](int) { v.stamped<<<grid, 256, 0, g.stream>>>(A, B, C, n, S); });
      CKL();
      CK(cudaMemcpy(c_stamped.data(), C, nn * 4, cudaMemcpyDeviceToHost));
      size_t differ = 0;
      for (size_t i = 0; i < nn; ++i) differ += std::memcmp(&c_plain[i], &c_stamped[i], 4) != 0;
      std::vector<unsigned> h(size_t(ctas) * 72);
      CK(cudaMemcpy(h.data(), S, h.size() * 4, cudaMemcpyDeviceToHost));
      // per warp: s0, s1, s2, next s0 (tile 0 only), relative to the tile's earliest s0
      std::vector<std::vector<double>> rel(8 * 4), pre_rel(8);
      std::vector<double> period;
      auto globaltimer = [&](int c, int at) {  // b40: a CTA's globaltimer stamp at words at, at + 1
        return (unsigned long long)h[size_t(c) * 72 + size_t(at)] |
               (unsigned long long)h[size_t(c) * 72 + size_t(at) + 1] << 32;
      };
      unsigned long long gmin = ~0ull;  // the earliest CTA start
      for (int c = 0; c < ctas; ++c) gmin = std::min(gmin, globaltimer(c, 66));
      for (int c = 0; c < ctas; ++c) {
        const unsigned* p = &h[size_t(c) * 72];
        for (int tile = 0; tile < 2; ++tile) {
          unsigned base = p[tile * 3];
          for (int w = 1; w < 8; ++w)
            if (int(p[w * 6 + tile * 3] - base) < 0) base = p[w * 6 + tile * 3];
          for (int w = 0; w < 8; ++w)
            for (int i = 0; i < 3; ++i)
              rel[size_t(w) * 4 + size_t(i)].push_back(double(int(p[w * 6 + tile * 3 + i] - base)));
          for (int w = 0; w < 8; ++w) pre_rel[size_t(w)].push_back(double(int(p[48 + w * 2 + tile] - base)));
          if (n == 1024 && tile == 0) {  // b40: every CTA's loop span and start / end (ns after the earliest start)
            Row sr = base_row("tile_stamp", v.name);
            sr.set("n", n).set("ksteps", v.ks).set("cta", c).set("smid", int64_t(p[64]));
            sr.set("loop_cycles", int64_t(p[65])).set("start_ns", int64_t(globaltimer(c, 66) - gmin));
            sr.set("end_ns", int64_t(globaltimer(c, 68) - gmin));
            emit("tile_span", sr, nullptr);
          }
          if (n == 1024)  // b38: every CTA's stamps, less the tile's earliest s0
            for (int w = 0; w < 8; ++w) {
              Row raw = base_row("tile_stamp", v.name);
              raw.set("n", n).set("ksteps", v.ks).set("cta", c).set("smid", int64_t(p[64])).set("tile", tile);
              raw.set("warp", w).set("pre", int64_t(int(p[48 + w * 2 + tile] - base)));
              for (int i = 0; i < 3; ++i)
                raw.set(i == 0 ? "s0" : i == 1 ? "s1" : "s2", int64_t(int(p[w * 6 + tile * 3 + i] - base)));
              emit("tile_stamp_raw", raw, nullptr);
            }
          if (tile == 0) {
            unsigned base1 = p[3];
            for (int w = 1; w < 8; ++w)
              if (int(p[w * 6 + 3] - base1) < 0) base1 = p[w * 6 + 3];
            period.push_back(double(int(base1 - base)));
            for (int w = 0; w < 8; ++w) rel[size_t(w) * 4 + 3].push_back(double(int(p[w * 6 + 3] - base)));
          }
        }
      }
      const double mhz = 0.5 * (plain.before.sm_mhz + plain.after.sm_mhz);
      std::string line;
      for (int w = 0; w < 8; ++w) {
        Row row = base_row("tile_stamp", v.name);
        row.set("n", n).set("ksteps", v.ks).set("warp", w).set("ctas", ctas);
        row.set("s0_cycles", median(rel[size_t(w) * 4])).set("s1_cycles", median(rel[size_t(w) * 4 + 1]));
        row.set("s2_cycles", median(rel[size_t(w) * 4 + 2])).set("next_s0_cycles", median(rel[size_t(w) * 4 + 3]));
        row.set("tile_period_cycles", median(period)).set("pre_cycles", median(pre_rel[size_t(w)]));
        row.set("plain_cycles_per_tile", plain.median_us * mhz / (n / 8));
        row.set("stamped_cycles_per_tile", stamped.median_us * mhz / (n / 8));
        row.set("check", differ ? "FAIL" : "ok").set("differing_outputs", int64_t(differ));
        emit("tile_stamp", row, &stamped);
        line += " " + std::to_string(int(median(rel[size_t(w) * 4 + 1])));
      }
      log("tile_stamp n=%d ks=%d %s (output %s): per tile plain %.1f stamped %.1f, stamped tile %.1f; s1 per warp:%s; "
          "s2 %.0f\n",
          n, v.ks, v.name, differ ? "differs from the plain kernel's" : "as the plain kernel's",
          plain.median_us * mhz / (n / 8), stamped.median_us * mhz / (n / 8), median(period), line.c_str(),
          median(rel[2]));
    }
    for (float* p : {A, B, C}) CK(cudaFree(p));
    CK(cudaFree(S));
  }
  return 0;
}

}  // namespace twins
