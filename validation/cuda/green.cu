// green: the fixed_work twin on partitions of fewer SMs (CUDA green contexts), so that the wave step
// can be measured at SM counts other than the H200's 132 (issue 9: "run fixed_work on partitions of
// fewer SMs, e.g. 108, the A100's count, and check that the simulated wave steps move with the SM
// count as measured").
//
// Each partition is one SM resource split off the device with cuDevSmResourceSplitByCount (Hopper
// rounds the count to its partition granularity: the partition's real SM count is what is recorded),
// made into a green context, and given a stream; the fixed_work twin (fixed_work.cu, unchanged) is
// launched on that stream with grid sizes around whole multiples of the partition. Rows go to
// <file>_green.csv with the partition's SM count in `partition_sms` (common.cu's emit); on the
// partitions of 64 and 112 SMs the data-parallel GEMM's N sweep runs too (gemm_tiled_green.csv).
// The driver API is reached through dlopen, as NVML is, so the binary links without libcuda.
#include <cuda.h>
#include <dlfcn.h>

#include <set>
#include <string>
#include <vector>

#include "common.cuh"

namespace twins {
void gemm_point(int M, int N, int K, const char* sweep);  // gemm.cu (apps_stub.cu: a no-op)

namespace {

struct GreenApi {
  CUresult (*init)(unsigned) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*get_resource)(CUdevice, CUdevResource*, CUdevResourceType) = nullptr;
  CUresult (*split)(CUdevResource*, unsigned*, const CUdevResource*, CUdevResource*, unsigned, unsigned) = nullptr;
  CUresult (*gen_desc)(CUdevResourceDesc*, CUdevResource*, unsigned) = nullptr;
  CUresult (*ctx_create)(CUgreenCtx*, CUdevResourceDesc, CUdevice, unsigned) = nullptr;
  CUresult (*stream_create)(CUstream*, CUgreenCtx, unsigned, int) = nullptr;
  CUresult (*stream_destroy)(CUstream) = nullptr;
  CUresult (*ctx_destroy)(CUgreenCtx) = nullptr;
  CUresult (*from_green)(CUcontext*, CUgreenCtx) = nullptr;
  CUresult (*get_current)(CUcontext*) = nullptr;
  CUresult (*set_current)(CUcontext) = nullptr;
  bool ok = false;
};

template <class F>
bool sym(void* h, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(h, name));
  if (!f) log("green: %s not found in libcuda\n", name);
  return f != nullptr;
}

GreenApi load_api() {
  GreenApi a;
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    log("green: libcuda.so.1 not loadable: %s\n", dlerror());
    return a;
  }
  a.ok = sym(h, "cuInit", a.init) && sym(h, "cuDeviceGet", a.device_get) &&
         sym(h, "cuDeviceGetDevResource", a.get_resource) && sym(h, "cuDevSmResourceSplitByCount", a.split) &&
         sym(h, "cuDevResourceGenerateDesc", a.gen_desc) && sym(h, "cuGreenCtxCreate", a.ctx_create) &&
         sym(h, "cuGreenCtxStreamCreate", a.stream_create) && sym(h, "cuStreamDestroy_v2", a.stream_destroy) &&
         sym(h, "cuGreenCtxDestroy", a.ctx_destroy) && sym(h, "cuCtxFromGreenCtx", a.from_green) &&
         sym(h, "cuCtxGetCurrent", a.get_current) && sym(h, "cuCtxSetCurrent", a.set_current);
  return a;
}

