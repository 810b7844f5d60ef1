#include "validation/fidelity.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "kernels_ir/ast.hpp"
#include "kernels_ir/counts.hpp"
#include "kernels_ir/exec/program_impl.hpp"
#include "kernels_ir/parser.hpp"
#include "sim/config.hpp"
#include "validation/simrun.hpp"

namespace gtsim::validation {

std::string twin_kernel_name(const std::string& mangled) {
  auto at = mangled.find("twins");
  if (at == std::string::npos) return "";
  size_t i = at + 5, len = 0;
  while (i < mangled.size() && std::isdigit(static_cast<unsigned char>(mangled[i])))
    len = len * 10 + size_t(mangled[i++] - '0');
  return len && i + len <= mangled.size() ? mangled.substr(i, len) : "";
}

std::string ir_kernel_for_twin(const std::string& twin_kernel) {
  if (twin_kernel == "flash_attn_fwd") return "flash_attention_fwd";
  return twin_kernel;
}

std::vector<std::string> ir_kernels_for_twin_function(const std::string& mangled) {
  std::vector<std::string> out = {ir_kernel_for_twin(twin_kernel_name(mangled))};
  // gemm_tiled<8> is also naive attention's batched P V launch (grid z = heads): attn_pv_gemm.kir
  if (mangled.find("gemm_tiledILi8ELb0ELb0E") != std::string::npos) out.push_back("attn_pv_gemm");
  return out;
}

std::string TwinCheck::failure() const {
  if (sass_checked && !sass_ok) return "twin fails the SASS fidelity check";
  if (ir_ctas_per_sm > 0 && !occupancy_equal)
    return "twin's occupancy differs from the IR's (" + std::to_string(twin_ctas_per_sm) + " vs " +
           std::to_string(ir_ctas_per_sm) + " CTAs/SM: registers " + std::to_string(twin_regs) + " / " +
           std::to_string(ir_regs) + ", shared " + std::to_string(twin_smem) + " / " + std::to_string(ir_smem) + " B)";
  return "";
}

std::vector<PtxasEntry> parse_ptxas(const std::string& text) {
  std::vector<PtxasEntry> out;
  std::istringstream in(text);
  std::string line, current;
  static const std::regex fn(R"(Function properties for (\S+))"), used(R"(Used (\d+) registers(.*))"),
      smem(R"((\d+) bytes smem)");
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, fn))
      current = m[1];
    else if (std::regex_search(line, m, used) && !current.empty()) {
      PtxasEntry e;
      e.function = current;
      e.kernel = twin_kernel_name(current);
      e.regs = std::stoi(m[1]);
      std::string rest = m[2];
      std::smatch s;
      if (std::regex_search(rest, s, smem)) e.smem = std::stoi(s[1]);
      out.push_back(e);
      current.clear();
    }
  }
  return out;
}

std::string read_gz(const std::string& path) {
  if (!std::filesystem::exists(path)) return "";
  std::string cmd = "gzip -dc '" + path + "' 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "";
  std::string out;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

std::string run_ptxas(const std::string& nvcc, const std::string& cuda_dir) {
  namespace fs = std::filesystem;
  if (nvcc.empty() || !fs::is_directory(cuda_dir)) return "";
  std::vector<fs::path> srcs;
  for (const auto& e : fs::directory_iterator(cuda_dir))
    if (e.path().extension() == ".cu") srcs.push_back(e.path());
  std::sort(srcs.begin(), srcs.end());
  // Device code only (-cubin: no host compilation; the registers and shared memory are the same),
  // two files at a time.
  std::vector<std::string> outs(srcs.size());
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    for (size_t i = next++; i < srcs.size(); i = next++) {
      std::string cubin = (fs::temp_directory_path() /
                           ("gtsim_ptxas_" + std::to_string(::getpid()) + "_" + std::to_string(i) + ".cubin"))
                              .string();
      std::string cmd = "'" + nvcc + "' -O3 -std=c++17 -arch=sm_90 -Xptxas -v -cubin '" + srcs[i].string() + "' -o '" +
                        cubin + "' 2>&1";
      FILE* p = popen(cmd.c_str(), "r");
      if (!p) continue;
      char buf[4096];
      size_t n;
      std::string out = "== " + srcs[i].filename().string() + "\n";
      while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
      pclose(p);
      std::error_code ec;
      fs::remove(cubin, ec);
      outs[i] = out;
    }
  };
  std::thread t(worker);
  worker();
  t.join();
  std::string all;
  for (const auto& o : outs) all += o;
  return all;
}

