#include "models/tpu/lowering.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "sim/error.hpp"

namespace gtsim::tpu {

namespace {

uint64_t cdiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
uint64_t round_up(uint64_t a, uint64_t b) { return cdiv(a, b) * b; }
uint32_t u32(uint64_t v) { return uint32_t(std::min<uint64_t>(v, 0xffffffffu)); }

}  // namespace

uint64_t OpDesc::flops() const {
  switch (kind) {
    case OpKind::kMatmul:
      return 2 * batch * m * k * n;
    case OpKind::kAttention:
      return 4 * batch_heads * seq * seq * head_dim;  // QK^T and PV
    default:
      return uint64_t(double(rows * cols) * (alu_ops + transcendentals));
  }
}

uint64_t OpDesc::min_bytes() const {
  switch (kind) {
    case OpKind::kMatmul:
      return batch * (m * k + k * n + m * n) * elt_bytes;
    case OpKind::kElementwise:
      return rows * cols * (inputs * elt_bytes + out_elt_bytes());
    case OpKind::kReduction:
      return rows * cols * elt_bytes + rows * out_elt_bytes();
    case OpKind::kSoftmax:
      return rows * cols * (elt_bytes + out_elt_bytes());
    case OpKind::kAttention:
      return 4 * batch_heads * seq * head_dim * elt_bytes;
  }
  return 0;
}

uint64_t OpDesc::footprint_bytes() const {
  if (kind == OpKind::kAttention && !flash) return min_bytes() + 2 * batch_heads * seq * seq * elt_bytes;
  return min_bytes();
}

void check_hbm_capacity(const OpDesc& op, const TpuConfig& cfg) {
  uint64_t need = op.footprint_bytes();
  if (need <= cfg.hbm_bytes()) return;
  std::ostringstream os;
  const double gib = 1024.0 * 1024.0 * 1024.0;  // capacities in binary units (docs/tpu.md, "Units")
  os << std::setprecision(4) << "op " << op.name << " needs " << need << " bytes (" << double(need) / gib
     << " GiB) of tensors in HBM but " << cfg.name << " has " << cfg.hbm_bytes() << " bytes ("
     << double(cfg.hbm_bytes()) / gib << " GiB, hbm.capacity_gb: " << cfg.hbm.capacity_gb << " decimal GB)";
  throw InputError(SourcePos{cfg.source, 0, 0}, os.str());
}

namespace {

uint64_t matmul_vmem(uint64_t bm, uint64_t bk, uint64_t bn, uint32_t e) {
  return 2 * padded_bytes(u32(bm), u32(bk), e) + 2 * padded_bytes(u32(bk), u32(bn), e) +
         padded_bytes(u32(bm), u32(bn), 4) + 2 * padded_bytes(u32(bm), u32(bn), e);
}

}  // namespace

MatmulTiling choose_tiling(const OpDesc& op, const TpuConfig& cfg, MatmulTiling want) {
  check_dims(op);
  uint64_t tr = tile_rows(op.elt_bytes);
  uint64_t bn = want.bn ? want.bn : std::min<uint64_t>(op.n, 1024);
  uint64_t bk = want.bk ? want.bk : op.k;
  // Rows per block: at least 512, more when a block has few folds per MXU, so that every MXU
  // streams >= 8192 rows per grid step (each step pays one fill and drain).
  uint64_t folds = cdiv(std::min<uint64_t>(bk, 1024), cfg.mxu.rows) * cdiv(bn, cfg.mxu.cols);
  uint64_t per_mxu = std::max<uint64_t>(1, folds / cfg.mxu.count);
  uint64_t bm = want.bm ? want.bm : std::min(round_up(op.m, tr), std::max<uint64_t>(512, round_up(8192 / per_mxu, tr)));
  uint64_t budget = cfg.vmem_bytes() / 2;  // leave room, as compilers cap scoped VMEM
  if (!want.bk)
    while (bk > 1024 && matmul_vmem(bm, bk, bn, op.elt_bytes) > budget) bk = round_up(cdiv(bk, 2), 128);
  if (!want.bk && bk > 1024 && op.k > bk) bk = 1024;
  while (matmul_vmem(bm, bk, bn, op.elt_bytes) > budget && (bk > 128 || bn > 128 || bm > tr)) {
    if (!want.bk && bk > 128)
      bk = round_up(cdiv(bk, 2), 128);
    else if (!want.bn && bn > 128)
      bn = round_up(cdiv(bn, 2), 128);
    else if (!want.bm && bm > tr)
      bm = round_up(cdiv(bm, 2), tr);
    else
      break;
  }
  return {bm, bk, bn};
}

namespace {

// Emits the MXU folds of one block, round robin over the MXUs; full tiles as a loop (one fold per
// MXU per trip), edge tiles after it. A fold is one array-sized tile of the block's two spatial
// dims (mxu.dataflow): weight stationary tiles (k, n) with the m rows streamed; output stationary
// tiles (m, n) with the whole k streamed; input stationary tiles (k, m) with the whole n streamed.
// Each fold is `mxu.load_weights U k x n` + `mxu.matmul U m rows` (docs/tpu_dataflows.md).
void emit_folds(CoreProgram& p, const TpuConfig& cfg, uint32_t lhs, uint64_t mb, uint64_t kb, uint64_t nb,
                uint16_t passes) {
  const uint32_t R = cfg.mxu.rows, C = cfg.mxu.cols, U = cfg.mxu.count;
  const Dataflow df = cfg.mxu.dataflow;
  // The dims tiled over the rows (a) and the columns (b).
  const uint64_t da = df == Dataflow::kOutputStationary ? mb : kb;
  const uint64_t db = df == Dataflow::kInputStationary ? mb : nb;
  auto fold = [&](uint16_t u, uint64_t a, uint64_t b) {
    uint64_t m = mb, k = kb, n = nb;
    if (df == Dataflow::kWeightStationary) k = a, n = b;
    if (df == Dataflow::kOutputStationary) m = a, n = b;
    if (df == Dataflow::kInputStationary) k = a, m = b;
    p.push(Step::load_weights(u, lhs, u32(k), u32(n)));
    p.push(Step::matmul(u, lhs, u32(m), passes));
  };
  std::vector<std::pair<uint64_t, uint64_t>> edge;
  uint64_t full = (da / R) * (db / C);
  for (uint64_t a0 = 0; a0 < da; a0 += R)
    for (uint64_t b0 = 0; b0 < db; b0 += C) {
      uint64_t a = std::min<uint64_t>(R, da - a0), b = std::min<uint64_t>(C, db - b0);
      if (a < R || b < C) edge.push_back({a, b});
    }
  for (uint64_t f = full - full % U; f < full; ++f) edge.insert(edge.begin(), {R, C});
  if (full / U > 0) {
    p.push(Step::loop(u32(full / U)));
    for (uint16_t u = 0; u < U; ++u) fold(u, R, C);
    p.push(Step::end_loop());
  }
  for (size_t i = 0; i < edge.size(); ++i) fold(uint16_t(i % U), edge[i].first, edge[i].second);
}

struct GridStep {
  uint64_t b, i, j, k;
};

// The Pallas pipeline for one TensorCore: prefetch step s+1 while step s computes; fetch a
// block only when its index changes; write each output block once its last k step is done.
CoreProgram matmul_core(const OpDesc& op, const TpuConfig& cfg, const MatmulTiling& t, uint32_t core, uint32_t ncores) {
  CoreProgram p;
  p.name = op.name + ".tc" + std::to_string(core);
  const uint32_t e = op.elt_bytes;
  uint32_t A = p.add_buffer("A", u32(t.bm), u32(t.bk), e, 2), B = p.add_buffer("B", u32(t.bk), u32(t.bn), e, 2);
  uint32_t ACC = p.add_buffer("acc", u32(t.bm), u32(t.bn), 4), O = p.add_buffer("O", u32(t.bm), u32(t.bn), e, 2);
  uint16_t sa = p.add_semaphore(), sb = p.add_semaphore(), so = p.add_semaphore();
  uint64_t nm = cdiv(op.m, t.bm), nn = cdiv(op.n, t.bn), nk = cdiv(op.k, t.bk);
  std::vector<GridStep> steps;
  uint64_t blk = 0;
  for (uint64_t b = 0; b < op.batch; ++b)
    for (uint64_t i = 0; i < nm; ++i)
      for (uint64_t j = 0; j < nn; ++j, ++blk)
        if (blk % ncores == core)
          for (uint64_t k = 0; k < nk; ++k) steps.push_back({b, i, j, k});
  auto ext = [](uint64_t idx, uint64_t blkdim, uint64_t dim) { return std::min(blkdim, dim - idx * blkdim); };
  auto a_new = [&](size_t s) {
    return s == 0 || steps[s].b != steps[s - 1].b || steps[s].i != steps[s - 1].i || steps[s].k != steps[s - 1].k;
  };
  auto b_new = [&](size_t s) {
    return s == 0 || steps[s].b != steps[s - 1].b || steps[s].j != steps[s - 1].j || steps[s].k != steps[s - 1].k;
  };
  auto fetch = [&](size_t s) {
    const GridStep& g = steps[s];
    if (a_new(s)) p.push(Step::dma_in(A, sa, u32(ext(g.i, t.bm, op.m)), u32(ext(g.k, t.bk, op.k))));
    if (b_new(s)) p.push(Step::dma_in(B, sb, u32(ext(g.k, t.bk, op.k)), u32(ext(g.j, t.bn, op.n))));
  };
  uint16_t passes = op.f32_matmul ? uint16_t(cfg.mxu.f32_passes) : 1;
  uint64_t outs = 0;
  if (!steps.empty()) fetch(0);
  for (size_t s = 0; s < steps.size(); ++s) {
    const GridStep& g = steps[s];
    if (s + 1 < steps.size()) fetch(s + 1);
    if (a_new(s)) p.push(Step::wait(sa));
    if (b_new(s)) p.push(Step::wait(sb));
    uint64_t mb = ext(g.i, t.bm, op.m), nb = ext(g.j, t.bn, op.n);
    bool last = g.k + 1 == nk;
    if (last && outs >= 2) p.push(Step::wait(so));  // the output slot of two blocks ago is free
    emit_folds(p, cfg, A, mb, ext(g.k, t.bk, op.k), nb, passes);
    // The vector unit pops the MXU results and accumulates them into the f32 accumulator (cast to
    // the output dtype on the last k step), while the MXUs stream: issued without a sync between.
    p.push(Step::vector(last ? O : ACC, u32(mb), u32(nb), 1, 0));
    p.push(Step::sync());
    if (last) {
      p.push(Step::dma_out(O, so, u32(mb), u32(nb)));
      ++outs;
    }
  }
  for (uint64_t w = 0; w < std::min<uint64_t>(outs, 2); ++w) p.push(Step::wait(so));
  return p;
}

// Streams a [rows x cols] view through VMEM in [br x bc] blocks: inputs in, one vector op,
// the output block (or a reduced column) out. Double-buffered on both sides.
CoreProgram stream_core(const OpDesc& op, const TpuConfig& cfg, uint32_t core, uint32_t ncores) {
  CoreProgram p;
  p.name = op.name + ".tc" + std::to_string(core);
  const uint32_t e = op.elt_bytes;
  bool whole_rows = op.kind != OpKind::kElementwise;
  uint64_t bc = whole_rows ? op.cols : std::min<uint64_t>(round_up(op.cols, 128), 2048);
  const uint32_t eo = op.out_elt_bytes();  // a cast writes another dtype than it reads
  uint64_t tr = std::max(tile_rows(e), tile_rows(eo));
  uint64_t br = std::max<uint64_t>(tr, (1u << 20) / (bc * e) / tr * tr);  // ~1 MiB blocks
  br = std::min(br, round_up(op.rows, tr));
  while (br > tr && 2 * (op.inputs * padded_bytes(u32(br), u32(bc), e) + padded_bytes(u32(br), u32(bc), eo)) >
                        cfg.vmem_bytes() / 2)
    br /= 2;
  bool red = op.kind == OpKind::kReduction;
  uint32_t IN = p.add_buffer("in", u32(br), u32(bc), e, 2 * op.inputs);
  uint32_t OUT =
      red ? p.add_buffer("out", u32(cdiv(br, 128)), 128, eo, 2) : p.add_buffer("out", u32(br), u32(bc), eo, 2);
  uint16_t si = p.add_semaphore(), so = p.add_semaphore();
  std::vector<std::pair<uint64_t, uint64_t>> blocks;  // (rows, cols) of each block of this core
  uint64_t idx = 0;
  for (uint64_t r = 0; r < op.rows; r += br)
    for (uint64_t c = 0; c < op.cols; c += bc, ++idx)
      if (idx % ncores == core) blocks.push_back({std::min(br, op.rows - r), std::min(bc, op.cols - c)});
  auto fetch = [&](size_t s) {
    for (uint32_t in = 0; in < op.inputs; ++in)
      p.push(Step::dma_in(IN, si, u32(blocks[s].first), u32(blocks[s].second)));
  };
  if (!blocks.empty()) fetch(0);
  float alu = op.kind == OpKind::kSoftmax ? 4.0f : op.alu_ops;
  float trans = op.kind == OpKind::kSoftmax ? 1.0f : op.transcendentals;
  for (size_t s = 0; s < blocks.size(); ++s) {
    auto [rb, cb] = blocks[s];
    if (s + 1 < blocks.size()) fetch(s + 1);
    for (uint32_t in = 0; in < op.inputs; ++in) p.push(Step::wait(si));
    if (s >= 2) p.push(Step::wait(so));
    p.push(Step::vector(IN, u32(rb), u32(cb), alu, trans, op.kind != OpKind::kElementwise));
    p.push(Step::sync());
    if (red)
      p.push(Step::dma_out(OUT, so, u32(cdiv(rb, 128)), 128));
    else
      p.push(Step::dma_out(OUT, so, u32(rb), u32(cb)));
  }
  for (size_t w = 0; w < std::min<size_t>(blocks.size(), 2); ++w) p.push(Step::wait(so));
  return p;
}

// Blocked (flash-like) attention: per (head, query block) the query block stays in VMEM, key and
// value blocks stream through double-buffered; S = QK^T on the MXUs, the online softmax on the
// vector unit, then PV on the MXUs and a rescale of the accumulator; scores never reach HBM.
CoreProgram flash_attention_core(const OpDesc& op, const TpuConfig& cfg, uint64_t blk, uint32_t core, uint32_t ncores) {
  CoreProgram p;
  p.name = op.name + ".tc" + std::to_string(core);
  const uint32_t e = op.elt_bytes, d = u32(op.head_dim);
  uint64_t bq = std::min(blk, op.seq), bkv = std::min(blk, op.seq);
  uint32_t Q = p.add_buffer("Q", u32(bq), d, e, 2), K = p.add_buffer("K", u32(bkv), d, e, 2);
  uint32_t V = p.add_buffer("V", u32(bkv), d, e, 2), S = p.add_buffer("S", u32(bq), u32(bkv), 4);
  uint32_t ACC = p.add_buffer("acc", u32(bq), d, 4), O = p.add_buffer("O", u32(bq), d, e, 2);
  uint16_t sq = p.add_semaphore(), skv = p.add_semaphore(), so = p.add_semaphore();
  uint64_t nq = cdiv(op.seq, bq), nkv = cdiv(op.seq, bkv), idx = 0, outs = 0;
  struct FlashStep {
    uint64_t q, kv;
    bool first;  // first key/value block of a query block
  };
  std::vector<FlashStep> steps;
  for (uint64_t h = 0; h < op.batch_heads; ++h)
    for (uint64_t i = 0; i < nq; ++i, ++idx)
      if (idx % ncores == core)
        for (uint64_t j = 0; j < nkv; ++j)
          steps.push_back({std::min(bq, op.seq - i * bq), std::min(bkv, op.seq - j * bkv), j == 0});
  auto first = [&](size_t s) { return steps[s].first; };
  auto kv = [&](size_t s) { return u32(steps[s].kv); };
  auto fetch = [&](size_t s) {
    if (first(s)) p.push(Step::dma_in(Q, sq, u32(steps[s].q), d));
    p.push(Step::dma_in(K, skv, kv(s), d));
    p.push(Step::dma_in(V, skv, kv(s), d));
  };
  if (!steps.empty()) fetch(0);
  for (size_t s = 0; s < steps.size(); ++s) {
    uint64_t qr = steps[s].q;
    if (s + 1 < steps.size()) fetch(s + 1);
    if (first(s)) p.push(Step::wait(sq));
    p.push(Step::wait(skv));
    p.push(Step::wait(skv));
    emit_folds(p, cfg, Q, qr, d, kv(s), 1);  // S = Q K^T: weights K^T (d x kv)
    p.push(Step::sync());
    p.push(Step::vector(S, u32(qr), kv(s), 5, 1, true));  // online softmax: max, sub, exp, sum, scale
    p.push(Step::sync());
    emit_folds(p, cfg, S, qr, kv(s), d, 1);       // acc += P V: weights V (kv x d)
    p.push(Step::vector(ACC, u32(qr), d, 2, 0));  // rescale the accumulator
    p.push(Step::sync());
    if (s + 1 == steps.size() || first(s + 1)) {
      if (outs >= 2) p.push(Step::wait(so));
      p.push(Step::vector(ACC, u32(qr), d, 1, 0));  // divide by the row sums, cast
      p.push(Step::sync());
      p.push(Step::dma_out(O, so, u32(qr), d));
      ++outs;
    }
  }
  for (uint64_t w = 0; w < std::min<uint64_t>(outs, 2); ++w) p.push(Step::wait(so));
  return p;
}

}  // namespace

void check_dims(const OpDesc& op) {
  std::string dims, zero;
  auto dim = [&](const char* name, uint64_t v) {
    dims += std::string(dims.empty() ? "" : ", ") + name + " = " + std::to_string(v);
    if (v == 0 && zero.empty()) zero = name;
  };
  const char* kind = "matmul";
  switch (op.kind) {
    case OpKind::kMatmul:
      dim("batch", op.batch), dim("m", op.m), dim("k", op.k), dim("n", op.n);
      break;
    case OpKind::kAttention:
      kind = "attention";
      dim("batch_heads", op.batch_heads), dim("seq", op.seq), dim("head_dim", op.head_dim);
      break;
    default:
      kind = op.kind == OpKind::kElementwise ? "elementwise" : op.kind == OpKind::kReduction ? "reduction" : "softmax";
      dim("rows", op.rows), dim("cols", op.cols);
      if (op.kind == OpKind::kElementwise) dim("inputs", op.inputs);
      break;
  }
  if (!zero.empty())
    throw InputError(SourcePos{"op " + op.name, 0, 0}, std::string(kind) + " with " + zero + " = 0 (" + dims +
                                                           "): a zero-size dimension has no work to time, "
                                                           "expected every dimension >= 1");
}

std::vector<ChipProgram> lower(const OpDesc& op, const TpuConfig& cfg, const LowerOptions& opt) {
  check_dims(op);
  check_hbm_capacity(op, cfg);
  std::vector<ChipProgram> out;
  auto chip = [&](const OpDesc& o) {
    ChipProgram c;
    c.name = o.name;
    c.useful_flops = o.flops();
    c.min_hbm_bytes = o.min_bytes();
    c.hbm_footprint_bytes = o.footprint_bytes();
    c.uses_mxu = o.kind == OpKind::kMatmul || o.kind == OpKind::kAttention;
    return c;
  };
  if (op.kind == OpKind::kAttention && !op.flash) {
    OpDesc qk = op, sm = op, pv = op;
    qk.kind = pv.kind = OpKind::kMatmul;
    qk.name = op.name + ".qk", sm.name = op.name + ".softmax", pv.name = op.name + ".pv";
    qk.batch = pv.batch = op.batch_heads;
    qk.m = op.seq, qk.k = op.head_dim, qk.n = op.seq;
    pv.m = op.seq, pv.k = op.seq, pv.n = op.head_dim;
    sm.kind = OpKind::kSoftmax, sm.rows = op.batch_heads * op.seq, sm.cols = op.seq;
    for (const OpDesc* o : {&qk, &sm, &pv}) {
      auto sub = lower(*o, cfg, opt);
      out.insert(out.end(), sub.begin(), sub.end());
    }
    return out;
  }
  ChipProgram c = chip(op);
  for (uint32_t tc = 0; tc < cfg.tensorcores; ++tc) {
    if (op.kind == OpKind::kMatmul)
      c.cores.push_back(matmul_core(op, cfg, choose_tiling(op, cfg, opt.tiling), tc, cfg.tensorcores));
    else if (op.kind == OpKind::kAttention)
      c.cores.push_back(flash_attention_core(op, cfg, opt.attention_block, tc, cfg.tensorcores));
    else
      c.cores.push_back(stream_core(op, cfg, tc, cfg.tensorcores));
  }
  out.push_back(std::move(c));
  return out;
}

}  // namespace gtsim::tpu
