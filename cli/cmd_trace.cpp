// gtsim trace: one warp's dynamic instruction stream, with what each access touches.
#include <iostream>

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "kernels_ir/trace.hpp"
#include "sim/error.hpp"

namespace gtsim::cli {

namespace {
struct TraceOptions {
  std::string kernel, hw, cta = "0";
  std::vector<std::string> params, sets;
  uint32_t warp = 0;
  size_t limit = 200;
};

ir::Dim3 parse_cta(const std::string& s) {
  ir::Dim3 d{0, 0, 0};
  uint32_t* parts[3] = {&d.x, &d.y, &d.z};
  size_t start = 0;
  for (int i = 0; i < 3 && start <= s.size(); ++i) {
    size_t comma = s.find(',', start);
    std::string p = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    try {
      size_t used = 0;
      unsigned long v = std::stoul(p, &used);
      if (used != p.size()) throw std::invalid_argument(p);
      *parts[i] = uint32_t(v);
    } catch (const std::exception&) {
      throw InputError(SourcePos{"<--cta " + s + ">"}, "expected X[,Y[,Z]] non-negative integers");
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return d;
}
}  // namespace

Runner add_trace(CLI::App& app) {
  auto o = std::make_shared<TraceOptions>();
  app.add_option("--kernel", o->kernel, "kernel in the IR")->required();
  app.add_option("--param", o->params, "kernel parameter NAME=VALUE (repeatable)");
  app.add_option("--cta", o->cta, "CTA index X[,Y[,Z]]");
  app.add_option("--warp", o->warp, "warp index within the CTA");
  app.add_option("--hw", o->hw, "machine config: sector, line and bank geometry, and limits");
  app.add_option("--set", o->sets, "config override PATH=VALUE");
  app.add_option("--limit", o->limit, "print at most N dynamic instructions");
  return [o]() {
    std::shared_ptr<ConfigNode> hw;
    ir::TraceGeometry geom;
    if (!o->hw.empty()) {
      hw = load_hw(o->hw, o->sets);
      geom.sector_bytes = hw->at("l1").param<uint32_t>("sector_bytes").get();
      geom.line_bytes = hw->at("l1").param<uint32_t>("line_bytes").get();
      geom.banks = hw->at("sm").at("shared").param<uint32_t>("banks").get();
      geom.bank_bytes = hw->at("sm").at("shared").param<uint32_t>("bank_bytes").get();
    }
    auto program = load_program(o->kernel, parse_params(o->params), hw.get());
    ir::Dim3 cta = parse_cta(o->cta);
    ir::Dim3 grid = program->grid();
    if (cta.x >= grid.x || cta.y >= grid.y || cta.z >= grid.z)
      throw InputError(SourcePos{"<--cta " + o->cta + ">"}, "CTA outside the grid (" + std::to_string(grid.x) + "," +
                                                                std::to_string(grid.y) + "," + std::to_string(grid.z) +
                                                                ")");
    if (o->warp >= program->warps_per_cta())
      throw InputError(SourcePos{"<--warp>"}, "warp " + std::to_string(o->warp) + " outside the CTA's " +
                                                  std::to_string(program->warps_per_cta()) + " warps");
    std::cout << ir::trace_warp(*program, cta, o->warp, o->limit, geom);
    return 0;
  };
}

}  // namespace gtsim::cli
