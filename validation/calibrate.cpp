#include "validation/calibrate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "sim/config.hpp"
#include "sim/error.hpp"
#include "validation/calibrate_ctx.hpp"
#include "validation/fitmath.hpp"

namespace gtsim::validation {

namespace fs = std::filesystem;

std::string fmt(double v, int sig) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", sig, v);
  std::string s = buf;
  if (s.find('e') != std::string::npos) {  // prefer plain digits for configs
    std::snprintf(buf, sizeof buf, "%.0f", v);
    s = buf;
  }
  return s;
}

std::string CalibratedParam::comment() const {
  std::string c = (kind == "read off the device" ? "read off the device: "
                   : kind == "derived"           ? "derived: "
                                                 : "calibrated: ") +
                  source + " (gtsim calibrate";
  if (kind != "read off the device") c += ", ± " + fmt(se, 2) + (unit.empty() ? "" : " " + unit);
  return c + ")";
}

const CalibratedParam* CalibrationResult::find(const std::string& key) const {
  for (const auto& p : params)
    if (p.key == key) return &p;
  return nullptr;
}

std::vector<std::string> CalibrationResult::overrides() const {
  std::vector<std::string> o;
  for (const auto& p : params)
    if (!p.written.empty()) o.push_back(p.key + "=" + p.written);
  return o;
}

std::vector<ValueEdit> CalibrationResult::edits() const {
  std::vector<ValueEdit> e;
  for (const auto& p : params)
    if (!p.written.empty()) e.push_back({p.key, p.written, p.comment()});
  return e;
}

nlohmann::json CalibrationResult::to_json() const {
  nlohmann::json j;
  j["params"] = nlohmann::json::array();
  auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  for (const auto& p : params)
    j["params"].push_back({{"key", p.key},
                           {"value", num(p.value)},
                           {"se", num(p.se)},
                           {"written", p.written},
                           {"unit", p.unit},
                           {"previous", num(p.previous)},
                           {"source", p.source},
                           {"kind", p.kind},
                           {"method", p.method},
                           {"loo_err_pct", num(p.loo_err * 100)},
                           {"loo_note", p.loo_note},
                           {"model_runs", p.model_runs}});
  j["fit_residuals"] = nlohmann::json::array();
  for (const auto& r : residuals)
    j["fit_residuals"].push_back({{"param", r.param},
                                  {"point", r.label},
                                  {"unit", r.unit},
                                  {"measured", r.measured},
                                  {"simulated", r.simulated},
                                  {"residual_pct", num(r.err() * 100)}});
  j["notes"] = notes;
  j["model_runs"] = model_runs;
  j["seconds"] = seconds;
  return j;
}

std::string CalibrationResult::table() const {
  std::ostringstream o;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-44s %12s %14s %10s %9s  %s\n", "parameter", "previous", "fitted ± se", "written",
                "LOO err", "source");
  o << buf;
  for (const auto& p : params) {
    std::string fit = fmt(p.value, 5) + " ± " + fmt(p.se, 2);
    std::string loo = std::isfinite(p.loo_err) ? fmt(p.loo_err * 100, 2) + "%" : "-";
    std::snprintf(buf, sizeof buf, "%-44s %12s %14s %10s %9s  %s\n", p.key.c_str(), fmt(p.previous, 6).c_str(),
                  fit.c_str(), p.written.c_str(), loo.c_str(), p.source.c_str());
    o << buf;
  }
  o << "\nmethods and leave-one-out notes:\n";
  for (const auto& p : params) {
    o << "  " << p.key << ": " << p.kind << "; " << p.method;
    if (!p.loo_note.empty()) o << " LOO: " << p.loo_note;
    o << "\n";
  }
  o << "\nfit residuals (calibration points; these are NOT accuracy):\n";
  for (const auto& r : residuals) {
    std::snprintf(buf, sizeof buf, "  %-34s %-36s meas %10s sim %10s %s  residual %+.2f%%\n", r.param.c_str(),
                  r.label.c_str(), fmt(r.measured, 5).c_str(), fmt(r.simulated, 5).c_str(), r.unit.c_str(),
                  r.err() * 100);
    o << buf;
  }
  for (const auto& n : notes) o << "note: " << n << "\n";
  std::snprintf(buf, sizeof buf, "%zu model runs, %.1f s\n", model_runs, seconds);
  o << buf;
  return o.str();
}

