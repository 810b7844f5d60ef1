#include "models/tpu/core_program.hpp"

#include <sstream>

#include "sim/error.hpp"

namespace gtsim::tpu {

Step Step::dma_in(uint32_t buf, uint16_t sem, uint32_t rows, uint32_t cols) {
  Step s;
  s.kind = StepKind::kDmaIn, s.unit = sem, s.buffer = buf, s.rows = rows, s.cols = cols;
  return s;
}
Step Step::dma_out(uint32_t buf, uint16_t sem, uint32_t rows, uint32_t cols) {
  Step s = dma_in(buf, sem, rows, cols);
  s.kind = StepKind::kDmaOut;
  return s;
}
Step Step::wait(uint16_t sem) {
  Step s;
  s.kind = StepKind::kWait, s.unit = sem;
  return s;
}
Step Step::load_weights(uint16_t mxu, uint32_t buf, uint32_t k, uint32_t n) {
  Step s;
  s.kind = StepKind::kLoadWeights, s.unit = mxu, s.buffer = buf, s.rows = k, s.cols = n;
  return s;
}
Step Step::matmul(uint16_t mxu, uint32_t buf, uint32_t m, uint16_t passes) {
  Step s;
  s.kind = StepKind::kMatmul, s.unit = mxu, s.buffer = buf, s.rows = m, s.passes = passes;
  return s;
}
Step Step::vector(uint32_t buf, uint32_t rows, uint32_t cols, float alu_ops, float trans, bool reduce) {
  Step s;
  s.kind = StepKind::kVector, s.buffer = buf, s.rows = rows, s.cols = cols;
  s.alu_ops = alu_ops, s.transcendentals = trans, s.reduce = reduce;
  return s;
}
Step Step::sync() { return Step{}; }
Step Step::loop(uint32_t count) {
  Step s;
  s.kind = StepKind::kLoop, s.count = count;
  return s;
}
Step Step::end_loop() {
  Step s;
  s.kind = StepKind::kEndLoop;
  return s;
}

uint32_t CoreProgram::add_buffer(std::string bname, uint32_t rows, uint32_t cols, uint32_t elt_bytes, uint32_t slots) {
  buffers.push_back({std::move(bname), rows, cols, elt_bytes, slots});
  return uint32_t(buffers.size() - 1);
}

uint32_t tile_rows(uint32_t elt_bytes) { return elt_bytes >= 4 ? 8 : 8 * (4 / elt_bytes); }

uint64_t padded_bytes(uint32_t rows, uint32_t cols, uint32_t elt_bytes) {
  uint64_t tr = tile_rows(elt_bytes);
  uint64_t pr = (rows + tr - 1) / tr * tr;
  uint64_t pc = (uint64_t(cols) + 127) / 128 * 128;
  return pr * pc * elt_bytes;
}

uint64_t buffer_bytes(const VmemBuffer& b) { return padded_bytes(b.rows, b.cols, b.elt_bytes) * b.slots; }

namespace {

struct Checker {
  const CoreProgram& p;
  const TpuConfig& cfg;
  std::vector<Diagnostic> diags;
  std::vector<int64_t> sem_count;
  std::vector<bool> weights;