#define GK(call)                                             \
  do {                                                       \
    CUresult r_ = (call);                                    \
    if (r_ != CUDA_SUCCESS) {                                \
      log("green: %s failed with CUresult %d\n", #call, r_); \
      return -1;                                             \
    }                                                        \
  } while (0)

// Which SMs the CTAs of a launch ran on: the proof that a partition confines the kernel.
__global__ void smid_probe(unsigned* smid) {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  if (threadIdx.x == 0) smid[blockIdx.x] = s;
  // long enough that the CTAs are co-resident rather than reusing one SM
  for (volatile int i = 0; i < 20000; i = i + 1) {
  }
}

int distinct_sms(int ctas) {
  unsigned* d = nullptr;
  CK(cudaMalloc(&d, ctas * sizeof(unsigned)));
  smid_probe<<<ctas, 32, 0, g.stream>>>(d);
  CKL();
  CK(cudaStreamSynchronize(g.stream));
  std::vector<unsigned> h(ctas);
  CK(cudaMemcpy(h.data(), d, ctas * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CK(cudaFree(d));
  return int(std::set<unsigned>(h.begin(), h.end()).size());
}

// Runs the fixed_work points on one partition of about `want` SMs; returns its real SM count.
int run_partition(GreenApi& api, CUdevice dev, const CUdevResource& all, unsigned want, int work, bool gemm,
                  std::set<unsigned>& done) {
  CUdevResource part{}, rest{};
  unsigned groups = 1;
  GK(api.split(&part, &groups, &all, &rest, 0, want));
  if (groups != 1) return -1;
  unsigned sms = part.sm.smCount;
  if (done.count(sms)) return int(sms);  // the granularity folded this request onto an earlier one
  done.insert(sms);
  CUdevResourceDesc desc{};
  GK(api.gen_desc(&desc, &part, 1));
  CUgreenCtx gctx{};
  GK(api.ctx_create(&gctx, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
  CUstream s{};
  GK(api.stream_create(&s, gctx, CU_STREAM_NON_BLOCKING, 0));
  // The runtime launches into the current context: make the green one current (memory allocated
  // in the primary context stays usable: green contexts share the device's address space).
  CUcontext primary{}, green{};
  GK(api.get_current(&primary));
  GK(api.from_green(&green, gctx));
  GK(api.set_current(green));
  int saved_sms = g.sms;
  g.stream = reinterpret_cast<cudaStream_t>(s);
  int used = distinct_sms(4 * int(all.sm.smCount));
  log("green: asked %u SMs, partition has %u (remaining %u); a probe of %u CTAs ran on %d distinct SMs\n", want,
      sms, rest.sm.smCount, 4 * all.sm.smCount, used);
  g.sms = int(sms);
  g.partition_sms = int(sms);
  std::set<int> ctas;
  for (int w = 1; w <= 3; ++w)
    for (int d : {-1, 0, 1}) ctas.insert(int(sms) * w + d);
  ctas.insert(1);
  ctas.insert(int(sms) / 2);
  if (g.quick) ctas = {int(sms), int(sms) + 1};
  for (int c : ctas)
    if (c >= 1) point_fixed_work(c, work, "fixed_work");
  // the data-parallel GEMM's N sweep (M = 2304, K = 4096, 128 x 128 tiles, 2 CTAs per SM): its wave
  // step moves with the partition (18 * N / 128 tiles against 2 * sms slots)
  if (gemm && !g.quick)
    for (int N = 512; N <= 2560; N += 128) gemm_point(2304, N, 4096, "n_sweep");
  g.stream = 0;
  g.sms = saved_sms;
  g.partition_sms = 0;
  CK(cudaDeviceSynchronize());
  GK(api.set_current(primary));
  GK(api.stream_destroy(s));
  GK(api.ctx_destroy(gctx));
  return int(sms);
}

}  // namespace

int run_green(const std::vector<std::string>& args) {
  GreenApi api = load_api();
  if (!api.ok) return 1;
  int work = int(arg_i(args, "work", 4096));
  CK(cudaFree(nullptr));  // the runtime's primary context exists before the driver calls
  GK(api.init(0));
  CUdevice dev{};
  GK(api.device_get(&dev, 0));
  CUdevResource all{};
  GK(api.get_resource(dev, &all, CU_DEV_RESOURCE_TYPE_SM));
  log("green: device has %u SMs, min partition %u, alignment %u\n", all.sm.smCount, all.sm.minSmPartitionSize,
      all.sm.smCoscheduledAlignment);
  std::set<unsigned> done;
  std::vector<unsigned> want = {16, 32, 64, 104, 108, 112, 120};
  if (g.quick) want = {64};
  int rc = 0;
  for (unsigned w : want)
    if (w < all.sm.smCount && run_partition(api, dev, all, w, work, w == 64 || w == 108, done) < 0) rc = 1;
  return rc;
}

}  // namespace twins
