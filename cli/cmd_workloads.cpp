// gtsim waves, workload and compare: GEMM wave/tile/alignment reports, multi-kernel workloads,
// and the same workload on several machines side by side.
#include <algorithm>
#include <iostream>
#include <optional>

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "cli/html_report.hpp"
#include "cli/limits.hpp"
#include "cli/plot.hpp"
#include "cli/report.hpp"
#include "cli/sweep.hpp"
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
    std::string hw, gemm, json, range, plot;
    std::vector<std::string> sets;
    analytic::WavesRequest req;
  };
  auto o = std::make_shared<Opts>();
  app.add_option("--hw", o->hw, "machine config")->required();
  app.add_option("--gemm", o->gemm, "GEMM shape MxNxK")->required();
  app.add_option(
      "--tile", o->req.tile,
      "output tile BMxBN, or auto (simulate the schedule's menu, keep the fastest); default: the kernel gtsim "
      "gemm picks (tile, schedule, split), as gtsim workload's matmuls run, or 128x128 with --schedule");
  app.add_option(
      "--schedule", o->req.schedule,
      "data-parallel (the default with --tile) | persistent | split-k | warp-specialized (Hopper: "
      "gemm_wgmma.kir, TMA + wgmma; tiles BMxBN[xC1|xC2]) | align1 (gemm_align1.kir; tiles 256x128, 128x128)");
  app.add_option("--split", o->req.split, "split-k: K slices per output tile (default: the planner's choice)");
  app.add_option("--dtype", o->req.dtype,
                 "bf16 | f16 | tf32 | e4m3 (tensor-core mma.sync; aliases fp16, fp8) | f32 (CUDA-core FFMA, "
                 "gemm_fp32.kir; alias fp32)");
  app.add_option("--set", o->sets, "config override PATH=VALUE");
  app.add_flag("--exact", o->req.exact, "simulate every wave (no sampling)");
  app.add_flag("!--no-suggestions", o->req.suggestions, "skip the padded alternatives (each is a simulation)");
  app.add_option("--json", o->json, "write JSON to PATH ('-' = stdout)");
  app.add_option("--range", o->range,
                 "DIM=START:STOP[:STEP] (STOP included): also simulate the --gemm shape with DIM (M, N or K; "
                 "comma-joined dims move together, M,N=...) at each size: the wave staircase (one simulation each)");
  app.add_option(
      "--plot", o->plot,
      "draw time and waves over --range (default: N from half to one and a half times the shape's, 9 sizes), "
      "the --gemm shape and its padded alternatives "
      "marked, to PATH.svg or PATH.png (gnuplot; data and script beside it)");
  auto limits = add_limit_options(app);
  return [o, limits]() {
    apply_limits(*limits);
    check_output_path(o->json);
    check_plot_path(o->plot);
    std::optional<SweepAxis> range;
    if (!o->plot.empty() && o->range.empty()) {
      // a plot without --range: N from half to one and a half times the shape's, 9 sizes (multiples of 8)
      analytic::WavesRequest q;
      analytic::parse_gemm_shape(o->gemm, q);
      auto to8 = [](uint64_t v) { return std::max<uint64_t>(8, (v + 4) / 8 * 8); };
      const uint64_t lo = to8(q.N / 2), hi = std::max(lo + 8, to8(q.N + q.N / 2)), step = to8((hi - lo) / 8);
      o->range = "N=" + std::to_string(lo) + ":" + std::to_string(hi) + ":" + std::to_string(step);
      std::cerr << "waves --plot: over --range " << o->range << " (give --range DIM=START:STOP[:STEP] for another)\n";
    }
    if (!o->range.empty()) {
      range = parse_sweep_axis(o->range, "--range");
      for (const auto& d : range->names)
        if (d != "M" && d != "N" && d != "K")
          throw InputError(SourcePos{"--range " + o->range},
                           "unknown dimension \"" + d + "\", expected M, N or K (comma-joined to move together)");
      if (range->values.front() < 1)
        throw InputError(SourcePos{"--range " + o->range}, "sizes start at 1, expected a positive START");
    }
    auto hw = load_hw(o->hw, o->sets);
    analytic::parse_gemm_shape(o->gemm, o->req);
    auto r = analytic::waves(*hw, o->req);
    r.json["validation"] = validation_label(*hw, "", o->sets);
    std::vector<nlohmann::json> points;
    if (range) {
      const std::string& dim = range->names.front();
      auto x_of = [&](const std::string& mnk) {
        analytic::WavesRequest q;
        analytic::parse_gemm_shape(mnk, q);
        return dim == "M" ? q.M : dim == "N" ? q.N : q.K;
      };
      std::string xname, rows;
      for (const auto& d : range->names) xname += (xname.empty() ? "" : ",") + d;
      char buf[160];
      std::snprintf(buf, sizeof buf, "wave staircase over %s:\n  %8s %8s %6s %6s %11s %9s\n", xname.c_str(),
                    xname.c_str(), "tiles", "waves", "fill", "time_us", "TFLOP/s");
      r.text += buf;
      nlohmann::json jrange = nlohmann::json::array();
      for (int64_t v : range->values) {
        analytic::WavesRequest q = o->req;
        q.suggestions = false;
        for (const auto& d : range->names) (d == "M" ? q.M : d == "N" ? q.N : q.K) = v;
        nlohmann::json p = analytic::waves(*hw, q).json;
        p["x"] = v;
        std::snprintf(buf, sizeof buf, "  %8lld %8lld %6lld %6.2f %11.2f %9.1f\n", (long long)v,
                      (long long)p["tiles"].get<int64_t>(), (long long)p["waves"].get<int64_t>(),
                      p["last_wave_fill"].get<double>(), p["time_us"].get<double>(), p["tflops"].get<double>());
        r.text += buf;
        jrange.push_back({{xname, v},
                          {"tiles", p["tiles"]},
                          {"waves", p["waves"]},
                          {"last_wave_fill", p["last_wave_fill"]},
                          {"time_us", p["time_us"]},
                          {"tflops", p["tflops"]}});
        points.push_back(std::move(p));
      }
      r.json["range"] = jrange;
      if (!o->plot.empty()) {
        nlohmann::json shape = r.json;
        shape["shape"] = std::to_string(o->req.M) + "x" + std::to_string(o->req.N) + "x" + std::to_string(o->req.K);
        shape["x"] = x_of(shape["shape"].get<std::string>());
        for (auto& s : shape["suggestions"]) s["x"] = x_of(s["gemm"].get<std::string>());
        emit(o->json, r.json, r.text);
        write_waves_plot(o->plot, points, shape, xname,
                         "gtsim waves: " + shape["shape"].get<std::string>() + " " +
                             r.json["dtype"].get<std::string>() + ", tile " + r.json["tile"].get<std::string>() + ", " +
                             xname + " over " + o->range.substr(o->range.find('=') + 1) + " on " +
                             r.json["hw"].get<std::string>());
        return 0;
      }
    }
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
  app.add_option("--tile", o->run.gemm_tile,
                 "mma.sync GEMM tile for every matmul, data-parallel, as gtsim waves runs it (BMxBN; GPU configs; "
                 "default: the kernel gtsim gemm picks for each matmul)");
  app.add_option("--tiling", o->tiling,
                 "matmul tiling on a TPU config: BMxBKxBN, 0 = chosen by the lowering (default: the lowering's)");
  app.add_option("--json", o->json, "write JSON to PATH ('-' = stdout)");
  auto limits = add_limit_options(app);
  auto trace = add_trace_options(app);
  auto html = add_html_option(app, "the report, time per kernel and the kernel table");
  return [o, limits, trace, html]() {
    apply_limits(*limits);
    check_output_path(o->json);
    check_html_path(*html);
    o->run.timeline = check_trace_request(*trace);
    auto hw = load_hw(o->hw, o->sets);
    if (is_tpu_config(*hw)) {
      if (!html->empty())
        throw InputError(SourcePos{"<--html " + *html + ">"},
                         "--html: the workload report is for GPU configs; " + o->hw +
                             " is a TPU config (gtsim compare --html shows it beside a GPU)");
      if (o->run.cuda_graph || !o->run.carry_l2 || !o->run.gemm_tile.empty())
        throw InputError(SourcePos{o->hw}, "--cuda-graph, --no-carry-l2 and --tile are for GPU configs; " + o->hw +
                                               " is a TPU config (its matmul blocks: --tiling BMxBKxBN)");
      return run_tpu_workload_command(*hw, {o->hw, o->workload, o->json, o->tiling, o->params, o->sets, !o->no_fusion,
                                            !o->no_recompute, o->run.timeline ? trace.get() : nullptr});
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
    if (!html->empty()) {
      nlohmann::json j = r.json;
      j["workload"] = w.name();
      j["hw"] = hw->find("name") ? hw->at("name").scalar() : o->hw;
      write_html(*html, workload_html(j, r.text, resolved_config_text(*hw, o->hw)));
    }
    return 0;
  };
}

namespace {
// True when `path` (a.b.c) names a key the config has (after its base: chain is merged).
bool config_has_path(const ConfigNode& root, const std::string& path) {
  const ConfigNode* cur = &root;
  for (size_t start = 0;;) {
    size_t dot = path.find('.', start);
    std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!cur->is_map() || !cur->has(key)) return false;
    cur = &cur->at(key);
    if (dot == std::string::npos) return true;
    start = dot + 1;
  }
}
}  // namespace

