// lds_burst twin (an experiment, not a validation kernel): the order in which an SM's shared pipe
// serves the burst of shared loads that follows a barrier. One CTA per SM (grid = SM count), block
// 4, 8 or 16 warps (1-32 for the periods below); each of `reps` repetitions is __syncthreads(), then every warp issues
// kLoads LDS.128 at gemm_fp32's k-step addresses (kMode 0: A 2 wavefronts, B 8 wavefronts; kLoads 1 is B alone) or at
// one broadcast address (kMode 1), in gemm_fp32's SASS order (A0, B0, A1, B1), and consumes them. Lane 0 of each warp
// records clock64 after the barrier (t0), after consuming the first two loads (t1) and all of them (t2). The host
// reports, per warp, the median over CTAs and repetitions of t0, t1, t2 less the CTA's earliest t0 of that repetition,
// and the median period of a repetition: the service order and the burst's length, as the model's shared pipe must
// order them. kStamp false: no stamps inside the loop (lane 0 of each warp stores its clock64 before and after it), and
// kLoads 0: no shared loads: the period of the barrier alone, and the cost of the stamps.
#include <algorithm>
#include <vector>

#include "common.cuh"

namespace twins {

__device__ __forceinline__ void lds4b(float* v, uint32_t addr) {
  // "memory": not moved across the barrier; every element is used below, or ptxas narrows the load
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v[0]), "=f"(v[1]), "=f"(v[2]), "=f"(v[3])
               : "r"(addr)
               : "memory");
}
__device__ __forceinline__ long long clk() {
  long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}
__device__ __forceinline__ float use2(float x, float y) {  // a dependent add the clock read waits behind
  float u;
  asm volatile("add.f32 %0, %1, %2;" : "=f"(u) : "f"(x), "f"(y));
  return u;
}

// word of fragment h of k-step k for thread t (of 256; gemm_fp32's 16 x 16 thread grid) or broadcast
__device__ inline int burst_a(int mode, int t, int k, int h) {
  return mode == 0 ? k * 128 + t / 16 * 8 + 4 * h : 8 * k;
}
__device__ inline int burst_b(int mode, int t, int k, int h) {
  return mode == 0 ? k * 128 + t % 16 * 8 + 4 * h : 8 * k;
}

// Lane 0's stamps: t0, t1, t2 of repetition r (stamped kernels), or the loop's start and end (kStamp false).
__device__ inline void stamp_rep(long long* stamps, int reps, int r, int nw, int w, long long t0, long long t1,
                                 long long t2) {
  long long* p = stamps + ((size_t(blockIdx.x) * reps + r) * nw + w) * 3;
  p[0] = t0, p[1] = t1, p[2] = t2;
}
__device__ inline void stamp_span(long long* stamps, int nw, int w, long long start, long long end) {
  stamps[(size_t(blockIdx.x) * nw + w) * 2] = start, stamps[(size_t(blockIdx.x) * nw + w) * 2 + 1] = end;
}

// kStamp false: only the warps whose bit is set here issue the loads (the others take the barriers)
__device__ unsigned g_burst_mask = ~0u;

