#include "models/tpu/tpu_model.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include "models/mem/hbm.hpp"
#include "models/tpu/tpu_timeline.hpp"
#include "sim/simulation.hpp"

namespace gtsim::tpu {

namespace {

enum EventKind : uint32_t { kIssue = 0, kDmaDone = 1, kMxuDone = 2, kVpuDone = 3 };

// The chip's HBM: the memory side's model (models/mem, `hbm.impl`), shared by the TensorCores.
// A DMA is one access on the bandwidth server; on the banked variant it is split into
// interleave-sized accesses at consecutive addresses so that it spreads over the channels.
struct Hbm {
  std::unique_ptr<mem::HbmModel> model;
  uint32_t burst = 32;
  uint64_t chunk = 0;      // 0: one access per DMA
  uint64_t next_addr = 0;  // DMAs take consecutive address ranges
  Tick transfer(Tick start, uint64_t bytes, bool is_write) {
    uint64_t b = (bytes + burst - 1) / burst * burst;
    uint64_t step = chunk ? chunk : b;
    Tick done = start;
    for (uint64_t off = 0; off < b; off += step) {
      uint32_t n = uint32_t(std::min(step, b - off));
      done = std::max(done, model->access(start, next_addr + off, n, is_write));
    }
    next_addr += b;
    return done;
  }
  Tick busy_ticks() const {
    return Tick(double(model->read_bytes() + model->write_bytes()) / model->peak_bytes_per_ns() * double(kTicksPerNs));
  }
};

struct MxuState {
  Tick load_start = 0, load_end = 0;  // latest weight push into the staging buffer
  Tick stream_start = 0, stream_end = 0;
  Tick drain_end = 0;  // results of the last fold out of the array
  Tick busy_until = 0;
  uint64_t busy = 0;
  uint32_t k = 0, n = 0;  // shape of the loaded weight tile
};

class TensorCore : public Component {
 public:
  TensorCore(Simulation& sim, StatGroup& parent, const std::string& name, const TpuConfig& cfg, Hbm& hbm,
             const ClockDomain& clk, const CoreProgram& prog)
      : Component(sim, parent, name, "tpu"),
        cfg_(cfg),
        hbm_(hbm),
        clk_(clk),
        prog_(prog),
        vmem_(cfg.vmem_bandwidth_gbps),
        mxu_(cfg.mxu.count),
        dma_free_(cfg.dma_engines, 0),
        sems_(prog.semaphores, 0),
        useful_macs_(stats().counter("mxu_useful_macs", "multiply-adds of the op (no padding)", "MAC")),
        array_macs_(stats().counter("mxu_array_macs", "rows streamed x array size", "MAC")),
        folds_(stats().counter("mxu_folds", "weight tiles streamed", "fold")),
        vregs_(stats().counter("vpu_vregs", "(8,128) vreg operations (padding included)", "vreg")),
        velems_(stats().counter("vpu_elements", "useful elements processed", "element")),
        dma_useful_(stats().counter("dma_useful_bytes", "DMA bytes without tile padding", "B")),
        steps_(stats().counter("steps_issued", "core program steps issued", "step")),
        vmem_bytes_(stats().counter("vmem_bytes",
                                    "bytes written to and read from VMEM: DMAs (padded), vector ops (load and "
                                    "store), MXU weights, LHS rows and f32 results",
                                    "B")) {}

  void start() { sim().schedule(0, this, kIssue); }
  void record_timeline(TpuTimeline* t, uint32_t index) { tl_ = t, tl_index_ = index; }
  uint64_t mxu_busy_total() const {
    uint64_t s = 0;
    for (const auto& m : mxu_) s += m.busy;
    return s;
  }
  uint64_t mxu_busy_max() const {
    uint64_t s = 0;
    for (const auto& m : mxu_) s = std::max(s, m.busy);
    return s;
  }
  uint64_t vpu_busy() const { return vpu_busy_; }

  void handle_event(Tick now, uint32_t kind, uint64_t arg) override {
    sim().note_progress();
    switch (kind) {
      case kIssue:
        issue(now);
        break;
      case kDmaDone:
        ++sems_[arg];
        if (waiting_sem_ == int64_t(arg)) {
          if (tl_) tl_->scalar_wait(tl_index_, "wait sem " + std::to_string(arg), blocked_at_, now);
          waiting_sem_ = -1;
          issue(now);
        }
        break;
      default:
        --outstanding_;
        if (waiting_sync_ && outstanding_ == 0) {
          if (tl_) tl_->scalar_wait(tl_index_, "sync", blocked_at_, now);
          waiting_sync_ = false;
          issue(now);
        }
        break;
    }
  }

