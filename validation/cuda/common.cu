#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdarg>
#include <cstring>

#include "common.cuh"

namespace twins {

Ctx g;

// ---- NVML through dlopen (no link dependency; absent library => clocks read -1) ----
namespace {
typedef int (*nvmlInit_t)();
typedef int (*nvmlGetHandleByIndex_t)(unsigned, void**);
typedef int (*nvmlGetHandleByUUID_t)(const char*, void**);
typedef int (*nvmlGetClock_t)(void*, int, unsigned*);
typedef int (*nvmlGetTemp_t)(void*, int, unsigned*);
typedef int (*nvmlGetPower_t)(void*, unsigned*);
typedef int (*nvmlDriverVer_t)(char*, unsigned);
struct Nvml {
  bool ok = false;
  void* dev = nullptr;
  nvmlGetClock_t clock = nullptr;
  nvmlGetTemp_t temp = nullptr;
  nvmlGetPower_t power = nullptr;
  nvmlDriverVer_t drv = nullptr;
  Nvml() {
    void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!h) return;
    auto init = (nvmlInit_t)dlsym(h, "nvmlInit_v2");
    auto byidx = (nvmlGetHandleByIndex_t)dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
    auto byuuid = (nvmlGetHandleByUUID_t)dlsym(h, "nvmlDeviceGetHandleByUUID");
    clock = (nvmlGetClock_t)dlsym(h, "nvmlDeviceGetClockInfo");
    temp = (nvmlGetTemp_t)dlsym(h, "nvmlDeviceGetTemperature");
    power = (nvmlGetPower_t)dlsym(h, "nvmlDeviceGetPowerUsage");
    drv = (nvmlDriverVer_t)dlsym(h, "nvmlSystemGetDriverVersion");
    if (!init || !byidx || !clock || init() != 0) return;
    std::string u = device_uuid();
    if (!(byuuid && byuuid(u.c_str(), &dev) == 0) && byidx(0, &dev) != 0) return;
    ok = true;
  }
};
Nvml& nvml() {
  static Nvml n;
  return n;
}
}  // namespace

bool nvml_available() { return nvml().ok; }

Clocks read_clocks() {
  Clocks c;
  Nvml& n = nvml();
  if (!n.ok) return c;
  unsigned v = 0;
  if (n.clock(n.dev, 1 /*SM*/, &v) == 0) c.sm_mhz = int(v);
  if (n.clock(n.dev, 2 /*MEM*/, &v) == 0) c.mem_mhz = int(v);
  if (n.temp && n.temp(n.dev, 0, &v) == 0) c.temp_c = int(v);
  if (n.power && n.power(n.dev, &v) == 0) c.power_w = v / 1000.0;
  return c;
}

std::string nvml_driver_version() {
  char buf[96] = {0};
  Nvml& n = nvml();
  if (n.ok && n.drv && n.drv(buf, sizeof buf) == 0) return buf;
  return "unknown";
}