namespace detail {

std::string as_int(double v) { return std::to_string(int64_t(std::llround(v))); }
std::string as_dec(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

double rms(const std::vector<double>& v) {
  double s = 0;
  size_t n = 0;
  for (double x : v)
    if (std::isfinite(x)) s += x * x, ++n;
  return n ? std::sqrt(s / double(n)) : std::nan("");
}

// ---- l2.size_bytes: read off the device record ----
void read_l2_size(Ctx& c) {
  if (!c.data.device.contains("l2_bytes")) {
    c.res.notes.push_back("l2.size_bytes: device.json has no l2_bytes; not read off");
    return;
  }
  CalibratedParam p;
  p.key = "l2.size_bytes";
  p.unit = "B";
  p.value = c.data.device["l2_bytes"].get<double>();
  p.written = as_int(p.value);
  p.source = c.data.cite(c.data.batches.front(), "device.json");
  p.kind = "read off the device";
  p.method = "cudaDeviceProp::l2CacheSize.";
  c.add(p, {});
}

// ---- launch.overhead_us: the empty kernel replayed from a CUDA graph ----
void fit_launch(Ctx& c) {
  auto pts = c.data.select("empty", "graph_replay");
  if (pts.empty()) {
    c.res.notes.push_back("launch.overhead_us: no empty/graph_replay points; not calibrated");
    return;
  }
  std::vector<double> meas, spread;
  for (auto* q : pts) meas.push_back(q->time_us), spread.push_back(q->spread());
  double m = median(meas);
  auto simulate = [&](double v) {
    return c.times_us({SimJob{"empty", {}, c.with("launch.overhead_us", as_dec(v, 4))}});
  };
  ResponseFit f = fit_through_model(simulate, {m}, {mean(spread)}, 0.2, 1.0, Response::kLinear, 0, 100);
  CalibratedParam p;
  p.key = "launch.overhead_us";
  p.unit = "us";
  p.value = f.p;
  p.se = std::max(f.se, stddev(meas));
  p.quantum = 0.001;
  p.written = as_dec(f.p, 3);
  p.source = pts.front()->file;
  p.kind = "fit through the model";
  p.method = "the empty kernel's per-launch time in a CUDA-graph replay of back-to-back launches (" + fmt(m, 4) +
             " us) minus the model's execution of it; back-to-back stream launches (" +
             fmt(c.data.host_launch_floor_us(), 3) +
             " us) are bound by the host's launch call and are not a GPU figure.";
  p.model_runs = f.model_runs;
  c.add(p, {{"", "empty graph_replay", "us", m, f.sim_at_p.empty() ? std::nan("") : f.sim_at_p[0]}});
}

// ---- launch.stream_gap_us: back-to-back stream launches against a CUDA-graph replay ----
// Batches from b2 on time each point both ways (median_us: back to back into a stream;
// graph_median_us: the same launches replayed from a CUDA graph). The difference is per launch and
// the same for every kernel whose time is GPU-bound. Only the microbenchmarks that no held-out family
// uses are read (stream_copy, store_tile); launches within 20% of the host's own launch call are
// host-bound (their stream time is the host's, not the GPU's) and are left out.
void fit_stream_gap(Ctx& c) {
  double floor = c.all.host_launch_floor_us();
  std::vector<double> gaps;
  std::set<std::string> files;
  for (const char* k : {"stream_copy", "store_tile"})
    for (auto* q : c.all.select(k)) {
      double stream = q->num("median_us");
      if (!q->graph_timed || !std::isfinite(stream) || stream < 1.2 * floor) continue;
      gaps.push_back(stream - q->time_us);
      files.insert(q->file);
    }
  if (gaps.size() < 3) {
    c.res.notes.push_back(
        "launch.stream_gap_us: fewer than 3 points timed both in a stream and in a graph; not calibrated");
    return;
  }
  CalibratedParam p = median_reading("launch.stream_gap_us", "us", gaps);
  p.quantum = 0.01;
  p.written = as_dec(p.value, 2);
  p.source = *files.begin();
  p.kind = "measured directly";
  std::string list;
  for (const auto& f : files) list += (list.empty() ? "" : ", ") + f;
  p.method = "median over " + std::to_string(gaps.size()) +
             " points of a stream's back-to-back launch time minus the same launches replayed from a CUDA graph "
             "(stream_copy and store_tile, the microbenchmarks no held-out family uses; points within 20% of the host "
             "launch call, " +
             fmt(floor, 3) + " us, left out as host-bound), from " + list +
             ". The only fit that reads batches after the first: b1 timed in a stream only.";
  p.loo_note = "the spread of the per-point gaps is the uncertainty";
  c.add(p, {});
}

// ---- pointer chase: ns per hop of the IR kernel, as the twin measures it ----
struct ChasePoint {
  int64_t footprint;
  double ns, spread;
  std::string label;
};

std::vector<ChasePoint> chase_points(const Dataset& d, int64_t lo, int64_t hi, size_t max_points) {
  std::vector<ChasePoint> out;
  for (auto* q : d.select("pointer_chase", "twin")) {
    int64_t f = int64_t(q->num("footprint_bytes"));
    double stride = q->num("stride_bytes"), ns = q->num("ns_per_hop_diff");
    if (f < lo || f > hi || stride != 128 || !std::isfinite(ns)) continue;
    double hops = double(f) / stride;
    out.push_back(
        {f, ns, (q->max_us - q->min_us) * 1000 / hops / ns, "pointer_chase " + fmt(double(f) / 1024, 6) + " KiB"});
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.footprint < b.footprint; });
  while (out.size() > max_points) out.erase(out.begin() + long(out.size() / 2));  // keep the ends
  return out;
}

// Simulated ns per hop: (T(F, 128-byte nodes) - T(F, one node)) / (hops - 1); the warm-up is the same.
// scale > 1: the chase runs at footprint / scale with the L2 shrunk by the same factor.
std::vector<double> sim_chase(Ctx& c, const std::vector<ChasePoint>& pts, std::vector<std::string> sets,
                              int scale = 1) {
  if (scale > 1) sets.push_back(c.l2_scaled(scale));
  std::vector<SimJob> jobs;
  for (const auto& p : pts) {
    int64_t f = p.footprint / scale;
    jobs.push_back({"pointer_chase", {{"footprint_bytes", f}, {"stride_bytes", 128}}, sets});
    jobs.push_back({"pointer_chase", {{"footprint_bytes", f}, {"stride_bytes", f}}, sets});
  }
  auto t = c.times_us(jobs);
  std::vector<double> ns;
  for (size_t i = 0; i < pts.size(); ++i)
    ns.push_back((t[2 * i] - t[2 * i + 1]) * 1000 / double(pts[i].footprint / scale / 128 - 1));
  return ns;
}

void fit_latency(Ctx& c, const std::string& key, const std::string& unit, const std::vector<ChasePoint>& pts, double p0,
                 double p1, const std::string& level, int decimals, int scale = 1) {
  if (pts.empty()) {
    c.res.notes.push_back(key + ": no pointer_chase points in the " + level + " plateau; not calibrated");
    return;
  }
  std::vector<double> meas, spread;
  for (const auto& q : pts) meas.push_back(q.ns), spread.push_back(q.spread);
  auto simulate = [&](double v) {
    return sim_chase(c, pts, c.with(key, decimals ? as_dec(v, decimals) : as_int(v)), scale);
  };
  ResponseFit f = fit_through_model(simulate, meas, spread, p0, p1, Response::kLinear, 1, 100000);
  CalibratedParam p;
  p.key = key;
  p.unit = unit;
  p.value = f.p;
  p.se = f.se;
  p.quantum = decimals ? std::pow(10.0, -decimals) : 1;
  p.written = decimals ? as_dec(f.p, decimals) : as_int(f.p);
  p.source = c.data.select("pointer_chase", "twin").front()->file;
  p.kind = "fit through the model";
  std::string fps;
  for (const auto& q : pts) fps += (fps.empty() ? "" : ", ") + fmt(double(q.footprint) / 1024, 6) + " KiB";
  p.method = "pointer_chase ns per dependent hop (run minus warm-up) in the " + level + " plateau, footprints " + fps +
             "; the model simulated at two values, solved, verified (" + std::to_string(f.model_runs) + " runs)" +
             (scale > 1 ? "; the model runs at footprint / " + std::to_string(scale) + " with the L2 shrunk " +
                              std::to_string(scale) + "x (the same footprint-to-L2 ratio; " + c.l2_scaled(scale) + ")."
                        : ".");
  p.model_runs = f.model_runs;
  p.loo_err = rms(f.loo_err);
  p.loo_note = pts.size() > 1 ? "each footprint predicted from a fit to the others" : "single point: no leave-one-out";
  std::vector<FitResidual> r;
  for (size_t i = 0; i < pts.size() && i < f.sim_at_p.size(); ++i)
    r.push_back({"", pts[i].label, "ns/hop", pts[i].ns, f.sim_at_p[i]});
  c.add(p, r);
}

// The copies' "cold" points rotate through 1 GiB buffer pools, launched back to back: each launch starts
// on an L2 full of the launches before it, their stores dirty (MeasuredPoint::launch_history). The model
// runs its scaled-down sizes the same way.
const gpu::LaunchHistory kCold{gpu::L2Start::kRotating};

// ---- hbm.bandwidth_gbps: the copy plateau ----
void fit_bandwidth(Ctx& c) {
  auto pts = c.data.select("stream_copy", "cold");
  std::vector<double> bytes, t;
  for (auto* q : pts)
    if (q->num("bytes_moved") >= 2.6e8) bytes.push_back(q->num("bytes_moved")), t.push_back(q->time_us);
  if (bytes.size() < 2) {
    c.res.notes.push_back("hbm.bandwidth_gbps: fewer than two stream_copy points beyond 256 MB; not calibrated");
    return;
  }
  LineFit mf = fit_line(bytes, t);  // t = a + bytes / BW: the intercept is launch + ramp, the slope 1/BW
  double bw_meas = 1e-3 / mf.b;     // bytes/us -> GB/s
  double bw_se = bw_meas * mf.se_b / mf.b;
  // The model's achieved copy rate: the slope between two simulated sizes beyond its L2. The
  // model runs at n = 2^22 and 2^23 with the L2 shrunk 8x, which puts both sizes as far beyond the
  // L2 as 2^25 and 2^26 are beyond the full one, each after a launch on other buffers as the twin runs
  // them (kCold: the launch writes back the lines the one before left dirty). 8x fewer events.
  const int l2k = 8;
  int64_t n1 = c.opt.quick ? (int64_t(1) << 21) : (int64_t(1) << 22), n2 = 2 * n1;
  std::string l2set = c.l2_scaled(c.opt.quick ? 16 : l2k);
  auto sim_rate = [&](double v) {
    auto s = c.with("hbm.bandwidth_gbps", as_dec(v, 1));
    s.push_back(l2set);
    auto tt = c.times_us({{"stream_copy", {{"n", n1}}, s, kCold}, {"stream_copy", {{"n", n2}}, s, kCold}});
    return std::vector<double>{double(8 * (n2 - n1)) / (tt[1] - tt[0]) / 1000};  // GB/s
  };
  ResponseFit f =
      fit_through_model(sim_rate, {bw_meas}, {2 * bw_se / bw_meas}, 4800, 4000, Response::kLinear, 100, 20000);
  CalibratedParam p;
  p.key = "hbm.bandwidth_gbps";
  p.unit = "GB/s";
  p.value = f.p;
  p.se = f.se * (f.p / bw_meas);
  p.quantum = 1;
  p.written = as_int(f.p);
  p.source = pts.front()->file;
  p.kind = "fit through the model";
  p.method = "measured copy plateau 1/slope of time vs bytes over " + std::to_string(bytes.size()) +
             " sizes >= 256 MB: " + fmt(bw_meas, 5) + " ± " + fmt(bw_se, 2) + " GB/s (intercept " + fmt(mf.a, 3) +
             " us); config rate chosen so the model's slope between n = " + std::to_string(n1) + " and " +
             std::to_string(n2) + " (L2 shrunk " + std::to_string(c.opt.quick ? 16 : l2k) + "x: " + l2set +
             ") equals it (model efficiency " + fmt(bw_meas / f.p * 100, 3) + "% of its config rate).";
  p.model_runs = f.model_runs;
  // leave one size out: the plateau slope from the other sizes predicts the left-out size's time
  std::vector<double> loo;
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::vector<double> bx, ty;
    for (size_t j = 0; j < bytes.size(); ++j)
      if (j != i) bx.push_back(bytes[j]), ty.push_back(t[j]);
    LineFit g = bytes.size() > 2 ? fit_line(bx, ty) : LineFit{mf.a, (t[1 - i]) / bytes[1 - i], 0, 0, 0, 1};
    loo.push_back((g.a + g.b * bytes[i]) / t[i] - 1);
  }
  p.loo_err = rms(loo);
  p.loo_note = "each plateau size's time predicted from the line through the others";
  c.add(p, {{"", "stream_copy plateau rate", "GB/s", bw_meas, f.sim_at_p.empty() ? std::nan("") : f.sim_at_p[0]}});
  // launch overhead cross-check: the copy's intercept, measured against the model's
  if (auto* lp = const_cast<CalibratedParam*>(c.res.find("launch.overhead_us"))) {
    auto s = c.fixed;
    s.push_back(l2set);
    auto tt = c.times_us({{"stream_copy", {{"n", n1}}, s, kCold}, {"stream_copy", {{"n", n2}}, s, kCold}});
    double slope = (tt[1] - tt[0]) / double(8 * (n2 - n1));
    double gap = c.stream_gap(*pts.front());  // b1's copies are timed in a stream
    double a_model = tt[0] - slope * double(8 * n1) + gap;
    lp->loo_note = "the stream_copy intercept (launch + ramp) measured " + fmt(mf.a, 3) + " ± " + fmt(mf.se_a, 2) +
                   " us, the model with this value " + fmt(a_model, 3) + " us (its plateau line, L2 shrunk" +
                   (gap > 0 ? ", + the stream gap " + fmt(gap, 3) + " us" : "") + ")";
    lp->loo_err = std::fabs(a_model - mf.a) / std::max(1e-9, mf.a);
  }
}