 private:
  Tick cyc(double c) const { return clk_.ticks(c); }

  // Issues steps in order from `now` until the program blocks or ends.
  void issue(Tick now) {
    Tick t = now;
    while (pc_ < prog_.steps.size()) {
      const Step& s = prog_.steps[pc_];
      if (s.kind == StepKind::kWait) {
        if (sems_[s.unit] == 0) {
          waiting_sem_ = s.unit;
          blocked_at_ = t;
          return;
        }
        --sems_[s.unit];
      } else if (s.kind == StepKind::kSync) {
        if (outstanding_ > 0) {
          waiting_sync_ = true;
          blocked_at_ = t;
          return;
        }
      } else if (s.kind == StepKind::kLoop) {
        loops_.push_back({pc_ + 1, s.count});
      } else if (s.kind == StepKind::kEndLoop) {
        if (--loops_.back().second > 0) {
          pc_ = loops_.back().first;
          t += cyc(cfg_.scalar_issue_cycles);
          continue;
        }
        loops_.pop_back();
      } else {
        execute(s, t);
      }
      ++pc_;
      ++steps_;
      t += cyc(cfg_.scalar_issue_cycles);
    }
  }

  void execute(const Step& s, Tick t) {
    switch (s.kind) {
      case StepKind::kDmaIn:
      case StepKind::kDmaOut:
        dma(s, t);
        break;
      case StepKind::kLoadWeights:
        load_weights(s, t);
        break;
      case StepKind::kMatmul:
        matmul(s, t);
        break;
      case StepKind::kVector:
        vector(s, t);
        break;
      default:
        break;
    }
  }

  void dma(const Step& s, Tick t) {
    const VmemBuffer& b = prog_.buffers[s.buffer];
    auto e = std::min_element(dma_free_.begin(), dma_free_.end());
    Tick start = std::max(t + cyc(cfg_.dma_issue_cycles), *e);
    Tick done = hbm_.transfer(start, padded_bytes(s.rows, s.cols, b.elt_bytes), s.kind == StepKind::kDmaOut);
    dma_useful_ += uint64_t(s.rows) * s.cols * b.elt_bytes;
    vmem_bytes_ += padded_bytes(s.rows, s.cols, b.elt_bytes);
    if (tl_)
      tl_->dma(tl_index_, uint32_t(e - dma_free_.begin()), start, done, s.kind == StepKind::kDmaOut,
               (padded_bytes(s.rows, s.cols, b.elt_bytes) + hbm_.burst - 1) / hbm_.burst * hbm_.burst,
               uint64_t(s.rows) * s.cols * b.elt_bytes, b.name, s.unit);
    *e = done;
    sim().schedule(done, this, kDmaDone, s.unit);
  }

  // A phase that moves `words` through one operand port and takes `cycles` unthrottled: with
  // mxu.sram_bandwidth_words_per_cycle B it takes max(cycles, ceil(words / B)) (the array stalls
  // until the port has delivered its operands, as SCALE-Sim's USER bandwidth mode does).
  double throttle(double cycles, double words) const {
    double b = cfg_.mxu.sram_words_per_cycle;
    return b > 0 ? std::max(cycles, std::ceil(words / b - 1e-9)) : cycles;
  }

  // Textbook: the push waits for the previous fold to drain (folds back to back, SCALE-Sim).
  // TPU-like: the push overlaps the previous fold's stream (one staging buffer of weights).
  // Output and input stationary (textbook only): the step records the k x n right-hand block; the
  // matmul times its folds (docs/tpu_dataflows.md).
  void load_weights(const Step& s, Tick t) {
    MxuState& m = mxu_[s.unit];
    Tick ready = cfg_.mxu.timing == MxuTiming::kTextbook ? m.drain_end : std::max(m.load_end, m.stream_start);
    m.load_start = clk_.next_edge(std::max(t, ready));
    m.k = s.rows, m.n = s.cols;
    vmem_bytes_ += uint64_t(s.rows) * s.cols * prog_.buffers[s.buffer].elt_bytes;  // the weights, read once
    double load = cfg_.mxu.dataflow == Dataflow::kWeightStationary
                      ? throttle(cfg_.mxu.rows, double(s.rows) * s.cols)  // k rows of n weights
                      : 0.0;
    m.load_end = m.load_start + cyc(load);
    if (tl_ && m.load_end > m.load_start) tl_->weight_load(tl_index_, s.unit, m.load_start, m.load_end, m.k, m.n);
  }