std::vector<std::string> FidelityReport::failed_kernels() const {
  std::set<std::string> s;
  for (const auto& t : twins)
    if (t.fails()) s.insert(t.kernel);
  return {s.begin(), s.end()};
}

const TwinCheck* FidelityReport::find(const std::string& batch, const std::string& function_part,
                                      const std::string& ir_kernel) const {
  for (const auto& t : twins)
    if (t.batch == batch && t.function.find(function_part) != std::string::npos &&
        (ir_kernel.empty() || t.kernel == ir_kernel))
      return &t;
  return nullptr;
}

nlohmann::json FidelityReport::to_json() const {
  nlohmann::json j;
  j["ptxas_source"] = ptxas_source;
  j["twins"] = nlohmann::json::array();
  for (const auto& t : twins)
    j["twins"].push_back({{"batch", t.batch},
                          {"kernel", t.kernel},
                          {"function", t.function},
                          {"dynamic_smem", t.dynamic_smem},
                          {"excluded", t.fails()},
                          {"failure", t.failure()},
                          {"ir_regs", t.ir_regs},
                          {"twin_regs", t.twin_regs},
                          {"ir_smem", t.ir_smem},
                          {"twin_smem", t.twin_smem},
                          {"regs_equal", t.regs_equal},
                          {"smem_equal", t.smem_equal},
                          {"occupancy_equal", t.occupancy_equal},
                          {"ir_ctas_per_sm", t.ir_ctas_per_sm},
                          {"twin_ctas_per_sm", t.twin_ctas_per_sm},
                          {"sass_checked", t.sass_checked},
                          {"sass_ok", t.sass_ok},
                          {"sass_worst_pct", t.sass_worst * 100},
                          {"sass", t.sass_detail},
                          {"note", t.note}});
  j["excluded_kernels"] = failed_kernels();
  j["notes"] = notes;
  return j;
}

