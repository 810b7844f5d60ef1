#include "models/analytic/gemm_select.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "kernels_ir/ops.hpp"
#include "models/analytic/workload_run.hpp"
#include "models/gpu/specs.hpp"
#include "models/mem/mem_specs.hpp"
#include "sim/error.hpp"

namespace gtsim::analytic {

// Helpers in a namespace of their own: the unity build compiles this file with the other analytic ones.
namespace {
namespace gemm_sel {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

constexpr double kThreads = 256;  // every kernel of the GEMM menu runs 256 threads per CTA (GemmTile)

// The machine's rates the score reads, once per ranking (all from the config).
struct SelectRates {
  double sm_flops = 0;     // flops/s of one SM for the dtype: config_peak_flops / SMs
  double wgmma_flops = 0;  // flops/s of one SM's wgmma (bf16; 0 without): wgmma_flops_per_cycle x sm_mhz_tensor
  double mhz = 0;          // the SM clock the kernel runs at (tensor kernels: clocks.sm_mhz_tensor)
  double l2_bps = 0;       // L2 -> SMs, all of them: slices x bytes per slice (or the SM groups' links)
  double port_bps = 0;     // L2 -> one SM: its crossbar port (or its share of its group's link)
  double hbm_bps = 0;      // hbm.bandwidth_gbps
  double l2_bytes = 0;     // l2.size_bytes: where the split-k workspace is read back from when it fits
  double launch_us = 0;    // launch.overhead_us
  double lsu_cycles = 0;   // cycles a warp's load holds a sub-partition's LSU, over the SM's sub-partitions
  double l2_latency = 0;   // l2.hit_latency_cycles: load-to-use of an L2 hit, what a synchronous load waits
};

SelectRates read_rates(const ConfigNode& hw, const std::string& dt) {
  const auto g = gpu::GpuSpecs::parse(hw);
  const auto m = mem::MemSpecs::parse(hw);
  hw.mark_used_recursively();
  SelectRates r;
  const bool tensor = dt != "f32";
  const auto ir_dt = ir::parse_dtype(dt);
  r.sm_flops = ir_dt ? config_peak_flops(hw, *ir_dt) / double(g.sm.count) : 0;
  r.mhz = tensor ? g.clocks.sm_mhz_tensor : g.clocks.sm_mhz;  // the L2 and crossbar run on it too
  if (ir_dt) r.wgmma_flops = g.sm.tensor.wgmma_flops_per_cycle[size_t(*ir_dt)] * g.clocks.sm_mhz_tensor * 1e6;
  const double hz = r.mhz * 1e6;
  double l2 = double(m.l2.slices) * m.l2.bytes_per_cycle_per_slice, port = m.noc.bytes_per_cycle_per_sm;
  if (m.noc.sms_per_group > 0 && m.noc.bytes_per_cycle_per_group > 0) {
    const double groups = double(ceil_div(g.sm.count, m.noc.sms_per_group));
    l2 = std::min(l2, groups * m.noc.bytes_per_cycle_per_group);
    port = std::min(port, m.noc.bytes_per_cycle_per_group / double(m.noc.sms_per_group));
  }
  r.l2_bps = l2 * hz, r.port_bps = port * hz;
  r.hbm_bps = config_hbm_bytes_per_s(hw);
  r.l2_bytes = double(m.l2.size_bytes);
  r.launch_us = g.launch.overhead_us;
  r.lsu_cycles = double(g.sm.units[size_t(gpu::Pipe::kLsu)].initiation_interval()) / double(g.sm.sub_partitions);
  r.l2_latency = m.l2.hit_latency_cycles;
  return r;
}

// Bytes per element of C: bf16 out for bf16, f16 and e4m3; f32 for tf32 and f32 (the kernels' C buffers).
int out_bytes(const std::string& dt) { return dt == "tf32" || dt == "f32" ? 4 : 2; }

std::string fmt_num(const char* f, double a, double b = 0, double c = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

// The score of one plan. Per work item (a tile; split-k: a tile's K slice) of BM x BN x Kp
// (Kp: the item's BK steps x BK, so a partial k-tile costs a whole one):
//   rounds   R = ceil(items / SMs): items the busiest SM runs. CTAs are dispatched breadth-first and
//            co-resident CTAs share the SM's tensor cores, so an SM's time is its items' work;
//            persistent CTAs take tiles t, t + grid, ... and land on the same SMs.
//   compute  R x 2 BM BN Kp / (SM flops/s)                      config_peak_flops / SMs
//   L2       max(R x bytes / port, items x bytes / L2 rate)     bytes = (BM + BN) Kp x element bytes
//                                                               (+ split-k's fp32 partials, K slices x M N x 4)
//   DRAM     ((M K + K N) x element bytes + M N x C bytes) / HBM bandwidth: each operand and C once
//   loads    narrow loads (a leading dimension that is not a multiple of 16 bytes), added: a row loaded
//            v < 16 bytes at a time takes 16 / v times the load instructions of 16-byte loads:
//            R x the extra warp loads x LSU cycles (each holds a sub-partition's LSU 32 / lanes cycles,
//            the SM has sub_partitions of them); under 4 bytes there is no cp.async (its sizes are 4,
//            8, 16), so each thread waits for its element load before it stores it to shared memory:
//            ceil(R / CTAs per SM) x (element loads / 256 threads) x the L2 hit latency (the resident
//            CTAs overlap their waits)
//   reduce   split-k: one more launch reading the K slices' fp32 partials and writing C, at the L2
//            rate when the workspace fits the L2, else the HBM's
//   score    launches x launch overhead + max(compute, L2, DRAM) + loads + reduce
//   align1 (gemm_align1.kir): the element loads are pipelined through registers (issued a k-step ahead),
//            so no L2 wait per pair of loads; per k-step the SM issues the loads and their shared-memory
//            stores (LSU cycles each) beside the MMAs and waits once for the loads' L2 latency:
//            loads = R x k-steps x (max(MMA cycles, LSU cycles) - MMA cycles + L2 latency); split-k as
//            above (workspace and reduction launch)
//   warp-specialized (gemm_wgmma.kir): one CTA per SM loops over tiles_per_cta_max tiles (R), at the
//            SM's wgmma rate; a cluster of 2 reads B once for its two tiles (TMA multicast): the
//            L2 bytes per tile are (BM + BN / cluster) Kp x element bytes.
GemmCandidate score_plan(const GemmPlan& p, const SelectRates& r) {
  GemmCandidate c;
  c.plan = p;
  const bool align1 = p.schedule == GemmSchedule::kAlign1;
  const bool splitk = (p.schedule == GemmSchedule::kSplitK || align1) && p.ksplit > 1;
  const bool warp_spec = p.schedule == GemmSchedule::kWarpSpecialized;
  const int es = gemm_elem_bytes(p.dtype), ob = out_bytes(p.dtype);
  const int64_t items = p.tiles * (p.schedule == GemmSchedule::kSplitK || align1 ? p.ksplit : 1);
  const int64_t ksteps = ceil_div(p.K, p.tile.bk);
  const double kp = double(splitk ? ceil_div(ksteps, p.ksplit) : ksteps) * p.tile.bk;
  const double bm = p.tile.bm, bn = p.tile.bn, mn = double(p.M) * double(p.N);
  const double item_flops = 2.0 * bm * bn * kp, item_bytes = (bm + bn / (warp_spec ? p.tile.cluster : 1)) * kp * es;
  const double ws = splitk ? double(p.ksplit) * mn * 4 : 0;  // fp32 partials
  c.rounds = warp_spec ? p.tiles_per_cta_max : ceil_div(items, int64_t(p.sms));
  c.round_fill = double(items) / (double(c.rounds) * double(p.sms));
  const double R = double(c.rounds);
  c.launch_us = r.launch_us * (splitk ? 2 : 1);
  const double flops_per_s = warp_spec ? r.wgmma_flops : r.sm_flops;
  c.compute_us = flops_per_s > 0 ? R * item_flops / flops_per_s * 1e6 : 0;
  c.l2_us = std::max(R * item_bytes / r.port_bps, (double(items) * item_bytes + ws) / r.l2_bps) * 1e6;
  c.dram_us = ((double(p.M) * double(p.K) + double(p.K) * double(p.N)) * es + mn * ob) / r.hbm_bps * 1e6;
  const double va = double(p.vec_a) * es, vb = double(p.vec_b) * es;  // bytes per load of A rows, B rows
  const double extra_lane_loads = bm * kp * es * (1 / va - 1.0 / 16) + bn * kp * es * (1 / vb - 1.0 / 16);
  const double sync_lane_loads = (va < 4 ? bm * kp * es / va : 0) + (vb < 4 ? bn * kp * es / vb : 0);
  const double cta_rounds = double(ceil_div(c.rounds, std::max<int64_t>(1, p.ctas_per_sm)));
  if (align1) {
    const double bk = p.tile.bk, mma_c = 2 * bm * bn * bk / (r.sm_flops / (r.mhz * 1e6));
    const double lsu_c = 2 * (bm * bk / p.vec_a + bk * bn / p.vec_b) / 32 * r.lsu_cycles;  // loads + stores
    c.load_us = R * (kp / bk) * (std::max(mma_c, lsu_c) - mma_c + r.l2_latency) / r.mhz;
  } else {
    c.load_us = (R * std::max(0.0, extra_lane_loads / 32) * r.lsu_cycles +
                 cta_rounds * sync_lane_loads / kThreads * r.l2_latency) /
                r.mhz;
  }
  if (splitk) c.reduce_us = (ws + mn * ob) / (ws <= r.l2_bytes ? r.l2_bps : r.hbm_bps) * 1e6;
  const double core = std::max({c.compute_us, c.l2_us, c.dram_us});
  c.bound = core == c.compute_us ? "compute" : core == c.l2_us ? "L2" : "DRAM";
  c.score_us = c.launch_us + core + c.load_us + c.reduce_us;

  // why: what decided, in words
  std::string w = c.bound + "-bound; " + std::to_string(items) + (splitk ? " tile slices" : " tiles") + " over " +
                  std::to_string(p.sms) + " SMs fill " + fmt_num("%.2f of %.0f rounds", double(items) / p.sms, R) +
                  ", " + std::to_string(p.waves) + (p.waves == 1 ? " wave" : " waves") +
                  fmt_num(" (last %.0f%% full)", 100 * p.last_wave_fill);
  if (warp_spec)
    w += "; TMA + wgmma, " + std::to_string(p.grid) + " CTAs loop over " + std::to_string(p.tiles_per_cta_min) + ".." +
         std::to_string(p.tiles_per_cta_max) + " tiles" +
         (p.tile.cluster > 1 ? ", clusters of " + std::to_string(p.tile.cluster) + " share B (multicast)" : "");
  if (p.schedule == GemmSchedule::kPersistent)
    w += p.grid == p.tiles ? "; persistent = data-parallel here (one tile per CTA)"
                           : "; " + std::to_string(p.grid) + " CTAs loop over " + std::to_string(p.tiles_per_cta_min) +
                                 ".." + std::to_string(p.tiles_per_cta_max) + " tiles";
  if (splitk) w += "; K split in " + std::to_string(p.ksplit) + fmt_num(", reduction %.1f us", c.reduce_us);
  w += fmt_num("; tile efficiency %.0f%%", 100 * p.tile_efficiency);
  w += "; " + std::to_string(p.vector_bytes) + "-byte loads";
  if (align1)
    w += fmt_num(" pipelined through registers (cuBLAS's align1 kernels; +%.1f us of load issue and L2 waits)",
                 c.load_us);
  else if (c.load_us > 0)
    w += fmt_num(" (+%.1f us: %.0fx the load instructions", c.load_us, 16.0 / p.vector_bytes) +
         (sync_lane_loads > 0 ? ", element loads waiting on the L2)" : ")");
  c.why = w;
  return c;
}

int schedule_order(GemmSchedule s) {
  return s == GemmSchedule::kWarpSpecialized ? -1
         : s == GemmSchedule::kDataParallel  ? 0
         : s == GemmSchedule::kPersistent    ? 1
         : s == GemmSchedule::kSplitK        ? 2
                                             : 3;
}

// True when two plans launch the same program: persistent with a grid of one tile per CTA is the
// data-parallel launch (gemm_params: GRID = tiles either way).
bool same_launch(const GemmPlan& a, const GemmPlan& b) {
  auto one_tile_per_cta = [](const GemmPlan& p) {
    return p.schedule == GemmSchedule::kDataParallel || (p.schedule == GemmSchedule::kPersistent && p.grid == p.tiles);
  };
  return a.tile.str() == b.tile.str() && one_tile_per_cta(a) && one_tile_per_cta(b);
}

}  // namespace gemm_sel
}  // namespace

std::string gemm_kernel_file(const GemmPlan& p) {
  if (p.schedule == GemmSchedule::kWarpSpecialized) return "gemm_wgmma.kir";
  if (p.schedule == GemmSchedule::kAlign1) return "gemm_align1.kir";
  if (p.dtype == "f32") return "gemm_fp32.kir";
  return p.schedule == GemmSchedule::kSplitK ? "gemm_splitk.kir" : "gemm_persistent.kir";
}

std::vector<GemmCandidate> rank_gemm_candidates(const ConfigNode& hw, int64_t M, int64_t N, int64_t K,
                                                const std::string& dtype) {
  if (M < 1 || N < 1 || K < 1) throw InputError(SourcePos{"gemm", 0, 0}, "GEMM dimensions M, N, K must be >= 1");
  const std::string dt = canonical_gemm_dtype(dtype);
  std::vector<GemmCandidate> out;
  std::optional<InputError> first_error;
  std::optional<gemm_sel::SelectRates> rates;
  auto add = [&](const GemmTile& t, GemmSchedule s, int64_t split = 0) -> std::optional<GemmPlan> {
    try {
      GemmPlan p = plan_gemm(hw, M, N, K, t, s, split, dt);
      if (p.ctas_per_sm == 0) return std::nullopt;  // cannot launch on this machine
      if (!rates) rates = gemm_sel::read_rates(hw, dt);
      if (s != GemmSchedule::kSplitK || p.ksplit > 1) out.push_back(gemm_sel::score_plan(p, *rates));
      return p;
    } catch (const InputError& e) {
      if (!first_error) first_error = e;
      return std::nullopt;
    }
  };
  // Hopper's own kernels (TMA + wgmma) where the machine has wgmma and TMA's 16-byte rows hold, as
  // cuBLAS runs its nvjet_sm90 kernels on aligned shapes and its align1 mma.sync kernels otherwise.
  const auto g = gpu::GpuSpecs::parse(hw);
  // (e4m3: Hopper's fp8 wgmma, K-major B, 16-byte rows of 16 elements)
  const auto wdt = ir::parse_dtype(dt);
  const bool tma_rows = dt == "bf16" ? K % 8 == 0 && N % 8 == 0 : K % 16 == 0 && N % 8 == 0;
  if ((dt == "bf16" || dt == "e4m3") && wdt && g.sm.tensor.wgmma_flops_per_cycle[size_t(*wdt)] > 0 && tma_rows)
    for (const auto& t : gemm_wgmma_menu()) add(t, GemmSchedule::kWarpSpecialized);
  // Rows that break 16-byte alignment: cuBLAS's align1 kernels (mma.sync, element loads pipelined
  // through registers), whole or split in 2 .. 4 K slices.
  if (dt == "bf16" && (K % 8 != 0 || N % 8 != 0))
    for (const auto& t : gemm_align1_menu())
      for (int64_t ks = 1; ks <= 4; ++ks)
        if (ks == 1 || gemm_sel::ceil_div(K, t.bk) >= 4 * ks) add(t, GemmSchedule::kAlign1, ks);
  for (const auto& t : gemm_tile_menu(dt)) {
    auto dp = add(t, GemmSchedule::kDataParallel);
    add(t, GemmSchedule::kPersistent);
    if (dp && dt == "bf16" && dp->tiles < dp->wave_size) add(t, GemmSchedule::kSplitK);
  }
  if (out.empty()) {
    if (first_error) throw *first_error;
    throw InputError(SourcePos{"gemm", 0, 0},
                     "no " + dt + " GEMM kernel of the menu can launch on this machine (0 CTAs per SM for every tile)");
  }
  std::stable_sort(out.begin(), out.end(), [](const GemmCandidate& a, const GemmCandidate& b) {
    if (a.score_us != b.score_us) return a.score_us < b.score_us;
    const double ma = std::max(a.l2_us, a.dram_us), mb = std::max(b.l2_us, b.dram_us);
    if (ma != mb) return ma < mb;
    return gemm_sel::schedule_order(a.plan.schedule) < gemm_sel::schedule_order(b.plan.schedule);
  });
  return out;
}

GemmSelection select_gemm(const ConfigNode& hw, int64_t M, int64_t N, int64_t K, const std::string& dtype,
                          bool autotune, bool exact) {
  GemmSelection s;
  s.autotune = autotune, s.exact = exact;
  s.candidates = rank_gemm_candidates(hw, M, N, K, dtype);
  // the best by score; autotune: the best three distinct launches by score, the fastest simulated wins
  const size_t want = autotune ? 3 : 1;
  std::vector<size_t> sims;
  for (size_t i = 0; i < s.candidates.size() && sims.size() < want; ++i) {
    bool dup = false;
    for (size_t j : sims) dup = dup || gemm_sel::same_launch(s.candidates[i].plan, s.candidates[j].plan);
    if (dup) continue;
    s.candidates[i].timing = simulate_gemm(hw, s.candidates[i].plan, exact);
    s.candidates[i].simulated = true;
    sims.push_back(i);
  }
  s.pick = sims.front();
  for (size_t i : sims)
    if (s.candidates[i].timing.time_us < s.candidates[s.pick].timing.time_us) s.pick = i;
  const GemmCandidate& c = s.candidates[s.pick];
  s.plan = c.plan, s.timing = c.timing;
  const bool sliced =
      c.plan.schedule == GemmSchedule::kSplitK || (c.plan.schedule == GemmSchedule::kAlign1 && c.plan.ksplit > 1);
  const std::string name = c.plan.tile_name() + " " + schedule_name(c.plan.schedule) +
                           (sliced ? " split " + std::to_string(c.plan.ksplit) : "");
  if (!autotune) {
    s.reason = "best analytic score of " + std::to_string(s.candidates.size()) + " candidates (" + name +
               gemm_sel::fmt_num(", %.1f us): ", c.score_us) + c.why;
  } else {
    s.reason = "autotune: simulated the best " + std::to_string(sims.size()) + " by score; " + name +
               gemm_sel::fmt_num(" was the fastest, %.1f us", c.timing.time_us) +
               (s.pick == 0 ? " (also the best score)" : gemm_sel::fmt_num(" (score rank %.0f)", double(s.pick + 1)));
  }
  return s;
}

}  // namespace gtsim::analytic