template <int kMode, int kLoads, bool kStamp = true>
__global__ void __launch_bounds__(1024) lds_burst(float* out, long long* stamps, int reps) {
  __shared__ __align__(16) float As[1024], Bs[1024];
  const int t = threadIdx.x, w = t / 32, nw = blockDim.x / 32, tt = t % 256;
  for (int q = t; q < 1024; q += blockDim.x) As[q] = float(q % 61 + 1), Bs[q] = float(q % 59 + 1);
  const auto as = uint32_t(__cvta_generic_to_shared(As)), bs = uint32_t(__cvta_generic_to_shared(Bs));
  float s = 0;
  const unsigned mask = g_burst_mask;  // read once: a read inside the loop reloads after every barrier
  const long long start = clk();
  for (int r = 0; r < reps; ++r) {
    __syncthreads();
    const long long t0 = clk();
    const int k = r & 7;
    float a0[4], b0[4], a1[4], b1[4];
    long long t1, t2;
    if (kLoads == 0 || (!kStamp && !((mask >> w) & 1u))) {
      t1 = t2 = clk();
    } else if (kLoads == 1) {
      lds4b(b0, bs + 4 * burst_b(kMode, tt, k, 0));
      s += use2(b0[0], b0[3]);
      t1 = t2 = clk();
      s += b0[1] + b0[2];
    } else {
      lds4b(a0, as + 4 * burst_a(kMode, tt, k, 0));
      lds4b(b0, bs + 4 * burst_b(kMode, tt, k, 0));
      lds4b(a1, as + 4 * burst_a(kMode, tt, k, 1));
      lds4b(b1, bs + 4 * burst_b(kMode, tt, k, 1));
      s += use2(a0[0], b0[0]);
      t1 = clk();
      s += use2(a1[0], b1[0]);
      t2 = clk();
      for (int e = 1; e < 4; ++e) s += a0[e] + b0[e] + a1[e] + b1[e];
    }
    if (kStamp && t % 32 == 0) stamp_rep(stamps, reps, r, nw, w, t0, t1, t2);
  }
  const long long end = clk();
  if (!kStamp && t % 32 == 0) stamp_span(stamps, nw, w, start, end);
  out[blockIdx.x * blockDim.x + t] = s;
}

// Runs `launch(out, stamps)` twice (warm-up, then the recorded launch) on fresh buffers for `grid` CTAs
// of `block` threads and returns the `ns` stamps the second launch wrote.
template <class Launch>
static std::vector<long long> burst_stamps(int grid, int block, size_t ns, Launch launch) {
  float* out;
  long long* st;
  CK(cudaMalloc(&out, size_t(grid) * block * 4));
  CK(cudaMalloc(&st, ns * 8));
  for (int i = 0; i < 2; ++i) {
    launch(out, st);
    CKL();
  }
  CK(cudaStreamSynchronize(g.stream));
  std::vector<long long> h(ns);
  CK(cudaMemcpy(h.data(), st, ns * 8, cudaMemcpyDeviceToHost));
  CK(cudaFree(out));
  CK(cudaFree(st));
  return h;
}

// stamp_span's stamps: the median over CTAs of (the warps' latest end - earliest start) / reps
static double span_period(const std::vector<long long>& h, int grid, int warps, int reps) {
  std::vector<double> per;
  for (int c = 0; c < grid; ++c) {
    long long a = h[size_t(c) * warps * 2], b = h[size_t(c) * warps * 2 + 1];
    for (int w = 0; w < warps; ++w)
      a = std::min(a, h[(size_t(c) * warps + w) * 2]), b = std::max(b, h[(size_t(c) * warps + w) * 2 + 1]);
    per.push_back(double(b - a) / reps);
  }
  return median(per);
}

// kStamp false: the median over CTAs of (latest end - earliest start) / reps
static void burst_period(int mode, int loads, int warps, int reps, unsigned mask = ~0u) {
  const int grid = g.sms, block = warps * 32;
  const size_t ns = size_t(grid) * warps * 2;
  CK(cudaMemcpyToSymbol(g_burst_mask, &mask, sizeof(mask)));
  const std::vector<long long> h = burst_stamps(grid, block, ns, [&](float* out, long long* st) {
    if (loads == 0) lds_burst<0, 0, false><<<grid, block, 0, g.stream>>>(out, st, reps);
    if (loads == 1) lds_burst<1, 1, false><<<grid, block, 0, g.stream>>>(out, st, reps);
    if (loads == 4 && mode == 0) lds_burst<0, 4, false><<<grid, block, 0, g.stream>>>(out, st, reps);
    if (loads == 4 && mode == 1) lds_burst<1, 4, false><<<grid, block, 0, g.stream>>>(out, st, reps);
  });
  const double period = span_period(h, grid, warps, reps);
  const char* mode_name = loads == 0 ? "barrier" : mode == 0 ? "gemm" : "broadcast";
  Row row = base_row("lds_burst", mode_name);
  row.set("loads", loads).set("warps", warps).set("reps", reps).set("grid", grid).set("warp", -1).set("stamps", 0);
  row.set("mask", uint32_t(mask & ((warps < 32 ? 1u << warps : 0u) - 1u)));
  row.set("period_cycles", period);
  emit("lds_burst_period", row, nullptr);
  log("lds_burst %s loads=%d warps=%d mask=0x%x, no stamps: period %.1f cycles\n", mode_name, loads, warps, mask,
      period);
}