namespace {
// CTAs per SM from registers, shared memory, threads and CTA slots (the occupancy calculator's rules).
int ctas_per_sm(const ConfigNode& hw, int regs, int smem, int threads) {
  const ConfigNode& sm = hw.at("sm");
  int max_threads = sm.param<int>("max_threads").get(), max_ctas = sm.param<int>("max_ctas").get();
  int regfile = sm.param<int>("registers").get(), unit = sm.param<int>("reg_alloc_unit").or_default(256);
  int warps = (threads + 31) / 32;
  int per_warp = ((std::max(regs, 1) * 32 + unit - 1) / unit) * unit;
  int by_regs = regfile / std::max(1, per_warp * warps);
  int by_threads = max_threads / std::max(1, threads);
  int smem_max = sm.at("shared").param<int>("max_per_cta_bytes").get() + 1024;
  int by_smem = smem > 0 ? smem_max / (smem + 1024) : max_ctas;
  return std::max(0, std::min({by_regs, by_threads, max_ctas, by_smem}));
}

ir::ParamValues cheap_params(const std::string& k, const std::string& fn) {
  if (k == "mma_throughput") {
    int dt = 1;
    auto at = fn.find("ILi");
    if (at != std::string::npos) dt = fn[at + 3] - '0';
    return {{"dtype", dt}, {"iters", 2}};
  }
  if (k == "fixed_work") return {{"ctas", 1}, {"work", 8}};
  if (k == "divergence") return {{"ways", 2}, {"work", 8}};
  if (k == "bank_conflicts") return {{"iters", 16}};
  if (k == "stream_copy") return {{"n", 4096}};
  if (k == "strided_copy") return {{"n", 2048}, {"stride", 2}};
  if (k == "pointer_chase") return {{"footprint_bytes", 4096}};
  // application kernels: a small problem (registers, shared memory and the loop body do not depend on it)
  auto tmpl = [&](const char* tag, int64_t def) -> int64_t {  // the first template integer: "ILi8E" -> 8
    auto at = fn.find(tag);
    if (at == std::string::npos) return def;
    return std::atoll(fn.c_str() + at + std::strlen(tag));
  };
  if (k == "ffma_outer") return {{"mode", tmpl("ILi", 2)}, {"iters", 4}, {"ctas", 1}};
  if (k == "l2_read") return {{"ctas", 1}, {"threads", 256}, {"iters", 8}};
  if (k == "op_latency") {  // op_latency<OP, CHAINS>
    int64_t op = tmpl("ILi", 0), chains = 1;
    auto at = fn.find("ELi", fn.find("ILi"));
    if (at != std::string::npos) chains = std::atoll(fn.c_str() + at + 3);
    return {{"op", op}, {"iters", 8}, {"chains", chains}, {"grid", 1}, {"block", chains == 1 ? 32 : 256}};
  }
  if (k == "gemm_tiled") {  // VEC = lowbit(K, N): 256 + VEC gives the twin's instantiation
    int64_t v = tmpl("ILi", 8), d = 256 + (v < 8 ? v : 0);
    return {{"M", 256}, {"N", d}, {"K", d}};
  }
  if (k == "gemm_persistent") {
    int64_t v = tmpl("ILi", 8), d = 256 + (v < 8 ? v : 0);
    // one tile per CTA (GRID = the tile count), so that the IR's main loop is the k-loop, as the twin's
    return {{"M", 256}, {"N", d}, {"K", d}, {"VEC_A", v}, {"VEC_B", v}, {"GRID", 2 * ((d + 127) / 128)}};
  }
  if (k == "gemm_fp32") {
    int64_t v = tmpl("ILi", 4), d = 256 + (v < 4 ? v : 0);
    return {{"M", 256}, {"N", d}, {"K", d}};
  }
  if (k.rfind("elementwise_", 0) == 0) return {{"n", 4096}};
  if (k == "softmax_rows")
    return {{"rows", 2}, {"T", tmpl("ILi", 4) * 1024}, {"OUT_BF16", fn.find("bfloat16") != std::string::npos ? 1 : 0}};
  if (k == "flash_attention_fwd") return {{"B", 1}, {"H", 1}, {"T", 256}, {"D", 64}};
  if (k == "mma_shared") return {{"variant", tmpl("ILi", 2)}, {"iters", 4}, {"SMS", 1}};
  if (k == "attn_qk_gemm") return {{"M", 256}, {"N", 256}, {"K", tmpl("ILi", 8) == 8 ? 256 : 257}, {"BH", 1}};
  if (k == "attn_pv_gemm") return {{"M", 256}, {"N", 64}, {"K", 256}, {"BH", 1}};
  return {};
}

// The IR's instruction classes as the compiled twin holds them: what the warps execute (per warp, averaged
// over the grid), plus the static instructions no warp executes (cold paths, e.g. sinf's Payne-Hanek
// branch, which the SASS holds once). `hot_loops`: loop bodies (code index) with an executed instruction.
struct IrClasses {
  std::map<std::string, double> per_class;
  std::set<uint32_t> hot_loops;
  uint64_t cold_insts = 0;
};
IrClasses ir_classes(const ir::Program& p) {
  const ir::Program::Impl& P = p.impl();
  std::vector<char> executed(P.insts.size(), 0);
  std::vector<uint64_t> dyn(size_t(ir::OpClass::kCount), 0);
  uint64_t warps = 0;
  ir::Dim3 g = p.grid();
  ir::DynInst d;
  for (uint32_t z = 0; z < g.z; ++z)
    for (uint32_t y = 0; y < g.y; ++y)
      for (uint32_t x = 0; x < g.x; ++x)
        for (uint32_t w = 0; w < p.warps_per_cta(); ++w) {
          ir::WarpExecutor ex(p, ir::Dim3{x, y, z}, w);
          ++warps;
          while (ex.next(d)) {
            dyn[size_t(d.op)]++;
            if (d.static_id < executed.size()) executed[d.static_id] = 1;
          }
        }
  IrClasses out;
  for (size_t c = 0; c < dyn.size(); ++c)
    if (dyn[c])
      out.per_class[std::string(ir::op_class_name(ir::OpClass(c)))] +=
          double(dyn[c]) / double(std::max<uint64_t>(1, warps));
  for (size_t i = 0; i < P.insts.size(); ++i) {
    if (executed[i]) {
      if (P.loop_of_inst[i] != ir::kNoExpr) out.hot_loops.insert(P.loop_of_inst[i]);
      continue;
    }
    out.per_class[std::string(ir::op_class_name(P.insts[i].op))] += 1;
    ++out.cold_insts;
  }
  return out;
}
// The IR loop that the compiled main loop is: the loop whose span (nested loops included) executes
// the most non-overhead instructions in warp 0 of CTA 0, counted per iteration of it (iterations: the
// executions of its most executed direct-body instruction). The compiler unrolls the IR's constant
// inner loops (`unroll` hints) into the SASS loop body, so its innermost SASS loop is compared with
// this whole per-iteration count, not with the innermost IR body.
// A loop nested in the main loop that the compiler keeps rolled (it has loop control: a trip count over
// its unroll factor, or a run-time one) is a loop of its own in the SASS, laid out once with `unroll`
// copies of its body: the per-iteration count takes its executed instructions `unroll` times (not
// trip times), and `rolled_inner` counts these loops (the SASS loop compared must nest as many).
struct IrLoop {
  bool found = false;
  int line = 0;
  double iterations = 0;
  int rolled_inner = 0;
  std::map<std::string, double> per_iteration;
};
void loop_spans(const std::vector<ir::Stmt>& body, std::vector<std::pair<int, int>>& spans, int& max_line) {
  for (const auto& st : body) {
    max_line = std::max(max_line, st.loc.line);
    max_line = std::max(max_line, st.instr.loc.line);
    if (st.kind == ir::StmtKind::kLoop) {
      int end = st.loc.line;
      std::vector<std::pair<int, int>> inner;
      loop_spans(st.body, inner, end);
      spans.push_back({st.loc.line, end});
      spans.insert(spans.end(), inner.begin(), inner.end());
      max_line = std::max(max_line, end);
    } else if (st.kind == ir::StmtKind::kIf) {
      loop_spans(st.body, spans, max_line);
      loop_spans(st.else_body, spans, max_line);
    }
  }
}
// Whether source `line` of loop `span` lies in a loop nested in it (not directly in its body).
bool in_inner_loop(int line, std::pair<int, int> span, const std::vector<std::pair<int, int>>& spans) {
  for (const auto& [m0, m1] : spans)
    if (std::make_pair(m0, m1) != span && m0 >= span.first && m1 <= span.second && line >= m0 && line <= m1)
      return true;
  return false;
}
// count_int: integer-pipe work counts as the loop's work (a SASS loop of FMNMX or F2FP chains)
IrLoop ir_main_loop(const ir::Program& p, const ir::Kernel& k, bool count_int) {
  IrLoop best;
  std::vector<std::pair<int, int>> spans;
  int max_line = 0;
  loop_spans(k.body, spans, max_line);
  const ir::Program::Impl& P = p.impl();
  std::vector<uint64_t> runs(P.insts.size(), 0);
  ir::WarpExecutor ex(p, ir::Dim3{0, 0, 0}, 0);
  ir::DynInst d;
  while (ex.next(d))
    if (d.static_id < runs.size()) runs[d.static_id]++;
  double best_work = 0;
  int best_l1 = 0;
  bool best_direct = true;
  for (const auto& [l0, l1] : spans) {
    std::map<std::string, double> cls;
    double work = 0, iters = 0, most = 0;
    for (size_t i = 0; i < P.insts.size(); ++i) {
      int line = P.infos[i].loc.line;
      if (line < l0 || line > l1 || !runs[i]) continue;
      std::string c(ir::op_class_name(P.insts[i].op));
      cls[c] += double(runs[i]);
      const bool g = gated_class(c, false) || (count_int && c == "int");
      if (g) work += double(runs[i]);
      bool nested = in_inner_loop(line, {l0, l1}, spans);
      if (!nested && g) iters = std::max(iters, double(runs[i]));
      most = std::max(most, double(runs[i]));
    }
    // a loop whose work is all in inner loops (loads ahead in one, their uses in the next; its own
    // body only loop control, which a runtime unroll runs once per group): counted per execution of
    // its most executed instruction (the check compares class ratios; the unroll
    // factor scales them to the SASS loop)
    bool direct = iters > 0;
    if (!direct) iters = most;
    if (iters < 2 || work <= best_work) continue;
    best_work = work;
    best.found = true;
    best.line = l0;
    best_l1 = l1;
    best_direct = direct;
    best.iterations = iters;
    best.per_iteration.clear();
    for (const auto& [c, v] : cls) best.per_iteration[c] = v / iters;
  }
  if (!best.found || !best_direct) return best;
  // rolled loops nested in the main loop (outermost ones only: a rolled loop inside another is its copy)
  std::map<int, uint32_t> rolled, groups_of;  // loop line -> unroll, its control's iadd (once per group)
  for (const auto& lc : P.loop_ctl)
    rolled[P.infos[lc.iadd].loc.line] = lc.unroll, groups_of[P.infos[lc.iadd].loc.line] = lc.iadd;
  std::vector<std::pair<std::pair<int, int>, uint32_t>> inner;  // span, unroll
  for (const auto& [m0, m1] : spans) {
    if (m0 <= best.line || m1 > best_l1 || !rolled.count(m0)) continue;
    bool outermost = true;
    for (const auto& [o0, o1] : spans)
      if (o0 > best.line && o0 < m0 && o1 >= m1 && rolled.count(o0)) outermost = false;
    if (outermost) inner.push_back({{m0, m1}, rolled.at(m0)});
  }
  auto rolled_unroll = [&](size_t i) -> uint32_t {  // 0: not in a nested rolled loop
    for (const auto& [sp, u] : inner)
      if (P.infos[i].loc.line >= sp.first && P.infos[i].loc.line <= sp.second) return u;
    return 0;
  };
  std::map<std::string, double> rolled_counts;
  for (const auto& [span, u] : inner) {
    const auto sp = span;  // a lambda may not capture a structured binding before C++20's clang 16
    auto in_loop = [&](size_t i) { return P.infos[i].loc.line >= sp.first && P.infos[i].loc.line <= sp.second; };
    // its iterations: the executions of its most executed direct-body instruction (its own control,
    // on the loop's line, runs once per group)
    double iters = 0;
    for (size_t i = 0; i < P.insts.size(); ++i) {
      int line = P.infos[i].loc.line;
      if (!runs[i] || !in_loop(i) || line == sp.first) continue;
      if (!in_inner_loop(line, sp, spans)) iters = std::max(iters, double(runs[i]));
    }
    if (iters <= 0)  // a body all in inner (unrolled) loops: groups x unroll
      iters = double(runs[groups_of.at(sp.first)]) * double(u);
    if (iters <= 0) continue;  // never executed: not in the compiled loop's hot path either
    ++best.rolled_inner;
    for (size_t i = 0; i < P.insts.size(); ++i)
      if (runs[i] && in_loop(i)) {
        // laid out once: `unroll` copies of an iteration's body; its control once
        bool control = P.infos[i].loc.line == sp.first;
        rolled_counts[std::string(ir::op_class_name(P.insts[i].op))] +=
            control ? 1.0 : double(runs[i]) / iters * double(u);
      }
  }
  // The compiled loop holds a conditional's code once (e.g. a refill skipped in the last iterations), so the
  // IR's count is its fullest iteration, not the average: the warp's stream is cut into iterations at the
  // first static instruction that runs once per iteration, and the one with the most gated work is taken.
  auto in_span = [&](size_t i) {
    return P.infos[i].loc.line >= best.line && P.infos[i].loc.line <= best_l1 && !rolled_unroll(i);
  };
  if (!inner.empty()) {  // the average iteration, the nested rolled loops laid out once
    best.per_iteration = rolled_counts;
    for (size_t i = 0; i < P.insts.size(); ++i)
      if (runs[i] && in_span(i))
        best.per_iteration[std::string(ir::op_class_name(P.insts[i].op))] += double(runs[i]) / best.iterations;
  }
  size_t anchor = P.insts.size();
  for (size_t i = 0; i < P.insts.size() && anchor == P.insts.size(); ++i)
    if (in_span(i) && double(runs[i]) == best.iterations) anchor = i;
  if (anchor == P.insts.size()) return best;
  std::map<std::string, double> cur, fullest;
  double cur_work = 0, fullest_work = -1;
  bool started = false;
  auto close = [&]() {
    if (started && cur_work > fullest_work) fullest = cur, fullest_work = cur_work;
    cur.clear();
    cur_work = 0;
  };
  ir::WarpExecutor ex2(p, ir::Dim3{0, 0, 0}, 0);
  while (ex2.next(d)) {
    if (d.static_id >= P.insts.size() || !in_span(d.static_id)) continue;
    if (d.static_id == anchor) close(), started = true;
    if (!started) continue;
    std::string c(ir::op_class_name(P.insts[d.static_id].op));
    cur[c] += 1;
    if (gated_class(c, false)) cur_work += 1;
  }
  close();
  if (fullest_work >= 0) best.per_iteration = fullest;
  for (const auto& [c, v] : rolled_counts) best.per_iteration[c] += v;
  return best;
}
}  // namespace

