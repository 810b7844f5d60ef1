// stream_rw twins (batch b5 on): HBM read-only and write-only streams, to set beside stream_copy's
// read:write = 1:1. Both rotate through their own 1 GiB pool ("cold", as stream_copy). grid
// ceil(n / 4096), block 256; each thread handles 4 float4 at element ((ctaid * 4 + j) * 256 + tid) * 4.
//   stream_write: 4 float4 stores of a constant per thread.
//   stream_read:  4 float4 loads per thread, summed; the sum is stored only when it equals a value
//                 it never takes (so the loads stay; no store in practice).
#include "common.cuh"

namespace twins {

static const uint64_t kRwPoolFloats = uint64_t(1) << 28;  // 1 GiB of fp32
static float* g_rw_pool = nullptr;
static float* g_rw_sink = nullptr;

__global__ void __launch_bounds__(256) stream_write(float* dst, uint64_t n, float value) {
  const float4 v = make_float4(value, value, value, value);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    uint64_t e = ((uint64_t(blockIdx.x) * 4 + j) * 256 + threadIdx.x) * 4;
    if (e < n) *reinterpret_cast<float4*>(dst + e) = v;
  }
}

__global__ void __launch_bounds__(256) stream_read(const float* src, uint64_t n, float* sink) {
  float4 v[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    uint64_t e = ((uint64_t(blockIdx.x) * 4 + j) * 256 + threadIdx.x) * 4;
    v[j] = e < n ? *reinterpret_cast<const float4*>(src + e) : make_float4(0, 0, 0, 0);
  }
  float s = 0;
#pragma unroll
  for (int j = 0; j < 4; ++j) s += v[j].x + v[j].y + v[j].z + v[j].w;
  if (s == -1234.5f) sink[threadIdx.x] = s;  // never true for the pool's pattern (finite, non-zero floats)
}

static void rw_point(bool write, uint64_t n) {
  uint64_t slots = kRwPoolFloats / n;
  uint32_t grid = uint32_t((n + 4095) / 4096);
  auto launch = [&](int i) {
    uint64_t off = (uint64_t(i) % slots) * n;
    if (write)
      stream_write<<<grid, 256, 0, g.stream>>>(g_rw_pool + off, n, 1.5f);
    else
      stream_read<<<grid, 256, 0, g.stream>>>(g_rw_pool + off, n, g_rw_sink);
  };
  Timing t = time_launches(launch);
  CKL();
  CK(cudaDeviceSynchronize());
  size_t bad = 0;
  if (write) {  // every element of the first slot is the constant
    std::vector<float> h(4096);
    CK(cudaMemcpy(h.data(), g_rw_pool + (n - 4096), 4096 * 4, cudaMemcpyDeviceToHost));
    for (float x : h) bad += x != 1.5f;
  }
  double bytes = double(n) * 4;
  Row r = base_row("stream_rw", write ? "write" : "read");
  r.set("n", double(n))
      .set("bytes", bytes)
      .set("grid", grid)
      .set("block", 256)
      .set("gbps", bytes / (t.median_us * 1e3));
  emit("stream_rw", r.set("check", bad ? "FAIL" : "ok"), &t);
  log("stream_%s n=%llu: %.2f us, %.0f GB/s %s\n", write ? "write" : "read", (unsigned long long)n, t.median_us,
      bytes / (t.median_us * 1e3), bad ? "FAIL" : "ok");
}

int run_stream_rw(const std::vector<std::string>& args) {
  (void)args;
  if (!g_rw_pool) {
    CK(cudaMalloc(&g_rw_pool, kRwPoolFloats * 4));
    CK(cudaMalloc(&g_rw_sink, 256 * 4));
    fill_pattern_f32(g_rw_pool, kRwPoolFloats, 777u);
  }
  const int top = g.quick ? 22 : 28;
  for (int e = top - 2; e <= top; ++e) {
    rw_point(false, uint64_t(1) << e);
    rw_point(true, uint64_t(1) << e);
  }
  fill_pattern_f32(g_rw_pool, kRwPoolFloats, 777u);  // the reads after this see the pattern again
  return 0;
}

}  // namespace twins
