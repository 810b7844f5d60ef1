// gtsim waves, workload and compare: GEMM wave/tile/alignment reports, multi-kernel workloads,
// and the same workload on several machines side by side.
#include <iostream>

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "cli/limits.hpp"
#include "cli/tpu_commands.hpp"
#include "cli/trace_output.hpp"
#include "kernels_ir/graph/workload.hpp"
#include "models/analytic/waves.hpp"
#include "models/analytic/workload_run.hpp"
#include "models/tpu/compare.hpp"
#include "sim/error.hpp"

namespace gtsim::cli {

namespace {
// Prints the text report unless the JSON goes to stdout.
void emit(const std::string& json_path, const nlohmann::json& j, const std::string& text) {
  if (!json_path.empty()) write_output(json_path, j.dump(2) + "\n");
  if (json_path != "-") std::cout << text;
}
}  // namespace

Runner add_waves(CLI::App& app) {
  struct Opts {
    std::string hw, gemm, json;
    std::vector<std::string> sets;
    analytic::WavesRequest req;
  };
  auto o = std::make_shared<Opts>();
  app.add_option("--hw", o->hw, "machine config")->required();
  app.add_option("--gemm", o->gemm, "GEMM shape MxNxK")->required();
  app.add_option("--tile", o->req.tile,
                 "output tile BMxBN (default 256x128, f32 128x128), or auto (simulate the menu, keep the fastest)");
  app.add_option("--schedule", o->req.schedule, "data-parallel | persistent | split-k");
  app.add_option("--split", o->req.split, "split-k: K slices per output tile (default: the planner's choice)");
  app.add_option("--dtype", o->req.dtype,
                 "bf16 | f16 | tf32 | e4m3 (tensor-core mma.sync; aliases fp16, fp8) | f32 (CUDA-core FFMA, "
                 "gemm_fp32.kir; alias fp32)");
  app.add_option("--set", o->sets, "config override PATH=VALUE");
  app.add_flag("--exact", o->req.exact, "simulate every wave (no sampling)");
  app.add_flag("!--no-suggestions", o->req.suggestions, "skip the padded alternatives (each is a simulation)");
  app.add_option("--json", o->json, "write JSON to PATH ('-' = stdout)");
  auto limits = add_limit_options(app);
  return [o, limits]() {
    apply_limits(*limits);
    check_output_path(o->json);
    auto hw = load_hw(o->hw, o->sets);
    analytic::parse_gemm_shape(o->gemm, o->req);
    auto r = analytic::waves(*hw, o->req);
    r.json["validation"] = validation_label(*hw, "", o->sets);
    emit(o->json, r.json, r.text);
    return 0;
  };
}

Runner add_workload(CLI::App& app) {
  struct Opts {
    std::string hw, workload, json, tiling;
    std::vector<std::string> sets, params;
    analytic::WorkloadRunOptions run;
    bool no_fusion = false, no_recompute = false;
  };
  auto o = std::make_shared<Opts>();
  app.add_option("--hw", o->hw, "machine config")->required();
  app.add_option("--workload", o->workload, "workload YAML (kernels_ir/workloads/*.yaml)")->required();
  app.add_option("--set", o->sets, "config override PATH=VALUE");
  app.add_flag("--no-fusion", o->no_fusion, "skip the elementwise fusion pass");
  app.add_flag("--no-recompute", o->no_recompute, "store activations for backward instead of recomputing");
  app.add_flag("--cuda-graph", o->run.cuda_graph, "one launch for the whole sequence: no launch gaps");
  app.add_flag("--exact", o->run.exact, "no sampling");
  app.add_flag("!--no-carry-l2", o->run.carry_l2, "every kernel on a fresh machine (cold L2)");
  app.add_option("--param", o->params, "workload param override NAME=VALUE, e.g. n=2^26 (repeatable)");
  app.add_option("--tile", o->run.gemm_tile, "GEMM tile for matmuls (BMxBN; GPU configs)");
  app.add_option("--tiling", o->tiling,
                 "matmul tiling on a TPU config: BMxBKxBN, 0 = chosen by the lowering (default: the lowering's)");
  app.add_option("--json", o->json, "write JSON to PATH ('-' = stdout)");
  auto limits = add_limit_options(app);
  auto trace = add_trace_options(app);
  return [o, limits, trace]() {
    apply_limits(*limits);
    check_output_path(o->json);
    o->run.timeline = check_trace_request(*trace);
    auto hw = load_hw(o->hw, o->sets);
    if (is_tpu_config(*hw)) {
      if (o->run.timeline || o->run.cuda_graph || !o->run.carry_l2 || o->run.gemm_tile != "128x128")
        throw InputError(SourcePos{o->hw}, "--trace, --cuda-graph, --no-carry-l2 and --tile are for GPU configs; " +
                                               o->hw + " is a TPU config (its matmul blocks: --tiling BMxBKxBN)");
      return run_tpu_workload_command(
          *hw, {o->hw, o->workload, o->json, o->tiling, o->params, o->sets, !o->no_fusion, !o->no_recompute});
    }
    if (!o->tiling.empty())
      throw InputError(SourcePos{o->hw}, "--tiling is for TPU configs; on a GPU config the GEMM tile is --tile BMxBN");
    auto w = wl::Workload::load_file(o->workload, wl::parse_param_overrides(o->params));
    o->run.fusion = !o->no_fusion;
    o->run.recompute = !o->no_recompute;
    auto r = analytic::run_workload(*hw, w, o->run);
    r.json["validation"] = validation_label(*hw, "", o->sets);
    write_trace(*trace, r.timeline);
    emit(o->json, r.json, r.text);
    return 0;
  };
}

Runner add_compare(CLI::App& app) {
  struct Opts {
    std::string workload, json;
    std::vector<std::string> hws;
    tpu::CompareOptions cmp;
  };
  auto o = std::make_shared<Opts>();
  app.add_option("--workload", o->workload, "workload YAML")->required();
  app.add_option("--hw", o->hws, "machine config (repeat: two or more)")->required();
  app.add_flag("--exact", o->cmp.gpu_exact, "GPU runs without sampling");
  app.add_option("--json", o->json, "write JSON to PATH ('-' = stdout)");
  auto limits = add_limit_options(app);
  return [o, limits]() {
    apply_limits(*limits);
    check_output_path(o->json);
    auto w = wl::Workload::load_file(o->workload);
    std::vector<std::shared_ptr<ConfigNode>> roots;
    for (const auto& h : o->hws) roots.push_back(load_hw(h, {}));
    auto r = tpu::compare(w, roots, o->cmp);
    nlohmann::json labels = nlohmann::json::array();
    for (size_t i = 0; i < roots.size(); ++i) {
      auto l = validation_label(*roots[i]);
      l["hw_file"] = o->hws[i];
      labels.push_back(l);
    }
    r.json["validation"] = labels;
    emit(o->json, r.json, r.text);
    return 0;
  };
}

}  // namespace gtsim::cli