// ---- sm.tensor.mma_sync_flops_per_cycle.<dtype>: mma_throughput ----
void derive_fp8_mma(Ctx& c);
void fit_mma(Ctx& c) {
  static const char* names[] = {"f16", "bf16", "tf32", "e4m3"};
  int64_t i1 = 64, i2 = 128;  // below ~64 iterations the model is still filling its pipelines (not linear in iters)
  for (auto* q : c.data.select("mma_throughput")) {
    int dtype = int(q->num("dtype"));
    if (dtype < 0 || dtype > 2) continue;  // e4m3: derived below (sm_90 emulates it; the IR says how)
    std::string key = std::string("sm.tensor.mma_sync_flops_per_cycle.") + names[dtype];
    if (c.res.find(key)) continue;
    int64_t iters = int64_t(q->num("iters"));
    const double gap = c.stream_gap(*q);  // b1 timed back to back in a stream
    auto simulate = [&](double v) {
      auto s = c.with(key, as_int(v));
      auto tt = c.times_us({{"mma_throughput", {{"dtype", dtype}, {"iters", i1}}, s},
                            {"mma_throughput", {{"dtype", dtype}, {"iters", i2}}, s}});
      return std::vector<double>{tt[0] + double(iters - i1) * (tt[1] - tt[0]) / double(i2 - i1) + gap};
    };
    // The secant search starts from the measured rate at the tensor clock (flops / time / SMs / clock),
    // not from the committed value, so that a re-fit lands where the committed fit did (the model's
    // whole-cycle tensor pipe makes its time a step function of the rate: starts a few flop/cycle
    // apart end a few flop/cycle apart).
    const CalibratedParam* tclk = c.res.find("clocks.sm_mhz_tensor");
    double mhz = tclk ? tclk->value : c.previous("clocks.sm_mhz_tensor");
    if (!std::isfinite(mhz)) mhz = c.previous("clocks.sm_mhz");
    double start = std::round(q->num("flops") / ((q->time_us - gap) * 1e-6) / c.previous("sm.count") / (mhz * 1e6));
    if (!std::isfinite(start) || start <= 0) start = c.previous(key);
    ResponseFit f =
        fit_through_model(simulate, {q->time_us}, {q->spread()}, start, start * 0.6, Response::kInverse, 16, 65536);
    CalibratedParam p;
    p.key = key;
    p.unit = "flop/cycle/SM";
    p.value = f.p;
    p.se = f.se;
    p.quantum = 1;
    // The model's tensor pipe carries the fraction of a cycle from one mma to the next, so its time
    // follows the rate; should the verifying run still miss by over 2% (no rate reproduces the
    // point), the measured device rate is written and the residual stays visible.
    double dev_rate = q->num("flops_per_sm_per_cycle_nvml");
    bool flat = f.verify_err > 0.02 && std::isfinite(dev_rate);
    if (flat) p.value = dev_rate, p.se = dev_rate * q->spread() / 2;
    p.written = as_int(p.value);
    p.source = q->file;
    p.kind = "fit through the model";
    p.method = std::string("mma_throughput ") + names[dtype] + " at iters = " + std::to_string(iters) + " (" +
               fmt(q->time_us, 5) + " us); the model run at iters " + std::to_string(i1) + " and " +
               std::to_string(i2) + " and extrapolated linearly in iters" +
               (gap > 0 ? ", plus the stream launch gap (" + fmt(gap, 3) + " us; the point is stream-timed)." : ".") +
               (flat ? " The model's time does not respond to the rate here (whole cycles per mma in its tensor pipe; "
                       "the fit-through-the-model value " +
                           fmt(f.p, 5) + " leaves the same " + fmt(f.verify_err * 100, 2) +
                           "% residual), so the measured device rate " + fmt(dev_rate, 5) +
                           " flop/cycle/SM (flops / time / "
                           "NVML clock / SMs) is written."
                     : "");
    p.model_runs = f.model_runs;
    // Left out of the fit: the same point measured again in a later batch (never fitted).
    std::vector<double> later;
    for (auto* r : c.all.select("mma_throughput"))
      if (r->batch != q->batch && int(r->num("dtype")) == dtype && int64_t(r->num("iters")) == iters)
        later.push_back(r->time_us);
    if (!later.empty() && !f.sim_at_p.empty()) {
      p.loo_err = std::fabs(f.sim_at_p[0] / median(later) - 1);
      p.loo_note =
          "one point per dtype in the fit batch; the left-out figure is the fitted model against the same point "
          "measured in the later batch (" +
          fmt(median(later), 5) + " us), a repeat never used for fitting";
    } else {
      p.loo_note = "one point per dtype: no leave-one-out; the repeat spread is the uncertainty";
    }
    c.add(p, {{"", std::string("mma_throughput ") + names[dtype], "us", q->time_us,
               f.sim_at_p.empty() ? std::nan("") : f.sim_at_p[0]}});
  }
  derive_fp8_mma(c);
}

