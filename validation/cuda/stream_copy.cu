// stream_copy and strided_copy twins (docs/microbenchmarks.md). Both rotate through 1 GiB source
// and destination pools so that a launch never finds its data in L2 ("cold"); "hot" points reuse
// one buffer pair that fits in L2.
#include "common.cuh"

namespace twins {

static const uint64_t kPoolFloats = uint64_t(1) << 28;  // 1 GiB of fp32 per pool
static float *g_src = nullptr, *g_dst = nullptr;
static void pools() {
  if (g_src) return;
  CK(cudaMalloc(&g_src, kPoolFloats * 4));
  CK(cudaMalloc(&g_dst, kPoolFloats * 4));
  fill_pattern_f32(g_src, kPoolFloats, 12345u);
}

// grid ceil(n/4096), block 256; each thread copies 4 float4: element ((ctaid*4+j)*256+tid)*4.
// All 4 loads issue before the 4 stores; masked by < n.
__global__ void __launch_bounds__(256) stream_copy(const float* src, float* dst, uint64_t n) {
  float4 v[4];
  uint64_t e[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    e[j] = ((uint64_t(blockIdx.x) * 4 + j) * 256 + threadIdx.x) * 4;
    if (e[j] < n) v[j] = *reinterpret_cast<const float4*>(src + e[j]);
  }
#pragma unroll
  for (int j = 0; j < 4; ++j)
    if (e[j] < n) *reinterpret_cast<float4*>(dst + e[j]) = v[j];
}

// grid ceil(n/256), block 256: dst[i] = src[(i % rows) * stride + i / rows], rows = n / stride.
__global__ void __launch_bounds__(256) strided_copy(const float* src, float* dst, uint32_t n, uint32_t stride) {
  uint32_t i = blockIdx.x * 256 + threadIdx.x;
  uint32_t rows = n / stride;
  if (i < n) dst[i] = src[(i % rows) * stride + i / rows];
}

__global__ void strided_check(const float* src, const float* dst, uint32_t n, uint32_t stride,
                              unsigned long long* bad) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    uint32_t rows = n / stride;
    if (__float_as_uint(dst[i]) != __float_as_uint(src[(i % rows) * stride + i / rows])) atomicAdd(bad, 1ull);
  }
}

double point_stream_copy(uint64_t n, bool rotate, const char* file) {
  pools();
  uint64_t slots = rotate ? kPoolFloats / n : 1;
  uint32_t grid = uint32_t((n + 4095) / 4096);
  poison(g_dst, kPoolFloats * 4);
  auto launch = [&](int i) {
    uint64_t off = (uint64_t(i) % slots) * n;
    stream_copy<<<grid, 256, 0, g.stream>>>(g_src + off, g_dst + off, n);
  };
  Timing t = time_launches(launch);
  for (uint64_t s = 0; s < slots; ++s) launch(int(s));  // every slot written at least once
  CKL();
  CK(cudaDeviceSynchronize());
  size_t bad = count_mismatch_u32(g_src, g_dst, slots * n);
  double bytes = 8.0 * n;
  Row r = base_row("stream_copy", rotate ? "cold" : "hot");
  r.set("n", n).set("grid", grid).set("block", 256).set("bytes_moved", bytes).set("rotation_slots", slots);
  emit(file,
       r.set("tbps", bytes / (t.median_us * 1e6)).set("check", bad ? "FAIL" : "ok").set("mismatches", uint64_t(bad)),
       &t);
  log("stream_copy n=%llu %s: %.2f us, %.3f TB/s %s\n", (unsigned long long)n, rotate ? "cold" : "hot", t.median_us,
      bytes / (t.median_us * 1e6), bad ? "FAIL" : "ok");
  return t.median_us;
}