static void burst_point(int mode, int loads, int warps, int reps) {
  const int grid = g.sms, block = warps * 32;
  const size_t ns = size_t(grid) * reps * warps * 3;
  const std::vector<long long> h = burst_stamps(grid, block, ns, [&](float* out, long long* st) {
    if (mode == 0 && loads == 4) lds_burst<0, 4><<<grid, block, 0, g.stream>>>(out, st, reps);
    if (mode == 0 && loads == 1) lds_burst<0, 1><<<grid, block, 0, g.stream>>>(out, st, reps);
    if (mode == 1 && loads == 4) lds_burst<1, 4><<<grid, block, 0, g.stream>>>(out, st, reps);
    if (mode == 1 && loads == 1) lds_burst<1, 1><<<grid, block, 0, g.stream>>>(out, st, reps);
  });
  // per warp: t0, t1, t2 relative to the repetition's earliest t0 in its CTA; the period between reps
  std::vector<std::vector<double>> rel(size_t(warps) * 3);
  std::vector<double> period, burst;
  const int r0 = std::min(4, reps / 4);  // skip the first repetitions (the fill)
  for (int c = 0; c < grid; ++c)
    for (int r = r0; r + 1 < reps; ++r) {
      auto at = [&](int rr, int w, int i) { return h[((size_t(c) * reps + rr) * warps + w) * 3 + i]; };
      long long base = at(r, 0, 0), next = at(r + 1, 0, 0), end = 0;
      for (int w = 0; w < warps; ++w) base = std::min(base, at(r, w, 0)), next = std::min(next, at(r + 1, w, 0));
      for (int w = 0; w < warps; ++w) {
        for (int i = 0; i < 3; ++i) rel[size_t(w) * 3 + i].push_back(double(at(r, w, i) - base));
        end = std::max(end, at(r, w, 2));
      }
      period.push_back(double(next - base));
      burst.push_back(double(end - base));
    }
  const char* mode_name = mode == 0 ? "gemm" : "broadcast";
  for (int w = 0; w < warps; ++w) {
    Row row = base_row("lds_burst", mode_name);
    row.set("loads", loads).set("warps", warps).set("reps", reps).set("grid", grid).set("warp", w);
    row.set("t0_cycles", median(rel[size_t(w) * 3])).set("t1_cycles", median(rel[size_t(w) * 3 + 1]));
    row.set("t2_cycles", median(rel[size_t(w) * 3 + 2]));
    row.set("burst_cycles", median(burst)).set("period_cycles", median(period));
    emit("lds_burst", row, nullptr);
  }
  std::string line;
  for (int w = 0; w < warps; ++w) line += " " + std::to_string(int(median(rel[size_t(w) * 3 + 2])));
  log("lds_burst %s loads=%d warps=%d: period %.0f, burst %.0f cycles; per-warp done:%s\n", mode_name, loads, warps,
      median(period), median(burst), line.c_str());
}

int run_lds_burst(const std::vector<std::string>& args) {
  (void)args;
  const int reps = g.quick ? 8 : 64;
  for (int mode : {0, 1})
    for (int loads : {4, 1})
      for (int warps : {4, 8, 16}) burst_point(mode, loads, warps, reps);
  for (int v = 0; v < 4; ++v)  // barrier alone, broadcast x1, gemm x4, broadcast x4
    for (int warps : {1, 2, 4, 8, 16, 32})
      burst_period(v == 1 || v == 3 ? 1 : 0, v == 0 ? 0 : v == 1 ? 1 : 4, warps, 8 * reps);
  // 8 warps, only some loading (warp w runs on sub-partition w % 4): one warp; two on one sub-partition;
  // two on two; one on each of four; two on each of two; all
  for (int v = 0; v < 2; ++v)
    for (unsigned mask : {0x01u, 0x11u, 0x03u, 0x0fu, 0x33u, 0xffu}) burst_period(v, v == 0 ? 4 : 1, 8, 8 * reps, mask);
  return 0;
}

