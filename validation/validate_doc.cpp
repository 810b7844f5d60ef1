// docs/validation.md, written by `gtsim validate --out-doc`.
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "validation/calibrate.hpp"
#include "validation/fitmath.hpp"
#include "validation/validate.hpp"

namespace gtsim::validation {

namespace {
std::string pct(double v) { return std::isfinite(v) ? fmt(v, 3) + "%" : "n/a"; }
std::string spct(double v) {
  if (!std::isfinite(v)) return "n/a";
  char b[32];
  std::snprintf(b, sizeof b, "%+.1f%%", v);
  return b;
}
std::string jnum(const nlohmann::json& j, int sig = 4) {
  return j.is_number() ? fmt(j.get<double>(), sig) : std::string("n/a");
}
}  // namespace

std::string validation_markdown(const ValidationReport& r, const nlohmann::json& cal, const std::string& plot_png,
                                const std::string& fingerprint) {
  std::ostringstream o;
  o << "# Validation: gtsim against " << r.device_name << "\n\n"
    << "Written by `gtsim validate --hw " << r.hw << " --data " << r.data
    << " --out-doc docs/validation.md` (do not edit by hand; rerun it). The measured data under `" << r.data
    << "` was committed before any comparison with the simulator.\n\n";
  if (!fingerprint.empty())
    o << "Inputs fingerprint: `" << fingerprint
      << "` (FNV-1a of every file under sim/, models/, kernels_ir/, hw_configs/ and validation/ but the CUDA "
         "twins, the TPU model and the workload layer, which validate does not read: validation/cuda/, "
         "models/tpu/, hw_configs/tpu-*, kernels_ir/lib/tpu_*, kernels_ir/graph/, kernels_ir/workloads/, "
         "models/analytic/ and the library batches, validation/data/library/; when this page was written. The test "
         "`ValidationDoc.IsNotStale` fails when the "
         "committed tree gives another, and this page must be written again).\n\n";
  o << "## Headline\n\n";
  o << "| figure | value | target |\n|---|---|---|\n";
  o << "| development-set MAPE on throughput (" << r.heldout_kind
    << ", families weighted equally; the points the model was developed against, formerly called held-out) | "
    << pct(r.heldout_mape) << " | <= 10% |\n";
  o << "| development-set worst point | " << pct(r.heldout_worst) << " | |\n";
  o << "| development-set Spearman (lowest sweep; differences within the measurement's resolution tied) | "
    << fmt(r.heldout_spearman, 3) << " | >= 0.95 |\n";
  o << "| development-set Spearman, every difference ranked (noise included) | " << fmt(r.heldout_spearman_raw, 3)
    << " | |\n";
  o << "| step precision / recall | " << fmt(r.steps.precision(), 3) << " / " << fmt(r.steps.recall(), 3)
    << " | >= 0.9 |\n";
  o << "| blind config (`h200-blind.yaml`) development-set MAPE | " << (r.blind_ran ? pct(r.blind_mape) : "not run")
    << " | measured |\n";
  auto records = recorded_first_shots(r.data, r.first_shot);
  o << first_shot_headline_rows(records) << "\n";
  auto missed = r.missed_targets();
  {
    std::vector<double> fm;
    for (const auto& rec : records)
      if (std::isfinite(rec.summary.app_first_mape)) fm.push_back(rec.summary.app_first_mape);
    if (!fm.empty() && !(mean(fm) <= 10))
      missed.push_back("first-shot MAPE on application kernels " + fmt(mean(fm), 3) + "% > 10%");
  }
  if (missed.empty())
    o << "All targets are met.\n\n";
  else {
    o << "Targets missed (reported as they are):\n\n";
    for (const auto& m : missed) o << "- " << m << "\n";
    o << "\n";
  }
  for (const auto& n : r.notes) o << "> " << n << "\n>\n";
  o << "\n" << first_shot_section(records);
  o << "## Method\n\n"
    << "- **Timing on the GPU.** Each point is the median over repeats of back-to-back launches, replayed from a "
       "CUDA graph where the runner recorded it (batches b2 on), else launched into a stream (b1, and the points of "
       "later batches without a graph time). The model's `time_us` (launch overhead + cycles / SM clock) is a graph "
       "launch's; a stream-timed point adds `launch.stream_gap_us` per kernel (this config: "
    << fmt(r.stream_gap_us, 3)
    << " us; the H200's is calibrated from stream_copy and store_tile points timed both ways), said per point. Short "
       "kernels launched back-to-back into a stream are bounded by the host's launch call (the empty kernel: "
    << fmt(r.host_floor_us, 3)
    << " us), so stream-timed points within 20% of that floor are excluded as host-bound. The pointer chase is "
       "compared per dependent hop (the run minus "
       "its warm-up), as the twin records it.\n"
    << "- **What the L2 holds when a launch starts** (`models/gpu/launch_history.hpp`, `gtsim run --l2-start`): "
       "each point is simulated after the launches its twin ran before it. The copies' cold points rotate "
       "through 1 GiB pools, so earlier launches on other buffers leave the L2 full and dirty (`rotating`: "
       "simulated, until they have touched the L2's size). Hot copies rerun the same launch (`hot`). The "
       "application twins (GEMMs, attention, elementwise) reuse their buffers back to back, so their "
       "buffers start in the L2, written ones dirty (`resident`: put there without simulating a launch). "
       "Softmax's far-beyond-L2 points are the second of two launches. The pointer chase and the other "
       "microbenchmarks start on an empty L2 (scrubbed, or touching little memory). "
       "validation/data/h200/b11 measures why it matters: in a rotation a 2^23-float copy writes back "
       "27 MiB of the launches before it, and gemm_tiled at VEC 1 is 4-14% faster with its inputs in the L2.\n"
    << "- **Calibration** (`gtsim calibrate`) fits each parameter from the one microbenchmark that isolates it, "
       "*through "
       "the model*: the benchmark is simulated at two values of the parameter, the near-linear response is solved for "
       "the value that reproduces the measurement, and a third run verifies it (secant refinement otherwise). Least "
       "squares with Eigen; the uncertainty is the standard error from the residual scatter and the spread of repeats; "
       "the leave-one-out error predicts each calibration point from a fit to the others. Its residuals below are "
       "**fit "
       "residuals, not accuracy**.\n"
    << "- **Roles of the points.** `calibration`: read by a fit. `fit-benchmark`: other points of a benchmark a fit "
       "used (other footprints of the chase, copy sizes off the plateau): reported, not counted as held-out. "
       "`held-out` (the development set): families no parameter was fitted to, but which the model was changed "
       "against over many commits, so their error is not an error bar for unseen kernels (the first-shot records "
       "are). `excluded`: host-bound, a twin failing its fidelity check, or "
       "not simulated (sampling, said per point).\n"
    << "- **Accuracy** is the error on throughput (work / time, so `measured time / simulated time - 1`), per family "
       "(families weighted equally): MAPE, worst point, Spearman rank correlation within each sweep (the lowest is "
       "shown). The Spearman ranks throughput too: the runner's work (its throughput column, TFLOP/s, TB/s or GB/s, "
       "times its median time) over the measured and over the simulated time, so that a sweep over sizes is ranked "
       "on how well each size uses the machine, not on its size; sweeps whose runner records no throughput "
       "(the microbenchmarks) rank 1 / time. It ranks at the measurement's resolution: two points of a sweep whose "
       "throughputs differ by no "
       "more than 3x their spread between repeats (the resolution the step criterion uses) are tied, on the measured "
       "and the simulated side alike, so that the order of points on one plateau (a wave, fixed_work's CTA counts "
       "within one wave) is not scored on noise and drift. The raw Spearman, every difference ranked, is shown "
       "beside it.\n"
    << "- **Run budget.** Validation runs on two cores in a few minutes, so the model is run smaller where the "
       "kernel's time is linear in a loop trip count (fixed_work and divergence `work`, bank_conflicts, "
       "mma_throughput and op_latency `iters`): two small values, extrapolated linearly, said per point. The "
       "fixed_work sweep is "
       "sampled at and next to every wave boundary; copies above 16M elements and chases above 70k hops are not "
       "simulated.\n"
    << "- **Application kernels** (batch b2 on: `elementwise`, `softmax`, `attention`, `gemm_tiled`) are the held-out "
       "set proper: each measured point maps to the IR kernels that are the same program as its twin "
       "(`kernels_ir/lib/`: `elementwise_fused`; `elementwise_sin`, `_cos`, `_square` twice and `_add` for the unfused "
       "variant; `softmax_rows`; `flash_attention_fwd`; `gemm_tiled`). A point of several launches (unfused "
       "elementwise: 5 kernels) is the sum of its kernels' times, each with its launch overhead, as the runner timed "
       "back-to-back launches. Streaming kernels at 2^28 elements run at n = 2^22 and 2^23 with the L2 shrunk 8x "
       "(both sizes as far beyond it as the real one is; the slope between them is within 1% of the slope between "
       "2^23 and 2^24) and are extrapolated linearly in n. A softmax beyond the L2 runs at a quarter and half its "
       "rows with the L2 shrunk 8x, each run the second of two launches on one machine (it writes back the P the "
       "launch before left dirty, as back-to-back launches do), extrapolated linearly in rows. GEMMs run whole up to K "
       "= "
       "4096 (the model's time per k-step still moves over the first thousand K: a slope from K = 256 and 512 "
       "understated K = 4096 by 4.6%); beyond, at K' = K - 256a and K' + 256 (the same VEC and k-tail), extrapolated "
       "linearly in K; the GEMM sweeps are sampled (square points; "
       "square_align at n = 1024..1032, 1064, 1100; n_sweep at N = 128, 4096, 8192 and both sides of the first two "
       "changes of tiles per SM; the blind config's run samples fewer). The naive attention is three launches "
       "(`attn_qk_gemm`: batched QK^T with B transposed and f32 out; `softmax_rows` to bf16; `attn_pv_gemm`: the "
       "twin's gemm_tiled<8> with a batch dimension), summed: the QK GEMM runs at b and 2b heads (b: at least 512 "
       "CTAs) and the softmax at 2048 and 4096 rows, both with the L2 shrunk 8x, extrapolated linearly in heads "
       "and rows; the PV GEMM runs at every head, K-extrapolated as gemm_tiled; T > 2048 is not simulated "
       "(run budget).\n"
    << "- **Twin fidelity** is checked per batch, with that batch's compiler record (`ptxas.txt`, `sass.txt.gz`); a "
       "point is excluded when its twin fails the SASS check or its occupancy (CTAs per SM from registers and shared "
       "memory, dynamic shared memory from the runner's record) differs from the IR kernel's.\n\n";
  if (!cal.is_null() && cal.contains("params")) {
    o << "## Calibrated parameters\n\n| parameter | fitted ± standard error | written | leave-one-out | from | how "
         "|\n|---|---|---|---|---|---|\n";
    for (const auto& p : cal["params"]) {
      std::string loo = p["loo_err_pct"].is_number() ? fmt(p["loo_err_pct"].get<double>(), 2) + "%" : "-";
      o << "| `" << p["key"].get<std::string>() << "` | " << jnum(p["value"], 5) << " ± " << jnum(p["se"], 2) << " "
        << p["unit"].get<std::string>() << " | " << p["written"].get<std::string>() << " | " << loo << " | `"
        << p["source"].get<std::string>() << "` | " << p["kind"].get<std::string>() << ": "
        << p["method"].get<std::string>()
        << (p["loo_note"].get<std::string>().empty() ? "" : " LOO: " + p["loo_note"].get<std::string>()) << " |\n";
    }
    o << "\n";
  }
  o << "## Calibration fit residuals (not accuracy)\n\n| point | measured | simulated | fit residual "
       "|\n|---|---|---|---|\n";
  for (const auto& p : r.points)
    if (p.role == "calibration" && std::isfinite(p.sim))
      o << "| " << p.m->label() << " | " << fmt(p.meas, 5) << " " << p.unit << " | " << fmt(p.sim, 5) << " " << p.unit
        << " | " << spct(p.err() * 100) << " |\n";
  o << "\n## Held-out accuracy per family (" << r.heldout_kind
    << ")\n\n| family | points | MAPE | worst | Spearman | Spearman raw |\n|---|---|---|---|---|---|\n";
  for (const auto& f : r.heldout_families)
    o << "| " << f.name << " | " << f.points << " | " << pct(f.mape) << " | " << pct(f.worst) << " | "
      << fmt(f.spearman, 3) << " | " << fmt(f.spearman_raw, 3) << " |\n";
  o << "| **all (families weighted equally)** | | **" << pct(r.heldout_mape) << "** | " << pct(r.heldout_worst) << " | "
    << fmt(r.heldout_spearman, 3) << " | " << fmt(r.heldout_spearman_raw, 3) << " |\n\n";
  if (!r.fitbench_families.empty()) {
    o << "Other points of fitted benchmarks (not held-out):\n\n| family | points | MAPE | worst |\n|---|---|---|---|\n";
    for (const auto& f : r.fitbench_families)
      o << "| " << f.name << " | " << f.points << " | " << pct(f.mape) << " | " << pct(f.worst) << " |\n";
    o << "\n";
  }
  o << "## The blind config: the error to expect on the A100\n\n";
  if (r.blind_ran) {
    o << "`" << r.blind_hw
      << "` takes every calibrated value from public data instead (datasheet, papers; sources in "
         "its comments) and leaves out the rules derived from H200 experiments that have no public figure "
         "(shared-pipe order, barrier cost, store path) and the op latencies measured on it (SFU, shuffle, "
         "tensor core: public simulator figures or the A100 config's assumptions instead), the way the A100 "
         "configs are built. On the same "
         "held-out points:\n\n"
      << "| family | MAPE (blind) | worst (blind) |\n|---|---|---|\n";
    for (const auto& f : r.blind_families)
      o << "| " << f.name << " | " << pct(f.mape) << " | " << pct(f.worst) << " |\n";
    o << "| **all** | **" << pct(r.blind_mape) << "** | " << pct(r.blind_worst) << " |\n\n"
      << "That MAPE is the error band the A100 and H100 configs carry (`validation.error_band_pct`, written by "
         "`gtsim validate --write-error-bands`).\n\n";
  } else {
    o << "Not run.\n\n";
  }
  o << "## Steps\n\nOn throughput: " << kStepDefinition
    << " (alignment, bank conflicts, divergence). A model whose time only grows with the work predicts no "
       "fall and scores no hit (`Steps.AModelWhoseTimeOnlyGrowsWithWorkFindsNoStep`).\n\n"
    << "| | measured | predicted | both | precision | recall |\n|---|---|---|---|---|---|\n";
  auto row = [&](const char* n, size_t m, size_t p, size_t h) {
    o << "| " << n << " | " << m << " | " << p << " | " << h << " | " << (p ? fmt(double(h) / double(p), 3) : "n/a")
      << " | " << (m ? fmt(double(h) / double(m), 3) : "n/a") << " |\n";
  };
  row("all", r.steps.measured, r.steps.predicted, r.steps.hits);
  row("wave", r.steps.wave_measured, r.steps.wave_predicted, r.steps.wave_hits);
  row("other/alignment", r.steps.align_measured, r.steps.align_predicted, r.steps.align_hits);
  o << "\n## Twin fidelity\n\nRegisters and shared memory of each CUDA twin (" << r.fidelity.ptxas_source
    << "; dynamic shared memory, which ptxas does not report, from the runner's `smem_bytes`) against its IR header, "
       "and the SASS instruction histogram by class against the IR's counts, within 10% per class. Where both have a "
       "main loop that runs: the innermost SASS loop against one iteration of the IR loop that executes the most "
       "non-integer work (times the unroll); when that IR loop holds loops the compiler keeps rolled (element-wise "
       "tile "
       "copies of 8 or 16 per thread), the SASS loop that nests as many loops, whole, against the IR iteration with "
       "each rolled loop counted as its unrolled body once. Instructions predicated on constant false (`@!PT`, "
       "never executed) are left out. Otherwise the whole function, without called subroutines (the IEEE division's "
       "slow path), against "
       "the IR's per-warp executed instructions plus its never-executed ones (cold paths the SASS holds once, such as "
       "sinf's Payne-Hanek reduction). Integer/address arithmetic and branches (the loop overhead) are listed but not "
       "gated yet.\n\n| batch | twin | regs twin / IR | smem twin / IR | CTAs/SM twin / IR | SASS worst class diff | "
       "verdict |\n|---|---|---|---|---|---|---|\n";
  for (const auto& t : r.fidelity.twins)
    o << "| " << t.batch << " | `" << t.function << "` | " << t.twin_regs << " / " << t.ir_regs
      << (t.regs_equal ? "" : " (differ)") << " | " << t.twin_smem
      << (t.dynamic_smem ? " (dynamic " + std::to_string(t.dynamic_smem) + ")" : "") << " / " << t.ir_smem
      << (t.smem_equal ? "" : " (differ)") << " | " << t.twin_ctas_per_sm << " / " << t.ir_ctas_per_sm << " | "
      << (t.sass_checked ? pct(t.sass_worst * 100) : "not recorded") << " | "
      << (t.fails() ? "**" + t.failure() + ": points excluded**" : "ok") << " |\n";
  auto failed = r.fidelity.failed_kernels();
  o << "\nIR kernels with a failing twin (in some batch): " << (failed.empty() ? "none" : "");
  for (const auto& f : failed) o << "`" << f << "` ";
  o << "\n\n";
  if (!plot_png.empty()) o << "## Simulated against measured\n\n![simulated vs measured](" << plot_png << ")\n\n";
  o << "## Every point\n\n";
  std::map<std::string, std::vector<const PointResult*>> by;
  for (const auto& p : r.points) by[p.family].push_back(&p);
  for (const auto& [k, v] : by) {
    o << "### " << k
      << "\n\n| point | role | measured | simulated | error (throughput) | note |\n|---|---|---|---|---|---|\n";
    for (auto* p : v)
      o << "| " << p->m->label() << " | " << p->role << " | " << fmt(p->meas, 5) << " " << p->unit << " | "
        << (std::isfinite(p->sim) ? fmt(p->sim, 5) + " " + p->unit : "-") << " | " << spct(p->err() * 100) << " | "
        << (p->reason.empty() ? p->sim_note : p->reason) << " |\n";
    o << "\n";
  }
  if (!r.ncu_side_by_side.empty()) {
    o << "## Nsight Compute counters, measured / simulated\n\n| point | DRAM read B | DRAM write B | L2 hit % | waves "
         "| warps active % |\n|---|---|---|---|---|---|\n";
    for (const auto& n : r.ncu_side_by_side) {
      auto mv = [&](const char* m) { return jnum(n[m]["measured"], 4) + " / " + jnum(n[m]["simulated"], 4); };
      o << "| " << n["point"].get<std::string>() << " | " << mv("dram__bytes_read.sum") << " | "
        << mv("dram__bytes_write.sum") << " | " << mv("lts__t_sector_hit_rate.pct") << " | "
        << mv("launch__waves_per_multiprocessor") << " | " << mv("sm__warps_active.avg.pct_of_peak_sustained_active")
        << " |\n";
    }
    o << "\nSimulated counters of extrapolated points are those of the scaled-down run.\n\n";
    // issue 38's target: DRAM bytes and L2 hit rate within 10% of Nsight Compute, on the launches the model
    // ran whole (scaled-down runs' counters are of another size) moving at least 1 MiB through DRAM
    int bytes_n = 0, bytes_ok = 0, hit_n = 0, hit_ok = 0;
    auto num = [](const nlohmann::json& j) { return j.is_number() ? j.get<double>() : std::nan(""); };
    for (const auto& n : r.ncu_side_by_side) {
      if (n.contains("note")) continue;
      double mb = num(n["dram__bytes_read.sum"]["measured"]) + num(n["dram__bytes_write.sum"]["measured"]);
      double sb = num(n["dram__bytes_read.sum"]["simulated"]) + num(n["dram__bytes_write.sum"]["simulated"]);
      if (std::isfinite(mb) && std::isfinite(sb) && mb >= 1048576) {
        ++bytes_n;
        bytes_ok += std::abs(sb / mb - 1) <= 0.10;
      }
      double mh = num(n["lts__t_sector_hit_rate.pct"]["measured"]),
             sh = num(n["lts__t_sector_hit_rate.pct"]["simulated"]);
      if (std::isfinite(mh) && std::isfinite(sh) && mh > 0) {
        ++hit_n;
        hit_ok += std::abs(sh / mh - 1) <= 0.10;
      }
    }
    o << "Within 10% of Nsight Compute (target: all; launches simulated whole): DRAM bytes (read + write, launches "
         "moving at least 1 MiB) "
      << bytes_ok << " of " << bytes_n << ", L2 sector hit rate " << hit_ok << " of " << hit_n << ".\n\n";
  }
  char b[128];
  std::snprintf(b, sizeof b, "_%zu model runs, %.0f s._\n", r.model_runs, r.seconds);
  o << b;
  return o.str();
}

}  // namespace gtsim::validation
