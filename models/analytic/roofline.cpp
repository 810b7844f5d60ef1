#include "models/analytic/roofline.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "kernels_ir/ops.hpp"
#include "kernels_ir/parser.hpp"
#include "models/gpu/gpu_model.hpp"
#include "sim/data_dir.hpp"

namespace gtsim::analytic {

namespace {
double span_seconds(const gpu::KernelResult& r) { return (r.time_us - r.launch_overhead_us) * 1e-6; }

// FFMA throughput on the CUDA cores: 8 independent dependent chains per thread.
const char* kFfmaKir = R"(kernel ffma_throughput(CTAS = 1056, ITERS = 256) {
  grid CTAS
  block 256
  regs 32
  buffer out : f32[CTAS * 256]
  g = iexpr ctaid.x * 256 + tid.x
  x = cvt g
  loop i in 0 .. ITERS {
    a0 = ffma a0, x, x
    a1 = ffma a1, x, x
    a2 = ffma a2, x, x
    a3 = ffma a3, x, x
    a4 = ffma a4, x, x
    a5 = ffma a5, x, x
    a6 = ffma a6, x, x
    a7 = ffma a7, x, x
  }
  a0 = fadd a0, a1
  a2 = fadd a2, a3
  a4 = fadd a4, a5
  a6 = fadd a6, a7
  a0 = fadd a0, a2
  a4 = fadd a4, a6
  a0 = fadd a0, a4
  st.global out[ctaid.x * 256 + tid.x], a0
}
)";

int mma_code(ir::DType dt) {
  switch (dt) {
    case ir::DType::kF16:
      return 0;
    case ir::DType::kBf16:
      return 1;
    case ir::DType::kTf32:
      return 2;
    case ir::DType::kE4M3:
      return 3;
    default:
      return -1;
  }
}
}  // namespace

double attained_dram_bandwidth(const ConfigNode& hw, int64_t n) {
  // stream_copy twice on one machine: the second run starts from the first one's L2 (its tail,
  // half of it dirty), so its reads miss and its writes evict dirty lines, as in the middle of a
  // long copy. DRAM bytes moved (reads + dirty write-backs) over the span of the second run.
  auto k = ir::parse_kernel_file(data_path("kernels_ir/lib/stream_copy.kir"));
  auto prog = ir::Program::build(*k, {{"n", n}});
  gpu::GpuModel m(hw);
  m.run(*prog);
  auto r = m.run(*prog);
  return double(r.dram_read_bytes + r.dram_write_bytes) / span_seconds(r);
}

// The steady rate: flops and time of a run at 2 x `iterations` less those of one at `iterations`, so
// the kernel's fixed cost (its ramp, the stores of its results) is left out, as a measured peak is.
// Both runs are exact: a difference of two short runs would multiply a sampled run's error (a 1%
// error in either becomes 2% in the difference), and each takes milliseconds.
double attained_peak_flops(const ConfigNode& hw, ir::DType dt, int64_t iterations) {
  auto run = [&](int64_t iters) {
    gpu::GpuModel m(hw);
    gpu::SamplingPolicy exact;
    exact.exact = true;
    m.set_sampling(exact);
    if (dt == ir::DType::kF32) {
      auto k = ir::parse_kernel_string(kFfmaKir, "<ffma_throughput>");
      return m.run(*ir::Program::build(*k, {{"ITERS", iters}}));
    }
    auto k = ir::parse_kernel_file(data_path("kernels_ir/lib/mma_throughput.kir"));
    return m.run(*ir::Program::build(*k, {{"dtype", mma_code(dt)}, {"iters", iters}}));
  };
  if (dt != ir::DType::kF32 && mma_code(dt) < 0) return 0;
  gpu::KernelResult a = run(iterations), b = run(2 * iterations);
  const double dt_s = span_seconds(b) - span_seconds(a);
  return dt_s > 0 ? double(b.flops - a.flops) / dt_s : double(b.flops) / span_seconds(b);
}