Runner add_compare(CLI::App& app) {
  struct Opts {
    std::string workload, json, plot, tiling;
    std::vector<std::string> hws, params, sets;
    tpu::CompareOptions cmp;
  };
  auto o = std::make_shared<Opts>();
  app.add_option("--workload", o->workload, "workload YAML")->required();
  app.add_option("--hw", o->hws, "machine config (repeat: two or more)")->required();
  app.add_option("--param", o->params, "workload param override NAME=VALUE, e.g. n=2^16 (repeatable)");
  app.add_option("--set", o->sets,
                 "config override PATH=VALUE applied to every --hw (repeatable); refused when a machine's config "
                 "has no such key");
  app.add_option("--tiling", o->tiling,
                 "matmul tiling on the TPU machines: BMxBKxBN, 0 = chosen by the lowering (GPU machines run the "
                 "GEMM kernel gtsim gemm picks)");
  app.add_flag("--exact", o->cmp.gpu_exact, "GPU runs without sampling");
  app.add_option("--json", o->json, "write JSON to PATH ('-' = stdout)");
  app.add_option("--plot", o->plot,
                 "draw per-op bars per machine, device time and launch/dispatch, to PATH.svg or PATH.png "
                 "(gnuplot; data and script beside it)");
  auto limits = add_limit_options(app);
  auto html = add_html_option(app, "the report, the per-op bars, the per-op and machine tables");
  return [o, limits, html]() {
    apply_limits(*limits);
    check_output_path(o->json);
    check_plot_path(o->plot);
    check_html_path(*html);
    if (!o->tiling.empty()) {
      TilingTriple t = parse_tiling(o->tiling);
      o->cmp.tpu.lower.tiling = {t.bm, t.bk, t.bn};
    }
    auto w = wl::Workload::load_file(o->workload, wl::parse_param_overrides(o->params));
    std::vector<std::shared_ptr<ConfigNode>> roots;
    bool any_tpu = false;
    for (const auto& h : o->hws) {
      if (!o->sets.empty()) {  // --set applies to every machine: each must have the key
        auto plain = load_hw(h, {});
        for (const auto& s : o->sets) {
          auto eq = s.find('=');
          std::string path = s.substr(0, eq);
          if (eq != std::string::npos && eq > 0 && !config_has_path(*plain, path))
            throw InputError(SourcePos{"<--set " + s + ">"},
                             "machine " + plain->param<std::string>("name").or_default(h) + " (" + h + ") has no key " +
                                 path +
                                 "; compare's --set applies to every --hw, so each config "
                                 "must have it");
        }
      }
      roots.push_back(load_hw(h, o->sets));
      any_tpu = any_tpu || is_tpu_config(*roots.back());
    }
    if (!o->tiling.empty() && !any_tpu)
      throw InputError(SourcePos{"<--tiling " + o->tiling + ">"},
                       "--tiling sets the matmul blocks of the TPU machines, and no --hw is a TPU config (a GPU "
                       "config's GEMM tile: gtsim workload --tile BMxBN)");
    auto r = tpu::compare(w, roots, o->cmp);
    nlohmann::json labels = nlohmann::json::array();
    for (size_t i = 0; i < roots.size(); ++i) {
      auto l = validation_label(*roots[i], "", o->sets);
      l["hw_file"] = o->hws[i];
      labels.push_back(l);
    }
    r.json["validation"] = labels;
    if (!o->sets.empty()) r.json["set"] = o->sets;
    if (!o->tiling.empty()) r.json["tiling"] = o->tiling;
    emit(o->json, r.json, r.text);
    // Each op's launch/dispatch is in the JSON (dispatch_us); a TPU's dispatch is charged once per
    // workload (the plot's last group).
    std::vector<double> launch_us;
    for (const auto& m : r.json["machines"]) launch_us.push_back(m.value("launch_per_kernel_us", 0.0));
    const std::string title = "gtsim compare: " + r.json["workload"].get<std::string>();
    if (!o->plot.empty()) write_compare_plot(o->plot, r.json, launch_us, title);
    if (!html->empty()) {
      std::vector<std::pair<std::string, std::string>> configs;
      for (size_t i = 0; i < roots.size(); ++i)
        configs.push_back({o->hws[i], resolved_config_text(*roots[i], o->hws[i])});
      std::string svg =
          svg_from([&](const std::string& image) { write_compare_plot(image, r.json, launch_us, title); });
      write_html(*html, compare_html(r.json, r.text, svg, configs));
    }
    return 0;
  };
}

}  // namespace gtsim::cli
