// mma_throughput twin: grid 1056, block 128. Each warp runs `iters` iterations of 4 independent
// mma.sync into 4 f32 accumulators (m16n8k16 f16/bf16, m16n8k8 tf32, m16n8k32 e4m3, emulated on
// sm_90: see the loop), then stores them. Operands: random small values (|x| in [2^-5, 2^-4), random
// sign and mantissa) made in registers from the thread id, so the tensor cores see non-trivial data.
#include <cmath>
#include <vector>

#include "common.cuh"

namespace twins {

__device__ __forceinline__ uint32_t hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352d;
  x ^= x >> 15;
  x *= 0x846ca68b;
  x ^= x >> 16;
  return x;
}

// one 32-bit operand register of random small values for each dtype
template <int DT>
__device__ __forceinline__ uint32_t operand(uint32_t h) {
  if (DT == 0) {  // two f16: exponent 10 (2^-5)
    uint32_t lo = (10u << 10) | (h & 0x3ff) | ((h >> 10) & 1) << 15;
    uint32_t hi = (10u << 10) | ((h >> 11) & 0x3ff) | ((h >> 21) & 1) << 15;
    return lo | hi << 16;
  } else if (DT == 1) {  // two bf16: exponent 122
    uint32_t lo = (122u << 7) | (h & 0x7f) | ((h >> 7) & 1) << 15;
    uint32_t hi = (122u << 7) | ((h >> 8) & 0x7f) | ((h >> 15) & 1) << 15;
    return lo | hi << 16;
  } else if (DT == 2) {  // one tf32 (fp32 bits, low 13 mantissa bits ignored)
    return (122u << 23) | ((h & 0x3ff) << 13) | (h >> 31) << 31;
  } else {  // four e4m3: exponent field 2 (2^-5)
    uint32_t r = 0;
    for (int k = 0; k < 4; ++k) r |= ((2u << 3) | ((h >> (4 * k)) & 7) | ((h >> (16 + k)) & 1) << 7) << (8 * k);
    return r;
  }
}

template <int DT>
__device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  if (DT == 0)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else if (DT == 1)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else if (DT == 2)
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <int DT>
__global__ void __launch_bounds__(128) mma_throughput(float* out, int iters, uint32_t seed) {
  uint32_t gid = blockIdx.x * 128 + threadIdx.x;
  uint32_t a[4], b[2];
#pragma unroll
  for (int k = 0; k < 4; ++k) a[k] = operand<DT>(hash32(gid * 8 + k + seed));
#pragma unroll
  for (int k = 0; k < 2; ++k) b[k] = operand<DT>(hash32(gid * 8 + 4 + k + seed));
  float d[4][4];
#pragma unroll
  for (int m = 0; m < 4; ++m)
#pragma unroll
    for (int r = 0; r < 4; ++r) d[m][r] = 0.0f;
  // e4m3: sm_90 has no fp8 mma.sync. ptxas emulates one (F2FP.F16.E4M3 conversions, two
  // HMMA.16816.F32 from a zero accumulator, four FADD into the accumulators), and with loop-invariant
  // operands it hoists the conversions and the HMMA out of the loop, leaving FADDs (b1-b14's SASS;
  // an empty asm does not stop it: validation/data/h200/experiments/b15_e4m3_empty_asm). So one
  // operand register moves by `z` before every e4m3 mma: z is 0 at run time (seed < 2^31) but not to
  // the compiler, and each mma sees a different expression, so every mma.sync is emulated in full
  // except the conversions of the other five operand registers (one IADD and two F2FP per mma).
  const uint32_t z = DT == 3 ? seed >> 31 : 0u;
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      if (DT == 3) b[0] += z;
      mma<DT>(d[m], a, b);
    }
  }
#pragma unroll
  for (int m = 0; m < 4; ++m)
    *reinterpret_cast<float4*>(out + (size_t(gid) * 4 + m) * 4) = make_float4(d[m][0], d[m][1], d[m][2], d[m][3]);
}

static const char* kDtName[4] = {"f16", "bf16", "tf32", "e4m3"};
static const int kK[4] = {16, 16, 8, 32};

double point_mma(int dtype, int iters, const char* file) {
  const uint32_t grid = 1056, n = grid * 128 * 16;
  float* out;
  CK(cudaMalloc(&out, size_t(n) * 4));
  poison(out, size_t(n) * 4);
  auto launch = [&](int) {
    switch (dtype) {
      case 0:
        mma_throughput<0><<<grid, 128, 0, g.stream>>>(out, iters, 7u);
        break;
      case 1:
        mma_throughput<1><<<grid, 128, 0, g.stream>>>(out, iters, 7u);
        break;
      case 2:
        mma_throughput<2><<<grid, 128, 0, g.stream>>>(out, iters, 7u);
        break;
      default:
        mma_throughput<3><<<grid, 128, 0, g.stream>>>(out, iters, 7u);
        break;
    }
  };
  Timing t = time_launches(launch);
  std::vector<float> h(n);
  CK(cudaMemcpy(h.data(), out, size_t(n) * 4, cudaMemcpyDeviceToHost));
  CK(cudaFree(out));
  size_t bad = 0, zero = 0;
  for (float v : h) bad += !std::isfinite(v), zero += v == 0.0f;
  // the 4 accumulators of a thread got the same products: they must agree exactly
  for (uint32_t th = 0; th < grid * 128; ++th)
    for (int m = 1; m < 4; ++m)
      for (int r = 0; r < 4; ++r) bad += h[(th * 4 + m) * 4 + r] != h[th * 4 * 4 + r];
  double flops = 2.0 * 16 * 8 * kK[dtype] * 4.0 * iters * (grid * 4.0);
  double tflops = flops / (t.median_us * 1e6);
  double mhz = 0.5 * (t.before.sm_mhz + t.after.sm_mhz);
  Row r = base_row("mma_throughput", kDtName[dtype]);
  r.set("dtype", dtype).set("iters", iters).set("grid", grid).set("block", 128).set("flops", flops);
  r.set("tflops", tflops).set("flops_per_sm_per_cycle_nvml", flops / (t.median_us * mhz * g.sms));
  emit(file, r.set("zeros", uint64_t(zero)).set("check", bad ? "FAIL" : "ok"), &t);
  log("mma %s: %.1f us, %.1f TFLOP/s %s\n", kDtName[dtype], t.median_us, tflops, bad ? "FAIL" : "ok");
  return t.median_us;
}

int run_mma(const std::vector<std::string>& args) {
  int iters = int(arg_i(args, "iters", 4096));
  if (g.quick) iters = 64;
  for (int dt = 0; dt < 4; ++dt) point_mma(dt, iters, "mma_throughput");
  return 0;
}

}  // namespace twins
