// gtsim_twins: CUDA twins of the gtsim microbenchmarks (docs/microbenchmarks.md) and the runner.
//   gtsim_twins --selftest                       small checks; "skipped: no CUDA device" without a GPU
//   gtsim_twins [--out=DIR] [--batch=ID] CMD...  CMD: device canary_start canary_end stream_copy copy_history
//       stream_rw store_tile store_rate
//   strided_copy
//       pointer_chase divergence bank_conflicts fixed_work ffma_outer tile_loop l2_read mma mma_shared lds_burst empty
//       op_latency lds_steady micro (all of these but ffma_outer, tile_loop, l2_read, mma_shared, lds_burst, lds_steady
//       and op_latency) apps ncu_set (one launch of each representative, for Nsight Compute)
// Rows are appended to DIR/<kernel>.csv and DIR/manifest.csv; see docs/measurements.md.
#include <ctime>
#include <string>
#include <vector>

#include "common.cuh"

namespace twins {
// One launch of each representative point (Nsight Compute profiles these; filter the helper
// kernels out with --kernel-name regex, see run_h200.sh). Writes no CSV rows.
static void ncu_set() {
  g.ncu = true;
  g.quick = false;
  std::string keep = g.out_dir;
  g.out_dir = "/tmp";  // rows of the single launches are discarded
  std::vector<std::string> none;
  run_empty(none);
  point_stream_copy(uint64_t(1) << 28, true, "ncu_rows");
  point_stream_copy(uint64_t(1) << 20, false, "ncu_rows");
  run_strided_copy(none);
  point_pointer_chase(uint64_t(8) << 20, 128, "ncu_rows", false);
  point_pointer_chase(uint64_t(64) << 10, 128, "ncu_rows", false);
  run_divergence(none);
  run_bank_conflicts(none);
  point_fixed_work(132, 4096, "ncu_rows");
  point_fixed_work(133, 4096, "ncu_rows");
  run_mma(none);
  g.out_dir = keep;
  g.ncu = false;
}

static int write_device_json() {
  cudaDeviceProp& p = g.prop;
  int drv = 0, rt = 0, clk = 0, mclk = 0, bus = 0;
  CK(cudaDriverGetVersion(&drv));
  CK(cudaRuntimeGetVersion(&rt));
  CK(cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0));
  CK(cudaDeviceGetAttribute(&mclk, cudaDevAttrMemoryClockRate, 0));
  CK(cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, 0));
  Clocks c = read_clocks();
  char date[64];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  std::string path = g.out_dir + "/device.json";
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return 3;
  std::fprintf(f, "{\n  \"batch\": \"%s\",\n  \"date_utc\": \"%s\",\n  \"name\": \"%s\",\n  \"uuid\": \"%s\",\n",
               g.batch.c_str(), date, p.name, device_uuid().c_str());
  std::fprintf(f, "  \"driver\": \"%s\",\n  \"cuda_driver_api\": %d,\n  \"cuda_runtime\": %d,\n",
               nvml_driver_version().c_str(), drv, rt);
  std::fprintf(f,
               "  \"cc\": \"%d.%d\",\n  \"sm_count\": %d,\n  \"l2_bytes\": %d,\n  \"persisting_l2_max_bytes\": %d,\n",
               p.major, p.minor, p.multiProcessorCount, p.l2CacheSize, p.persistingL2CacheMaxSize);
  std::fprintf(f, "  \"global_mem_bytes\": %zu,\n  \"shared_per_sm_bytes\": %zu,\n  \"shared_per_block_bytes\": %zu,\n",
               p.totalGlobalMem, p.sharedMemPerMultiprocessor, p.sharedMemPerBlock);
  std::fprintf(f, "  \"shared_per_block_optin_bytes\": %zu,\n  \"regs_per_sm\": %d,\n  \"regs_per_block\": %d,\n",
               p.sharedMemPerBlockOptin, p.regsPerMultiprocessor, p.regsPerBlock);
  std::fprintf(f, "  \"max_threads_per_sm\": %d,\n  \"max_blocks_per_sm\": %d,\n  \"warp_size\": %d,\n",
               p.maxThreadsPerMultiProcessor, p.maxBlocksPerMultiProcessor, p.warpSize);
  std::fprintf(f, "  \"peak_sm_clock_khz\": %d,\n  \"peak_mem_clock_khz\": %d,\n  \"mem_bus_width_bits\": %d,\n", clk,
               mclk, bus);
  std::fprintf(
      f, "  \"nvml_sm_mhz_now\": %d,\n  \"nvml_mem_mhz_now\": %d,\n  \"temp_c_now\": %d,\n  \"power_w_now\": %.1f,\n",
      c.sm_mhz, c.mem_mhz, c.temp_c, c.power_w);
  std::fprintf(f, "  \"sm_clock_probe_mhz\": %.1f\n}\n", sm_clock_probe_mhz());
  std::fclose(f);
  log("device: %s %s, %d SMs, L2 %d B, driver %s\n", p.name, device_uuid().c_str(), p.multiProcessorCount,
      p.l2CacheSize, nvml_driver_version().c_str());
  return 0;
}

static void clock_row(const char* where) {
  Row r = base_row("clocks", where);
  Clocks c = read_clocks();
  double probe = sm_clock_probe_mhz();
  r.set("sm_mhz_nvml", c.sm_mhz).set("mem_mhz_nvml", c.mem_mhz).set("sm_mhz_probe", probe);
  r.set("temp_c", c.temp_c).set("power_w", c.power_w).set("time", int64_t(std::time(nullptr)));
  emit("clocks", r, nullptr);
}