  void error(size_t i, const std::string& msg) {
    diags.push_back({SourcePos{"core program " + p.name, int(i + 1), 0}, msg});
  }
  bool buffer_ok(size_t i, const Step& s) {
    if (s.buffer < p.buffers.size()) return true;
    error(i, "buffer index " + std::to_string(s.buffer) + " out of range (" + std::to_string(p.buffers.size()) +
                 " buffers declared)");
    return false;
  }
  void check_rect(size_t i, const Step& s) {
    if (!buffer_ok(i, s)) return;
    const VmemBuffer& b = p.buffers[s.buffer];
    if (s.rows == 0 || s.cols == 0) {
      error(i, std::string(s.kind == StepKind::kVector  ? "vpu.op"
                           : s.kind == StepKind::kDmaIn ? "dma.in"
                                                        : "dma.out") +
                   " of a " + std::to_string(s.rows) + "x" + std::to_string(s.cols) +
                   " block: a zero-size block, expected rows >= 1 and cols >= 1");
      return;
    }
    if (s.rows > b.rows || s.cols > b.cols)
      error(i, "a " + std::to_string(s.rows) + "x" + std::to_string(s.cols) + " block does not fit buffer " + b.name +
                   " (" + std::to_string(b.rows) + "x" + std::to_string(b.cols) + ")");
  }
  void check_mxu(size_t i, const Step& s) {
    if (s.unit >= cfg.mxu.count) {
      error(i,
            "MXU " + std::to_string(s.unit) + " does not exist (the config has " + std::to_string(cfg.mxu.count) + ")");
      return;
    }
    if (s.kind == StepKind::kLoadWeights) {
      if (s.rows == 0 || s.cols == 0)
        error(i, "mxu.load_weights of a " + std::to_string(s.rows) + "x" + std::to_string(s.cols) +
                     " tile: a zero-size tile, expected k >= 1 and n >= 1");
      // Output and input stationary fold any block over the array (the model times the folds).
      else if (cfg.mxu.dataflow == Dataflow::kWeightStationary && (s.rows > cfg.mxu.rows || s.cols > cfg.mxu.cols))
        error(i, "weight tile " + std::to_string(s.rows) + "x" + std::to_string(s.cols) + " does not fit the " +
                     std::to_string(cfg.mxu.rows) + "x" + std::to_string(cfg.mxu.cols) + " MXU");
      weights[s.unit] = true;
    } else {
      if (!weights[s.unit]) error(i, "mxu.matmul on MXU " + std::to_string(s.unit) + " before any mxu.load_weights");
      if (s.rows == 0 || s.passes == 0) error(i, "mxu.matmul needs m > 0 rows and passes > 0");
    }
    buffer_ok(i, s);
  }
  void check_sem(size_t i, const Step& s, bool wait) {
    if (s.unit >= p.semaphores) {
      error(i, "semaphore " + std::to_string(s.unit) + " not declared (" + std::to_string(p.semaphores) + " declared)");
      return;
    }
    if (!wait) {
      ++sem_count[s.unit];
    } else if (--sem_count[s.unit] < 0) {
      error(i, "wait on semaphore " + std::to_string(s.unit) + " that no DMA issued before it signals");
      sem_count[s.unit] = 0;
    }
  }
  void step(size_t i, const Step& s) {
    switch (s.kind) {
      case StepKind::kDmaIn:
      case StepKind::kDmaOut:
        check_rect(i, s);
        check_sem(i, s, false);
        break;
      case StepKind::kWait:
        check_sem(i, s, true);
        break;
      case StepKind::kLoadWeights:
      case StepKind::kMatmul:
        check_mxu(i, s);
        break;
      case StepKind::kVector:
        check_rect(i, s);
        break;
      default:
        break;
    }
  }
  // Walks the program once; a loop body is walked once and its net semaphore effect applied for
  // the remaining trips (a body that waits more than it signals fails on its first trip).
  void run() {
    sem_count.assign(p.semaphores, 0);
    weights.assign(cfg.mxu.count, false);
    std::vector<std::pair<size_t, std::vector<int64_t>>> stack;  // loop step, counts at entry
    for (size_t i = 0; i < p.steps.size(); ++i) {
      const Step& s = p.steps[i];
      if (s.kind == StepKind::kLoop) {
        if (s.count == 0) error(i, "loop with a trip count of 0");
        stack.push_back({i, sem_count});
      } else if (s.kind == StepKind::kEndLoop) {
        if (stack.empty()) {
          error(i, "end of loop without a loop");
          continue;
        }
        auto [li, entry] = stack.back();
        stack.pop_back();
        int64_t trips = p.steps[li].count;
        for (size_t k = 0; k < sem_count.size(); ++k) sem_count[k] += (sem_count[k] - entry[k]) * (trips - 1);
      } else {
        step(i, s);
      }
    }
    if (!stack.empty()) error(stack.back().first, "loop without its end");
  }
};

void check_vmem(const CoreProgram& p, const TpuConfig& cfg, std::vector<Diagnostic>& diags) {
  uint64_t total = 0;
  std::string list;
  for (const auto& b : p.buffers) {
    if (b.rows == 0 || b.cols == 0 || b.slots == 0)
      diags.push_back(
          {SourcePos{"core program " + p.name, 0, 0}, "VMEM buffer " + b.name + " of " + std::to_string(b.rows) + "x" +
                                                          std::to_string(b.cols) + " x" + std::to_string(b.slots) +
                                                          " slots: a zero-size buffer, expected rows, cols and "
                                                          "slots >= 1"});
    total += buffer_bytes(b);
    list += (list.empty() ? "" : ", ") + b.name + " " + std::to_string(b.rows) + "x" + std::to_string(b.cols) + "x" +
            std::to_string(b.elt_bytes) + "B" + (b.slots > 1 ? " x" + std::to_string(b.slots) : "");
  }
  // textbook timing is SCALE-Sim's compute model, which has no capacity: a block larger than VMEM (the
  // whole GEMM as one block, to stream all of M per fold) runs as if it fit (docs/tpu_dataflows.md)
  if (total > cfg.vmem_bytes() && cfg.mxu.timing != MxuTiming::kTextbook)
    diags.push_back({SourcePos{"core program " + p.name, 0, 0},
                     "VMEM buffers need " + std::to_string(total) + " bytes (padded to tiles: " + list +
                         ") but the TensorCore has " + std::to_string(cfg.vmem_bytes()) + " bytes of VMEM"});
}

}  // namespace

void verify(const CoreProgram& p, const TpuConfig& cfg) {
  Checker c{p, cfg, {}, {}, {}};
  check_vmem(p, cfg, c.diags);
  c.run();
  if (!c.diags.empty()) throw InputError(c.diags);
}

std::string to_text(const CoreProgram& p) {
  std::ostringstream os;
  os << "core " << p.name << " {\n";
  for (const auto& b : p.buffers)
    os << "  vmem " << b.name << " : " << b.rows << "x" << b.cols << " x" << b.elt_bytes << "B"
       << (b.slots > 1 ? " slots " + std::to_string(b.slots) : "") << "\n";
  std::string ind = "  ";
  auto bn = [&](uint32_t i) { return i < p.buffers.size() ? p.buffers[i].name : "?"; };
  for (const auto& s : p.steps) {
    switch (s.kind) {
      case StepKind::kDmaIn:
        os << ind << "dma.in " << bn(s.buffer) << " " << s.rows << "x" << s.cols << " -> sem " << s.unit;
        break;
      case StepKind::kDmaOut:
        os << ind << "dma.out " << bn(s.buffer) << " " << s.rows << "x" << s.cols << " -> sem " << s.unit;
        break;
      case StepKind::kWait:
        os << ind << "wait sem " << s.unit;
        break;
      case StepKind::kLoadWeights:
        os << ind << "mxu.load_weights " << s.unit << " " << s.rows << "x" << s.cols << " from " << bn(s.buffer);
        break;
      case StepKind::kMatmul:
        os << ind << "mxu.matmul " << s.unit << " " << s.rows << " rows from " << bn(s.buffer)
           << (s.passes > 1 ? " passes " + std::to_string(s.passes) : "");
        break;
      case StepKind::kVector:
        os << ind << "vpu.op " << bn(s.buffer) << " " << s.rows << "x" << s.cols << " ops=" << s.alu_ops
           << " trans=" << s.transcendentals << (s.reduce ? " reduce" : "");
        break;
      case StepKind::kSync:
        os << ind << "sync";
        break;
      case StepKind::kLoop:
        os << ind << "loop " << s.count << " {";
        ind += "  ";
        break;
      case StepKind::kEndLoop:
        ind.resize(ind.size() > 2 ? ind.size() - 2 : 2);
        os << ind << "}";
        break;
    }
    os << "\n";
  }
  os << "}\n";
  return os.str();
}

}  // namespace gtsim::tpu