// lds_steady: does the shared pipe keep a steady loop's warps staggered? Each of `reps` repetitions
// issues the four LDS.128 of a gemm_fp32 k-step (k = r % 8) and 64 FFMA on their values (the 8 x 8 outer
// product), with no barrier in the loop (kBarrier: __syncthreads() first, as tile_loop's first k-step).
// Lane 0 of each warp stamps clock64 before the loads (t0), after a use of all four (t1) and after a use
// of the accumulators (t2): per warp, the load wait t1 - t0 and the math t2 - t1; per repetition, the
// spread of the warps' t1 (a convoy returns them together, issue order staggers them). kStamp false:
// start and end only (the period without the stamps' stores).
template <bool kBarrier, bool kStamp>
__global__ void __launch_bounds__(512) lds_steady(float* out, long long* stamps, int reps) {
  __shared__ __align__(16) float As[1024], Bs[1024];
  const int t = threadIdx.x, w = t / 32, nw = blockDim.x / 32, tt = t % 256;
  for (int q = t; q < 1024; q += blockDim.x) As[q] = float(q % 61 + 1) * 1e-3f, Bs[q] = float(q % 59 + 1) * 1e-3f;
  __syncthreads();
  const auto as = uint32_t(__cvta_generic_to_shared(As)), bs = uint32_t(__cvta_generic_to_shared(Bs));
  float acc[64];
  for (int e = 0; e < 64; ++e) acc[e] = 0;
  const long long start = clk();
  for (int r = 0; r < reps; ++r) {
    if (kBarrier) __syncthreads();
    const long long t0 = clk();
    const int k = r & 7;
    float a[8], b[8];
    lds4b(a, as + 4 * burst_a(0, tt, k, 0));
    lds4b(b, bs + 4 * burst_b(0, tt, k, 0));
    lds4b(a + 4, as + 4 * burst_a(0, tt, k, 1));
    lds4b(b + 4, bs + 4 * burst_b(0, tt, k, 1));
    const float u = use2(use2(a[0], b[0]), use2(a[4], b[4]));
    const long long t1 = clk();
    acc[0] += u * 1e-9f;
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[i * 8 + j] = fmaf(a[i], b[j], acc[i * 8 + j]);
    const float v = use2(acc[0], acc[63]);
    const long long t2 = clk();
    acc[1] += v * 1e-9f;
    if (kStamp && t % 32 == 0) stamp_rep(stamps, reps, r, nw, w, t0, t1, t2);
  }
  const long long end = clk();
  if (!kStamp && t % 32 == 0) stamp_span(stamps, nw, w, start, end);
  float s = 0;
  for (int e = 0; e < 64; ++e) s += acc[e];
  out[blockIdx.x * blockDim.x + t] = s;
}

