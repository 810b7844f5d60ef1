// gtsim gemm: pick a GEMM kernel configuration as a library's heuristic would (analytic ranking of
// the tile menu's schedules, models/analytic/gemm_select.hpp), say why, and simulate the pick.
#include <cstdio>
#include <iostream>

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "cli/limits.hpp"
#include "cli/report.hpp"
#include "cli/tpu_commands.hpp"
#include "models/analytic/gemm_select.hpp"
#include "sim/error.hpp"

namespace gtsim::cli {

namespace {

// A positional dimension: a positive integer, whole string (InputError otherwise).
int64_t parse_dim(const std::string& name, const std::string& s) {
  long long v = 0;
  char tail = 0;
  if (std::sscanf(s.c_str(), "%lld%c", &v, &tail) != 1 || v < 1 ||
      s.find_first_not_of("0123456789") != std::string::npos)
    throw InputError(
        SourcePos{"<" + name + " " + s + ">"},
        "gtsim gemm: " + name + " must be a positive integer (gtsim gemm --hw FILE M N K), got '" + s + "'");
  return v;
}

nlohmann::json candidate_json(const analytic::GemmCandidate& c, bool pick) {
  const auto& p = c.plan;
  nlohmann::json j = {{"tile", p.tile_name()},
                      {"schedule", analytic::schedule_name(p.schedule)},
                      {"split", p.ksplit},
                      {"kernel", analytic::gemm_kernel_file(p)},
                      {"score_us", c.score_us},
                      {"bound", c.bound},
                      {"compute_us", c.compute_us},
                      {"l2_us", c.l2_us},
                      {"dram_us", c.dram_us},
                      {"load_us", c.load_us},
                      {"reduce_us", c.reduce_us},
                      {"launch_us", c.launch_us},
                      {"rounds", c.rounds},
                      {"round_fill", c.round_fill},
                      {"ctas_per_sm", p.ctas_per_sm},
                      {"waves", p.waves},
                      {"last_wave_fill", p.last_wave_fill},
                      {"tile_efficiency", p.tile_efficiency},
                      {"vector_bytes", p.vector_bytes},
                      {"why", c.why},
                      {"simulated", c.simulated},
                      {"pick", pick}};
  if (c.simulated) j["time_us"] = c.timing.time_us;
  return j;
}

}  // namespace

Runner add_gemm(CLI::App& app) {
  struct Opts {
    std::string hw, json, dtype = "bf16";
    std::vector<std::string> dims, sets;
    bool autotune = false, exact = false;
  };
  auto o = std::make_shared<Opts>();
  app.add_option("--hw", o->hw, "machine config (a GPU config)")->required();
  app.add_option("dims", o->dims, "M N K: C[M,N] = A[M,K] x B[K,N], positive integers")->required()->expected(3);
  app.add_option("--dtype", o->dtype,
                 "bf16 | f16 | tf32 | e4m3 (tensor-core mma.sync; aliases fp16, fp8) | f32 (CUDA-core FFMA; alias "
                 "fp32)");
  app.add_option("--set", o->sets, "config override PATH=VALUE");
  app.add_flag("--autotune", o->autotune, "simulate the best three by score and keep the fastest");
  app.add_flag("--exact", o->exact, "simulate every wave (no sampling)");
  app.add_option("--json", o->json, "write JSON to PATH ('-' = stdout)");
  auto limits = add_limit_options(app);
  return [o, limits]() {
    apply_limits(*limits);
    check_output_path(o->json);
    const int64_t M = parse_dim("M", o->dims.at(0)), N = parse_dim("N", o->dims.at(1)),
                  K = parse_dim("K", o->dims.at(2));
    const std::string dtype = analytic::canonical_gemm_dtype(o->dtype);
    auto hw = load_hw(o->hw, o->sets);
    if (is_tpu_config(*hw))
      throw InputError(SourcePos{o->hw}, "gtsim gemm picks a GPU GEMM kernel; " + o->hw +
                                             " is a TPU config (its matmuls: gtsim workload --tiling BMxBKxBN)");
    auto s = analytic::select_gemm(*hw, M, N, K, dtype, o->autotune, o->exact);
    const auto& p = s.plan;
    const auto& t = s.timing;
    const std::string hw_name = hw->find("name") ? hw->at("name").scalar() : o->hw;
    const std::string model = t.sampled ? "simulated, sampled" : "simulated, exact";

    nlohmann::json j;
    j["hw"] = hw_name;
    j["m"] = M, j["n"] = N, j["k"] = K, j["dtype"] = dtype;
    j["kernel"] = analytic::gemm_kernel_file(p);
    j["tile"] = p.tile_name();
    j["schedule"] = analytic::schedule_name(p.schedule);
    j["split"] = p.ksplit;
    j["stages"] = p.tile.stages;
    j["ctas_per_sm"] = p.ctas_per_sm;
    j["waves"] = p.waves;
    j["last_wave_fill"] = p.last_wave_fill;
    j["tile_efficiency"] = p.tile_efficiency;
    j["vector_bytes"] = p.vector_bytes;
    j["score_us"] = s.candidates[s.pick].score_us;
    j["time_us"] = t.time_us;
    j["tflops"] = t.tflops;
    if (t.reduce_us > 0) j["reduce_time_us"] = t.reduce_us;
    j["dram_bytes"] = t.dram_bytes;
    j["l2_read_bytes"] = t.l2_read_bytes;
    j["model"] = model;
    j["sampling"] = {{"exact", !t.sampled},
                     {"fraction_simulated", t.fraction_simulated},
                     {"estimated_error_pct", t.estimated_error_pct}};
    j["autotune"] = s.autotune;
    j["reason"] = s.reason;
    j["plan"] = p.to_json();
    nlohmann::json cands = nlohmann::json::array();
    for (size_t i = 0; i < s.candidates.size(); ++i) cands.push_back(candidate_json(s.candidates[i], i == s.pick));
    j["candidates"] = cands;
    j["validation"] = validation_label(*hw, "", o->sets);

    std::string text;
    char buf[1024];
    auto line = [&](const char* f, auto... a) {
      std::snprintf(buf, sizeof buf, f, a...);
      text += buf;
    };
    line("GEMM %lldx%lldx%lld %s on %s: %zu candidates ranked analytically (a heuristic, as cuBLAS's), %s\n",
         (long long)M, (long long)N, (long long)K, dtype.c_str(), hw_name.c_str(), s.candidates.size(),
         s.autotune ? "the best 3 simulated" : "the best simulated");
    line("  pick      %s, tile %s (BK %d, %d stages), %s, split %lld\n", j["kernel"].get<std::string>().c_str(),
         p.tile_name().c_str(), p.tile.bk, p.tile.stages, analytic::schedule_name(p.schedule).c_str(),
         (long long)p.ksplit);
    line("            ctas/SM %u (%s)  waves %lld  last wave fill %.2f  tile efficiency %.3f  vector bytes %d (%s)\n",
         p.ctas_per_sm, p.occupancy_limiter.c_str(), (long long)p.waves, p.last_wave_fill, p.tile_efficiency,
         p.vector_bytes, p.aligned() ? "aligned" : "misaligned");
    line("  why       %s\n", s.reason.c_str());
    line("  time      %.2f us  %.1f TFLOP/s  (%s; score %.2f us)\n", t.time_us, t.tflops, model.c_str(),
         s.candidates[s.pick].score_us);
    if (t.reduce_us > 0) line("            of which the reduction launch %.2f us\n", t.reduce_us);
    line("  DRAM      %s\n", traffic_bytes(double(t.dram_bytes)).c_str());
    if (!t.sampled)
      text += "  sampling  exact (every CTA and iteration simulated)\n";
    else
      line("  sampling  %.1f%% of the warp instructions simulated, estimated error %.2f%% (--exact simulates all)\n",
           100.0 * t.fraction_simulated, t.estimated_error_pct);
    text += "candidates, best score first (* the pick, s simulated):\n";
    line("    %-10s %-16s %5s %9s %9s %5s %5s  %s\n", "tile", "schedule", "split", "score_us", "sim_us", "waves",
         "fill", "why");
    for (size_t i = 0; i < s.candidates.size(); ++i) {
      const auto& c = s.candidates[i];
      char simbuf[32] = "-";
      if (c.simulated) std::snprintf(simbuf, sizeof simbuf, "%.2f", c.timing.time_us);
      line("  %c%c%-10s %-16s %5lld %9.2f %9s %5lld %5.2f  %s\n", i == s.pick ? '*' : ' ', c.simulated ? 's' : ' ',
           c.plan.tile_name().c_str(), analytic::schedule_name(c.plan.schedule).c_str(), (long long)c.plan.ksplit,
           c.score_us, simbuf, (long long)c.plan.waves, c.plan.last_wave_fill, c.why.c_str());
    }
    if (!o->json.empty()) write_output(o->json, j.dump(2) + "\n");
    if (o->json != "-") std::cout << text;
    return 0;
  };
}

}  // namespace gtsim::cli
