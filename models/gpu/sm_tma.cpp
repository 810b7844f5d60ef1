// Hopper's asynchronous machinery on the SM: the tensor memory accelerator's bulk tensor copies
// (cp.async.bulk.tensor, completing on an mbarrier) and wgmma's commit / wait groups.
//
// A bulk copy is one instruction of one warp: the box (rows x contiguous bytes, every `stride` bytes
// in global memory) goes to the memory system as 16-byte pieces, 32 to a request batch, bypassing the
// L1 (as cp.async.cg: the SM's port and tag pipe still pass every line). No LSU issue per piece, no
// register results: the last piece to land counts one arrival on the copy's mbarrier (PTX's
// complete_tx: the kernel initializes the barrier with one arrival per copy of a phase). The shared
// memory writes are not charged to the shared pipe (TMA writes whole, swizzled 128-byte rows).
#include <algorithm>
#include <bit>
#include <sstream>

#include "models/gpu/sm.hpp"
#include "sim/error.hpp"

namespace gtsim::gpu {

namespace {
constexpr uint32_t kTmaPiece = 16;  // bytes per lane of a request batch
}  // namespace

void Sm::tma_load(uint16_t wi, uint64_t c) {
  Warp& w = warps_[wi];
  const ir::DynInst& in = w.inst;
  if (in.active == 0) return;  // predicated off: no copy
  CtaSlot& cta = ctas_[w.cta];
  auto fail = [&](const std::string& what) {
    throw SimulationError(warp_place(w, in.static_id) + ": cp.async.bulk.tensor " + what);
  };
  const uint64_t base = in.addr[0];
  const uint32_t elem = uint32_t(std::max(ir::dtype_bytes(in.dtype), 1));
  if (base % 16 != 0) {
    std::ostringstream os;
    os << "box starts at global address 0x" << std::hex << base
       << ", which is not 16-byte aligned; expected a 16-byte-aligned box (TMA's rule: a misaligned tensor needs "
          "cp.async)";
    fail(os.str());
  }
  if (in.box_stride % 16 != 0)
    fail("row stride of " + std::to_string(in.box_stride) +
         " bytes is not a multiple of 16; expected a leading dimension of a multiple of 16 bytes (TMA's rule: a "
         "misaligned tensor needs cp.async)");
  if (in.box_rows < 1 || in.box_rows > 256 || in.box_row_bytes < 16 || in.box_row_bytes % 16 != 0 ||
      in.box_row_bytes / elem > 256)
    fail("box of " + std::to_string(in.box_rows) + " rows x " + std::to_string(in.box_row_bytes / elem) +
         " elements; expected 1..256 rows of 1..256 elements, a multiple of 16 bytes each");
  if (in.box_rows > 1 && in.box_stride < in.box_row_bytes)
    fail("row stride of " + std::to_string(in.box_stride) + " bytes is shorter than a row of the box (" +
         std::to_string(in.box_row_bytes) + " bytes); expected LD >= COLS");
  if (!find_mbar(cta, in.addr2[0]))
    fail("completes on the mbarrier at shared offset " + std::to_string(in.addr2[0]) + " before mbarrier.init");

  uint32_t idx = 0;
  if (tma_free_.empty()) {
    tmas_.emplace_back();
    idx = uint32_t(tmas_.size() - 1);
  } else {
    idx = tma_free_.back();
    tma_free_.pop_back();
  }
  const uint64_t pieces = uint64_t(in.box_rows) * (in.box_row_bytes / kTmaPiece);
  const uint32_t batches = uint32_t((pieces + ir::kWarpSize - 1) / ir::kWarpSize);
  tmas_[idx] = TmaCopy{w.cta, batches, in.addr2[0]};
  w.pending += batches;  // the warp's slot stays until its copies have landed

  if (record_warm_ && in_sampling_loop(w)) {
    std::vector<WarmAccess>* v = warm_ring(w);
    if (v) {
      if (in.box_stride == in.box_row_bytes)
        v->push_back(WarmAccess{base, uint32_t(uint64_t(in.box_rows) * in.box_row_bytes), false});
      else
        for (uint32_t r = 0; r < in.box_rows; ++r)
          v->push_back(WarmAccess{base + r * in.box_stride, in.box_row_bytes, false});
    }
  }

  ir::DynInst piece;
  piece.op = ir::OpClass::kCpAsync;
  piece.cache_global = false;
  piece.access_bytes = uint8_t(kTmaPiece);
  piece.dtype = in.dtype;
  piece.static_id = in.static_id;
  const uint64_t token = kTokTma | uint64_t(wi) << 4 | uint64_t(idx) << 20;
  const Tick at = clock_.cycle_start(c);
  uint32_t lane = 0, requests = 0, sectors = 0;
  auto send = [&] {
    piece.active = piece.addr_active = piece.live = lane == 32 ? ir::kFullMask : (1u << lane) - 1;
    mem::IssueInfo info = memory_.issue(id_, piece, at, this, token);
    requests += info.requests;
    sectors += info.sectors;
    lane = 0;
  };
  for (uint32_t r = 0; r < in.box_rows; ++r)
    for (uint32_t off = 0; off < in.box_row_bytes; off += kTmaPiece) {
      piece.addr[lane++] = base + r * in.box_stride + off;
      if (lane == ir::kWarpSize) send();
    }
  if (lane) send();
  ++*ctr_[kGlobalInsts];
  *ctr_[kGlobalRequests] += requests;
  *ctr_[kGlobalSectors] += sectors;
}

void Sm::tma_request_done(uint16_t wi, uint64_t idx, uint64_t c) {
  (void)wi;
  TmaCopy& t = tmas_[size_t(idx)];
  if (--t.requests_left > 0) return;
  CtaSlot& cta = ctas_[t.cta];
  if (MBarrier* m = find_mbar(cta, t.mbar)) mbar_arrive(cta, *m, 1, c);
  tma_free_.push_back(uint32_t(idx));
}

// wgmma.commit_group closes the open group; wgmma.wait_group N holds the warp until every committed
// group but the N most recent has completed (its accumulators written).
void Sm::wgmma_group(Warp& w, uint64_t c) {
  const ir::DynInst& in = w.inst;
  if (in.op == ir::OpClass::kWgmmaCommit) {
    w.wg_groups.push_back(w.wg_open);
    w.wg_open = 0;
    return;
  }
  uint64_t until = 0;
  while (w.wg_groups.size() > size_t(std::max(in.imm, 0))) {
    until = std::max(until, w.wg_groups.front());
    w.wg_groups.pop_front();
  }
  if (until > c + 1) w.hold_until = std::max(w.hold_until, until);
}

}  // namespace gtsim::gpu
