// fixed_work twin: grid `ctas`, block 1024, 32 registers (__launch_bounds__(1024, 2) caps the
// allocation at 32). Each thread runs `work` iterations of two independent dependent-ffma
// chains, then stores.
#include <cmath>
#include <vector>

#include "common.cuh"

namespace twins {

__global__ void __launch_bounds__(1024, 2) fixed_work(float* out, int work, float a, float b) {
  uint32_t gid = blockIdx.x * 1024 + threadIdx.x;
  float x = float(gid & 1023);  // as the IR: x = cvt g; x = x * x; y = x + x
  x = x * x;
  float y = x + x;
  for (int i = 0; i < work; ++i) {
    x = fmaf(x, a, b);
    y = fmaf(y, a, b);
  }
  out[gid] = x + y;
}

static float* g_fw_out = nullptr;
static const int kMaxCtas = 1024;

double point_fixed_work(int ctas, int work, const char* file) {
  const float a = 0.999f, b = 0.001f;
  if (!g_fw_out) CK(cudaMalloc(&g_fw_out, size_t(kMaxCtas) * 1024 * 4));
  size_t n = size_t(ctas) * 1024;
  poison(g_fw_out, n * 4);
  Timing t = time_launches([&](int) { fixed_work<<<ctas, 1024, 0, g.stream>>>(g_fw_out, work, a, b); });
  std::vector<float> h(n);
  CK(cudaMemcpy(h.data(), g_fw_out, n * 4, cudaMemcpyDeviceToHost));
  std::vector<float> ref(1024);
  for (int i = 0; i < 1024; ++i) {
    float x = float(i);
    x = x * x;
    float y = x + x;
    for (int k = 0; k < work; ++k) x = std::fma(x, a, b), y = std::fma(y, a, b);
    ref[i] = x + y;
  }
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += h[i] != ref[i & 1023];
  double mhz = 0.5 * (t.before.sm_mhz + t.after.sm_mhz);
  Row r = base_row("fixed_work", "twin");
  r.set("ctas", ctas).set("work", work).set("grid", ctas).set("block", 1024).set("waves", double(ctas) / g.sms);
  r.set("ffma_total", 2.0 * work * n);
  emit(file, r.set("cycles_at_nvml_clock", t.median_us * mhz).set("check", bad ? "FAIL" : "ok"), &t);
  log("fixed_work ctas=%d: %.2f us %s\n", ctas, t.median_us, bad ? "FAIL" : "ok");
  return t.median_us;
}

int run_fixed_work(const std::vector<std::string>& args) {
  int work = int(arg_i(args, "work", 4096));
  std::vector<int> c;
  for (int k = 1; k <= 540; k += 12) c.push_back(k);
  for (int k = 120; k <= 140; ++k) c.push_back(k);
  for (int k = 255; k <= 275; ++k) c.push_back(k);
  for (int k = 390; k <= 405; ++k) c.push_back(k);
  for (int k : {2, 4, 8, 16, 32, 64, 66, 100, 132, 264, 396, 528, 529, 540}) c.push_back(k);
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  if (g.quick) c = {1, 133};
  for (int k : c) point_fixed_work(k, work, "fixed_work");
  return 0;
}

}  // namespace twins