std::string device_uuid() {
  const unsigned char* u = reinterpret_cast<const unsigned char*>(g.prop.uuid.bytes);
  char s[64];
  std::snprintf(s, sizeof s, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  return s;
}

Row& Row::set(const std::string& k, double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.6g", v);
  return set(k, std::string(b));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

Timing time_launches(const std::function<void(int)>& launch, int per_rep, int repeats, int warmup,
                     const std::function<void()>& between) {
  if (repeats < 0) repeats = g.repeats;
  if (warmup < 0) warmup = g.warmup;
  if (g.quick) repeats = std::min(repeats, 2), warmup = std::min(warmup, 1);
  if (g.ncu) repeats = 1, warmup = 0, per_rep = 1;
  Timing t;
  t.before = read_clocks();
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  int idx = 0;
  for (int w = 0; w < warmup; ++w) {
    if (between) between();
    launch(idx++);
  }
  CKL();
  CK(cudaDeviceSynchronize());
  if (per_rep <= 0) {  // size the batch from one timed launch
    if (between) between();
    CK(cudaEventRecord(e0, g.stream));
    launch(idx++);
    CK(cudaEventRecord(e1, g.stream));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    double us = std::max(1e-3, ms * 1e3);
    per_rep = int(std::min(1000.0, std::max(1.0, g.target_batch_us / us)));
    if (g.quick) per_rep = std::min(per_rep, 4);
  }
  std::vector<double> v;
  for (int r = 0; r < repeats; ++r) {
    if (between) between();
    CK(cudaEventRecord(e0, g.stream));
    for (int k = 0; k < per_rep; ++k) launch(idx++);
    CK(cudaEventRecord(e1, g.stream));
    CK(cudaEventSynchronize(e1));
    CKL();
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    v.push_back(ms * 1e3 / per_rep);
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  t.after = read_clocks();
  t.median_us = median(v);
  t.min_us = *std::min_element(v.begin(), v.end());
  t.max_us = *std::max_element(v.begin(), v.end());
  t.repeats = repeats;
  t.per_rep = per_rep;
  // short kernels: back-to-back stream launches are bounded by the host's launch call (~4.6 us on
  // the H200 machine), so also time the same launches replayed from a CUDA graph
  if (!between && !g.ncu && t.median_us < 50)
    t.graph_us = time_graph(launch, std::min(500, std::max(20, per_rep)), repeats).median_us;
  return t;
}

Timing time_graph(const std::function<void(int)>& launch, int per_rep, int repeats) {
  if (repeats < 0) repeats = g.repeats;
  if (g.quick) repeats = std::min(repeats, 2), per_rep = std::min(per_rep, 8);
  Timing t;
  t.before = read_clocks();
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  // launch(i) enqueues on g.stream: point it at the capturing stream while capturing
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  g.stream = s;
  for (int k = 0; k < per_rep; ++k) launch(k);
  g.stream = 0;
  CK(cudaStreamEndCapture(s, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int w = 0; w < 2; ++w) CK(cudaGraphLaunch(exec, s));
  CK(cudaStreamSynchronize(s));
  std::vector<double> v;
  for (int r = 0; r < repeats; ++r) {
    CK(cudaEventRecord(e0, s));
    CK(cudaGraphLaunch(exec, s));
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    v.push_back(ms * 1e3 / per_rep);
  }
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  CK(cudaStreamDestroy(s));
  t.after = read_clocks();
  t.median_us = median(v);
  t.min_us = *std::min_element(v.begin(), v.end());
  t.max_us = *std::max_element(v.begin(), v.end());
  t.repeats = repeats;
  t.per_rep = per_rep;
  return t;
}

Row base_row(const char* kernel, const char* variant) {
  Row r;
  r.set("batch", g.batch).set("kernel", kernel).set("variant", variant);
  return r;
}

static bool file_exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

static void append_csv(const std::string& path, const Row& row) {
  bool fresh = !file_exists(path);
  std::string header;
  for (size_t i = 0; i < row.kv.size(); ++i) header += (i ? "," : "") + row.kv[i].first;
  if (!fresh) {  // every row of a file must have the file's columns
    char buf[4096] = {0};
    FILE* r = std::fopen(path.c_str(), "r");
    if (r && std::fgets(buf, sizeof buf, r)) buf[std::strcspn(buf, "\n")] = 0;
    if (r) std::fclose(r);
    if (header != buf) {
      std::fprintf(stderr, "schema mismatch in %s:\n  file: %s\n  row:  %s\n", path.c_str(), buf, header.c_str());
      std::exit(4);
    }
  }
  FILE* f = std::fopen(path.c_str(), "a");
  if (!f) {
    std::fprintf(stderr, "cannot open %s\n", path.c_str());
    std::exit(3);
  }
  if (fresh) std::fprintf(f, "%s\n", header.c_str());
  for (size_t i = 0; i < row.kv.size(); ++i) std::fprintf(f, "%s%s", i ? "," : "", row.kv[i].second.c_str());
  std::fprintf(f, "\n");
  std::fclose(f);
}

static const char* kTimingKeys[] = {"repeats",        "launches_per_rep", "median_us",     "min_us",
                                    "max_us",         "graph_median_us",  "sm_mhz_before", "sm_mhz_after",
                                    "mem_mhz_before", "mem_mhz_after",    "temp_c_after",  "power_w_after"};

// canary rows come from several kernels: fold their parameters into one `params` column
static Row canary_row(const Row& row) {
  Row c;
  std::string params;
  for (auto& p : row.kv) {
    bool timing = false;
    for (auto* k : kTimingKeys) timing |= p.first == k;
    if (p.first == "batch" || p.first == "kernel" || p.first == "variant")
      c.set(p.first, p.second);
    else if (!timing && p.first != "check")
      params += (params.empty() ? "" : ";") + p.first + "=" + p.second;
  }
  c.set("pass", g.canary_pass).set("params", "\"" + params + "\"");
  for (auto* k : kTimingKeys)
    for (auto& p : row.kv)
      if (p.first == k) c.set(k, p.second);
  for (auto& p : row.kv)
    if (p.first == "check") c.set("check", p.second);
  return c;
}

void emit(const std::string& file, Row row, const Timing* t) {
  if (t) {
    row.set("repeats", t->repeats).set("launches_per_rep", t->per_rep);
    row.set("median_us", t->median_us).set("min_us", t->min_us).set("max_us", t->max_us);
    row.set("graph_median_us", t->graph_us);
    row.set("sm_mhz_before", t->before.sm_mhz).set("sm_mhz_after", t->after.sm_mhz);
    row.set("mem_mhz_before", t->before.mem_mhz).set("mem_mhz_after", t->after.mem_mhz);
    row.set("temp_c_after", t->after.temp_c).set("power_w_after", t->after.power_w);
  }
  if (g.quick || g.ncu) return;  // selftest and Nsight Compute runs write no rows
  if (file == "canary") row = canary_row(row);
  std::string name = file;
  if (g.partition_sms > 0) {  // green.cu: rows measured on an SM partition go to <file>_green.csv
    row.set("partition_sms", g.partition_sms);
    name += "_green";
  }
  std::string path = g.out_dir + "/" + name + ".csv";
  append_csv(path, row);
  if (!t) return;
  // manifest: file, kernel, variant, params (the row's inputs: keys before the first result key)
  std::string params;
  for (auto& p : row.kv) {
    if (p.first == "batch" || p.first == "kernel" || p.first == "variant" || p.first == "pass") continue;
    if (p.first == "params") {
      params = p.second.substr(1, p.second.size() - 2);
      break;
    }
    if (p.first == "grid" || p.first == "block") continue;
    bool result = false;
    for (auto* k : {"warmup_only_us", "cycles_per_hop", "check", "repeats", "bytes_moved", "bytes_useful",
                    "useful_ffma", "ideal_wavefronts", "waves", "flops", "ffma_total", "sm_mhz_nvml", "rotation_slots"})
      result |= p.first == k;
    if (result) break;
    params += (params.empty() ? "" : ";") + p.first + "=" + p.second;
  }
  Row m;
  m.set("file", "validation/data/h200/" + g.batch + "/" + file + ".csv").set("batch", g.batch);
  for (auto& p : row.kv)
    if (p.first == "kernel" || p.first == "variant") m.set(p.first, p.second);
  m.set("params", "\"" + params + "\"");
  m.set("repeats", t ? t->repeats : 0).set("launches_per_rep", t ? t->per_rep : 0);
  append_csv(g.out_dir + "/manifest.csv", m);
}

void log(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stdout, fmt, ap);
  va_end(ap);
  std::fflush(stdout);
}

uint64_t splitmix64(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

__global__ void mismatch_k(const uint32_t* a, const uint32_t* b, size_t n, unsigned long long* cnt) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    local += a[i] != b[i];
  if (local) atomicAdd(cnt, local);
}

size_t count_mismatch_u32(const void* a, const void* b, size_t words) {
  unsigned long long* d;
  CK(cudaMalloc(&d, sizeof *d));
  CK(cudaMemset(d, 0, sizeof *d));
  mismatch_k<<<4 * g.sms, 512>>>((const uint32_t*)a, (const uint32_t*)b, words, d);
  CKL();
  unsigned long long h = 0;
  CK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
  CK(cudaFree(d));
  return h;
}

__global__ void fill_k(float* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ seed ^ uint32_t(i >> 32) * 40503u;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    p[i] = 1.0f + float(h & 0xffffff) * (1.0f / 16777216.0f);  // [1, 2): finite, non-zero, distinct
  }
}

void fill_pattern_f32(float* p, size_t n, uint32_t seed) {
  fill_k<<<4 * g.sms, 512>>>(p, n, seed);
  CKL();
}

void poison(void* p, size_t bytes) { CK(cudaMemset(p, 0xFF, bytes)); }

__global__ void clock_probe_k(unsigned long long* out, long long spin_cycles) {
  unsigned long long t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  long long c0 = clock64(), c1;
  do {
    c1 = clock64();
  } while (c1 - c0 < spin_cycles);
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  out[0] = c1 - c0;
  out[1] = t1 - t0;
}

double sm_clock_probe_mhz() {
  unsigned long long* d;
  CK(cudaMalloc(&d, 2 * sizeof *d));
  clock_probe_k<<<1, 1>>>(d, 1000000);  // warm
  CKL();
  clock_probe_k<<<1, 1>>>(d, 10000000);  // ~5 ms at 2 GHz
  CKL();
  unsigned long long h[2];
  CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  CK(cudaFree(d));
  return h[1] ? double(h[0]) * 1e3 / double(h[1]) : -1;
}

std::string arg(const std::vector<std::string>& a, const std::string& key, const std::string& def) {
  std::string pre = "--" + key + "=";
  for (auto& s : a)
    if (s.rfind(pre, 0) == 0) return s.substr(pre.size());
  return def;
}
int64_t arg_i(const std::vector<std::string>& a, const std::string& key, int64_t def) {
  std::string v = arg(a, key, "");
  return v.empty() ? def : std::strtoll(v.c_str(), nullptr, 0);
}
std::vector<int64_t> arg_list(const std::vector<std::string>& a, const std::string& key, const std::string& def) {
  std::vector<int64_t> v;
  std::string s = arg(a, key, def);
  for (size_t i = 0; i < s.size();) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    if (j > i) v.push_back(std::strtoll(s.substr(i, j - i).c_str(), nullptr, 0));
    i = j + 1;
  }
  return v;
}

}  // namespace twins
