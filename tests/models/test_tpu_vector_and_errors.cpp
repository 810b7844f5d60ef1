// Rules: a memory-bound elementwise op runs at the config's HBM bandwidth (within 15%); the
// vector unit works in (8,128) vregs (padding counted); a workload that does not fit HBM is
// refused with the sizes named; the core-program verifier catches VMEM overflow, bad tiles and
// a wait on a DMA never issued; config typos and unknown names are InputErrors with positions.
#include <gtest/gtest.h>

#include "models/tpu/lowering.hpp"
#include "models/tpu/tpu_model.hpp"
#include "sim/error.hpp"
#include "tests/test_paths.hpp"

namespace gtsim::tpu {
namespace {

using gtsim::testing::cfg_path;

OpDesc elementwise(uint64_t rows, uint64_t cols, uint32_t elt) {
  OpDesc op;
  op.name = "ew";
  op.kind = OpKind::kElementwise;
  op.rows = rows, op.cols = cols, op.elt_bytes = elt;
  op.alu_ops = 1;
  return op;
}

TEST(TpuVector, MemoryBoundElementwiseRunsAtHbmBandwidthOnEveryConfig) {
  for (const char* f : {"tpu-v4.yaml", "tpu-v5e.yaml", "tpu-v5p.yaml", "tpu-v6e.yaml"}) {
    TpuConfig cfg = TpuConfig::load(cfg_path(f));
    OpDesc op = elementwise(1 << 16, 4096, 2);  // 512 MiB in, 512 MiB out
    RunResult r = TpuModel(cfg).run(lower(op, cfg).at(0));
    double gbps = double(r.hbm_read_bytes + r.hbm_write_bytes) / (r.device_us * 1e3);
    EXPECT_NEAR(gbps, cfg.hbm.bandwidth_gbps, 0.15 * cfg.hbm.bandwidth_gbps) << f;
    EXPECT_EQ(r.bound, "memory (HBM)") << f;
    EXPECT_EQ(r.hbm_read_bytes, op.rows * op.cols * 2) << f;  // aligned: no padding
  }
}

// VMEM traffic of an aligned elementwise op: the DMA writes the input into VMEM, the vector unit
// loads it and stores the result, the DMA reads the result out: 4x the tensor, 2x its HBM bytes.
TEST(TpuVector, ElementwiseMovesItsTensorFourTimesThroughVmem) {
  TpuConfig cfg = TpuConfig::load(cfg_path("tpu-v5e.yaml"));
  OpDesc op = elementwise(4096, 1024, 4);
  RunResult r;
  for (const auto& prog : lower(op, cfg)) {
    RunResult p = TpuModel(cfg).run(prog);
    r.vmem_bytes += p.vmem_bytes, r.hbm_read_bytes += p.hbm_read_bytes, r.hbm_write_bytes += p.hbm_write_bytes;
  }
  const uint64_t tensor = op.rows * op.cols * 4;
  EXPECT_EQ(r.vmem_bytes, 4 * tensor);
  EXPECT_EQ(r.hbm_read_bytes + r.hbm_write_bytes, 2 * tensor);
}

// An MXU matmul reads its weights and LHS rows from VMEM and writes f32 results there, besides
// the DMAs: VMEM traffic exceeds the HBM traffic by at least the operands and results once.
TEST(TpuMxu, MatmulReadsOperandsAndWritesResultsThroughVmem) {
  TpuConfig cfg = TpuConfig::load(cfg_path("tpu-v5e.yaml"));
  OpDesc op;
  op.name = "mm";
  op.kind = OpKind::kMatmul;
  op.m = 1024, op.k = 1024, op.n = 1024, op.elt_bytes = 2;
  uint64_t vmem = 0, hbm = 0;
  for (const auto& prog : lower(op, cfg)) {
    RunResult p = TpuModel(cfg).run(prog);
    vmem += p.vmem_bytes, hbm += p.hbm_read_bytes + p.hbm_write_bytes;
  }
  const uint64_t operands = (op.m * op.k + op.k * op.n) * 2 + op.m * op.n * 4;
  EXPECT_GE(vmem, hbm + operands);
}

TEST(TpuVector, PaddingToVregsIsCounted) {
  TpuConfig cfg = TpuConfig::load(cfg_path("tpu-v5e.yaml"));
  OpDesc op = elementwise(1024, 130, 4);  // 130 lanes: two vregs wide, the second mostly empty
  RunResult r = TpuModel(cfg).run(lower(op, cfg).at(0));
  EXPECT_EQ(r.vpu_elements, 1024u * 130u);
  EXPECT_EQ(r.vpu_vregs, (1024u / 8) * 2);
  EXPECT_GT(r.hbm_read_bytes, 1024u * 130u * 4u);  // HBM tiles are (8,128) too
}

TEST(TpuErrors, WorkloadLargerThanHbmIsRefusedWithSizes) {
  TpuConfig cfg = TpuConfig::load(cfg_path("tpu-v5e.yaml"));
  OpDesc op = elementwise(1 << 20, 8192, 2);  // 16 GiB in + 16 GiB out
  try {
    lower(op, cfg);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    std::string w = e.what();
    EXPECT_NE(w.find("34359738368 bytes"), std::string::npos) << w;
    EXPECT_NE(w.find("17180000000 bytes (16 GiB"), std::string::npos) << w;
  }
}

CoreProgram tiny() {
  CoreProgram p;
  p.name = std::string(1, 't');  // (a literal assign trips a GCC 12 -Wrestrict false positive)
  p.add_buffer("x", 128, 128, 2);
  p.add_semaphore();
  return p;
}

TEST(TpuErrors, VerifierRejectsVmemOverflow) {
  TpuConfig cfg = TpuConfig::load(cfg_path("tpu-v4.yaml"));  // 16 MiB of VMEM
  CoreProgram p = tiny();
  p.add_buffer("big", 4096, 4096, 4);  // 64 MiB
  try {
    verify(p, cfg);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("16777216 bytes of VMEM"), std::string::npos) << e.what();
  }
}

TEST(TpuErrors, VerifierRejectsWaitOnDmaNeverIssuedAndBadTiles) {
  TpuConfig cfg = TpuConfig::load(cfg_path("tpu-v5e.yaml"));
  CoreProgram p = tiny();
  p.push(Step::wait(0));                       // no DMA signals semaphore 0
  p.push(Step::matmul(0, 0, 8));               // no weights loaded
  p.push(Step::load_weights(0, 0, 256, 128));  // bigger than the 128x128 array
  p.push(Step::load_weights(7, 0, 128, 128));  // v5e has 4 MXUs
  try {
    verify(p, cfg);
    FAIL();
  } catch (const InputError& e) {
    std::string w = e.what();
    EXPECT_EQ(e.diagnostics().size(), 4u) << w;
    EXPECT_NE(w.find("core program t:1: wait on semaphore 0 that no DMA issued"), std::string::npos) << w;
    EXPECT_NE(w.find("before any mxu.load_weights"), std::string::npos) << w;
    EXPECT_NE(w.find("256x128 does not fit the 128x128 MXU"), std::string::npos) << w;
    EXPECT_NE(w.find("MXU 7 does not exist"), std::string::npos) << w;
  }
  CoreProgram ok = tiny();
  ok.push(Step::loop(3));
  ok.push(Step::dma_in(0, 0, 128, 128));
  ok.push(Step::wait(0));
  ok.push(Step::end_loop());
  EXPECT_NO_THROW(verify(ok, cfg));
}

TEST(TpuErrors, ConfigTypoIsAnInputErrorWithLine) {
  auto root = ConfigNode::load_string(
      "name: t\ntarget: tpu\nclocks: {core_mhz: 1500}\nchip: {tensorcores: 1, peak_bf16_tflops: 197}\n"
      "dispatch: {overhead_us: 0}\nscalar: {issue_cycles: 1}\n"
      "mxu: {count: 4, rows: 128, cols: 128, timing: tpu_like, colz: 3}\n"
      "vpu: {sublanes: 8, lanes: 128, alu_ops_per_cycle: 2, transcendental_cycles: 4, reduce_cycles_per_tile: 8}\n"
      "vmem: {capacity_mib: 128, bandwidth_gbps: 18000}\ndma: {engines: 4, issue_cycles: 16}\n"
      "hbm: {impl: bandwidth_server, capacity_gb: 16, bandwidth_gbps: 819, burst_bytes: 32, latency_ns: 500}\n",
      "typo.yaml");
  try {
    TpuConfig::from_node(*root);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("typo.yaml:7:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("colz"), std::string::npos) << e.what();
  }
}

TEST(TpuErrors, UnknownTimingAndImplListTheRegisteredOnes) {
  try {
    TpuConfig::load(cfg_path("tpu-v5e.yaml"), {"mxu.timing=scalesim"});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("registered: textbook, tpu_like"), std::string::npos) << e.what();
  }
  try {
    TpuConfig::load(cfg_path("tpu-v5e.yaml"), {"hbm.impl=dram3d"});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("registered: bandwidth_server, banked"), std::string::npos) << e.what();
  }
}

TEST(TpuErrors, V6eMxuKnobsMustReachTheStatedPeak) {
  EXPECT_NO_THROW(TpuConfig::load(cfg_path("tpu-v6e.yaml")));
  EXPECT_NO_THROW(TpuConfig::load(cfg_path("tpu-v6e.yaml"), {"mxu.count=4", "mxu.rows_per_cycle=1"}));
  EXPECT_THROW(TpuConfig::load(cfg_path("tpu-v6e.yaml"), {"mxu.rows_per_cycle=1"}), InputError);
}

}  // namespace
}  // namespace gtsim::tpu
