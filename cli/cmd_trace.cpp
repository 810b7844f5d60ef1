// gtsim trace: one warp's dynamic instruction stream, with what each access touches.
#include <charconv>
#include <iostream>

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "kernels_ir/trace.hpp"
#include "sim/error.hpp"

namespace gtsim::cli {

namespace {
struct TraceOptions {
  std::string kernel, hw, cta = "0", warp = "0";
  std::vector<std::string> params, sets;
  size_t limit = 200;
};

// One index of --cta or --warp: a non-negative integer below `bound` (the grid's extent or the
// CTA's warps). The error names the option, the value and the valid range.
uint32_t parse_index(const std::string& option, const std::string& whole, const std::string& text, uint64_t bound,
                     const std::string& what) {
  SourcePos pos{"<" + option + " " + whole + ">"};
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  std::string range = "0.." + std::to_string(bound - 1) + " (" + what + ")";
  if (text.empty() || p != text.data() + text.size() || (ec != std::errc() && ec != std::errc::result_out_of_range))
    throw InputError(pos, option + " " + whole + ": \"" + text + "\" is not a non-negative integer; valid: " + range);
  if (ec == std::errc::result_out_of_range || v >= bound)
    throw InputError(pos, option + " " + whole + ": " + text + " is out of range; valid: " + range);
  return uint32_t(v);
}

ir::Dim3 parse_cta(const std::string& s, ir::Dim3 grid) {
  ir::Dim3 d{0, 0, 0};
  uint32_t* parts[3] = {&d.x, &d.y, &d.z};
  const uint32_t extent[3] = {grid.x, grid.y, grid.z};
  const char* axis[3] = {"x", "y", "z"};
  std::string grid_text = std::to_string(grid.x) + "," + std::to_string(grid.y) + "," + std::to_string(grid.z);
  size_t start = 0;
  for (int i = 0;; ++i) {
    size_t comma = s.find(',', start);
    if (i == 2 && comma != std::string::npos)
      throw InputError(SourcePos{"<--cta " + s + ">"}, "--cta " + s + ": expected X[,Y[,Z]], at most 3 indices");
    std::string p = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    *parts[i] = parse_index("--cta", s, p, extent[i], std::string(axis[i]) + " within the grid (" + grid_text + ")");
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
  app.add_option("--cta", o->cta, "CTA index X[,Y[,Z]] within the grid");
  app.add_option("--warp", o->warp, "warp index within the CTA");
  app.add_option("--hw", o->hw, "machine config: sector, line and bank geometry, and limits");
  app.add_option("--set", o->sets, "config override PATH=VALUE");
  app.add_option("--limit", o->limit, "print at most N dynamic instructions (the trace runs no further)");
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
    ir::Dim3 cta = parse_cta(o->cta, program->grid());
    uint32_t warp = parse_index("--warp", o->warp, o->warp, program->warps_per_cta(),
                                "the CTA's " + std::to_string(program->warps_per_cta()) + " warps");
    std::cout << ir::trace_warp(*program, cta, warp, o->limit, geom);
    return 0;
  };
}

}  // namespace gtsim::cli
