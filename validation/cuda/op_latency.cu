// op_latency twin. Latency (chains = 1): grid 1, block 32 (one warp on one sub-partition); the warp runs
// `iters` iterations of a chain of 16 dependent instructions of one kind, so each instruction waits for
// the one before: the time per instruction is that instruction's dependent-issue latency on the H200.
// Throughput (chains = 8): 4 CTAs of 256 threads per SM (8 warps per sub-partition), each thread
// running 8 such chains side by side: the rate at which an SM issues that instruction.
//   op 0 ffma   fma.rn.f32 x = x * a + b                (FFMA)
//   op 1 ex2    ex2.approx.ftz.f32 x = 2^-x             (MUFU.EX2; converges to 0.6412)
//   op 2 shfl   shfl.sync.bfly.b32 v = v from lane ^ 1  (SHFL.BFLY)
//   op 3 mma    mma.sync.m16n8k16 bf16, f32 d = a b + d (HMMA.16816.F32.BF16, the accumulator chain)
//   op 4 fmax   max.f32 x = max(x, y)                   (FMNMX)
//   op 5 f2fp   cvt.rn.bf16x2.f32 x = bits(bf16x2(x, x)) (F2FP.BF16.F32.PACK_AB)
// The IR's side is kernels_ir/lib/op_latency.kir; `gtsim calibrate` reads the slope between two
// iteration counts (sm.units.*.latency_cycles, sm.tensor.latency_cycles).
#include <algorithm>
#include <cmath>
#include <vector>

#include "common.cuh"

namespace twins {

static const char* kOpName[6] = {"ffma", "ex2", "shfl", "mma", "fmax", "f2fp"};

template <int OP>
__device__ __forceinline__ void step(float& x, uint32_t& v, float (&d)[4], float a, float b, uint32_t ma, uint32_t mb) {
  if (OP == 0) {
    asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(x) : "f"(a), "f"(b));
  } else if (OP == 1) {
    asm volatile("{ .reg .f32 t; neg.f32 t, %0; ex2.approx.ftz.f32 %0, t; }" : "+f"(x));
  } else if (OP == 2) {
    asm volatile("shfl.sync.bfly.b32 %0, %0, 1, 0x1f, 0xffffffff;" : "+r"(v));
  } else if (OP == 3) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(ma), "r"(mb), "r"(ma), "r"(mb), "r"(ma), "r"(mb));
  } else if (OP == 4) {
    asm volatile("max.f32 %0, %0, %1;" : "+f"(x) : "f"(b));
  } else {
    asm volatile("cvt.rn.bf16x2.f32 %0, %0, %0;" : "+r"(v));
  }
}

template <int OP, int CH>
__global__ void __launch_bounds__(256) op_latency(float* out, int iters, float a, float b) {
  const int lane = threadIdx.x % 32;
  float x[CH], d[CH][4];
  uint32_t v[CH];
#pragma unroll
  for (int c = 0; c < CH; ++c) {
    x[c] = a * float(lane) + b + float(c);
    v[c] = uint32_t(lane) * 2654435761u + uint32_t(c);
    if (OP == 5) v[c] = __float_as_uint(x[c]);
    d[c][0] = d[c][1] = d[c][2] = d[c][3] = 0.0f;
  }
  const uint32_t ma = __float_as_uint(a) & 0x3f803f80u, mb = __float_as_uint(b) & 0x3f803f80u;  // bf16 pairs
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < 16; ++k)
#pragma unroll
      for (int c = 0; c < CH; ++c) step<OP>(x[c], v[c], d[c], a, b, ma, mb);
  }
  float r = 0;
#pragma unroll
  for (int c = 0; c < CH; ++c)
    r += OP == 2 || OP == 5 ? float(v[c]) : OP == 3 ? d[c][0] + d[c][1] + d[c][2] + d[c][3] : x[c];
  out[blockIdx.x * blockDim.x + threadIdx.x] = CH == 1 ? r : r - float(CH * (CH - 1) / 2) * (OP == 4);
}

