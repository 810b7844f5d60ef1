#include "models/gpu/footprint.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <map>

#include "kernels_ir/exec/program_impl.hpp"
#include "models/mem/mem_specs.hpp"
#include "models/mem/sector_tags.hpp"
#include "sim/simulation.hpp"

namespace gtsim::gpu {

namespace {

// A cached line: its TagLine, its tag and its LRU stamp (models/mem/sector_tags.hpp).
constexpr double kBytesPerLine = double(sizeof(mem::TagLine) + 2 * sizeof(uint64_t));
// Per SM beside its L1 tags: stats, queues, MSHRs, sub-partitions (measured: ~100 KiB on the A100),
// and per warp slot the Sm's Warp record with its next DynInst.
constexpr double kBytesPerSm = 128.0 * 1024;
constexpr double kBytesPerWarpSlot = 1024;

std::string count_text(double v) {
  char b[32];
  if (v < 1e7)
    std::snprintf(b, sizeof b, "%.0f", v);
  else
    std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

void add_part(MemoryEstimate& e, const std::string& name, double bytes, const std::string& why) {
  e.bytes += bytes;
  e.parts += (e.parts.empty() ? "" : ", ") + name + " " + bytes_text(bytes) + " (" + why + ")";
}

}  // namespace

std::string bytes_text(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) bytes /= 1024, ++u;
  char b[48];
  if (u == 0)
    std::snprintf(b, sizeof b, "%.0f B", bytes);
  else
    std::snprintf(b, sizeof b, "%.3g %s", bytes, units[u]);
  return b;
}

MemoryEstimate machine_memory(const ConfigNode& root, const GpuSpecs& specs) {
  mem::MemSpecs m = mem::MemSpecs::parse(root);
  MemoryEstimate e;
  double sms = specs.sm.count;
  double l1_lines = double(m.l1.unified_bytes) / double(std::max(1u, m.l1.line_bytes));
  add_part(e, "L1 tags", sms * l1_lines * kBytesPerLine,
           count_text(sms) + " SMs x " + count_text(l1_lines) + " lines of l1.unified_kb");
  double l2_lines = double(m.l2.size_bytes) / double(std::max(1u, m.l2.line_bytes));
  add_part(e, "L2 tags", l2_lines * kBytesPerLine, count_text(l2_lines) + " lines of l2.size_bytes");
  add_part(e, "SM state", sms * (kBytesPerSm + double(specs.sm.max_warps) * kBytesPerWarpSlot),
           count_text(sms) + " SMs x " + count_text(specs.sm.max_warps) + " warp slots");
  return e;
}

MemoryEstimate launch_memory(const ir::Program& program, const GpuSpecs& specs, uint32_t ctas_per_sm) {
  const ir::Program::Impl& p = program.impl();
  MemoryEstimate e;
  ir::Dim3 g = program.grid();
  double ctas = double(g.x) * double(g.y) * double(g.z);
  double resident = std::min(ctas, double(ctas_per_sm) * double(specs.sm.count)) * program.warps_per_cta();
  // A warp's executor holds every slot (registers, lets, loop variables) per lane, its loop runs and
  // SIMT stack; the SM keeps a ready cycle and a flag per register.
  double per_warp = double(p.slots.size()) * ir::kWarpSize * 8 + double(p.loop_ctl.size()) * 16 +
                    double(p.num_regs) * 9 + double(p.max_nest) * 64 + 2048;
  add_part(e, "warp state", resident * per_warp, count_text(resident) + " resident warps x " + bytes_text(per_warp));
  double chain = 0;
  for (const auto& init : p.inits)
    if (init && init->kind == ir::InitKind::kChase && init->stride > 0)
      chain += double(init->bytes / init->stride) * 2 * sizeof(uint32_t);
  if (chain > 0) add_part(e, "init chase chains", chain, "8 bytes per node");
  return e;
}

WorkEstimate estimate_work(const ir::Program& program, uint64_t budget_per_warp) {
  const ir::Program::Impl& p = program.impl();
  WorkEstimate w;
  ir::Dim3 g = program.grid();
  w.ctas = double(g.x) * double(g.y) * double(g.z);
  w.warps_per_cta = program.warps_per_cta();
  if (w.ctas == 0 || w.warps_per_cta == 0) return w;
  auto mid = [](uint32_t n) { return n / 2; };
  const ir::Dim3 ctas[3] = {{0, 0, 0}, {mid(g.x), mid(g.y), mid(g.z)}, {g.x - 1, g.y - 1, g.z - 1}};
  const uint32_t warps[3] = {0, w.warps_per_cta / 2, w.warps_per_cta - 1};
  double sum = 0;
  int samples = 0;
  ir::DynInst inst;
  for (int s = 0; s < 3; ++s) {
    if (s > 0 && ctas[s].x == ctas[s - 1].x && ctas[s].y == ctas[s - 1].y && ctas[s].z == ctas[s - 1].z &&
        warps[s] == warps[s - 1])
      continue;
    uint64_t n = 0;
    double count = 0;
    try {
      ir::WarpExecutor ex(program, ctas[s], warps[s]);
      while (n < budget_per_warp && ex.next(inst)) ++n;
      count = double(n);
      if (n == budget_per_warp && ex.next(inst)) {
        // Past the budget: the fraction of the work done is read off the open loops, outermost
        // first: f = (iter_1 + (iter_2 + ... + iter_k / trip_k) / trip_2) / trip_1.
        std::map<uint32_t, std::pair<double, double>> open;  // depth -> (iterations done, trip)
        for (uint32_t l = 0; l < p.loop_ctl.size(); ++l) {
          int64_t trip = ex.loop_trip(l), iter = ex.loop_iterations(l);
          if (trip > 0 && iter < trip) open.emplace(p.loop_ctl[l].depth, std::make_pair(double(iter), double(trip)));
        }
        double f = 1;
        bool first = true;
        for (auto it = open.rbegin(); it != open.rend(); ++it) {
          f = first ? it->second.first / it->second.second : (it->second.first + f) / it->second.second;
          first = false;
        }
        if (!first && f > 0 && f < 1) {
          count = double(n) / f;
          w.extrapolated = true;
        }
      }
    } catch (const std::exception&) {
      count = double(n);  // the simulation reports what is wrong with this warp
    }
    sum += count;
    ++samples;
  }
  w.per_warp = samples ? sum / samples : 0;
  w.warp_instructions = w.per_warp * w.ctas * w.warps_per_cta;
  return w;
}

void check_memory_limit(const MemoryEstimate& e, const std::string& what) {
  double limit = run_limits().max_memory_gib;
  if (e.bytes <= limit * 1024.0 * 1024.0 * 1024.0) return;
  char b[32];
  std::snprintf(b, sizeof b, "%g", limit);
  throw LimitError("memory limit: " + what + " would take an estimated " + bytes_text(e.bytes) + " of host memory (" +
                   e.parts + "), above the limit of " + b +
                   " GiB; refused before the run; raise it with --max-memory-gib");
}

void check_work_limit(const WorkEstimate& e, const std::string& kernel) {
  double limit = run_limits().max_warp_instructions;
  if (!(e.warp_instructions > limit)) return;
  char b[32];
  std::snprintf(b, sizeof b, "%g", limit);
  throw LimitError("work limit: kernel " + kernel + " would run an estimated " + count_text(e.warp_instructions) +
                   " dynamic warp instructions (" + count_text(e.ctas) + " CTAs x " + std::to_string(e.warps_per_cta) +
                   " warps x ~" + count_text(e.per_warp) + " per warp" +
                   (e.extrapolated ? ", extrapolated from its loops' trip counts" : "") + "), above the limit of " + b +
                   "; refused before the run; raise it with --max-warp-instructions");
}

}  // namespace gtsim::gpu