// sm.tensor.mma_sync_flops_per_cycle.e4m3 / e5m2 on a machine without fp8 mma.sync (sm_90): ptxas
// emulates one with F2FP conversions, two f16 HMMA and four FADD, and mma_throughput.kir writes the
// e4m3 point that way, so no fp8 rate enters its model and none can be fitted from it. An IR kernel that
// issues `mma.sync ... e4m3` as one instruction gets the emulation's effective rate instead: the fitted
// f16 rate times the measured e4m3 / f16 flop-rate ratio of the latest batch that has both points (the
// twin as it is now; before b16 ptxas hoisted the emulation out of the twin's loop). e5m2 is emulated
// the same way and takes the same rate.
void derive_fp8_mma(Ctx& c) {
  const CalibratedParam* f16 = c.res.find("sm.tensor.mma_sync_flops_per_cycle.f16");
  if (!f16 || !std::isfinite(f16->value)) return;
  // the latest batch with an e4m3 point (load_dataset reads the batches in natural order: b16 after b9)
  std::string batch;
  for (auto* q : c.all.select("mma_throughput"))
    if (int(q->num("dtype")) == 3) batch = q->batch;
  const MeasuredPoint *p0 = nullptr, *p3 = nullptr;
  for (auto* q : c.all.select("mma_throughput"))
    if (q->batch == batch) {
      if (int(q->num("dtype")) == 0) p0 = q;
      if (int(q->num("dtype")) == 3) p3 = q;
    }
  if (!p0 || !p3) return;
  const double r0 = p0->num("flops_per_sm_per_cycle_nvml"), r3 = p3->num("flops_per_sm_per_cycle_nvml");
  if (!(r0 > 0) || !(r3 > 0)) return;
  const double ratio = r3 / r0;
  for (const char* dt : {"e4m3", "e5m2"}) {
    CalibratedParam p;
    p.key = std::string("sm.tensor.mma_sync_flops_per_cycle.") + dt;
    p.unit = "flop/cycle/SM";
    p.value = f16->value * ratio;
    p.se = p.value *
           std::sqrt(std::pow(f16->se / f16->value, 2) + std::pow(p0->spread() / 2, 2) + std::pow(p3->spread() / 2, 2));
    p.quantum = 1;
    p.written = as_int(p.value);
    p.source = p3->file;
    p.kind = "derived";
    p.method = std::string("the fitted f16 rate x the measured e4m3 / f16 flop rate of mma_throughput in ") + batch +
               " (" + fmt(r3, 5) + " / " + fmt(r0, 5) + " = " + fmt(ratio, 4) +
               "): sm_90 has no fp8 mma.sync, ptxas emulates it (F2FP, two f16 HMMA, four FADD; the twin's "
               "loop moves one operand register per mma, so the other conversions are hoisted)" +
               (std::string(dt) == "e5m2" ? "; e5m2 is emulated the same way (not measured)" : "");
    p.loo_note =
        "not fitted: mma_throughput.kir writes the e4m3 point as the emulation, which the model predicts "
        "from the f16 rate and the integer and FP32 pipes (a held-out check, in the validation report)";
    c.add(p, {});
  }
}