static int canary(const std::string& pass) {
  g.canary_pass = pass;
  log("-- canary %s\n", pass.c_str());
  point_stream_copy(uint64_t(1) << 28, true, "canary");
  point_pointer_chase(uint64_t(256) << 20, 128, "canary", false);
  point_mma(1, 4096, "canary");
  point_fixed_work(132, 4096, "canary");
  point_fixed_work(133, 4096, "canary");
  return 0;
}

}  // namespace twins

using namespace twins;

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc), cmds;
  bool selftest = false;
  for (auto& s : args) {
    if (s == "--selftest")
      selftest = true;
    else if (s.rfind("--", 0) != 0)
      cmds.push_back(s);
  }
  g.out_dir = arg(args, "out", ".");
  g.batch = arg(args, "batch", "b0");
  g.repeats = int(arg_i(args, "repeats", 7));
  g.ncu = arg_i(args, "ncu", 0) != 0;  // --ncu=1: one launch per point and no rows (under Nsight Compute)
  int ndev = 0;
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev == 0) {
    std::printf("skipped: no CUDA device (%s)\n", e == cudaSuccess ? "count 0" : cudaGetErrorString(e));
    return selftest ? 0 : 1;
  }
  CK(cudaGetDeviceProperties(&g.prop, 0));
  g.sms = g.prop.multiProcessorCount;
  g.l2_bytes = size_t(g.prop.l2CacheSize);
  if (selftest) {
    g.quick = true;
    int rc = 0;
    rc |= run_stream_copy(args) | run_stream_rw(args) | run_store_tile(args) | run_store_rate(args) |
          run_strided_copy(args) | run_pointer_chase(args) | run_sm_latency(args) | run_divergence(args);
    rc |= run_bank_conflicts(args) | run_fixed_work(args) | run_ffma_outer(args) | run_tile_loop(args) |
          run_tile_stamp(args) | run_l2_read(args) | run_mma(args) | run_mma_shared(args) | run_op_latency(args) |
          run_lds_burst(args) | run_lds_steady(args) | run_bar_store(args) | run_empty(args) | run_apps(args);
    std::printf("selftest done (check the ok/FAIL marks above)\n");
    return rc;
  }
  if (cmds.empty()) cmds = {"device", "micro"};
  for (auto& c : cmds) {
    int rc = 0;
    if (c == "device")
      rc = write_device_json();
    else if (c == "canary_start" || c == "canary_end")
      rc = (clock_row(c.c_str()), canary(c.substr(7)));
    else if (c == "stream_copy")
      rc = (clock_row(c.c_str()), run_stream_copy(args));
    else if (c == "copy_history")
      rc = run_copy_history(args);
    else if (c == "stream_rw")
      rc = (clock_row(c.c_str()), run_stream_rw(args));
    else if (c == "store_tile")
      rc = (clock_row(c.c_str()), run_store_tile(args));
    else if (c == "store_rate")
      rc = (clock_row(c.c_str()), run_store_rate(args));
    else if (c == "strided_copy")
      rc = (clock_row(c.c_str()), run_strided_copy(args));
    else if (c == "pointer_chase")
      rc = (clock_row(c.c_str()), run_pointer_chase(args));
    else if (c == "bar_store")
      rc = (clock_row(c.c_str()), run_bar_store(args));
    else if (c == "sm_latency")
      rc = (clock_row(c.c_str()), run_sm_latency(args));
    else if (c == "divergence")
      rc = (clock_row(c.c_str()), run_divergence(args));
    else if (c == "bank_conflicts")
      rc = (clock_row(c.c_str()), run_bank_conflicts(args));
    else if (c == "fixed_work")
      rc = (clock_row(c.c_str()), run_fixed_work(args));
    else if (c == "ffma_outer")
      rc = (clock_row(c.c_str()), run_ffma_outer(args));
    else if (c == "tile_loop")
      rc = (clock_row(c.c_str()), run_tile_loop(args));
    else if (c == "tile_stamp")
      rc = (clock_row(c.c_str()), run_tile_stamp(args));
    else if (c == "l2_read")
      rc = (clock_row(c.c_str()), run_l2_read(args));
    else if (c == "mma")
      rc = (clock_row(c.c_str()), run_mma(args));
    else if (c == "op_latency")
      rc = (clock_row(c.c_str()), run_op_latency(args));
    else if (c == "lds_burst")
      rc = (clock_row(c.c_str()), run_lds_burst(args));
    else if (c == "lds_steady")
      rc = (clock_row(c.c_str()), run_lds_steady(args));
    else if (c == "mma_shared")
      rc = (clock_row(c.c_str()), run_mma_shared(args));
    else if (c == "empty")
      rc = (clock_row(c.c_str()), run_empty(args));
    else if (c == "apps")
      rc = (clock_row(c.c_str()), run_apps(args));
    else if (c == "green")
      rc = (clock_row(c.c_str()), run_green(args));  // green.cu: SM partitions
    else if (c == "ncu_set")
      ncu_set();
    else if (c == "apps_quick")
      g.quick = true, rc = run_apps(args), g.quick = false;  // small app checks, no rows
    else if (c == "micro") {
      for (auto f : {run_empty, run_stream_copy, run_strided_copy, run_divergence, run_bank_conflicts, run_fixed_work,
                     run_mma, run_pointer_chase}) {
        clock_row("micro");
        rc |= f(args);
      }
    } else {
      std::fprintf(stderr, "unknown command %s\n", c.c_str());
      return 1;
    }
    if (rc) std::fprintf(stderr, "command %s returned %d\n", c.c_str(), rc);
  }
  clock_row("end");
  return 0;
}