FidelityReport check_fidelity(const std::string& ptxas_text, const std::string& ptxas_source,
                              const std::string& sass_text, SimRunner& sim, const std::string& hw_path,
                              const std::vector<std::pair<std::string, int>>& dynamic_smem, const std::string& batch,
                              bool gate_loop_overhead) {
  FidelityReport r;
  r.ptxas_source = ptxas_source;
  auto hw = ConfigNode::load_file(hw_path);
  auto sass = parse_sass(sass_text);
  if (sass_text.empty()) r.notes.push_back("no SASS recorded: the main-loop histogram check was not run");
  // the last record of each function (ptxas texts of several builds may be concatenated)
  std::vector<PtxasEntry> entries;
  for (const auto& e : parse_ptxas(ptxas_text)) {
    auto it =
        std::find_if(entries.begin(), entries.end(), [&](const PtxasEntry& x) { return x.function == e.function; });
    if (it != entries.end())
      *it = e;
    else
      entries.push_back(e);
  }
  for (const auto& e : entries)
    for (const auto& irk : ir_kernels_for_twin_function(e.function)) {
      if (e.kernel.empty() || !sim.has_kernel(irk)) continue;
      if (e.function.find("ILb1E") != std::string::npos && e.kernel == "pointer_chase")
        continue;  // the clock64-timed chase
      TwinCheck t;
      t.batch = batch;
      t.kernel = irk;
      t.function = e.function;
      t.twin_regs = e.regs;
      t.twin_smem = e.smem;
      for (const auto& [part, bytes] : dynamic_smem)
        if (e.function.find(part) != std::string::npos) t.dynamic_smem = bytes;
      t.twin_smem += t.dynamic_smem;
      std::shared_ptr<const ir::Program> prog;
      try {
        prog = sim.program_for(irk, cheap_params(irk, e.function));
      } catch (const std::exception& ex) {
        t.note = std::string("IR kernel does not build: ") + ex.what();
        r.twins.push_back(t);
        continue;
      }
      t.ir_regs = int(prog->regs_per_thread());
      t.ir_smem = int(prog->shared_bytes());
      t.regs_equal = t.ir_regs == t.twin_regs;
      t.smem_equal = t.ir_smem == t.twin_smem;
      int threads = int(prog->threads_per_cta());
      t.ir_ctas_per_sm = ctas_per_sm(*hw, t.ir_regs, t.ir_smem, threads);
      t.twin_ctas_per_sm = ctas_per_sm(*hw, t.twin_regs, t.twin_smem, threads);
      t.occupancy_equal = t.ir_ctas_per_sm == t.twin_ctas_per_sm;
      for (const auto& f : sass) {
        if (f.function != e.function) continue;
        t.sass_checked = true;
        auto counts = ir::count_instructions(*prog);
        IrClasses whole = ir_classes(*prog);
        // the IR's main loop: the executed static body with the most non-integer work; none (or SASS
        // without a loop) -> the whole function against the IR's executed + cold instructions
        std::map<std::string, double> ir;
        const ir::InstructionCounts::Body* best = nullptr;
        uint64_t best_key = 0;
        const ir::Program::Impl& P = prog->impl();
        std::map<std::string, uint32_t> loop_code;  // body name -> loop code index
        for (size_t i = 0; i < P.insts.size(); ++i)
          if (P.loop_of_inst[i] != ir::kNoExpr)
            loop_code.emplace("loop at " + P.infos[i].loc.file + ":" + std::to_string(P.infos[i].loc.line),
                              P.loop_of_inst[i]);
        for (const auto& b : counts.static_bodies) {
          if (b.where == "kernel") continue;
          auto lc = loop_code.find(b.where);
          if (lc != loop_code.end() && !whole.hot_loops.count(lc->second)) continue;  // a cold loop (never executed)
          uint64_t key = 0;
          for (size_t c = 0; c < b.per_class.size(); ++c)
            if (gated_class(std::string(ir::op_class_name(ir::OpClass(c))), false)) key += b.per_class[c];
          if (key > best_key) best_key = key, best = &b;
        }
        // a SASS loop of integer-pipe work only (sass_parse.cpp): the IR loop that executes the most of
        // it, and the int class gated
        const bool int_work = f.int_loop;
        bool loop = f.has_loop && (best != nullptr || int_work);
        IrLoop main;
        if (loop) {
          try {
            main = ir_main_loop(*prog, *ir::parse_kernel_file(sim.kernel_path(irk)), int_work);
          } catch (const std::exception&) {
          }
        }
        if (loop && main.found) {
          ir = main.per_iteration;
        } else if (loop && best) {
          for (size_t c = 0; c < size_t(ir::OpClass::kCount); ++c)
            if (best->per_class[c] > 0)
              ir[std::string(ir::op_class_name(ir::OpClass(c)))] += double(best->per_class[c]);
        } else {
          ir = whole.per_class;
        }
        // the IR's main loop holds rolled loops (the twin's element-wise tile copies): compare the SASS
        // loop that nests as many, the one with the most gated work, whole
        const std::map<std::string, int>* lh = &f.loop_hist;
        if (loop && main.found && main.rolled_inner > 0) {
          const SassLoop* nest = nullptr;
          for (const auto& l : f.loops)
            if (l.direct_nested == main.rolled_inner && l.gated > (nest ? nest->gated : 0)) nest = &l;
          if (nest) lh = &nest->hist;
        }
        const auto& h = loop ? *lh : f.whole_hist;
        double ir_key = 0, sass_key = 0;
        std::set<std::string> classes;
        auto gated = [&](const std::string& k) { return gated_class(k, false) || (int_work && k == "int"); };
        for (const auto& [k, v] : ir)
          if (gated(k)) ir_key += v, classes.insert(k);
        for (const auto& [k, v] : h)
          if (gated(k)) sass_key += v, classes.insert(k);
        if (gate_loop_overhead) classes.insert({"int", "branch", "slot"});
        double unroll = loop && ir_key > 0 ? std::max(1.0, std::round(sass_key / ir_key)) : 1.0;
        double worst = 0;
        nlohmann::json d = nlohmann::json::object();
        for (const auto& k : classes) {
          double iv = ir.count(k) ? ir[k] * unroll : 0, sv = h.count(k) ? h.at(k) : 0;
          double rel = iv > 0 ? std::fabs(sv - iv) / iv : (sv > 0 ? sv / std::max(1.0, sass_key) : 0);
          // a class absent from the IR fails when it is over 10% of the loop's non-integer work
          worst = std::max(worst, rel);
          d[k] = {{"ir_x_unroll", iv}, {"sass", sv}, {"rel_diff_pct", rel * 100}};
        }
        // loop overhead (integer / address arithmetic and branches): listed, gated only when asked
        for (const char* k : {"int", "branch", "slot"})
          if (!gate_loop_overhead && !(int_work && std::string(k) == "int"))
            d[std::string(k) + " (not gated)"] = {{"ir_x_unroll", (ir.count(k) ? ir[k] : 0) * unroll},
                                                  {"sass", h.count(k) ? h.at(k) : 0}};
        if (loop && main.found) d["ir_loop_line"] = main.line;
        if (int_work) d["int_loop"] = "the loop's work is integer-pipe only: its int class is gated";
        d["scope"] =
            loop && main.found && main.rolled_inner > 0
                ? "the SASS loop that nests as many loops as the IR's main loop holds rolled loops (" +
                      std::to_string(main.rolled_inner) +
                      ") vs one iteration of that IR loop, each rolled loop counted as its unrolled body once"
            : loop && main.found ? "innermost SASS loop vs one iteration of the IR loop (nested loops included) "
                                   "that executes the most non-integer work"
            : loop               ? "innermost SASS loop vs the IR loop body with the most non-integer work"
                   : "whole function (without called subroutines) vs the IR's per-warp executed counts plus its "
                     "never-executed (cold) instructions";
        if (!loop && whole.cold_insts) d["ir_cold_instructions"] = whole.cold_insts;
        if (f.subroutine_insts) d["sass_subroutine_instructions_left_out"] = f.subroutine_insts;
        d["unroll"] = unroll;
        t.sass_detail = d;
        t.sass_worst = worst;
        t.sass_ok = worst <= 0.10 + 1e-9;
      }
      r.twins.push_back(t);
    }
  return r;
}

}  // namespace gtsim::validation