static void steady_point(bool barrier, int warps, int reps) {
  const int grid = g.sms, block = warps * 32;
  // no stamps: the period
  std::vector<long long> h = burst_stamps(grid, block, size_t(grid) * warps * 2, [&](float* out, long long* st) {
    if (barrier)
      lds_steady<true, false><<<grid, block, 0, g.stream>>>(out, st, reps);
    else
      lds_steady<false, false><<<grid, block, 0, g.stream>>>(out, st, reps);
  });
  const double period = span_period(h, grid, warps, reps);
  // stamps: per warp, the medians of t1 - t0, t2 - t1 and of t1 less the repetition's earliest t1
  h = burst_stamps(grid, block, size_t(grid) * reps * warps * 3, [&](float* out, long long* st) {
    if (barrier)
      lds_steady<true, true><<<grid, block, 0, g.stream>>>(out, st, reps);
    else
      lds_steady<false, true><<<grid, block, 0, g.stream>>>(out, st, reps);
  });
  std::vector<std::vector<double>> wait(warps), math(warps), phase(warps);
  std::vector<double> spread, sper;
  const int r0 = std::min(8, reps / 4);
  for (int c = 0; c < grid; ++c)
    for (int r = r0; r + 1 < reps; ++r) {
      auto at = [&](int rr, int w, int i) { return h[((size_t(c) * reps + rr) * warps + w) * 3 + i]; };
      long long lo = at(r, 0, 1), hi = lo;
      for (int w = 0; w < warps; ++w) lo = std::min(lo, at(r, w, 1)), hi = std::max(hi, at(r, w, 1));
      for (int w = 0; w < warps; ++w) {
        wait[w].push_back(double(at(r, w, 1) - at(r, w, 0)));
        math[w].push_back(double(at(r, w, 2) - at(r, w, 1)));
        phase[w].push_back(double(at(r, w, 1) - lo));
      }
      spread.push_back(double(hi - lo));
      sper.push_back(double(at(r + 1, 0, 0) - at(r, 0, 0)));
    }
  const char* name = barrier ? "barrier" : "steady";
  std::string line;
  for (int w = 0; w < warps; ++w) {
    Row row = base_row("lds_steady", name);
    row.set("warps", warps).set("reps", reps).set("grid", grid).set("warp", w);
    row.set("period_cycles", period).set("stamped_period_cycles", median(sper));
    row.set("wait_cycles", median(wait[w])).set("math_cycles", median(math[w]));
    row.set("t1_phase_cycles", median(phase[w])).set("t1_spread_cycles", median(spread));
    emit("lds_steady", row, nullptr);
    line += " " + std::to_string(int(median(wait[w]))) + "/" + std::to_string(int(median(phase[w])));
  }
  log("lds_steady %s warps=%d: period %.1f (stamped %.1f), t1 spread %.0f; per warp wait/phase:%s\n", name, warps,
      period, median(sper), median(spread), line.c_str());
}

int run_lds_steady(const std::vector<std::string>& args) {
  (void)args;
  const int reps = g.quick ? 16 : 128;
  for (bool barrier : {false, true})
    for (int warps : {1, 2, 4, 8, 16}) steady_point(barrier, warps, reps);
  return 0;
}