  void matmul(const Step& s, Tick t) {
    MxuState& m = mxu_[s.unit];
    if (cfg_.mxu.dataflow != Dataflow::kWeightStationary) return matmul_folded(s, t);
    uint32_t rpc = cfg_.mxu.rows_per_cycle;
    // The LHS streams m rows, each k words wide, through the weights.
    double stream = throttle(double((s.rows + rpc - 1) / rpc) * s.passes, double(s.rows) * m.k * s.passes);
    m.stream_start = std::max({t, m.load_end, m.stream_end});
    m.stream_end = m.stream_start + cyc(stream);
    m.drain_end = m.stream_end + cyc(cfg_.mxu.rows + cfg_.mxu.cols - 2);
    account(s, m, m.load_start, uint64_t(s.rows) * cfg_.mxu.rows * cfg_.mxu.cols, 1);
  }

  // Output / input stationary, textbook: the block (m x k) @ (k x n) folds over the array
  // (OS: m over rows, n over columns, k streams; IS: k over rows, m over columns, n streams), each
  // fold preload (IS: R cycles; OS: none) + the temporal dim streamed + R + C - 2 of fill and drain,
  // back to back.
  void matmul_folded(const Step& s, Tick t) {
    MxuState& m = mxu_[s.unit];
    const uint64_t R = cfg_.mxu.rows, C = cfg_.mxu.cols, rpc = cfg_.mxu.rows_per_cycle;
    const bool os = cfg_.mxu.dataflow == Dataflow::kOutputStationary;
    const uint64_t sr = os ? s.rows : m.k, sc = os ? m.n : s.rows, temporal = os ? m.k : m.n;
    const double stream0 = double((temporal + rpc - 1) / rpc) * s.passes;
    double total = 0;
    uint64_t folds = 0;
    // Folds come in at most four shapes: full or edge along the rows, full or edge along the columns.
    for (uint64_t r : {R, sr % R})
      for (uint64_t c : {C, sc % C}) {
        uint64_t n = (r == R ? sr / R : (r ? 1 : 0)) * (c == C ? sc / C : (c ? 1 : 0));
        if (n == 0) continue;
        double fold;
        if (os)  // both operands stream: r words per cycle on the rows, c on the columns
          fold = throttle(throttle(stream0, double(temporal) * r * s.passes), double(temporal) * c * s.passes);
        else  // the r x c input tile is preloaded, the weights stream r words per cycle
          fold = throttle(double(R), double(r) * c) + throttle(stream0, double(temporal) * r * s.passes);
        total += double(n) * (fold + double(R + C - 2));
        folds += n;
      }
    m.stream_start = clk_.next_edge(std::max({t, m.load_start, m.drain_end}));
    m.drain_end = m.stream_start + cyc(total);
    m.stream_end = m.drain_end - cyc(double(R + C - 2));
    account(s, m, m.stream_start, folds * temporal * R * C, folds);
  }

  void account(const Step& s, MxuState& m, Tick start, uint64_t array_macs, uint64_t folds) {
    Tick from = std::max(start, m.busy_until);
    if (tl_) tl_->fold(tl_index_, s.unit, from, m.stream_start, m.stream_end, m.drain_end, s.rows, m.k, m.n);
    m.busy += m.drain_end - from;
    m.busy_until = m.drain_end;
    useful_macs_ += uint64_t(s.rows) * m.k * m.n;
    // the LHS rows read from VMEM, the f32 results written back
    vmem_bytes_ += uint64_t(s.rows) * m.k * prog_.buffers[s.buffer].elt_bytes + uint64_t(s.rows) * m.n * 4;
    array_macs_ += array_macs;
    folds_ += folds;
    ++outstanding_;
    sim().schedule(m.drain_end, this, kMxuDone, s.unit);
  }

