// The compiled twins' SASS (`cuobjdump --dump-sass`): opcode classes in the IR's names, and per
// function the whole-body histogram and the loop tree (regions, nesting, the default main loop).
#include <algorithm>
#include <map>
#include <regex>
#include <sstream>

#include "validation/fidelity.hpp"

namespace gtsim::validation {

std::string sass_class(const std::string& op) {
  std::string base = op.substr(0, op.find('.'));
  static const std::map<std::string, std::string> m = {{"FFMA", "fp32"},
                                                       {"FADD", "fp32"},
                                                       {"FMUL", "fp32"},
                                                       {"FSWZADD", "fp32"},
                                                       {"HFMA2", "fp16"},
                                                       {"HADD2", "fp16"},
                                                       {"HMUL2", "fp16"},
                                                       {"DFMA", "fp64"},
                                                       {"DADD", "fp64"},
                                                       {"DMUL", "fp64"},
                                                       {"MUFU", "sfu"},
                                                       {"SHFL", "shuffle"},
                                                       {"HMMA", "mma"},
                                                       {"IMMA", "mma"},
                                                       {"QMMA", "mma"},
                                                       {"HGMMA", "wgmma"},
                                                       {"LDG", "ld_global"},
                                                       {"STG", "st_global"},
                                                       {"RED", "atom_global"},
                                                       {"ATOMG", "atom_global"},
                                                       {"ATOM", "atom_global"},
                                                       {"LDS", "ld_shared"},
                                                       {"STS", "st_shared"},
                                                       {"ATOMS", "atom_shared"},
                                                       {"LDSM", "ldmatrix"},
                                                       {"STSM", "stmatrix"},
                                                       {"LDGSTS", "cp_async"},
                                                       {"LDGDEPBAR", "cp_async_commit"},
                                                       {"DEPBAR", "cp_async_wait"},
                                                       {"BAR", "bar_sync"},
                                                       {"BRA", "branch"},
                                                       {"EXIT", "control"},
                                                       {"NOP", "slot"},
                                                       {"BSSY", "control"},
                                                       {"BSYNC", "control"},
                                                       {"WARPSYNC", "control"},
                                                       {"BPT", "control"},
                                                       {"RET", "control"},
                                                       {"CALL", "control"},
                                                       {"YIELD", "control"},
                                                       {"CCTL", "control"},
                                                       {"ERRBAR", "control"},
                                                       {"MEMBAR", "control"},
                                                       {"LDC", "slot"}};
  auto it = m.find(base);
  if (it != m.end()) return it->second;
  // uniform-datapath ops (UMOV, ULEA, UIADD3, ULDC ...): an issue slot each, not per-thread work.
  // Everything else runs on the ALU or the integer path, FMNMX, FSETP and F2FP included (b26: FMNMX and
  // F2FP issue at 64 per SM per clock, the INT pipe's rate, not the FMA pipes' 128).
  if (!base.empty() && base[0] == 'U') return "slot";
  return "int";
}

bool gated_class(const std::string& cls, bool loop_overhead) {
  if (cls == "control" || cls == "exit") return false;
  if (cls == "int" || cls == "branch" || cls == "slot") return loop_overhead;
  return true;
}

std::vector<SassFunction> parse_sass(const std::string& text) {
  std::vector<SassFunction> out;
  struct Inst {
    long addr;
    std::string op;
    long target = -1;
  };
  std::vector<Inst> insts;
  std::string fname;
  auto flush = [&]() {
    if (fname.empty()) return;
    SassFunction f;
    f.function = fname;
    f.kernel = twin_kernel_name(fname);
    // called subroutines (placed after the body's EXIT): not part of the straight-line body
    long sub_start = -1;
    for (const auto& i : insts)
      if (i.op.rfind("CALL", 0) == 0 && i.target > i.addr && (sub_start < 0 || i.target < sub_start))
        sub_start = i.target;
    if (sub_start >= 0) {
      for (const auto& i : insts) f.subroutine_insts += i.addr >= sub_start;
      insts.erase(std::remove_if(insts.begin(), insts.end(), [&](const Inst& i) { return i.addr >= sub_start; }),
                  insts.end());
    }
    for (const auto& i : insts)
      if (sass_class(i.op) != "control") f.whole_hist[sass_class(i.op)]++;
    // loops: backward branches (a branch to itself is the trap after the last EXIT that ends every
    // function, not a loop). A loop nests in another when its region lies inside the other's.
    for (const auto& b : insts)
      if (b.target >= 0 && b.target < b.addr && b.op.rfind("BRA", 0) == 0) {
        SassLoop l;
        l.lo = b.target, l.hi = b.addr;
        for (const auto& i : insts)
          if (i.addr >= l.lo && i.addr <= l.hi) {
            std::string c = sass_class(i.op);
            if (c != "control") l.hist[c]++;
            if (gated_class(c, false)) ++l.gated;
          }
        f.loops.push_back(l);
      }
    auto inside = [](const SassLoop& a, const SassLoop& b) {  // a nests in b
      return &a != &b && a.lo >= b.lo && a.hi <= b.hi && (a.lo != b.lo || a.hi != b.hi);
    };
    for (auto& l : f.loops)
      for (const auto& n : f.loops) {
        if (!inside(n, l)) continue;
        bool direct = true;
        for (const auto& m : f.loops)
          if (inside(n, m) && inside(m, l)) direct = false;
        l.direct_nested += direct;
      }
    // the default main loop: the innermost loop with the most gated work (a loop without gated work, a
    // spin or a copy of integers, is not the main loop)
    const SassLoop* best = nullptr;
    for (const auto& l : f.loops)
      if (l.direct_nested == 0 && l.gated > (best ? best->gated : 0)) best = &l;
    // none: a function whose loops hold only integer-pipe work (a chain of FMNMX or F2FP) takes the
    // innermost loop with the most of it, and the check then gates the int class
    if (!best)
      for (const auto& l : f.loops) {
        auto it = l.hist.find("int");
        int n = it == l.hist.end() ? 0 : it->second;
        if (l.direct_nested == 0 && n >= 16 && n > (best ? best->hist.at("int") : 0)) best = &l, f.int_loop = true;
      }
    if (best) {
      f.has_loop = true;
      f.loop_hist = best->hist;
    }
    out.push_back(std::move(f));
    insts.clear();
    fname.clear();
  };
  std::istringstream in(text);
  std::string line;
  static const std::regex fn(R"(Function : (\S+))"),
      ins(R"(/\*([0-9a-f]{4,})\*/\s+(@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);)"), tgt(R"(0x([0-9a-f]+))");
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, fn)) {
      flush();
      fname = m[1];
    } else if (!fname.empty() && std::regex_search(line, m, ins)) {
      Inst i{std::stol(m[1], nullptr, 16), m[3]};
      // `@!PT`: predicated on constant false (ptxas pads with `@!PT LDS RZ, [RZ]`): it does nothing but
      // is issued, an issue slot like a NOP (Nsight Compute's executed count of it equals its loop's, b10)
      if (m[2].matched && m[2].str().rfind("@!PT", 0) == 0) i.op = "NOP";
      std::string rest = m[4];
      // HFMA2.MMA Rd, -RZ, RZ, imm, imm: the compiler's constant move on the MMA datapath, not fp16 work
      if (i.op == "HFMA2.MMA" && rest.find(", -RZ, RZ,") != std::string::npos) i.op = "MOV";
      std::smatch t;
      if ((i.op.rfind("BRA", 0) == 0 || i.op.rfind("CALL", 0) == 0) && std::regex_search(rest, t, tgt))
        i.target = std::stol(t[1], nullptr, 16);
      insts.push_back(i);
    }
  }
  flush();
  return out;
}

}  // namespace gtsim::validation
