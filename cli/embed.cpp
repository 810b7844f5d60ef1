// The gtsim app and its error handling, shared by main.cpp and the Python module.
#include "cli/embed.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <system_error>

#include "cli/cli_util.hpp"
#include "sim/error.hpp"
#include "sim/simulation.hpp"

namespace gtsim::cli {

std::unique_ptr<CliApp> make_cli_app() {
  auto cli = std::make_unique<CliApp>();
  CLI::App& app = cli->app;
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("gtsim ") + GTSIM_VERSION + " (" + git_revision() + ")");
  app.add_option("--log-level", cli->log_level, "trace|debug|info|warn|error|off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));

  auto reg = [&](const char* name, const char* desc, Runner (*add)(CLI::App&)) {
    CLI::App* sub = app.add_subcommand(name, desc);
    cli->runners[sub] = add(*sub);
  };
  reg("run", "simulate one kernel on one machine and report time, waves, bytes and where the time went", add_run);
  reg("check", "validate machine configs, kernels and workloads (exit 0 when all are good, 2 otherwise)", add_check);
  reg("trace", "print one warp's dynamic instructions with masks, addresses, sectors, lines and bank wavefronts",
      add_trace);
  reg("waves", "tiles, waves, tile efficiency and alignment of a GEMM shape, with padded alternatives", add_waves);
  reg("gemm",
      "pick a GEMM kernel (tile, schedule, split) as a library's heuristic would, say why, and simulate the pick",
      add_gemm);
  reg("workload", "run a workload's kernels in order: time and share per kernel, bytes, FLOPs, bound", add_workload);
  reg("compare", "the same workload on several machines (GPU and TPU configs) side by side", add_compare);
  reg("roofline", "attained ridge point per dtype from the model's own microbenchmarks, and each kernel's place (P2)",
      add_roofline);
  reg("calibrate", "fit a GPU config's calibrated parameters from measured microbenchmarks, through the model",
      add_calibrate);
  reg("sweep",
      "one kernel or workload over a grid of parameters on threads, shards (--shard I/N) or MPI ranks: a CSV "
      "row per point",
      add_sweep);
  reg("merge", "join the shard files of gtsim sweep --shard I/N into the CSV one sweep writes", add_merge);
  reg("validate",
      "compare the model with every measured point: development-set and first-shot accuracy per family, steps, twin "
      "fidelity",
      add_validate);
  return cli;
}

int run_parsed(CliApp& cli, std::ostream& err, ErrorKind* kind) {
  auto fail = [&](ErrorKind k) {
    if (kind) *kind = k;
    return 2;
  };
  if (kind) *kind = ErrorKind::kNone;
  spdlog::set_level(spdlog::level::from_str(cli.log_level));
  for (auto& [sub, run] : cli.runners) {
    if (!sub->parsed()) continue;
    try {
      return run();
    } catch (const InputError& e) {
      for (const auto& d : e.diagnostics()) err << d.str() << "\n";
      return fail(ErrorKind::kInput);
    } catch (const LimitError& e) {
      err << "gtsim " << sub->get_name() << ": " << e.what() << "\n";
      return fail(ErrorKind::kLimit);
    } catch (const SimulationError& e) {
      err << "gtsim " << sub->get_name() << ": simulation stopped: " << e.what() << "\n";
      return fail(ErrorKind::kSimulation);
    } catch (const std::exception& e) {
      err << "gtsim " << sub->get_name() << ": error: " << e.what() << "\n";
      return fail(ErrorKind::kOther);
    }
  }
  return fail(ErrorKind::kUsage);
}

namespace {

std::mutex g_command_mutex;  // one command at a time: log level, limits and std::cout/cerr are global

// Swaps a stream's buffer for a string's while in scope.
class Capture {
 public:
  explicit Capture(std::ostream& s) : stream_(s), old_(s.rdbuf(buf_.rdbuf())) {}
  ~Capture() { stream_.rdbuf(old_); }
  std::string text() const { return buf_.str(); }

 private:
  std::ostream& stream_;
  std::ostringstream buf_;
  std::streambuf* old_;
};

bool has_option(const std::vector<std::string>& argv, const std::string& opt) {
  return std::any_of(argv.begin(), argv.end(),
                     [&](const std::string& a) { return a == opt || a.rfind(opt + "=", 0) == 0; });
}

std::string temp_path(const char* ext) {
  static std::atomic<unsigned> counter{0};
  std::error_code ec;
  auto dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  return (dir / ("gtsim-py-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ext)).string();
}

}  // namespace

CommandResult run_command(const std::vector<std::string>& argv_in) {
  std::lock_guard<std::mutex> lock(g_command_mutex);
  CommandResult res;
  std::vector<std::string> argv = argv_in;
  const std::string sub = argv.empty() ? "" : argv.front();
  std::string out_path;
  // Where the subcommand's machine-readable output goes (the caller's own --json/--csv wins).
  if (sub == "sweep" || sub == "merge") {
    if (!has_option(argv, "--csv")) argv.insert(argv.end(), {"--csv", out_path = temp_path(".csv")});
    if (sub == "sweep" && !has_option(argv, "--no-progress")) argv.push_back("--no-progress");
  } else if (sub == "run" || sub == "waves" || sub == "gemm" || sub == "workload" || sub == "compare" ||
             sub == "roofline" || sub == "calibrate" || sub == "validate") {
    if (!has_option(argv, "--json")) argv.insert(argv.end(), {"--json", out_path = temp_path(".json")});
  }

  std::ostringstream err;
  {
    Capture out_cap(std::cout), err_cap(std::cerr);
    auto cli = make_cli_app();
    std::vector<const char*> cargv{"gtsim"};
    for (const auto& a : argv) cargv.push_back(a.c_str());
    bool parsed = true;
    try {
      cli->app.parse(int(cargv.size()), const_cast<char**>(cargv.data()));
    } catch (const CLI::ParseError& e) {
      std::ostringstream usage;
      res.rc = cli->app.exit(e, usage, err) == 0 ? 0 : 2;
      res.output = usage.str();
      if (res.rc != 0) res.kind = ErrorKind::kUsage;
      parsed = false;
    }
    if (parsed) res.rc = run_parsed(*cli, err, &res.kind);
    res.output += out_cap.text();
    res.error = err_cap.text() + err.str();
  }
  if (!out_path.empty()) {
    std::ifstream in(out_path, std::ios::binary);
    if (in) {
      std::ostringstream ss;
      ss << in.rdbuf();
      if (res.rc == 0) res.json = ss.str();
    }
    std::error_code ec;
    std::filesystem::remove(out_path, ec);
  }
  if (res.rc != 0 && res.kind == ErrorKind::kNone) res.kind = ErrorKind::kOther;  // a runner's own exit 2
  return res;
}

int run_command(const std::vector<std::string>& argv, std::string& json_out, std::string& error) {
  CommandResult r = run_command(argv);
  json_out = std::move(r.json);
  error = std::move(r.error);
  return r.rc;
}

}  // namespace gtsim::cli