RooflineReport roofline(const ConfigNode& hw, const wl::Workload* w, const RooflineOptions& opt) {
  RooflineReport rep;
  rep.bandwidth_config = config_hbm_bytes_per_s(hw);
  // The six microbenchmarks (the copy, a peak per dtype) are independent machines: run them on the
  // host's cores at once (each its own GpuModel; the results land by index, so the report is the same
  // whatever the thread count). They are most of roofline's time: 24 s -> 20 s on two cores for the MLP page
  // (the copy, run twice on one machine, is the longest task).
  const std::vector<ir::DType> dtypes = {ir::DType::kF32, ir::DType::kTf32, ir::DType::kF16, ir::DType::kBf16,
                                         ir::DType::kE4M3};
  std::vector<double> measured(dtypes.size() + 1, 0.0);
  {
    std::atomic<size_t> next{0};
    std::mutex mu;
    std::exception_ptr error;
    auto worker = [&] {
      for (size_t i; (i = next.fetch_add(1)) < measured.size();) {
        try {
          if (i == 0) {
            measured[0] = attained_dram_bandwidth(hw, opt.stream_elements);
          } else {
            const ir::DType dt = dtypes[i - 1];
            measured[i] = attained_peak_flops(hw, dt, dt == ir::DType::kF32 ? opt.ffma_iterations : opt.mma_iterations);
          }
        } catch (...) {
          std::lock_guard<std::mutex> lock(mu);
          if (!error) error = std::current_exception();
          next = measured.size();
        }
      }
    };
    const unsigned threads = std::max(
        1u,
        std::min<unsigned>(opt.threads ? opt.threads : std::thread::hardware_concurrency(), unsigned(measured.size())));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
    if (error) std::rethrow_exception(error);
  }
  rep.bandwidth_attained = measured[0];
  std::ostringstream o;
  char buf[320];
  std::snprintf(buf, sizeof buf, "DRAM bandwidth: config %.0f GB/s, attained (stream_copy) %.0f GB/s\n",
                rep.bandwidth_config / 1e9, rep.bandwidth_attained / 1e9);
  o << buf;
  std::snprintf(buf, sizeof buf, "%-6s %14s %14s %14s %14s\n", "dtype", "peak_TF_cfg", "peak_TF_sim", "ridge_cfg",
                "ridge_sim");
  o << buf;
  nlohmann::json rj = nlohmann::json::array();
  for (size_t d = 0; d < dtypes.size(); ++d) {
    const ir::DType dt = dtypes[d];
    RidgePoint p;
    p.dtype = std::string(ir::dtype_name(dt));
    p.peak_flops_config = config_peak_flops(hw, dt);
    p.peak_flops_attained = measured[d + 1];
    if (p.peak_flops_attained <= 0) continue;
    p.ridge_config = p.peak_flops_config / rep.bandwidth_config;
    p.ridge_attained = p.peak_flops_attained / rep.bandwidth_attained;
    rep.ridges.push_back(p);
    rj.push_back({{"dtype", p.dtype},
                  {"peak_flops_config", p.peak_flops_config},
                  {"peak_flops_attained", p.peak_flops_attained},
                  {"ridge_config", p.ridge_config},
                  {"ridge_attained", p.ridge_attained}});
    std::snprintf(buf, sizeof buf, "%-6s %14.1f %14.1f %14.1f %14.1f\n", p.dtype.c_str(), p.peak_flops_config / 1e12,
                  p.peak_flops_attained / 1e12, p.ridge_config, p.ridge_attained);
    o << buf;
  }
  nlohmann::json kj = nlohmann::json::array();
  if (w) {
    WorkloadReport wr = run_workload(hw, *w, opt.run);
    auto ops = w->ops_in_order();
    std::snprintf(buf, sizeof buf, "\n%-30s %-6s %10s %10s %10s %7s %-7s\n", "kernel", "dtype", "flop/B", "TF/s",
                  "roof_TF/s", "of_roof", "bound");
    o << buf;
    for (const auto& k : wr.kernels) {
      KernelPlace p;
      p.op = k.op, p.kernel = k.kernel;
      ir::DType dt = ir::DType::kF32;
      for (const wl::Op* op : ops)
        if (op->name == k.op) dt = op->dtype;
      if (k.kind == "elementwise" || k.kind == "softmax" || k.kind == "reduction") dt = ir::DType::kF32;  // CUDA cores
      p.dtype = std::string(ir::dtype_name(dt));
      const RidgePoint* rp = &rep.ridges.front();
      for (const auto& r : rep.ridges)
        if (r.dtype == p.dtype) rp = &r;
      p.intensity = k.intensity;
      p.attained_flops = k.time_us > 0 ? double(k.flops) / (k.time_us * 1e-6) : 0;
      p.roof_flops = std::min(rp->peak_flops_attained, p.intensity * rep.bandwidth_attained);
      p.fraction_of_roof = p.roof_flops > 0 ? p.attained_flops / p.roof_flops : 0;
      p.bound = p.intensity < rp->ridge_attained ? "memory" : "compute";
      rep.kernels.push_back(p);
      kj.push_back({{"op", p.op},
                    {"kernel", p.kernel},
                    {"dtype", p.dtype},
                    {"intensity", p.intensity},
                    {"attained_flops", p.attained_flops},
                    {"roof_flops", p.roof_flops},
                    {"fraction_of_roof", p.fraction_of_roof},
                    {"bound", p.bound},
                    {"time_us", k.time_us}});
      std::snprintf(buf, sizeof buf, "%-30.30s %-6s %10.2f %10.2f %10.2f %6.0f%% %-7s\n", p.op.c_str(), p.dtype.c_str(),
                    p.intensity, p.attained_flops / 1e12, p.roof_flops / 1e12, 100 * p.fraction_of_roof,
                    p.bound.c_str());
      o << buf;
    }
  }
  rep.json = {{"bandwidth_config", rep.bandwidth_config},
              {"bandwidth_attained", rep.bandwidth_attained},
              {"ridges", rj},
              {"kernels", kj}};
  if (w) rep.json["workload"] = w->name();
  rep.text = o.str();
  return rep;
}

}  // namespace gtsim::analytic
