// gtsim sweep and gtsim merge: a kernel or a workload over a grid of parameters (cli/sweep.hpp),
// on threads, on shards (--shard I/N, joined by gtsim merge) or on MPI ranks (mpirun -np N).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "cli/html_report.hpp"
#include "cli/limits.hpp"
#include "cli/plot.hpp"
#include "cli/report.hpp"
#include "cli/sweep.hpp"
#include "cli/sweep_mpi.hpp"
#include "kernels_ir/ast.hpp"
#include "kernels_ir/graph/workload.hpp"
#include "kernels_ir/parser.hpp"
#include "models/analytic/workload_run.hpp"
#include "models/gpu/gpu_model.hpp"
#include "models/gpu/launch_history.hpp"
#include "sim/error.hpp"

namespace gtsim::cli {

namespace {

struct SweepOptions {
  std::string hw, kernel, workload, csv = "-", shard, l2_start = "empty", plot, plot_y = "tflops";
  std::vector<std::string> params, sets;
  unsigned threads = 1;
  bool exact = false, no_progress = false;
};

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string row_figures(const std::string& name, uint64_t cycles, double time_us, int64_t waves, double fill,
                        double flops, uint64_t rd, uint64_t wr, double l2_hit, double err_pct, double fraction) {
  return name + "," + std::to_string(cycles) + "," + fmt("%.4f", time_us) + "," + std::to_string(waves) + "," +
         fmt("%.4f", fill) + "," + fmt("%.4f", time_us > 0 ? flops / time_us / 1e6 : 0.0) + "," + std::to_string(rd) +
         "," + std::to_string(wr) + "," + fmt("%.4f", l2_hit) + "," + fmt("%.3f", err_pct) + "," +
         fmt("%.4f", fraction) + "\n";
}

std::string param_cells(const ir::ParamValues& p, const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += std::to_string(p.at(n)) + ",";
  return s;
}

// A config per thread: a ConfigNode records which keys were read, so threads do not share one.
std::shared_ptr<ConfigNode> thread_config(const SweepOptions& o) {
  thread_local std::map<const SweepOptions*, std::shared_ptr<ConfigNode>> cache;
  auto& c = cache[&o];
  if (!c) c = load_hw(o.hw, o.sets);
  return c;
}

// Progress on stderr when it is a terminal: a bar, the rate and the time left.
class Progress {
 public:
  explicit Progress(bool on) : on_(on), t0_(std::chrono::steady_clock::now()) {}
  void operator()(uint64_t done, uint64_t total) {
    if (!on_) return;
    auto now = std::chrono::steady_clock::now();
    double s = std::chrono::duration<double>(now - t0_).count();
    if (done < total && s - last_ < 0.2) return;
    last_ = s;
    double rate = s > 0 ? double(done) / s : 0;
    int width = 30, filled = total ? int(double(width) * double(done) / double(total)) : width;
    std::fprintf(stderr, "\r[%s%s] %llu/%llu points, %.1f/s, %.0f s left   ", std::string(size_t(filled), '#').c_str(),
                 std::string(size_t(width - filled), '.').c_str(), (unsigned long long)done, (unsigned long long)total,
                 rate, rate > 0 ? double(total - done) / rate : 0.0);
    if (done == total) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }

