#include "kernels_ir/counts.hpp"

#include <map>

#include "kernels_ir/exec/program_impl.hpp"

namespace gtsim::ir {

InstructionCounts count_instructions(const Program& p) {
  const Program::Impl& P = p.impl();
  InstructionCounts c;
  std::map<uint32_t, size_t> body_of;  // loop code index -> body number
  c.static_bodies.push_back({"kernel", {}});
  for (size_t i = 0; i < P.insts.size(); ++i) {
    uint32_t loop = P.loop_of_inst[i];
    size_t b = 0;
    if (loop != kNoExpr) {
      auto [it, fresh] = body_of.emplace(loop, c.static_bodies.size());
      if (fresh)
        c.static_bodies.push_back({"loop at " + P.infos[i].loc.file + ":" + std::to_string(P.infos[i].loc.line), {}});
      b = it->second;
    }
    c.static_bodies[b].per_class[size_t(P.insts[i].op)]++;
  }
  for (const LoopCtl& lc : P.loop_ctl)
    for (uint32_t id : {lc.iadd, lc.setp, lc.bra}) {
      auto it = body_of.find(P.loop_of_inst[id]);
      if (it == body_of.end()) continue;
      InstructionCounts::Body& b = c.static_bodies[it->second];
      b.control[size_t(P.insts[id].op)]++;
      b.unroll = lc.unroll;
    }
  Dim3 g = p.grid();
  DynInst d;
  for (uint32_t z = 0; z < g.z; ++z)
    for (uint32_t y = 0; y < g.y; ++y)
      for (uint32_t x = 0; x < g.x; ++x)
        for (uint32_t w = 0; w < p.warps_per_cta(); ++w) {
          WarpExecutor ex(p, Dim3{x, y, z}, w);
          c.warps++;
          while (ex.next(d)) {
            c.dynamic[size_t(d.op)]++;
            c.dynamic_total++;
            c.flops += d.flops;
          }
        }
  return c;
}

nlohmann::json InstructionCounts::to_json() const {
  auto classes = [](const ClassCounts& cc) {
    nlohmann::json j = nlohmann::json::object();
    for (size_t i = 0; i < cc.size(); ++i)
      if (cc[i]) j[std::string(op_class_name(OpClass(i)))] = cc[i];
    return j;
  };
  nlohmann::json j;
  j["static"] = nlohmann::json::array();
  for (const auto& b : static_bodies) {
    nlohmann::json e = {{"where", b.where}, {"per_class", classes(b.per_class)}};
    if (b.unroll) e["loop_control"] = {{"per_class", classes(b.control)}, {"unroll", b.unroll}};
    j["static"].push_back(e);
  }
  j["dynamic"] = {{"per_class", classes(dynamic)}, {"total", dynamic_total}, {"flops", flops}, {"warps", warps}};
  return j;
}

}  // namespace gtsim::ir