  // One (8,128) vreg per ALU op; transcendentals on the EUP; reductions on the cross-lane unit.
  void vector(const Step& s, Tick t) {
    const auto& v = cfg_.vpu;
    uint64_t vregs = uint64_t((s.rows + v.sublanes - 1) / v.sublanes) * ((s.cols + v.lanes - 1) / v.lanes);
    double per = std::max(double(s.alu_ops) / v.alu_ops_per_cycle, double(s.transcendentals) * v.transcendental_cycles);
    double cycles = double(vregs) * (std::max(per, 1.0) + (s.reduce ? v.reduce_cycles_per_tile : 0.0));
    Tick start = std::max(t, vpu_free_);
    uint64_t bytes = 2ull * s.rows * s.cols * prog_.buffers[s.buffer].elt_bytes;  // load + store
    Tick end = std::max(start + cyc(cycles), vmem_.reserve(start, bytes));
    vpu_busy_ += end - start;
    vmem_bytes_ += bytes;
    if (tl_) tl_->vector(tl_index_, start, end, s.rows, s.cols, vregs, s.alu_ops, s.transcendentals, s.reduce);
    vpu_free_ = end;
    vregs_ += vregs;
    velems_ += uint64_t(s.rows) * s.cols;
    ++outstanding_;
    sim().schedule(end, this, kVpuDone, 0);
  }

