// The contract between the IR and the timing models: one warp's next dynamic instruction.
//
// The IR executor (kernels_ir/exec) walks a parameter-bound kernel program for one warp and
// produces DynInst records on demand (never a materialized trace). The GPU model (models/gpu)
// times them: the scoreboard uses dst/src register ids, the functional units use `op`, the
// coalescer and the shared-memory banks use `addr` + `access_bytes` + `active`.
#pragma once

#include <cstdint>
#include <string_view>

namespace gtsim::ir {

inline constexpr int kWarpSize = 32;
inline constexpr uint32_t kFullMask = 0xffffffffu;

// Instruction classes the hardware config times (one functional unit or pipe each).
enum class OpClass : uint8_t {
  kInt,            // integer ALU, address arithmetic, mov, setp
  kFp32,           // fadd/fmul/ffma (CUDA-core fp32)
  kFp16,           // hadd2/hfma2 (packed half / bf16 on CUDA cores)
  kFp64,           // dadd/dfma
  kSfu,            // sin, cos, ex2, lg2, rsqrt, rcp (MUFU)
  kShuffle,        // shfl.sync (bfly, up, down, idx)
  kMma,            // tensor-core mma.sync by shape and dtype (see MmaKind)
  kWgmma,          // Hopper warpgroup MMA (timed from its own config entry)
  kLdGlobal,       // ld.global (vector width in access_bytes)
  kStGlobal,       // st.global
  kAtomGlobal,     // atom / red on global memory (returns a value when dst is set)
  kLdShared,       // ld.shared
  kStShared,       // st.shared
  kAtomShared,     // atom on shared memory
  kLdMatrix,       // ldmatrix.x1/x2/x4: addr[lane] = the row address each lane supplies (16 bytes)
  kStMatrix,       // stmatrix
  kCpAsync,        // cp.async global -> shared (addr = global source, addr2 = shared destination)
  kCpAsyncCommit,  // cp.async.commit_group
  kCpAsyncWait,    // cp.async.wait_group imm (wait until at most imm groups are pending)
  kBarSync,        // bar.sync imm (barrier id); all live warps of the CTA must arrive
  kMbarInit,       // mbarrier.init [addr2[0]], imm = expected arrivals
  kMbarArrive,     // mbarrier.arrive [addr2[0]]
  kMbarWait,       // mbarrier.try_wait.parity [addr2[0]], imm = phase parity
  kTmaLoad,        // cp.async.bulk.tensor: one 2-D box global -> shared by the tensor memory accelerator, issued
                   // once per warp instruction (the first active lane's operands): addr[0] = the box's first byte,
                   // box_rows x box_row_bytes every box_stride bytes; completes as one arrival on the mbarrier
                   // at addr2[0]
  kWgmmaCommit,    // wgmma.commit_group: the warp's wgmma issued since the last commit become one group
  kWgmmaWait,      // wgmma.wait_group imm: wait until at most imm committed groups are still running
  kBranch,         // loop-control branch (BRA): an issue slot, reads the loop predicate (docs/ir.md "Loop control")
  kSlot,           // `slot`: an issue slot and no per-thread pipe (uniform-datapath ops, constant loads, NOP and
                   // predicated-off padding in the compiled code: UMOV, ULEA, UIADD3, ULDC, LDC, NOP, @!PT ...)
  kExit,           // the warp has finished (never returned by next(); listed for stats)
  kCount
};

std::string_view op_class_name(OpClass c);

enum class DType : uint8_t {
  kU8,
  kI8,
  kE4M3,
  kE5M2,
  kF16,
  kBf16,
  kU16,
  kI16,
  kU32,
  kI32,
  kF32,
  kTf32,
  kU64,
  kI64,
  kF64,
  kCount
};
int dtype_bytes(DType t);  // 1, 2, 4 or 8 (tf32 occupies 4)
std::string_view dtype_name(DType t);

// Tensor-core MMA kind: shape m x n x k and operand / accumulator types, e.g. m16n8k16 bf16 -> f32.
struct MmaKind {
  uint16_t m = 0, n = 0, k = 0;  // wgmma's N reaches 256
  DType ab = DType::kBf16;
  DType acc = DType::kF32;
  uint64_t flops() const { return 2ull * m * n * k; }  // per warp instruction
};

inline constexpr int kMaxDst = 2;
inline constexpr int kMaxSrc = 6;
inline constexpr uint16_t kNoReg = 0xffff;

struct DynInst {
  OpClass op = OpClass::kInt;
  uint8_t n_dst = 0, n_src = 0;
  uint8_t access_bytes = 0;                  // bytes per lane for memory ops (vector width x dtype size)
  DType dtype = DType::kF32;                 // element type of the operation
  bool cache_global = true;                  // ld.global.ca (true) or .cg (false: bypass L1)
  bool int_mad = false;                      // kInt: an integer multiply(-add), IMAD / IMUL, which the FP32
                                             // FMA datapath also executes (sm.int_on_fma)
  uint16_t dst[kMaxDst] = {kNoReg, kNoReg};  // register ids written (scoreboard)
  uint16_t src[kMaxSrc] = {kNoReg, kNoReg, kNoReg, kNoReg, kNoReg, kNoReg};  // register ids read
  uint32_t active = 0;             // lanes that execute this instruction (after predicates)
  uint32_t live = 0;               // lanes of the warp that have not exited (for barrier-divergence checks)
  int32_t imm = 0;                 // wait_group N, barrier id, mbarrier expected count / parity
  uint32_t static_id = 0;          // index of the static instruction (Program::instruction(static_id))
  uint64_t flops = 0;              // floating-point operations of this warp instruction (all active lanes)
  MmaKind mma;                     // for kMma / kWgmma
  uint32_t addr_active = 0;        // lanes whose addr is meaningful: `active`, except ldmatrix/stmatrix .x1/.x2
                                   // (only lanes 0-7 / 0-15 supply row addresses) and a cp.async with a
                                   // src-size operand (only lanes whose src-size is not 0 read global memory;
                                   // every `active` lane writes its shared destination addr2, zeros past src-size)
  uint64_t addr[kWarpSize] = {};   // per-lane byte address: global virtual address, or shared offset in the CTA
  uint64_t addr2[kWarpSize] = {};  // cp.async shared destination; mbarrier address in addr2[0]
  uint32_t box_rows = 0, box_row_bytes = 0;  // kTmaLoad: the box (rows, contiguous bytes per row)
  uint64_t box_stride = 0;                   // kTmaLoad: bytes from one row of the box to the next in global memory
};

// Lanes whose shared-memory address (addr, or a cp.async's destination addr2) is accessed: a cp.async
// writes every executing lane's destination, zero-filled lanes included; other ops, `addr_active`.
inline uint32_t shared_lanes(const DynInst& d) { return d.op == OpClass::kCpAsync ? d.active : d.addr_active; }

}  // namespace gtsim::ir