// Host check of one latency run's 32 outputs (each lane's chain of 16 * iters instructions); the
// throughput runs (8 chains) check that every output is finite (f2fp: any bits).
static bool check_op(int op, const std::vector<float>& h, int chains, int iters, float a, float b) {
  if (chains > 1) {
    for (float y : h)
      if (op != 5 && !std::isfinite(y)) return false;
    return true;
  }
  for (int lane = 0; lane < 32; ++lane) {
    float x = a * float(lane) + b;
    double want = 0;
    if (op == 0) {
      for (int i = 0; i < 16 * iters; ++i) x = std::fma(x, a, b);
      want = x;
    } else if (op == 1) {
      want = 0.641185744504986;  // the fixed point of x = 2^-x
      if (std::fabs(h[lane] - want) > 1e-3) return false;
      continue;
    } else if (op == 2) {
      want = float(uint32_t(lane) * 2654435761u);  // an even number of swaps: the lane's own value
    } else if (op == 3 || op == 5) {
      if (op == 3 && !std::isfinite(h[lane])) return false;
      continue;
    } else {
      want = std::max(x, b);
    }
    if (h[lane] != float(want)) return false;
  }
  return true;
}

template <int OP>
static void launch_op(int chains, int grid, int block, float* out, int iters, float a, float b) {
  if (chains == 1)
    op_latency<OP, 1><<<grid, block, 0, g.stream>>>(out, iters, a, b);
  else
    op_latency<OP, 8><<<grid, block, 0, g.stream>>>(out, iters, a, b);
}

static double point_op(int op, int chains, int iters) {
  // a, b: run-time values (the compiler cannot fold the chain); ffma's x stays near b / (1 - a)
  const float a = 0.5f, b = 0.25f;
  const int grid = chains == 1 ? 1 : 4 * g.sms, block = chains == 1 ? 32 : 256, n = grid * block;
  float* out;
  CK(cudaMalloc(&out, size_t(n) * 4));
  poison(out, size_t(n) * 4);
  auto launch = [&](int) {
    switch (op) {
      case 0:
        launch_op<0>(chains, grid, block, out, iters, a, b);
        break;
      case 1:
        launch_op<1>(chains, grid, block, out, iters, a, b);
        break;
      case 2:
        launch_op<2>(chains, grid, block, out, iters, a, b);
        break;
      case 3:
        launch_op<3>(chains, grid, block, out, iters, a, b);
        break;
      case 4:
        launch_op<4>(chains, grid, block, out, iters, a, b);
        break;
      default:
        launch_op<5>(chains, grid, block, out, iters, a, b);
        break;
    }
  };
  Timing t = time_launches(launch);
  std::vector<float> h(n);
  CK(cudaMemcpy(h.data(), out, size_t(n) * 4, cudaMemcpyDeviceToHost));
  CK(cudaFree(out));
  bool ok = check_op(op, h, chains, iters, a, b);
  double mhz = 0.5 * (t.before.sm_mhz + t.after.sm_mhz);
  Row r = base_row("op_latency", kOpName[op]);
  r.set("op", op).set("iters", iters).set("chains", chains).set("grid", grid).set("block", block);
  // with the launch: the slope between two iteration counts is the latency / the rate
  r.set("cycles_per_op_nvml", t.median_us * mhz / (16.0 * iters));
  r.set("warp_ops_per_sm_cycle_nvml", double(n / 32) * chains * 16.0 * iters / (t.median_us * mhz * g.sms));
  emit("op_latency", r.set("check", ok ? "ok" : "FAIL"), &t);
  log("op_latency %s chains=%d iters=%d: %.2f us %s\n", kOpName[op], chains, iters, t.median_us, ok ? "ok" : "FAIL");
  return t.median_us;
}

int run_op_latency(const std::vector<std::string>& args) {
  (void)args;
  for (int chains : {1, 8})
    for (int op = 0; op < 6; ++op) {
      if (chains == 8 && op == 3) continue;  // the mma rate: mma_throughput
      // throughput runs: 8 warps per sub-partition x 8 chains; fewer iterations for the same time
      int base = chains == 1 ? 1024 : (op == 0 || op == 4 || op == 5 ? 128 : 32);
      for (int iters : {base, 2 * base}) point_op(op, chains, g.quick ? std::max(1, iters / 64) : iters);
    }
  return 0;
}

}  // namespace twins