  const TpuConfig& cfg_;
  Hbm& hbm_;
  const ClockDomain& clk_;
  const CoreProgram& prog_;
  BandwidthServer vmem_;
  std::vector<MxuState> mxu_;
  std::vector<Tick> dma_free_;
  std::vector<uint32_t> sems_;
  std::vector<std::pair<size_t, uint32_t>> loops_;
  size_t pc_ = 0;
  int64_t waiting_sem_ = -1;
  bool waiting_sync_ = false;
  uint32_t outstanding_ = 0;
  Tick vpu_free_ = 0;
  uint64_t vpu_busy_ = 0;
  TpuTimeline* tl_ = nullptr;  // null: not recording
  uint32_t tl_index_ = 0;
  Tick blocked_at_ = 0;
  Counter &useful_macs_, &array_macs_, &folds_, &vregs_, &velems_, &dma_useful_, &steps_, &vmem_bytes_;
};

std::string classify(const RunResult& r) {
  double m = r.mxu_busy_frac, h = r.hbm_busy_frac, v = r.vpu_busy_frac;
  double top = std::max({m, h, v});
  if (top < 0.5) return "latency";
  if (top == h) return "memory (HBM)";
  if (top == m) return "compute (MXU)";
  return "vector unit";
}

void fill_result(RunResult& r, const TpuConfig& cfg, Tick end, const std::vector<std::unique_ptr<TensorCore>>& tcs,
                 const Hbm& hbm) {
  ClockDomain clk(cfg.core_mhz);
  r.device_us = double(end) / double(kTicksPerUs);
  r.dispatch_us = cfg.dispatch_us;
  r.time_us = r.device_us + r.dispatch_us;
  r.cycles = uint64_t(clk.cycles(end) + 0.5);
  r.hbm_read_bytes = hbm.model->read_bytes();
  r.hbm_write_bytes = hbm.model->write_bytes();
  uint64_t mxu_max = 0;
  for (const auto& tc : tcs) {
    r.mxu_busy_cycles += uint64_t(clk.cycles(tc->mxu_busy_total()) + 0.5);
    r.vpu_busy_cycles += uint64_t(clk.cycles(tc->vpu_busy()) + 0.5);
    mxu_max = std::max(mxu_max, tc->mxu_busy_max());
    r.vpu_busy_frac = std::max(r.vpu_busy_frac, end ? double(tc->vpu_busy()) / double(end) : 0.0);
  }
  double e = end ? double(end) : 1.0;
  r.mxu_busy_frac = double(mxu_max) / e;
  r.mxu_cycles = uint64_t(clk.cycles(mxu_max) + 0.5);
  r.hbm_busy_frac = double(hbm.busy_ticks()) / e;
  double capacity = double(cfg.tensorcores) * cfg.mxu.count * cfg.mxu.rows * cfg.mxu.cols * cfg.mxu.rows_per_cycle;
  r.mxu_utilization = r.cycles ? double(r.mxu_useful_macs) / (capacity * double(r.cycles)) : 0.0;
  r.mxu_array_fill = r.mxu_array_macs ? double(r.mxu_useful_macs) / double(r.mxu_array_macs) : 0.0;
  r.achieved_tflops = r.time_us > 0 ? double(r.useful_flops) / (r.time_us * 1e6) : 0.0;
  r.pct_of_peak = 100.0 * r.achieved_tflops / cfg.stated_peak_bf16_tflops;
  uint64_t bytes = r.hbm_read_bytes + r.hbm_write_bytes;
  r.arithmetic_intensity = bytes ? double(r.useful_flops) / double(bytes) : 0.0;
  r.bound = classify(r);
}

}  // namespace

RunResult TpuModel::run(const ChipProgram& program) const {
  auto wall0 = std::chrono::steady_clock::now();
  if (program.cores.size() > cfg_.tensorcores)
    throw InputError(SourcePos{"program " + program.name, 0, 0}, std::to_string(program.cores.size()) +
                                                                     " core programs for a chip of " +
                                                                     std::to_string(cfg_.tensorcores) + " TensorCores");
  for (const auto& c : program.cores) verify(c, cfg_);
  Simulation sim;
  ClockDomain clk(cfg_.core_mhz);
  StatGroup& chip = sim.stats().child("tpu");
  Hbm hbm;
  hbm.model = mem::make_hbm_model(cfg_.hbm, chip.child("hbm"));
  hbm.burst = cfg_.hbm.burst_bytes;
  if (cfg_.hbm.impl == "banked") hbm.chunk = cfg_.hbm.banked.interleave_bytes;
  TpuTimeline* tl = timeline_ ? timeline_ : TpuTimeline::active();
  if (tl) tl->begin_call(program.name);
  std::vector<std::unique_ptr<TensorCore>> tcs;
  for (size_t i = 0; i < program.cores.size(); ++i) {
    tcs.push_back(std::make_unique<TensorCore>(sim, chip, "tc" + std::to_string(i), cfg_, hbm, clk, program.cores[i]));
    tcs.back()->record_timeline(tl, uint32_t(i));
    tcs.back()->start();
  }
  Tick end = sim.run();
  if (tl) tl->end_call(end);
  RunResult r;
  r.name = program.name;
  r.hw = cfg_.name;
  r.useful_flops = program.useful_flops;
  r.min_hbm_bytes = program.min_hbm_bytes;
  r.mxu_useful_macs = chip.sum_counters("mxu_useful_macs");
  r.mxu_array_macs = chip.sum_counters("mxu_array_macs");
  r.vpu_vregs = chip.sum_counters("vpu_vregs");
  r.vpu_elements = chip.sum_counters("vpu_elements");
  r.hbm_useful_bytes = chip.sum_counters("dma_useful_bytes");
  r.vmem_bytes = chip.sum_counters("vmem_bytes");
  fill_result(r, cfg_, end, tcs, hbm);
  r.events = sim.events_processed();
  r.stats = sim.stats().to_json();
  r.sim_wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return r;
}

nlohmann::json RunResult::to_json() const {
  return {{"name", name},
          {"hw", hw},
          {"target", "tpu"},
          {"time_us", time_us},
          {"device_us", device_us},
          {"dispatch_us", dispatch_us},
          {"cycles", cycles},
          {"flops", useful_flops},
          {"min_hbm_bytes", min_hbm_bytes},
          {"hbm_read_bytes", hbm_read_bytes},
          {"hbm_write_bytes", hbm_write_bytes},
          {"hbm_useful_bytes", hbm_useful_bytes},
          {"vmem_bytes", vmem_bytes},
          {"mxu_useful_macs", mxu_useful_macs},
          {"mxu_array_macs", mxu_array_macs},
          {"mxu_busy_cycles", mxu_busy_cycles},
          {"mxu_cycles", mxu_cycles},
          {"vpu_busy_cycles", vpu_busy_cycles},
          {"vpu_vregs", vpu_vregs},
          {"vpu_elements", vpu_elements},
          {"mxu_utilization", mxu_utilization},
          {"mxu_array_fill", mxu_array_fill},
          {"hbm_busy_frac", hbm_busy_frac},
          {"mxu_busy_frac", mxu_busy_frac},
          {"vpu_busy_frac", vpu_busy_frac},
          {"achieved_tflops", achieved_tflops},
          {"pct_of_peak", pct_of_peak},
          {"arithmetic_intensity", arithmetic_intensity},
          {"bound", bound},
          {"events", events},
          {"sim_wall_seconds", sim_wall_seconds},
          {"stats", stats}};
}

}  // namespace gtsim::tpu