// ---- sm.tensor.ldmatrix_writeback_cycles_per_reg: mma_shared (tensor cores vs the shared pipe) ----
// The benchmark runs pieces of gemm_tiled's main loop on its occupancy; the fit uses the cost per
// k-tile (the slope between two iteration counts, which removes launch and prologue) of variant
// "both" (6 ldmatrix.x4 feeding 16 mma per k16 step) with "mma" (the same mma, no ldmatrix) and
// "ldmatrix" (the loads alone) as checks that the rest of the model already holds. The model runs
// on 8 SMs (the benchmark is per SM: 2 CTAs each, the copies of "pipeline" hit the L2). Candidate
// values are quarter cycles per register (an ldmatrix.x4 writes 4), 0 .. 2; the lowest error wins.
void fit_ldmatrix(Ctx& c) {
  auto pts = c.all.select("mma_shared");
  if (pts.empty()) return;
  std::string batch = pts.front()->batch;
  for (auto* q : pts) batch = std::min(batch, q->batch);
  // measured cost per k-tile (us) of a variant: slope between its smallest and largest iters
  auto measured_slope = [&](const std::string& v, const MeasuredPoint** hi_out) {
    const MeasuredPoint *lo = nullptr, *hi = nullptr;
    for (auto* q : pts)
      if (q->batch == batch && q->variant == v) {
        if (!lo || q->num("iters") < lo->num("iters")) lo = q;
        if (!hi || q->num("iters") > hi->num("iters")) hi = q;
      }
    if (hi_out) *hi_out = hi;
    if (!lo || !hi || lo == hi) return std::nan("");
    return (hi->time_us - lo->time_us) / (hi->num("iters") - lo->num("iters"));
  };
  const MeasuredPoint* src = nullptr;
  double m_both = measured_slope("both", &src);
  if (!std::isfinite(m_both) || !src) return;
  const int64_t i1 = c.opt.quick ? 8 : 16, i2 = c.opt.quick ? 16 : 48, sms = 8;
  const std::string key = "sm.tensor.ldmatrix_writeback_cycles_per_reg";
  auto model_slope = [&](int variant, double q) {
    auto s = c.with(key, as_dec(q, 2));
    s.push_back("sm.count=" + std::to_string(sms));
    auto tt = c.times_us({{"mma_shared", {{"variant", variant}, {"iters", i1}, {"SMS", sms}}, s},
                          {"mma_shared", {{"variant", variant}, {"iters", i2}, {"SMS", sms}}, s}});
    return (tt[1] - tt[0]) / double(i2 - i1);
  };
  double best_q = 0, best_err = INFINITY, best_sim = std::nan("");
  int runs = 0;
  for (int k = 0; k <= 8; ++k) {
    double q = 0.25 * k, sim = model_slope(2, q);
    runs += 2;
    double err = std::fabs(sim / m_both - 1);
    if (err < best_err) best_err = err, best_q = q, best_sim = sim;
  }
  CalibratedParam p;
  p.key = key;
  p.unit = "cycles/register";
  p.value = best_q;
  p.se = 0.125;  // half a candidate step
  p.quantum = 0.25;
  p.written = as_dec(best_q, 2);
  p.source = src->file;
  p.kind = "chosen by lowest error";
  p.method = "mma_shared \"both\": cost per k-tile " + fmt(m_both * 1000, 4) + " ns (slope between iters " +
             "measured in " + batch + "); the model on " + std::to_string(sms) + " SMs at iters " + std::to_string(i1) +
             " and " + std::to_string(i2) +
             ", candidates 0 .. 2 in quarter cycles per register, the lowest error kept.";
  p.model_runs = runs;
  // left out of the fit: the other variants' cost per k-tile with the chosen value
  std::vector<double> errs;
  std::string note;
  std::vector<FitResidual> resid = {{"", "mma_shared both: cost per k-tile", "ns", m_both * 1000, best_sim * 1000}};
  for (auto [variant, name] : {std::pair{0, "ldmatrix"}, {1, "mma"}, {3, "pipeline"}}) {
    double m = measured_slope(name, nullptr);
    if (!std::isfinite(m)) continue;
    double sim = model_slope(variant, best_q);
    runs += 2;
    errs.push_back(sim / m - 1);
    note += std::string(note.empty() ? "" : ", ") + name + " " + fmt((sim / m - 1) * 100, 2) + "%";
  }
  p.model_runs = runs;
  if (!errs.empty()) {
    p.loo_err = rms(errs);
    p.loo_note = "the variants not fitted, cost per k-tile with this value against the measurement: " + note;
  }
  c.add(p, resid);
}