int run_stream_copy(const std::vector<std::string>& a) {
  // --hot_n=LIST / --cold_n=LIST: only these sizes (b42: the L2 footprint sweep, hot copies whose
  // 8n bytes span 8 MiB to 128 MiB around the 60 MiB L2, and small copies for the launch gap)
  std::vector<int64_t> hot_n = arg_list(a, "hot_n", ""), cold_n = arg_list(a, "cold_n", "");
  if (!g.quick && (!hot_n.empty() || !cold_n.empty())) {
    for (int64_t n : hot_n) point_stream_copy(uint64_t(n), false, "stream_copy");
    for (int64_t n : cold_n) point_stream_copy(uint64_t(n), true, "stream_copy");
    return 0;
  }
  int lo = int(arg_i(a, "log2_lo", 20)), hi = int(arg_i(a, "log2_hi", 28));
  if (g.quick) lo = 20, hi = 21;
  for (int k = lo; k <= hi; ++k) point_stream_copy(uint64_t(1) << k, true, "stream_copy");
  for (int k = lo; k <= std::min(hi, 22); ++k) point_stream_copy(uint64_t(1) << k, false, "stream_copy");
  return 0;
}

// The L2 a launch starts on (models/gpu/launch_history.hpp), for Nsight Compute with --cache-control
// none: per size n = 2^20 .. 2^24, 8 launches rotating through the pools (slots 0..7, as the cold
// points time them), then 4 more on slot 7's buffers (hot). No timing and no rows: the profiler's
// dram__bytes_write.sum per launch says whether a launch writes back the stores of the ones before.
int run_copy_history(const std::vector<std::string>&) {
  pools();
  for (int k = 20; k <= 24; ++k) {
    uint64_t n = uint64_t(1) << k;
    uint32_t grid = uint32_t((n + 4095) / 4096);
    for (int i = 0; i < 12; ++i) {
      uint64_t off = uint64_t(std::min(i, 7)) * n;
      stream_copy<<<grid, 256, 0, g.stream>>>(g_src + off, g_dst + off, n);
      log("copy_history launch %d: n=2^%d slot %d (%s)\n", (k - 20) * 12 + i, k, std::min(i, 7),
          i < 8 ? "rotating" : "same buffers");
    }
    CKL();
    CK(cudaDeviceSynchronize());
  }
  return 0;
}

int run_strided_copy(const std::vector<std::string>& a) {
  pools();
  uint32_t n = uint32_t(arg_i(a, "n", 1 << 24));
  if (g.quick) n = 1 << 20;
  uint64_t slots = kPoolFloats / n;
  unsigned long long* bad_d;
  CK(cudaMalloc(&bad_d, 8));
  // --strides=LIST (default 1..64 by powers of two; b42 adds 128..1024: gathers past a 16-element stride)
  for (int64_t s : arg_list(a, "strides", "1,2,4,8,16,32,64")) {
    uint32_t stride = uint32_t(s);
    poison(g_dst, kPoolFloats * 4);
    uint32_t grid = (n + 255) / 256;
    auto launch = [&](int i) {
      uint64_t off = (uint64_t(i) % slots) * n;
      strided_copy<<<grid, 256, 0, g.stream>>>(g_src + off, g_dst + off, n, stride);
    };
    Timing t = time_launches(launch);
    CK(cudaMemset(bad_d, 0, 8));
    strided_check<<<4 * g.sms, 512>>>(g_src, g_dst, n, stride, bad_d);  // slot 0 was written
    CKL();
    unsigned long long bad = 0;
    CK(cudaMemcpy(&bad, bad_d, 8, cudaMemcpyDeviceToHost));
    double bytes = 8.0 * n;
    Row r = base_row("strided_copy", "cold");
    r.set("n", n).set("stride", stride).set("grid", grid).set("block", 256).set("bytes_useful", bytes);
    r.set("rotation_slots", slots).set("useful_tbps", bytes / (t.median_us * 1e6));
    emit("strided_copy", r.set("check", bad ? "FAIL" : "ok"), &t);
    log("strided_copy n=%u stride=%u: %.2f us, %.3f TB/s useful %s\n", n, stride, t.median_us,
        bytes / (t.median_us * 1e6), bad ? "FAIL" : "ok");
  }
  CK(cudaFree(bad_d));
  return 0;
}

}  // namespace twins
