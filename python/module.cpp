// gtsim_core: the C++ side of the Python module. It runs the command line's subcommands in this
// process (cli/embed.hpp: the same code, hence the same numbers, as the gtsim executable) and loads
// configs and kernels. Errors come back as (kind, message) for gtsim/__init__.py to raise; the GIL is
// released while C++ runs.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <exception>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_util.hpp"
#include "cli/embed.hpp"
#include "kernels_ir/ast.hpp"
#include "kernels_ir/exec/dyn_inst.hpp"
#include "kernels_ir/exec/program.hpp"
#include "kernels_ir/parser.hpp"
#include "kernels_ir/printer.hpp"
#include "sim/data_dir.hpp"
#include "sim/error.hpp"
#include "sim/simulation.hpp"

namespace py = pybind11;
using namespace gtsim;

namespace {

const char* kind_name(cli::ErrorKind k) {
  switch (k) {
    case cli::ErrorKind::kNone:
      return "";
    case cli::ErrorKind::kUsage:
      return "usage";
    case cli::ErrorKind::kInput:
      return "input";
    case cli::ErrorKind::kLimit:
      return "limit";
    case cli::ErrorKind::kSimulation:
      return "simulation";
    case cli::ErrorKind::kOther:
      return "error";
  }
  return "error";
}

// (kind, message, payload): kind "" on success, payload the JSON text.
using Outcome = std::tuple<std::string, std::string, std::string>;

// Runs `fn` (returning JSON text) without the GIL, with the command line's error handling.
Outcome guarded(const std::function<std::string()>& fn) {
  py::gil_scoped_release release;
  try {
    return {"", "", fn()};
  } catch (const InputError& e) {
    std::string msg;
    for (const auto& d : e.diagnostics()) msg += d.str() + "\n";
    return {"input", msg, ""};
  } catch (const LimitError& e) {
    return {"limit", e.what(), ""};
  } catch (const SimulationError& e) {
    return {"simulation", std::string("simulation stopped: ") + e.what(), ""};
  } catch (const std::exception& e) {
    return {"error", e.what(), ""};
  }
}

nlohmann::json dim3(const ir::Dim3& d) { return nlohmann::json::array({d.x, d.y, d.z}); }

std::string kernel_json(const std::string& path, const std::map<std::string, int64_t>& params,
                        const std::string& hw_path, const std::vector<std::string>& sets) {
  auto kernel = std::shared_ptr<const ir::Kernel>(ir::parse_kernel_file(path));
  nlohmann::json j;
  j["name"] = kernel->name;
  j["file"] = path;
  j["tpu"] = kernel->tpu;
  nlohmann::json ps = nlohmann::json::object();
  bool all_bound = true;
  for (const auto& p : kernel->params) {
    ps[p.name] = p.def ? nlohmann::json(ir::print_expr(*p.def)) : nlohmann::json(nullptr);
    if (!p.def && !params.count(p.name)) all_bound = false;
  }
  j["param_defaults"] = ps;
  auto exprs = [](const std::vector<ir::Expr>& es) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& e : es) a.push_back(ir::print_expr(e));
    return a;
  };
  j["grid_expr"] = exprs(kernel->grid);
  j["block_expr"] = exprs(kernel->block);
  nlohmann::json bufs = nlohmann::json::array();
  for (const auto& b : kernel->buffers)
    bufs.push_back({{"name", b.name}, {"dtype", std::string(ir::dtype_name(b.dtype))}, {"shape", exprs(b.shape)}});
  j["buffer_decls"] = bufs;
  j["launch"] = nullptr;
  if (!all_bound) return j.dump();
  // Every parameter has a value: bind it (against the machine's limits when hw is given).
  std::shared_ptr<ConfigNode> hw;
  if (!hw_path.empty()) hw = cli::load_hw(hw_path, sets);
  ir::ParamValues values(params.begin(), params.end());
  auto program = cli::load_program(path, values, hw.get(), nullptr, kernel);
  nlohmann::json launch;
  launch["params"] = program->params();
  launch["grid"] = dim3(program->grid());
  launch["block"] = dim3(program->block());
  launch["ctas"] = program->grid().count();
  launch["threads_per_cta"] = program->threads_per_cta();
  launch["warps_per_cta"] = program->warps_per_cta();
  launch["shared_bytes"] = program->shared_bytes();
  launch["regs_per_thread"] = program->regs_per_thread();
  launch["uses_tensor_cores"] = program->uses_tensor_cores();
  nlohmann::json lb = nlohmann::json::array();
  for (const auto& b : program->buffers())
    lb.push_back({{"name", b.name},
                  {"dtype", std::string(ir::dtype_name(b.dtype))},
                  {"bytes", b.bytes},
                  {"base", b.base},
                  {"read", b.read},
                  {"written", b.written}});
  launch["buffers"] = lb;
  j["launch"] = launch;
  return j.dump();
}

}  // namespace

PYBIND11_MODULE(gtsim_core, m) {
  m.doc() = "gtsim's C++ core (use the gtsim package, not this module)";
  m.attr("version") = GTSIM_VERSION;
  m.attr("git_revision") = GTSIM_GIT_REV;

  m.def(
      "run_command",
      [](const std::vector<std::string>& argv) {
        cli::CommandResult r;
        {
          py::gil_scoped_release release;
          r = cli::run_command(argv);
        }
        return py::make_tuple(r.rc, kind_name(r.kind), r.error, r.json, r.output);
      },
      py::arg("argv"),
      "Runs `gtsim ARGV...` in this process: (exit code, error kind, stderr text, --json/--csv text, stdout text).");

  m.def(
      "load_config",
      [](const std::string& path, const std::vector<std::string>& sets) {
        return guarded([&] { return cli::load_hw(path, sets)->to_json().dump(); });
      },
      py::arg("path"), py::arg("sets") = std::vector<std::string>{},
      "The resolved machine config as JSON text: (error kind, message, json).");

  m.def(
      "load_kernel",
      [](const std::string& path, const std::map<std::string, int64_t>& params, const std::string& hw,
         const std::vector<std::string>& sets) { return guarded([&] { return kernel_json(path, params, hw, sets); }); },
      py::arg("path"), py::arg("params") = std::map<std::string, int64_t>{}, py::arg("hw") = "",
      py::arg("sets") = std::vector<std::string>{}, "A kernel's name, parameters and launch shape as JSON text.");

  m.def(
      "data_dir", [] { return guarded([] { return nlohmann::json(data_dir()).dump(); }); },
      "gtsim's data folder (kernels_ir/lib, hw_configs) as JSON text: (error kind, message, json).");
}
