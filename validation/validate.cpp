#include "validation/validate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <set>
#include <sstream>

#include "models/gpu/specs.hpp"
#include "sim/config.hpp"
#include "validation/calibrate.hpp"
#include "validation/fitmath.hpp"
#include "validation/validate_plan.hpp"

namespace gtsim::validation {

namespace {
using detail::app_mapping;
using detail::app_plan;
using detail::AppMapping;
using detail::cdiv_i;
using detail::has_scaled_plan;
using detail::Plan;
using detail::scaled_plan;
namespace fs = std::filesystem;

const std::set<std::string> kMicro = {"empty",          "stream_copy", "strided_copy", "pointer_chase",  "divergence",
                                      "bank_conflicts", "fixed_work",  "ffma_outer",   "mma_throughput", "mma_shared",
                                      "store_tile",     "l2_read",     "op_latency"};

}  // namespace

bool is_microbenchmark(const std::string& kernel) { return kMicro.count(kernel) > 0; }

namespace {

bool all_ok(const std::vector<SimOutcome>& o) {
  for (const auto& x : o)
    if (!x.ok) return false;
  return true;
}

// Microbenchmark twins rewritten after b1 because the old twin was a different program from the IR:
// the batch that first measured the new twin. Earlier points are excluded; that batch's are held out.
// divergence: b1/b2's twin kept a and b in R4/R5 beside the even accumulators, a register-bank
// conflict on every other FFMA (validation/data/h200/b3/README.md).
// l2_read: b18 and b19's first version strode through one buffer by the grid's size (its CTAs' address
// streams changed with the grid; at 64 and 128 CTAs in clusters each CTA's data fitted in its L1).
// op_latency: b25's first version (latency chains only) wrote its result differently (other register
// counts); b26 adds the rate runs.
const std::map<std::string, std::string> kTwinRevised = {
    {"divergence", "b3"}, {"l2_read", "b20"}, {"op_latency", "b26"}};

// A batch's number: b16 -> 16, b3g -> 3 (string order puts b16 before b2)
long batch_number(const std::string& b) { return b.size() > 1 ? std::strtol(b.c_str() + 1, nullptr, 10) : 0; }

// Which fit used the point (mirrors calibrate.cpp's selections).
std::string role_of(const MeasuredPoint& p) {
  if (kMicro.count(p.kernel) && p.cols.count("partition_sms")) return "held-out";  // new points: fewer SMs
  // l2_read (b20): the crossbar's figures (noc.bytes_per_cycle_per_sm from 1 to 4 CTAs of 1024 threads,
  // bytes_per_cycle_per_group from one cluster of 8) are derived from its points; the others check them
  if (p.kernel == "l2_read") return "fit-benchmark";
  // op_latency (b26): the sfu, shuffle and tensor latencies and the shuffle lanes are derived from its
  // slopes; its other points (FFMA, FMNMX, F2FP; the rates) check the config's sourced figures
  if (p.kernel == "op_latency") return "fit-benchmark";
  if (kTwinRevised.count(p.kernel)) {
    const std::string& first = kTwinRevised.at(p.kernel);
    return p.batch < first ? "excluded" : p.batch == first ? "held-out" : "held-out-repeat";
  }
  // mma_shared (b4): "both" fits sm.tensor.ldmatrix_writeback_cycles_per_reg; the other variants check it
  if (p.kernel == "mma_shared") return p.variant == "both" ? "calibration" : "fit-benchmark";
  // store_tile (b6): its Nsight Compute L2 counts give the l2 request and byte rates; its times check them
  if (p.kernel == "store_tile") return "fit-benchmark";
  // ffma_outer (b13): gemm_fp32's inner loop alone; no fit reads it
  if (p.kernel == "ffma_outer") return "held-out";
  // mma_throughput e4m3 from b16: the twin emulates every fp8 mma.sync (b1-b14's loop of FADDs fails the
  // SASS check), the IR writes the emulation, and no fit reads its time (the derived fp8 rate is for IR
  // kernels that issue mma.sync e4m3 as one instruction): held out
  if (p.kernel == "mma_throughput" && p.variant == "e4m3" && batch_number(p.batch) >= 16)
    return batch_number(p.batch) == 16 ? "held-out" : "held-out-repeat";
  if (p.batch != "b1" && kMicro.count(p.kernel)) return "held-out-repeat";
  if (p.kernel == "empty") return p.variant == "graph_replay" ? "calibration" : "excluded";
  if (p.kernel == "mma_throughput") return "calibration";
  if (p.kernel == "stream_copy")
    return p.variant == "cold" && p.num("bytes_moved") >= 2.6e8 ? "calibration" : "fit-benchmark";
  if (p.kernel == "pointer_chase") {
    if (p.variant != "twin") return "excluded";
    double f = p.num("footprint_bytes");
    bool fit = (f >= 16384 && f <= 65536) || (f >= (2 << 20) && f <= (8 << 20)) || f == double(128ll << 20);
    return fit ? "calibration" : "fit-benchmark";
  }
  if (p.kernel == "strided_copy") {
    int64_t s = int64_t(p.num("stride"));
    for (int64_t f : {2, 16})
      if (s == f) return "calibration";
    return "held-out";
  }
  return "held-out";
}

double nan() { return std::nan(""); }

// A point whose runner recorded each CTA's SM (l2_read: the smids column) and that ran two CTAs on one SM
// while others stayed idle (a cluster launch's placement)
bool placed_twice(const MeasuredPoint& p) {
  auto it = p.cols.find("smids");
  if (it == p.cols.end() || it->second.empty()) return false;
  std::set<std::string> ids;
  size_t n = 0;
  std::stringstream ss(it->second);
  for (std::string id; std::getline(ss, id, ';'); ++n) ids.insert(id);
  return ids.size() < n;
}
}  // namespace

double runner_work(const MeasuredPoint& p) {
  for (const char* col : {"tflops", "tbps", "gbps"})  // the application runners' throughput columns
    if (double tput = p.num(col), med = p.num("median_us"); tput > 0 && med > 0) return tput * med;
  return std::nan("");
}

ValidationReport validate(const std::string& hw_path, const Dataset& data, const std::string& kernels_dir,
                          const ValidationOptions& opt) {
  auto t0 = std::chrono::steady_clock::now();
  ValidationReport rep;
  rep.hw = hw_path;
  rep.data = data.dir;
  if (data.device.is_object() && data.device.contains("name") && data.device["name"].is_string())
    rep.device_name = "the " + data.device["name"].get<std::string>();
  SimRunner sim(hw_path, kernels_dir, opt.calibration_overrides);
  if (opt.threads) sim.set_threads(opt.threads);
  bool apps = false;
  for (const auto& p : data.points)
    if (!kMicro.count(p.kernel) && !app_mapping(p, sim).kernels.empty()) apps = true;
  rep.heldout_kind = apps ? "application kernels" : "unused microbenchmarks";
  if (apps)
    rep.notes.push_back(
        "Held-out families: the application kernels that have an IR twin (batch b2 on) and the microbenchmark "
        "families calibration does not use. Later batches' repeats of the microbenchmarks are listed as "
        "held-out-repeat (same programs as b1; a drift check), not counted.");
  if (!apps)
    rep.notes.push_back(
        "No application-kernel data (batch b2) yet: the held-out figures are the microbenchmark families "
        "that calibration does not use (fixed_work, divergence, bank_conflicts, strided_copy at strides "
        "other than 2 and 16). They are weaker evidence than application kernels.");
  for (const auto& pr : data.problems) rep.notes.push_back("measured data skipped: " + pr);
  // host launch floor: back-to-back stream launches of the empty kernel
  double host_floor = data.host_launch_floor_us();
  rep.host_floor_us = host_floor;
  // twin fidelity, per batch (each batch's points were measured with that batch's build): dynamic shared
  // memory from the runner's record (smem_bytes column), which ptxas does not report
  std::map<std::string, std::vector<std::pair<std::string, int>>> dyn_smem;
  for (const auto& p : data.points) {
    double sm = p.num("smem_bytes");
    if (!std::isfinite(sm) || sm <= 0) continue;
    auto am = app_mapping(p, sim);
    for (const auto& k : am.kernels) {
      auto& v = dyn_smem[p.batch];
      if (std::find(v.begin(), v.end(), std::make_pair(k.twin_function, int(sm))) == v.end())
        v.push_back({k.twin_function, int(sm)});
    }
  }
  std::string latest_ptxas;
  for (const auto& b : data.batches) {
    if (!data.ptxas_text.count(b)) continue;
    const std::string& t = data.ptxas_text.at(b);
    std::string sass = data.sass_path.count(b) ? read_gz(data.sass_path.at(b)) : "";
    FidelityReport f = check_fidelity(t, "recorded: " + data.cite(b, "ptxas.txt"), sass, sim, hw_path, dyn_smem[b], b);
    if (rep.fidelity.ptxas_source.empty())
      rep.fidelity.ptxas_source = "recorded: " + data.cite(b, "ptxas.txt");
    else
      rep.fidelity.ptxas_source += ", " + data.cite(b, "ptxas.txt");
    rep.fidelity.twins.insert(rep.fidelity.twins.end(), f.twins.begin(), f.twins.end());
    for (const auto& n : f.notes) rep.fidelity.notes.push_back(b + ": " + n);
    latest_ptxas = b;
  }
  if (rep.fidelity.ptxas_source.empty()) rep.fidelity.ptxas_source = "none recorded";
  // the batch whose compiler record checks a point: its own, else the latest one recorded
  auto record_batch = [&](const MeasuredPoint& p) { return data.ptxas_text.count(p.batch) ? p.batch : latest_ptxas; };
  auto micro_failure = [&](const MeasuredPoint& p) -> std::string {
    for (const auto& t : rep.fidelity.twins)
      if (t.batch == record_batch(p) && t.kernel == p.kernel && t.fails()) return t.failure();
    return "";
  };
  auto app_failure = [&](const MeasuredPoint& p, const AppMapping& am) -> std::string {
    for (const auto& k : am.kernels) {
      const TwinCheck* t = rep.fidelity.find(record_batch(p), k.twin_function, k.kir);
      if (!t)
        return "twin " + k.twin_function + " (" + k.kir + ") not in the batch's ptxas record: fidelity not checked";
      if (t->fails()) return t->failure() + " (" + t->function + " vs " + k.kir + ".kir)";
    }
    return "";
  };
  // From the config: the L2 capacity (streaming kernels run scaled down with the L2 shrunk by the same
  // factor) and the stream's launch gap, which a point timed back to back in a stream (no CUDA-graph
  // time recorded) pays per kernel on top of the model's time (a graph launch's)
  double l2_bytes = 50331648, stream_gap = 0;
  try {
    auto root = ConfigNode::load_file(hw_path, opt.calibration_overrides);
    l2_bytes = root->at("l2").param<double>("size_bytes").get();
    stream_gap = gpu::LaunchSpecs::parse(root->at("launch")).stream_gap_us;
  } catch (const std::exception&) {
  }
  rep.stream_gap_us = stream_gap;

  // sampling of long sweeps: fixed_work keeps the points at and next to every wave boundary
  // (a data folder without a device.json: the H200's 132)
  int64_t sms = data.device.is_object() ? data.device.value("sm_count", int64_t(132)) : 132;
  auto keep_fixed = [&](int64_t ctas, int64_t on_sms) {
    int64_t r = ctas % on_sms;
    return ctas <= 2 || r == 0 || r == 1 || r == on_sms / 2 || (opt.quick ? false : (r == 2 || r == on_sms - 1));
  };
  int64_t copy_max = opt.quick ? (int64_t(1) << 22) : (int64_t(1) << 24);
  int64_t chase_max_hops = opt.quick ? 20000 : int64_t(1) << 22;  // 512 MiB at 128 B a hop: 12 s of host time (sampled)
  // GEMM sweeps (145 points): the model runs well under 1e6 warp instructions per host second and a
  // 4096^3 GEMM has ~1e8, so the sweeps are sampled: the square points; square_align at every n in
  // 1024..1032 (every VEC pattern), 1064 and the endpoint 1100; n_sweep at N = 128, 4096, 8192 and both
  // sides of the first two changes of tiles per SM (ceil(tiles / SMs)). K up to 4096 runs whole; beyond,
  // at K - 256 a (same VEC, same k-tail), extrapolated linearly in K (validate_plan.cpp).
  const bool sparse_gemm = opt.sparse;
  auto keep_gemm = [&](const MeasuredPoint& p) {
    if (opt.quick) return false;
    if (opt.complete) return true;
    // run budget: 4096^3 (1024 tiles) costs minutes of host time
    if (p.num("M") * p.num("N") > 4.0e6) return false;
    int64_t M = int64_t(p.num("M")), N = int64_t(p.num("N"));
    if (p.kernel == "gemm_persistent" && p.variant == "n_sweep") {  // the ends and both sides of 1 -> 2 tiles per CTA
      return N == 1536 || N == 1792 || N == 1920 || N == 2304;      // (sparse too: its family's only points)
    }
    if (sparse_gemm) {  // the blind config's run: fewer points of the same sweeps
      if (p.variant == "square_align") return N == 1024 || N == 1025 || N == 1100;
      if (p.variant == "n_sweep") return N == 128 || N == 4096 || N == 8192;
    }
    if (p.variant == "square_align") return (N >= 1024 && N <= 1032) || N == 1064 || N == 1100;
    if (p.variant == "n_sweep") {
      double part = p.num("partition_sms");  // a green-context partition's SM count (b3p)
      int64_t S = std::isfinite(part) && part > 0 ? int64_t(part) : sms;
      auto per_sm = [&](int64_t n) { return (cdiv_i(M, 128) * cdiv_i(n, 128) + S - 1) / S; };
      bool edge = per_sm(N) != per_sm(N - 128) || per_sm(N) != per_sm(N + 128);
      return N == 128 || N == 4096 || N == 8192 || (edge && per_sm(N) <= 3 && per_sm(N - 128) <= 2);
    }
    return true;
  };
  // an application point measured again in a later batch (a matched twin, a re-run): the latest
  // measurement is the held-out point, the earlier ones are listed as repeats (not simulated)
  auto batch_rank = [&](const std::string& b) {
    auto it = std::find(data.batches.begin(), data.batches.end(), b);
    return it == data.batches.end() ? -1 : int(it - data.batches.begin());
  };
  auto app_key = [](const MeasuredPoint& p) {
    std::string k = p.label() + "|" + fs::path(p.file).filename().string();
    if (p.cols.count("partition_sms")) k += "|sms=" + p.cols.at("partition_sms");
    return k;
  };
  std::map<std::string, std::pair<int, std::string>> latest_app;  // key -> (rank, batch)
  for (const auto& p : data.points)
    if (!kMicro.count(p.kernel)) {
      auto& l = latest_app[app_key(p)];
      if (l.second.empty() || batch_rank(p.batch) > l.first) l = {batch_rank(p.batch), p.batch};
    }
  std::vector<PointResult> pts;
  std::vector<Plan> plans;
  std::map<std::string, std::set<std::string>> sampled_out;
  for (const auto& p : data.points) {
    PointResult r;
    r.m = &p;
    // naive and flash: two programs; flash_bh (b25: heads at one length) is the flash program
    r.family = p.kernel == "attention" ? p.kernel + "_" + (p.variant == "flash_bh" ? "flash" : p.variant) : p.kernel;
    const bool micro = kMicro.count(p.kernel) > 0;
    AppMapping am;
    if (!micro) am = app_mapping(p, sim);
    const bool modelled = micro ? sim.has_kernel(p.kernel) : !am.kernels.empty();
    r.role = modelled ? role_of(p) : "excluded";
    r.meas = p.time_us;
    r.meas_spread = p.max_us - p.min_us;
    r.work = runner_work(p);
    std::string twin_failure = !modelled ? "" : micro ? micro_failure(p) : app_failure(p, am);
    if (!modelled)
      r.reason = micro ? "no IR kernel of that name" : am.reason;
    else if (kTwinRevised.count(p.kernel) && p.batch < kTwinRevised.at(p.kernel))
      r.reason = "twin revised in " + kTwinRevised.at(p.kernel) + " (this one was a different program from the IR)";
    else if (placed_twice(p))
      r.reason = "two CTAs on one SM (the smids column): the model places one per SM first";
    else if (p.kernel == "empty" && p.variant != "graph_replay")
      r.reason = "host-side launch measurement, not a GPU time";
    else if (p.kernel == "pointer_chase" && p.variant != "twin")
      r.reason = "clock64-timed variant (a different program)";
    else if (!micro && latest_app[app_key(p)].second != p.batch)
      r.role = "held-out-repeat",
      r.reason = "measured again in " + latest_app[app_key(p)].second + " (the latest is compared)";
    else if (!twin_failure.empty())
      r.role = "excluded", r.reason = twin_failure;
    else if (!p.graph_timed && host_floor > 0 && p.time_us < 1.2 * host_floor && p.kernel != "pointer_chase")
      r.role = "excluded",
      r.reason = "host-bound: back-to-back launches within 20% of the host launch call (" + fmt(host_floor, 3) + " us)";
    if (r.reason.empty() && !opt.families.empty() &&
        std::find(opt.families.begin(), opt.families.end(), r.family) == opt.families.end())
      r.role = "excluded", r.reason = "not simulated (not among --families)";
    ir::ParamValues params;
    if (r.reason.empty() && micro) params = bind_params(p, sim.kernel_params(p.kernel));
    Plan plan;
    if (r.reason.empty() && !micro) {
      // its kernels back to back (validate_plan.cpp: long ones scaled down and extrapolated)
      plan = app_plan(p, am, l2_bytes);
      if ((p.kernel == "gemm_tiled" || p.kernel == "gemm_persistent") && !keep_gemm(p))
        r.reason = opt.quick ? "not simulated (quick run)" : "not simulated (sampling)";
      // CUDA-core SGEMM: 64 ffma per thread per k; beyond 1024^2 outputs over a minute of host time
      if (p.kernel == "gemm_fp32" && (opt.quick || (!opt.complete && p.num("M") * p.num("N") > 1100.0 * 1100.0)))
        r.reason = "not simulated (run budget: a CUDA-core GEMM beyond 1024^2 outputs)";
      if (opt.quick && p.kernel == "attention") r.reason = "not simulated (quick run)";
      // flash attention: host time grows as BH T^2 (T = 2048 at 64 heads: 7 minutes, 4096: 18); the sparse
      // run (the CI accuracy test, the blind config) stops at T = 1536 and 16 heads
      if (p.kernel == "attention" && (p.variant == "flash" || p.variant == "flash_bh") && !opt.complete) {
        const double work = p.num("BH") * p.num("T") * p.num("T"),
                     cap = opt.sparse ? 16.0 * 2048 * 2048 : 64.0 * 2048 * 2048;
        if (work > cap || (opt.sparse && p.num("T") > 1536 && p.variant == "flash"))
          r.reason =
              "not simulated (run budget: flash attention beyond " +
              std::string(opt.sparse ? "T = 1536, or 16 heads at T = 2048, in a sparse run)" : "64 heads at T = 2048)");
      }
      // naive attention beyond T = 2048: over a minute of host time even scaled down (run budget)
      if (p.kernel == "attention" && p.variant == "naive" && p.num("T") > 2048 && !opt.complete)
        r.reason = "not simulated (sampling: the naive attention at T > 2048 is beyond the run budget)";
    } else if (r.reason.empty()) {
      if (p.kernel == "pointer_chase") {
        int64_t f = params["footprint_bytes"], s = params.count("stride_bytes") ? params["stride_bytes"] : 128;
        r.quantity = "latency", r.unit = "ns/hop";
        r.meas = p.num("ns_per_hop_diff");
        r.meas_spread = (p.max_us - p.min_us) * 1000 / double(f / s);
        if (f / s > chase_max_hops || f / s < 64)
          r.reason = "not simulated (sampling: hop count outside the run budget)";
        plan.jobs = {{"pointer_chase", params, {}},
                     {"pointer_chase", {{"footprint_bytes", f}, {"stride_bytes", f}}, {}}};
        double hops = double(f / s);
        plan.combine = [hops](const std::vector<SimOutcome>& o) {
          return (o[0].result.time_us - o[1].result.time_us) * 1000 / (hops - 1);
        };
      } else if (has_scaled_plan(p.kernel)) {
        // a point measured on a green-context partition (b3g) runs on a machine of that many SMs
        double part = p.num("partition_sms");
        int64_t point_sms = std::isfinite(part) && part > 0 ? int64_t(part) : sms;
        if (p.kernel == "fixed_work" && !keep_fixed(params["ctas"], point_sms)) r.reason = "not simulated (sampling)";
        plan = scaled_plan(p, params);
      } else {
        if (p.kernel == "stream_copy" && params["n"] > copy_max)
          r.reason = "not simulated (size beyond the run budget)";
        // a 2^24-element strided copy takes 40 s (stride 2) to over a minute (stride >= 16) of host time
        // in the model; the curve does not scale down (its reuse distance in CTAs grows with n)
        if (p.kernel == "strided_copy" && params["n"] > (int64_t(1) << 22) && !opt.complete)
          r.reason = "not simulated (run budget: a 2^24-element strided copy takes 40-100 s of host time in the model)";
        if (opt.quick && p.kernel == "strided_copy") r.reason = "not simulated (quick run)";
        // a 1 GiB store_tile takes 15-50 s of host time: the 2-CTA-per-SM points stand for the others
        // (measured within 1.5% of them)
        if (p.kernel == "store_tile" && (params["ctas_per_sm"] != 2 || (opt.quick && params["BH"] > 1)))
          r.reason = "not simulated (sampling: the 1 and 4 CTAs per SM points measure within 1.5% of 2)";
        plan.jobs = {{p.kernel, params, {}, p.launch_history()}};
        plan.combine = [](const std::vector<SimOutcome>& o) { return o[0].result.time_us; };
      }
    }
    if (!r.reason.empty() && r.role != "excluded" && r.role != "held-out-repeat") {
      sampled_out[r.family].insert(r.reason);
      r.role = "excluded";
    }
    r.sim_note = plan.note;
    pts.push_back(r);
    plans.push_back(plan);
  }
  // run every job once (memoized), in parallel
  std::vector<SimJob> all;
  for (size_t i = 0; i < pts.size(); ++i)
    if (pts[i].reason.empty()) all.insert(all.end(), plans[i].jobs.begin(), plans[i].jobs.end());
  sim.run_all(all);
  for (size_t i = 0; i < pts.size(); ++i) {
    if (!pts[i].reason.empty()) continue;
    std::vector<SimOutcome> o;
    for (const auto& j : plans[i].jobs) o.push_back(sim.run(j));
    if (!all_ok(o)) {
      pts[i].role = "excluded";
      for (const auto& x : o)
        if (!x.ok) pts[i].reason = "simulation failed: " + x.error;
      continue;
    }
    pts[i].sim = plans[i].combine(o);
    if (!pts[i].m->graph_timed && pts[i].quantity == "time" && stream_gap > 0) {
      pts[i].sim += stream_gap * plans[i].launches;
      pts[i].sim_note += std::string(pts[i].sim_note.empty() ? "" : "; ") + "stream-timed: + " +
                         std::to_string(plans[i].launches) + " x " + fmt(stream_gap, 3) + " us stream launch gap";
    }
    pts[i].sim_waves = o[0].result.waves;
    pts[i].sim_counters = o[0].result.metrics;
    pts[i].meas_waves = pts[i].m->num("waves");
  }
  // sweeps: (file, variant, the other varying parameters); x = the parameter with the most values
  std::map<std::string, std::vector<size_t>> groups;
  for (size_t i = 0; i < pts.size(); ++i) {
    std::string key = pts[i].m->file + "|" + pts[i].m->variant;
    if (pts[i].m->cols.count("partition_sms"))
      key += "|sms=" + pts[i].m->cols.at("partition_sms");  // one sweep per partition
    groups[key].push_back(i);
  }
  for (auto& [g, idx] : groups) {
    const std::string kernel = pts[idx[0]].m->kernel;
    std::vector<std::string> names;
    if (kMicro.count(kernel)) {
      if (!sim.has_kernel(kernel)) continue;
      names = sim.kernel_params(kernel);
    } else {
      names = {"n", "rows", "BH", "T", "d", "M", "N", "K"};  // the application CSVs' shape columns
    }
    auto col = [&](size_t i, const std::string& n) {
      return pts[i].m->cols.count(n) ? pts[i].m->cols.at(n) : std::string();
    };
    std::string xname;
    size_t most = 1;
    for (const auto& n : names) {
      std::set<std::string> vals;
      for (size_t i : idx) vals.insert(col(i, n));
      if (vals.size() > most) most = vals.size(), xname = n;
    }
    // parameters that vary in lockstep with x (a square GEMM's M = N = K) do not split the sweep
    std::set<std::string> lockstep;
    for (const auto& n : names) {
      std::set<std::pair<std::string, std::string>> pairs;
      for (size_t i : idx) pairs.insert({col(i, xname), col(i, n)});
      if (n != xname && !xname.empty() && pairs.size() == most && most > 1) {
        std::set<std::string> vals;
        for (size_t i : idx) vals.insert(col(i, n));
        if (vals.size() == most) lockstep.insert(n);
      }
    }
    for (size_t i : idx) {
      std::string key = g;
      for (const auto& n : names)
        if (n != xname && !lockstep.count(n) && pts[i].m->cols.count(n)) key += "|" + n + "=" + pts[i].m->cols.at(n);
      pts[i].sweep = key;
      pts[i].x = xname.empty() ? 0 : pts[i].m->num(xname);
    }
  }
  rep.points = std::move(pts);
  // family statistics per role
  auto family_stats = [&](const std::string& role, const std::function<double(const PointResult&)>& errf) {
    std::map<std::string, std::vector<const PointResult*>> fam;
    for (const auto& p : rep.points)
      if (p.role == role && std::isfinite(errf(p))) fam[p.family].push_back(&p);
    std::vector<FamilyStats> out;
    for (const auto& [name, v] : fam) {
      FamilyStats s;
      s.name = name;
      s.points = v.size();
      std::vector<double> ae;
      for (auto* p : v) ae.push_back(std::fabs(errf(*p)) * 100);
      s.mape = mean(ae);
      s.worst = *std::max_element(ae.begin(), ae.end());
      struct Sweep {
        std::vector<double> meas, sim, tol;
      };
      std::map<std::string, Sweep> sw;
      for (auto* p : v) {
        Sweep& w = sw[p->sweep];
        // throughput: a size sweep is ranked on how well each size uses the GPU, not on its size
        w.meas.push_back(p->rate(p->meas)), w.sim.push_back(p->rate(p->sim));
        w.tol.push_back(3 * p->meas_spread / p->meas);  // the step criterion's resolution, relative
      }
      auto lowest = [](double& into, double rho) {
        if (std::isfinite(rho)) into = std::isfinite(into) ? std::min(into, rho) : rho;
      };
      for (const auto& [k, w] : sw) {
        lowest(s.spearman, spearman_resolved(w.meas, w.sim, w.tol));
        lowest(s.spearman_raw, spearman(w.meas, w.sim));
      }
      out.push_back(s);
    }
    return out;
  };
  auto err = [](const PointResult& p) { return p.err(); };
  rep.heldout_families = family_stats("held-out", err);
  bool app_heldout = false;
  for (const auto& f : rep.heldout_families) app_heldout = app_heldout || !kMicro.count(f.name);
  if (apps && !app_heldout) {
    rep.heldout_kind = "unused microbenchmarks";
    rep.notes.erase(rep.notes.begin());  // the "application kernels" note pushed above
    rep.notes.push_back(
        "No application-kernel point is in the held-out figures: every b2 application point is excluded "
        "(no IR kernel of that name, or its twin fails the fidelity check; see the excluded list). The "
        "held-out figures are the microbenchmark families calibration does not use: weaker evidence "
        "than application kernels.");
  }
  rep.fitbench_families = family_stats("fit-benchmark", err);
  rep.calibration_families = family_stats("calibration", err);
  std::vector<double> fm, fw, fs, fr;
  for (const auto& f : rep.heldout_families) {
    fm.push_back(f.mape), fw.push_back(f.worst);
    if (std::isfinite(f.spearman)) fs.push_back(f.spearman);
    if (std::isfinite(f.spearman_raw)) fr.push_back(f.spearman_raw);
  }
  rep.heldout_mape = mean(fm);  // families weighted equally
  rep.heldout_worst = fw.empty() ? nan() : *std::max_element(fw.begin(), fw.end());
  rep.heldout_spearman = fs.empty() ? nan() : *std::min_element(fs.begin(), fs.end());
  rep.heldout_spearman_raw = fr.empty() ? nan() : *std::min_element(fr.begin(), fr.end());
  rep.steps = count_steps(rep.points);  // steps over the held-out sweeps (steps.cpp)
  for (const auto& [fam, reasons] : sampled_out)
    for (const auto& why : reasons) rep.notes.push_back(fam + ": some points " + why);
  // Nsight Compute counters side by side (launches matched by kernel and grid, in order)
  for (const auto& t : data.ncu) {
    std::map<std::string, std::map<std::string, std::string>> launch;  // ID -> metric -> value
    std::map<std::string, std::pair<std::string, std::string>> who;
    std::vector<std::string> order;
    for (size_t r = 0; r < t.rows.size(); ++r) {
      std::string id = t.get(r, "ID");
      if (id.empty() || t.get(r, "Grid Size").size() < 2) continue;  // not a launch row
      if (!launch.count(id)) order.push_back(id);
      launch[id][t.get(r, "Metric Name")] = t.get(r, "Metric Value");
      std::string kn = t.get(r, "Kernel Name");
      kn = kn.substr(0, kn.find('('));
      if (kn.rfind("void ", 0) == 0) kn = kn.substr(5);
      std::string grid = t.get(r, "Grid Size");
      who[id] = {kn.substr(0, kn.find('<')), grid.size() > 1 ? grid.substr(1, grid.find(',') - 1) : grid};
    }
    std::map<std::string, std::vector<std::string>> by_kg;
    for (const auto& id : order) by_kg[who[id].first + "|" + who[id].second].push_back(id);
    for (const auto& [kg, ids] : by_kg) {
      std::string kernel = kg.substr(0, kg.find('|')), grid = kg.substr(kg.find('|') + 1);
      std::vector<const PointResult*> cand;
      for (const auto& p : rep.points)
        if (p.m->kernel == kernel && p.m->cols.count("grid") && p.m->cols.at("grid") == grid &&
            (p.m->variant == "twin" || p.m->variant == "cold" || p.m->variant == "f16" || p.m->variant == "bf16" ||
             p.m->variant == "tf32" || p.m->variant == "e4m3" || p.m->variant == "graph_replay"))
          cand.push_back(&p);
      if (kernel == "mma_throughput") cand.clear();
      for (const auto& p : rep.points)
        if (kernel == "mma_throughput" && p.m->kernel == kernel) cand.push_back(&p);
      std::vector<std::pair<const PointResult*, std::string>> match;
      if (cand.size() == 1)
        match.push_back({cand[0], ids.back()});
      else if (cand.size() == ids.size())
        for (size_t i = 0; i < ids.size(); ++i) match.push_back({cand[i], ids[i]});
      for (const auto& [p, id] : match) {
        nlohmann::json row = {{"point", p->m->label()}, {"ncu_launch", id}};
        for (const char* m :
             {"dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sector_hit_rate.pct",
              "launch__waves_per_multiprocessor", "sm__warps_active.avg.pct_of_peak_sustained_active",
              "gpu__time_duration.sum", "sm__cycles_elapsed.max", "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"}) {
          auto v = parse_number(launch[id][m]);
          nlohmann::json s = p->sim_counters.contains(m) ? p->sim_counters[m] : nlohmann::json(nullptr);
          row[m] = {{"measured", v ? nlohmann::json(*v) : nlohmann::json(nullptr)}, {"simulated", s}};
        }
        if (!p->sim_note.empty()) row["note"] = "simulated counters are of the scaled-down run (" + p->sim_note + ")";
        rep.ncu_side_by_side.push_back(row);
      }
    }
  }
  rep.model_runs = sim.runs();
  rep.sim_seconds = sim.sim_seconds();
  rep.slowest_runs = sim.slowest(10);
  // the blind config on the held-out points
  std::string blind =
      opt.blind_hw.empty() ? (fs::path(hw_path).parent_path() / "h200-blind.yaml").string() : opt.blind_hw;
  if (opt.blind && fs::exists(blind)) {
    ValidationOptions bo = opt;
    bo.blind = false;
    bo.sparse = !opt.complete;
    bo.calibration_overrides.clear();
    bo.blind_hw.clear();
    ValidationReport b = validate(blind, data, kernels_dir, bo);
    rep.blind_ran = true;
    rep.blind_hw = blind;
    rep.blind_families = b.heldout_families;
    rep.blind_points = b.points;
    rep.blind_mape = b.heldout_mape;
    rep.blind_worst = b.heldout_worst;
    rep.model_runs += b.model_runs;
    rep.sim_seconds += b.sim_seconds;
    for (const auto& r : b.slowest_runs) rep.slowest_runs.push_back({r.first, "blind: " + r.second});
    std::sort(rep.slowest_runs.begin(), rep.slowest_runs.end(), [](auto& x, auto& y) { return x.first > y.first; });
    if (rep.slowest_runs.size() > 10) rep.slowest_runs.resize(10);
  } else if (opt.blind) {
    rep.notes.push_back("blind config " + blind + " not found: blind error not measured");
  }
  FirstShotRecords fs_rec = load_first_shots(data);
  for (const auto& pr : fs_rec.problems) rep.notes.push_back("first-shot record skipped: " + pr);
  rep.first_shot = first_shot_summary(rep, fs_rec);
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

std::vector<std::string> ValidationReport::missed_targets() const {
  std::vector<std::string> out;
  for (const auto& f : heldout_families) {
    if (!(f.mape <= 10)) out.push_back(f.name + ": held-out MAPE " + fmt(f.mape, 3) + "% > 10%");
    if (std::isfinite(f.spearman) && f.spearman < 0.95)
      out.push_back(f.name + ": Spearman " + fmt(f.spearman, 3) + " < 0.95");
  }
  if (!(heldout_mape <= 10)) out.push_back("overall held-out MAPE " + fmt(heldout_mape, 3) + "% > 10%");
  if (steps.measured && !(steps.recall() >= 0.9)) out.push_back("step recall " + fmt(steps.recall(), 3) + " < 0.9");
  if (steps.predicted && !(steps.precision() >= 0.9))
    out.push_back("step precision " + fmt(steps.precision(), 3) + " < 0.9");
  return out;
}

}  // namespace gtsim::validation
