// Shared infrastructure of the CUDA twins runner (gtsim_twins): error checks, clocks (NVML through
// dlopen, so the binary links and runs without libnvidia-ml), event timing, CSV output.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#define CK(call)                                                                                             \
  do {                                                                                                       \
    cudaError_t e_ = (call);                                                                                 \
    if (e_ != cudaSuccess) {                                                                                 \
      std::fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__, __LINE__, #call); \
      std::exit(2);                                                                                          \
    }                                                                                                        \
  } while (0)
#define CKL() CK(cudaGetLastError())

namespace twins {

// One row of output: ordered key/value pairs; the first row written to a file sets its header.
struct Row {
  std::vector<std::pair<std::string, std::string>> kv;
  Row& set(const std::string& k, const std::string& v) {
    for (auto& p : kv)
      if (p.first == k) {
        p.second = v;
        return *this;
      }
    kv.emplace_back(k, v);
    return *this;
  }
  Row& set(const std::string& k, double v);
  Row& set(const std::string& k, int64_t v) { return set(k, std::to_string(v)); }
  Row& set(const std::string& k, int v) { return set(k, std::to_string(v)); }
  Row& set(const std::string& k, uint64_t v) { return set(k, std::to_string(v)); }
  Row& set(const std::string& k, uint32_t v) { return set(k, std::to_string(v)); }
  Row& set(const std::string& k, const char* v) { return set(k, std::string(v)); }
};

struct Clocks {
  int sm_mhz = -1, mem_mhz = -1, temp_c = -1;
  double power_w = -1;
};

struct Ctx {
  std::string out_dir = ".";
  std::string batch = "b0";
  int repeats = 7;
  int warmup = 3;
  double target_batch_us = 2000;  // back-to-back launches per repeat: enough for this many us
  int sms = 0;
  size_t l2_bytes = 0;
  cudaDeviceProp prop{};
  bool quick = false;       // selftest: tiny sweeps, no files
  std::string canary_pass;  // start / end
  bool ncu = false;         // ncu_set: one launch per point, no warm-up (Nsight Compute replays it)
  cudaStream_t stream = 0;  // every launch goes here (time_graph points it at its capture stream)
  int partition_sms = 0;    // green: the SM count of the partition the launches run on (0: whole GPU)
};
extern Ctx g;

Clocks read_clocks();
std::string device_uuid();
bool nvml_available();
std::string nvml_driver_version();

struct Timing {
  double median_us = 0, min_us = 0, max_us = 0;  // per launch
  int repeats = 0, per_rep = 0;
  double graph_us = -1;  // per launch through CUDA-graph replay (short kernels only), else -1
  Clocks before, after;
};

// The median (the mean of the middle two for an even count).
double median(std::vector<double> v);

// Times `launch(i)` (i counts every launch, warm-up included, for buffer rotation).
// per_rep <= 0: chosen so that one repeat lasts ~g.target_batch_us. Each repeat records events
// around per_rep back-to-back launches; `between` (if given) runs before each repeat, outside
// the events (L2 scrub). Median/min/max over repeats, divided by per_rep.
Timing time_launches(const std::function<void(int)>& launch, int per_rep = 0, int repeats = -1, int warmup = -1,
                     const std::function<void()>& between = nullptr);
// Same, through a CUDA graph holding per_rep launches, replayed once per repeat.
Timing time_graph(const std::function<void(int)>& launch, int per_rep, int repeats = -1);

// Appends rows to DIR/<file>.csv (header written when the file is new) and a manifest line.
void emit(const std::string& file, Row row, const Timing* t);
void log(const char* fmt, ...);

// Common row fields: batch, kernel, variant.
Row base_row(const char* kernel, const char* variant);

// helpers
uint64_t splitmix64(uint64_t& s);
size_t count_mismatch_u32(const void* a, const void* b, size_t words);  // device compare
void fill_pattern_f32(float* p, size_t n, uint32_t seed);               // finite non-zero floats
void poison(void* p, size_t bytes);                                     // 0xFF bytes (NaN floats)
double sm_clock_probe_mhz();                                            // clock64 vs globaltimer over ~5 ms on one SM

// sweeps (one per .cu file)
int run_stream_copy(const std::vector<std::string>& args);
int run_copy_history(const std::vector<std::string>& args);  // stream_copy.cu: rotating then same-buffer copies (ncu)
int run_stream_rw(const std::vector<std::string>& args);     // stream_rw.cu: read-only and write-only streams
int run_store_tile(const std::vector<std::string>& args);    // store_tile.cu: the QK GEMM's epilogue stores alone
int run_store_rate(const std::vector<std::string>& args);    // store_tile.cu: an SM's store rate by shape and SM count
int run_strided_copy(const std::vector<std::string>& args);
int run_pointer_chase(const std::vector<std::string>& args);
int run_bar_store(const std::vector<std::string>& args);   // b41: does a barrier wait for the shared stores before it?
int run_sm_latency(const std::vector<std::string>& args);  // b40: the L2 hit latency from every SM
int run_divergence(const std::vector<std::string>& args);
int run_bank_conflicts(const std::vector<std::string>& args);
int run_fixed_work(const std::vector<std::string>& args);
int run_ffma_outer(const std::vector<std::string>& args);  // ffma_outer.cu: gemm_fp32's inner loop alone
int run_tile_loop(const std::vector<std::string>& args);   // tile_loop.cu: gemm_fp32's tile loop, 0-8 k-steps
int run_tile_stamp(
    const std::vector<std::string>& args);              // tile_loop.cu: per-warp clock stamps around its barriers (b36)
int run_l2_read(const std::vector<std::string>& args);  // l2_read.cu: L2-to-SM read bandwidth and bursts
int run_mma(const std::vector<std::string>& args);
int run_op_latency(const std::vector<std::string>& args);  // op_latency.cu: dependent-issue latency per kind
int run_mma_shared(const std::vector<std::string>& args);  // mma_shared.cu: tensor cores vs the shared pipe
int run_lds_burst(const std::vector<std::string>& args);   // lds_burst.cu: a barrier and its shared loads
int run_lds_steady(
    const std::vector<std::string>& args);  // lds_burst.cu: a steady load-then-FFMA loop, per-warp stamps
int run_empty(const std::vector<std::string>& args);
int run_apps(const std::vector<std::string>& args);
int run_green(const std::vector<std::string>& args);

// single points used by canary / ncu
double point_stream_copy(uint64_t n, bool rotate, const char* file);
double point_pointer_chase(uint64_t footprint, uint64_t stride, const char* file, bool timed_variant);
double point_mma(int dtype, int iters, const char* file);
double point_fixed_work(int ctas, int work, const char* file);

// args: "--key=value" lookups with defaults
std::string arg(const std::vector<std::string>& a, const std::string& key, const std::string& def);
int64_t arg_i(const std::vector<std::string>& a, const std::string& key, int64_t def);
// --key=A,B,C as integers (def when the flag is absent; empty when def is "")
std::vector<int64_t> arg_list(const std::vector<std::string>& a, const std::string& key, const std::string& def);

}  // namespace twins