// ---- hbm.burst_bytes from the strided curve: 32 or 64, by the lowest error ----
// The model runs at n / 8 with the L2 shrunk 8x (the same footprint-to-L2 ratio), and each stride's
// time is predicted as the measured stride-1 time x the model's ratio t(stride) / t(stride 1) at
// that size (scale-free: the launch, the wave count and the plateau rate cancel in the ratio).
void fit_burst(Ctx& c, const std::vector<int64_t>& strides) {
  std::vector<const MeasuredPoint*> pts;
  const MeasuredPoint* ref = nullptr;
  for (auto* q : c.data.select("strided_copy", "cold")) {
    if (std::find(strides.begin(), strides.end(), int64_t(q->num("stride"))) != strides.end()) pts.push_back(q);
    if (int64_t(q->num("stride")) == 1) ref = q;
  }
  if (pts.empty() || !ref) {
    c.res.notes.push_back("hbm.burst_bytes: no strided_copy points (with a stride-1 reference); not calibrated");
    return;
  }
  const int k = c.opt.quick ? 16 : 8;
  std::string l2set = c.l2_scaled(k);
  double best = 1e300, best_b = 32;
  std::vector<double> best_sim;
  std::string errs;
  for (int b : {32, 64}) {
    auto sets = c.with("hbm.burst_bytes", std::to_string(b));
    sets.push_back(l2set);
    std::vector<SimJob> jobs;
    for (auto* q : pts)
      jobs.push_back(
          {"strided_copy", {{"n", int64_t(q->num("n")) / k}, {"stride", int64_t(q->num("stride"))}}, sets, kCold});
    jobs.push_back({"strided_copy", {{"n", int64_t(ref->num("n")) / k}, {"stride", 1}}, sets, kCold});
    auto tt = c.times_us(jobs);
    std::vector<double> e, pred;
    for (size_t i = 0; i < pts.size(); ++i) {
      pred.push_back(ref->time_us * tt[i] / tt.back());
      e.push_back(pred.back() / pts[i]->time_us - 1);
    }
    double err = rms(e);
    errs += (errs.empty() ? "" : ", ") + std::to_string(b) + " B: RMS " + fmt(err * 100, 3) + "%";
    if (err < best) best = err, best_b = b, best_sim = pred;
  }
  CalibratedParam p;
  p.key = "hbm.burst_bytes";
  p.unit = "B";
  p.value = best_b;
  p.se = 0;
  p.quantum = 32;
  p.written = as_int(best_b);
  p.source = pts.front()->file;
  p.kind = "chosen by lowest error";
  std::string ss;
  for (auto s : strides) ss += (ss.empty() ? "" : ", ") + std::to_string(s);
  p.method = "strided_copy time at strides " + ss +
             " (the other strides are held out), each predicted as the measured "
             "stride-1 time x the model's t(stride) / t(stride 1), the model at n / " +
             std::to_string(k) + " with the L2 shrunk " + std::to_string(k) + "x (" + l2set + "); " + errs + ".";
  p.loo_err = best;
  p.loo_note = "discrete choice: the figure is the RMS time error of the chosen value on the fit strides";
  std::vector<FitResidual> r;
  for (size_t i = 0; i < pts.size(); ++i)
    r.push_back({"", "strided_copy stride " + fmt(pts[i]->num("stride"), 3), "us", pts[i]->time_us, best_sim[i]});
  c.add(p, r);
}

}  // namespace detail