// b41 `bar_store`: does a barrier wait for the shared stores issued before it? One CTA of 8 warps per SM;
// each of `reps` repetitions: the storing warps (kAll false: warps 0 and 4, which share a sub-partition;
// true: all eight) issue kStores STS.128 (4 wavefronts each) into their own region, every warp reads the
// SM clock (pre), BAR.SYNC, reads it again (s0), loads one word of warp 0's last store (LDS, as a
// tile loop's first load reads another warp's store), uses it, reads the clock (s1), and a second barrier
// ends the repetition. Lane 0 keeps repetitions reps / 2 and reps / 2 + 1 in registers (no branch).
// Correctness needs every warp's load after warp 0's stores: on a pipe that serves the sub-partitions'
// queues in turn, the loads of warps on the other sub-partitions would otherwise pass warp 0's stores.
template <int kStores, bool kAll>
__global__ void __launch_bounds__(256) bar_store(float* out, long long* stamps, int reps, int* bad) {
  __shared__ __align__(16) float4 Ss[8][8][32];
  const int t = threadIdx.x, w = t / 32, lane = t % 32;
  const bool stores = kAll || w % 4 == 0;
  long long st[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  float acc = 0.f;
  int wrong = 0;
  const int r0 = reps / 2;
  const long long start = clk();
  for (int r = 0; r < reps; ++r) {
    if (stores)
#pragma unroll
      for (int k = 0; k < kStores; ++k) {
        const float v = float(r + w + k);
        Ss[w][k][lane] = make_float4(v, v, v, v);
      }
    const long long pre = clk();
    __syncthreads();
    const long long s0 = clk();
    float v[4];
    const int k = kStores > 0 ? kStores - 1 : 0;
    lds4b(v, uint32_t(__cvta_generic_to_shared(&Ss[0][k][lane])));
    const float u = use2(v[0], v[3]);
    const long long s1 = clk();
    acc += u;
    if (kStores > 0 && u != 2.f * float(r + k)) ++wrong;
    __syncthreads();
    const long long s2 = clk();
    const bool a = r == r0, b = r == r0 + 1;  // selects, no branch, no local memory
    st[0] = a ? pre : st[0], st[1] = a ? s0 : st[1], st[2] = a ? s1 : st[2], st[3] = a ? s2 : st[3];
    st[4] = b ? pre : st[4], st[5] = b ? s0 : st[5], st[6] = b ? s1 : st[6], st[7] = b ? s2 : st[7];
  }
  const long long end = clk();
  out[blockIdx.x * 256 + t] = acc;
  if (wrong) atomicAdd(bad, wrong);
  if (lane == 0) {
    long long* p = stamps + (size_t(blockIdx.x) * 8 + w) * 10;
    for (int j = 0; j < 8; ++j) p[j] = st[j];
    p[8] = start, p[9] = end;
  }
}

template <int kStores, bool kAll>
void bar_store_point(int reps) {
  const int ctas = g.sms;
  float* out;
  long long* stamps;
  int* bad;
  CK(cudaMalloc(&out, size_t(ctas) * 256 * 4));
  CK(cudaMalloc(&stamps, size_t(ctas) * 8 * 10 * 8));
  CK(cudaMalloc(&bad, 4));
  CK(cudaMemset(bad, 0, 4));
  Timing tm = time_launches([&](int) { bar_store<kStores, kAll><<<ctas, 256, 0, g.stream>>>(out, stamps, reps, bad); });
  CKL();
  std::vector<long long> h(size_t(ctas) * 80);
  int hbad = 0;
  CK(cudaMemcpy(h.data(), stamps, h.size() * 8, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&hbad, bad, 4, cudaMemcpyDeviceToHost));
  // per warp, less the repetition's last `pre` of the CTA: pre, s0, s1, s2 (medians over CTAs and 2 reps)
  std::vector<std::vector<double>> rel(8 * 4);
  std::vector<double> period, spread_s1;
  for (int c = 0; c < ctas; ++c) {
    const long long* p = &h[size_t(c) * 80];
    for (int rep = 0; rep < 2; ++rep) {
      long long last = p[rep * 4], s1min = p[rep * 4 + 2], s1max = p[rep * 4 + 2];
      for (int w = 1; w < 8; ++w) {
        last = std::max(last, p[w * 10 + rep * 4]);
        s1min = std::min(s1min, p[w * 10 + rep * 4 + 2]);
        s1max = std::max(s1max, p[w * 10 + rep * 4 + 2]);
      }
      spread_s1.push_back(double(s1max - s1min));
      for (int w = 0; w < 8; ++w)
        for (int i = 0; i < 4; ++i) rel[size_t(w) * 4 + size_t(i)].push_back(double(p[w * 10 + rep * 4 + i] - last));
    }
    period.push_back(double(p[9] - p[8]) / reps);
  }
  std::string line;
  for (int w = 0; w < 8; ++w) {
    Row row = base_row("bar_store", kAll ? "all_store" : "sp0_stores");
    row.set("stores", kStores).set("warp", w).set("ctas", ctas).set("reps", reps);
    row.set("pre_cycles", median(rel[size_t(w) * 4])).set("s0_cycles", median(rel[size_t(w) * 4 + 1]));
    row.set("s1_cycles", median(rel[size_t(w) * 4 + 2])).set("s2_cycles", median(rel[size_t(w) * 4 + 3]));
    row.set("s1_spread_cycles", median(spread_s1)).set("period_cycles", median(period));
    row.set("wrong_loads", int64_t(hbad)).set("check", hbad ? "FAIL" : "ok");
    emit("bar_store", row, &tm);
    line += " " + std::to_string(int(median(rel[size_t(w) * 4 + 2])));
  }
  log("bar_store %s stores=%d: period %.1f; s1 - last pre per warp:%s (wrong loads %d)\n", kAll ? "all" : "sp0",
      kStores, median(period), line.c_str(), hbad);
  CK(cudaFree(out));
  CK(cudaFree(stamps));
  CK(cudaFree(bad));
}

int run_bar_store(const std::vector<std::string>& args) {
  (void)args;
  const int reps = g.quick ? 8 : 64;
  bar_store_point<0, false>(reps);
  bar_store_point<1, false>(reps);
  bar_store_point<2, false>(reps);
  bar_store_point<4, false>(reps);
  bar_store_point<8, false>(reps);
  bar_store_point<1, true>(reps);
  bar_store_point<2, true>(reps);
  bar_store_point<4, true>(reps);
  bar_store_point<8, true>(reps);
  return 0;
}

}  // namespace twins