 private:
  bool on_;
  std::chrono::steady_clock::time_point t0_;
  double last_ = -1;
};

}  // namespace

Runner add_sweep(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  app.add_option("--hw", o->hw, "machine config (hw_configs/*.yaml)")->required();
  auto* k = app.add_option("--kernel", o->kernel, "kernel in the IR (kernels_ir/lib/*.kir)");
  auto* w = app.add_option("--workload", o->workload, "workload YAML (kernels_ir/workloads/*.yaml)");
  k->excludes(w);
  app.add_option("--param", o->params,
                 "NAME=START:STOP[:STEP] (STOP included) or NAME=VALUE; comma-joined names move together "
                 "(M,N,K=64:4096); several --param make a grid, the first outermost")
      ->required();
  app.add_option("--set", o->sets, "config override PATH=VALUE (repeatable)");
  app.add_option("--threads", o->threads, "simulations run at once (default 1)")->check(CLI::Range(1u, 1024u));
  app.add_option("--csv", o->csv, "write the CSV to PATH ('-' = stdout, the default)");
  app.add_option("--shard", o->shard,
                 "run only shard I of N (points I, I+N, ...); the file starts with a comment line that "
                 "`gtsim merge` reads. Under mpirun the ranks shard the sweep themselves");
  app.add_flag("--exact", o->exact, "no sampling (docs/sampling.md)");
  app.add_flag("--no-progress", o->no_progress, "no progress bar on stderr");
  app.add_option("--l2-start", o->l2_start, "what the L2 holds when each launch starts (as gtsim run)")
      ->check(CLI::IsMember({"empty", "hot", "resident", "rotating"}));
  app.add_option("--plot", o->plot,
                 "draw the curve to PATH.svg or PATH.png (gnuplot; data and script beside it), each point "
                 "coloured by the largest power of two dividing the swept value");
  app.add_option("--plot-y", o->plot_y, "what the plot's y axis shows: tflops (default) or time_us")
      ->check(CLI::IsMember({"tflops", "time_us"}));
  auto limits = add_limit_options(app);
  auto html = add_html_option(app, "the curve (one varying --param), the CSV as a table");
  return [o, limits, html]() {
    apply_limits(*limits);
    check_output_path(o->csv);
    check_plot_path(o->plot);
    check_html_path(*html);
    if (o->kernel.empty() == o->workload.empty())
      throw InputError(SourcePos{"gtsim sweep"}, "expected one of --kernel FILE or --workload FILE");
    std::vector<SweepAxis> axes;
    for (const auto& p : o->params) axes.push_back(parse_sweep_axis(p));
    std::vector<std::string> names = sweep_param_names(axes);
    if (!o->plot.empty()) sweep_plot_axis(axes);  // one varying axis, refused before any simulation
    MpiSession mpi = mpi_session();
    if (mpi.size > 1 && !o->shard.empty())
      throw InputError(SourcePos{"--shard " + o->shard}, "under mpirun the ranks are the shards, expected no --shard");
    if (!o->plot.empty() && (mpi.size > 1 || !o->shard.empty()))
      throw InputError(SourcePos{"--plot " + o->plot},
                       "a shard holds part of the curve; plot the whole sweep (no --shard, no mpirun)");
    if (!html->empty() && (mpi.size > 1 || !o->shard.empty()))
      throw InputError(SourcePos{"<--html " + *html + ">"},
                       "--html: a shard holds part of the sweep; report the whole sweep (no --shard, no mpirun)");
    Shard shard = mpi.size > 1       ? Shard{uint64_t(mpi.rank), uint64_t(mpi.size)}
                  : o->shard.empty() ? Shard{}
                                     : parse_shard(o->shard);
    // Everything that can be refused is refused before the first simulation.
    auto hw0 = load_hw(o->hw, o->sets);
    std::shared_ptr<const ir::Kernel> kernel;
    if (!o->kernel.empty()) {
      kernel = ir::parse_kernel_file(o->kernel);
      for (const auto& n : names) {
        bool known = false;
        for (const auto& p : kernel->params) known = known || p.name == n;
        if (!known) {
          std::string list;
          for (const auto& p : kernel->params) list += (list.empty() ? "" : ", ") + p.name;
          throw InputError(SourcePos{"--param " + n},
                           "kernel " + kernel->name + " has no parameter \"" + n + "\"; its parameters are: " + list);
        }
      }
    } else {
      std::map<std::string, int64_t> first;
      for (const auto& n : names) first[n] = axes.front().values.front();
      wl::Workload::load_file(o->workload, first);  // names unknown to the workload are refused here
    }
    auto points = sweep_points(axes);
    gpu::SamplingPolicy sampling;
    sampling.exact = o->exact;
    auto simulate = [&](const ir::ParamValues& p) -> std::string {
      auto hw = thread_config(*o);
      if (kernel) {
        auto program = load_program(o->kernel, p, hw.get(), nullptr, kernel);
        gpu::GpuModel model(*hw);
        model.add_source(kernel);
        model.set_sampling(sampling);
        gpu::LaunchHistory history{gpu::parse_l2_start(o->l2_start)};
        auto r = gpu::run_after_history(model, *kernel, *program, history, gpu::config_l2_bytes(*hw)).result;
        return param_cells(p, names) + row_figures(r.kernel, r.cycles, r.time_us, r.whole_waves(), r.last_wave_fill(),
                                                   double(r.flops), r.dram_read_bytes, r.dram_write_bytes,
                                                   r.l2_hit_rate, r.sampling.estimated_error_pct,
                                                   r.sampling.fraction_simulated);
      }
      std::map<std::string, int64_t> wp(p.begin(), p.end());
      auto wl = wl::Workload::load_file(o->workload, wp);
      analytic::WorkloadRunOptions opt;
      opt.exact = o->exact;
      auto r = analytic::run_workload(*hw, wl, opt);
      uint64_t rd = 0, wr = 0, flops = 0;
      double err = 0, frac_num = 0, frac_den = 0;
      for (const auto& kr : r.kernels) {
        rd += kr.dram_read_bytes, wr += kr.dram_write_bytes, flops += kr.flops;
        err += kr.estimated_error_pct * kr.time_us;
        frac_num += kr.fraction_simulated * kr.time_us, frac_den += kr.time_us;
      }
      return param_cells(p, names) + row_figures(wl.name(), 0, r.total_us, 0, 0, double(flops), rd, wr, 0,
                                                 r.total_us > 0 ? err / r.total_us : 0,
                                                 frac_den > 0 ? frac_num / frac_den : 1.0);
    };
    Progress progress(!o->no_progress && ::isatty(2) && mpi.rank == 0);
    auto rows = run_points(points, shard, o->threads, simulate,
                           [&](uint64_t d, uint64_t t) { progress(d * shard.count, t * shard.count); });
    std::string body;
    for (const auto& r : rows) body += r.line;
    if (mpi.size > 1) {
      std::string all = mpi_gather_rows(mpi, rows, points.size());
      if (mpi.rank == 0) write_output(o->csv, sweep_header(names) + all);
      return 0;
    }
    std::string head = shard.count > 1 ? shard_comment(shard, points.size()) : "";
    write_output(o->csv, head + sweep_header(names) + body);
    if (!o->plot.empty()) {
      std::string what = o->kernel.empty() ? o->workload : o->kernel;
      what = what.substr(what.find_last_of('/') + 1);
      std::string machine = hw0->find("name") ? hw0->at("name").scalar() : o->hw;
      write_sweep_plot(o->plot, axes, names, rows, o->plot_y, "gtsim sweep: " + what + " on " + machine);
    }
    if (!html->empty()) {
      std::string what = o->kernel.empty() ? o->workload : o->kernel;
      what = what.substr(what.find_last_of('/') + 1);
      const std::string title =
          "gtsim sweep: " + what + " on " + (hw0->find("name") ? hw0->at("name").scalar() : o->hw);
      // a curve has one x: drawn when at most one --param varies (sweep_plot_axis)
      bool curve = std::count_if(axes.begin(), axes.end(), [](const SweepAxis& a) { return a.values.size() > 1; }) <= 1;
      std::string svg = curve ? svg_from([&](const std::string& image) {
        write_sweep_plot(image, axes, names, rows, o->plot_y, title);
      })
                              : std::string();
      write_html(*html, sweep_html(title, sweep_header(names) + body, svg, resolved_config_text(*hw0, o->hw)));
    }
    return 0;
  };
}

Runner add_merge(CLI::App& app) {
  struct Opts {
    std::vector<std::string> shards;
    std::string csv = "-";
  };
  auto o = std::make_shared<Opts>();
  app.add_option("shards", o->shards, "shard files written by gtsim sweep --shard I/N")->required();
  app.add_option("--csv", o->csv, "write the merged CSV to PATH ('-' = stdout)");
  return [o]() {
    check_output_path(o->csv);
    write_output(o->csv, merge_shards(o->shards));
    return 0;
  };
}

}  // namespace gtsim::cli