// The strides of strided_copy used to choose hbm.burst_bytes; the others are held out.
const std::vector<int64_t>& burst_fit_strides() {
  static const std::vector<int64_t> s = {2, 16};
  return s;
}

CalibrationResult calibrate(const std::string& hw_path, const Dataset& data, const std::string& kernels_dir,
                            const CalibrationOptions& opt) {
  auto t0 = std::chrono::steady_clock::now();
  CalibrationResult res;
  // Fits read the first batch only (later batches repeat the microbenchmarks as a drift check and
  // add application kernels, which are never used for fitting).
  Dataset first = data;
  first.points.clear();
  for (const auto& p : data.points)
    if (p.batch == data.batches.front() || data.batches.front().empty()) first.points.push_back(p);
  res.notes.push_back("fits read batch " + data.batches.front() + " only");
  auto root = ConfigNode::load_file(hw_path);
  SimRunner sim(hw_path, kernels_dir);
  sim.set_exact(true);
  if (opt.threads) sim.set_threads(opt.threads);
  detail::Ctx c{first, data, sim, *root, opt, res, {}};
  detail::fit_clock(c);
  detail::fit_tensor_clock(c);
  detail::read_l2_size(c);
  detail::fit_launch(c);
  detail::fit_stream_gap(c);
  detail::fit_latency(c, "l1.latency_cycles", "cycles", detail::chase_points(first, 16384, 65536, 3), 30, 50, "L1", 0);
  detail::fit_latency(c, "l2.hit_latency_cycles", "cycles", detail::chase_points(first, 2 << 20, 8 << 20, 3), 200, 300,
                      "L2", 0);
  // the 128 MiB chase (1M hops) runs at 1/8 the footprint with the L2 shrunk 8x (same ratio)
  int64_t hbm_fp = 128ll << 20;
  detail::fit_latency(c, "hbm.latency_ns", "ns", detail::chase_points(first, hbm_fp, hbm_fp, 1), 250, 400,
                      "HBM (far beyond L2)", 1, opt.quick ? 16 : 8);
  detail::fit_bandwidth(c);
  detail::fit_mma(c);
  detail::fit_ldmatrix(c);
  detail::fit_burst(c, burst_fit_strides());
  res.model_runs = sim.runs();
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace gtsim::validation
