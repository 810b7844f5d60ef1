// Tensor-core GEMMs per input dtype (gemm_tiled.kir's DT, gemm_persistent.kir behind `gtsim waves`):
// the time follows the config's mma.sync rate per dtype, the vector width follows the element size,
// a machine without a rate refuses cleanly, and every variant moves each operand byte and does 2MNK flops.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "gpu_test_util.hpp"
#include "kernels_ir/ops.hpp"
#include "models/analytic/gemm_plan.hpp"
#include "models/analytic/waves.hpp"
#include "models/gpu/specs.hpp"

using namespace gtsim;
using gpu::testing::lib_kernel;
using gpu::testing::load_hw;

namespace {

// DT of gemm_tiled.kir / gemm_persistent.kir
constexpr int kF16 = 0, kBf16 = 1, kTf32 = 2, kE4m3 = 3;

// A compute-bound GEMM: 16 SMs (two CTAs each) share the H200's whole L2 and HBM, 64 tiles of
// 128 x 128 (two waves), K = 1024.
const std::vector<std::string> kFewSms = {"sm.count=16"};

double tiled_us(const std::string& hw, int dt, const std::vector<std::string>& sets = kFewSms, int64_t n = 1024) {
  auto p = lib_kernel("gemm_tiled", {{"M", n}, {"N", n}, {"K", 1024}, {"DT", dt}});
  return gpu::testing::run_one(hw, *p, sets).time_us;
}

double mma_rate(const std::string& hw, const char* dtype, const std::vector<std::string>& sets = kFewSms) {
  auto root = load_hw(hw, sets);
  auto s = gpu::GpuSpecs::parse(*root);
  return s.sm.tensor.mma_sync_flops_per_cycle[size_t(*ir::parse_dtype(dtype))];
}

}  // namespace

// tf32 mma.sync runs at half the bf16 flop rate on Hopper and Ampere: a compute-bound GEMM takes
// the ratio of the config's rates (bf16 / tf32) longer, within 15% (tf32 also moves twice the bytes).
TEST(GemmDtype, Tf32RunsAtHalfTheBf16TensorRate) {
  for (const char* hw : {"h200-sxm", "a100-40gb"}) {
    double expect = mma_rate(hw, "bf16") / mma_rate(hw, "tf32");
    double ratio = tiled_us(hw, kTf32) / tiled_us(hw, kBf16);
    EXPECT_NEAR(ratio, expect, 0.15 * expect) << hw << ": tf32 / bf16 time " << ratio << ", rates " << expect;
  }
}

// The H200 config gives f16 and bf16 the same mma.sync rate (calibrated within 0.05%): the same
// program with the other opcode takes the same time, within 2%.
TEST(GemmDtype, Fp16MatchesBf16) {
  double rf = mma_rate("h200-sxm", "f16"), rb = mma_rate("h200-sxm", "bf16");
  ASSERT_NEAR(rf, rb, 0.01 * rb);
  double f16 = tiled_us("h200-sxm", kF16), bf16 = tiled_us("h200-sxm", kBf16);
  EXPECT_NEAR(f16, bf16, 0.02 * bf16);
}

// e4m3 does twice the k per instruction and moves half the bytes: where the config's fp8 mma.sync
// rate is the datasheet's 2x bf16 (h200-blind), a compute-bound GEMM is faster by about the rate
// ratio (within 20%).
TEST(GemmDtype, E4m3FasterThanBf16WhenComputeBound) {
  double expect = mma_rate("h200-blind", "bf16") / mma_rate("h200-blind", "e4m3");  // time e4m3 / bf16
  ASSERT_LT(expect, 0.8);
  double ratio = tiled_us("h200-blind", kE4m3) / tiled_us("h200-blind", kBf16);
  EXPECT_NEAR(ratio, expect, 0.2 * expect) << "e4m3 / bf16 time " << ratio << ", rates " << expect;
  EXPECT_LT(ratio, 1.0);
}

// On the H200 fp8 mma.sync is emulated (sm_90 has fp8 only in wgmma): its config rate, derived from
// the measured emulation (b16: 0.51 of the f16 flop rate), is *below* bf16's, so e4m3 keeps the tensor
// pipe busy longer than bf16 by the rate ratio (within 10%; whole cycles per instruction), although it
// issues half the other instructions.
TEST(GemmDtype, E4m3TensorPipeTimeFollowsTheCalibratedFp8Rate) {
  double expect = mma_rate("h200-sxm", "bf16") / mma_rate("h200-sxm", "e4m3");
  ASSERT_GT(expect, 1.0);
  auto busy = [](int dt) {
    auto p = lib_kernel("gemm_tiled", {{"M", 1024}, {"N", 1024}, {"K", 1024}, {"DT", dt}});
    auto r = gpu::testing::run_one("h200-sxm", *p, kFewSms);
    return r.metrics.at("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active").get<double>() *
           r.metrics.at("sm__cycles_active.avg").get<double>();
  };
  double ratio = busy(kE4m3) / busy(kBf16);
  EXPECT_NEAR(ratio, expect, 0.1 * expect) << "tensor busy e4m3 / bf16 " << ratio << ", rates " << expect;
}

// 16-byte vectors need the leading dimension to be a multiple of 16 bytes: 16 e4m3, 8 bf16, 4 tf32
// elements. K = 1024 allows 16 bytes for every dtype; K = 1032 (8 x 129) only 8 bytes of e4m3 while
// bf16 and tf32 keep 16; K = 1028 4 bytes of e4m3, 8 of bf16, 16 of tf32; an odd K drops to one element.
TEST(GemmDtype, Fp8NeedsSixteenByteAlignedKForVectorLoads) {
  auto hw = load_hw("h200-sxm");
  auto bytes = [&](const std::string& dt, int64_t K) {
    analytic::WavesRequest r;
    r.M = 1024, r.N = 1024, r.K = K, r.dtype = dt, r.simulate = false, r.suggestions = false;
    return analytic::waves(*hw, r).json["vector_bytes"].get<int>();
  };
  EXPECT_EQ(bytes("e4m3", 1024), 16);
  EXPECT_EQ(bytes("e4m3", 1032), 8);
  EXPECT_EQ(bytes("e4m3", 1028), 4);
  EXPECT_EQ(bytes("e4m3", 1026), 1);
  EXPECT_EQ(bytes("e4m3", 1025), 1);
  EXPECT_EQ(bytes("bf16", 1032), 16);
  EXPECT_EQ(bytes("bf16", 1028), 8);
  EXPECT_EQ(bytes("bf16", 1025), 2);
  EXPECT_EQ(bytes("tf32", 1032), 16);
  EXPECT_EQ(bytes("tf32", 1028), 16);
  EXPECT_EQ(bytes("tf32", 1026), 8);
  EXPECT_EQ(bytes("tf32", 1025), 4);  // a tf32 row is always 4-byte aligned: cp.async.ca.4
  // aliases print as the canonical names
  analytic::WavesRequest r;
  r.M = r.N = r.K = 1024, r.dtype = "fp8", r.simulate = false, r.suggestions = false;
  EXPECT_EQ(analytic::waves(*hw, r).json["dtype"], "e4m3");
}

// An A100 has no fp8 tensor cores (no e4m3 in sm.tensor.mma_sync_flops_per_cycle): planning an e4m3
// GEMM there is an InputError naming the dtype, not a simulation that stops at the first mma.sync.
// Split-k is bf16 only.
TEST(GemmDtype, MachineWithoutAnFp8RateRefusesE4m3) {
  ASSERT_EQ(mma_rate("a100-40gb", "e4m3", {}), 0.0);
  auto a100 = load_hw("a100-40gb");
  analytic::WavesRequest r;
  r.M = r.N = r.K = 1024, r.dtype = "e4m3", r.simulate = false;
  try {
    analytic::waves(*a100, r);
    FAIL() << "e4m3 on the A100 planned";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no mma.sync rate for dtype e4m3"), std::string::npos) << e.what();
  }
  r.dtype = "tf32";
  EXPECT_NO_THROW(analytic::waves(*a100, r));
  r.schedule = "split-k";
  EXPECT_THROW(analytic::waves(*a100, r), InputError);
}

// What the IR's functional model can check (it tracks addresses, not float values): for every dtype
// the CTAs' cp.async copies read each byte of A and B exactly once per output tile column / row
// (here one tile: exactly once), write only inside the CTA's shared tiles, and the mma.sync
// instructions do exactly 2 M N K flops.
TEST(GemmDtype, EveryDtypeLoadsEachOperandByteOnceAndDoesTwoMnkFlops) {
  const int64_t M = 128, N = 128, K = 256;  // one CTA
  for (int dt : {kF16, kBf16, kTf32, kE4m3}) {
    auto p = lib_kernel("gemm_tiled", {{"M", M}, {"N", N}, {"K", K}, {"DT", dt}});
    const int es = dt == kTf32 ? 4 : dt == kE4m3 ? 1 : 2;
    std::map<std::string, const ir::BufferInfo*> buf;
    for (const auto& b : p->buffers()) buf[b.name] = &b;
    const std::string a = dt == kTf32   ? "A4"
                          : dt == kE4m3 ? "A1"
                                        : "A",
                      b = dt == kTf32   ? "B4"
                          : dt == kE4m3 ? "B1"
                                        : "B";
    ASSERT_EQ(buf.at(a)->bytes, uint64_t(M * K * es)) << dt;
    ASSERT_EQ(buf.at(b)->bytes, uint64_t(K * N * es)) << dt;
    std::map<uint64_t, int> read;  // global byte -> times read
    uint64_t flops = 0, smem_max = 0;
    ASSERT_EQ(p->grid().x * p->grid().y, 1u);
    for (uint32_t w = 0; w < p->warps_per_cta(); ++w) {
      ir::WarpExecutor ex(*p, ir::Dim3{0, 0, 0}, w);
      ir::DynInst d;
      while (ex.next(d)) {
        if (d.op == ir::OpClass::kMma) flops += d.flops;
        if (d.op != ir::OpClass::kCpAsync) continue;
        for (int l = 0; l < 32; ++l) {
          if (!(d.active >> l & 1)) continue;  // every active lane writes shared memory (zero fill included)
          smem_max = std::max<uint64_t>(smem_max, d.addr2[l] + d.access_bytes);
          if (!(d.addr_active >> l & 1)) continue;  // the lanes that read global memory
          for (uint64_t i = 0; i < d.access_bytes; ++i) ++read[d.addr[l] + i];
        }
      }
    }
    EXPECT_EQ(flops, uint64_t(2 * M * N * K)) << "DT " << dt;
    EXPECT_LE(smem_max, uint64_t(p->shared_bytes())) << "DT " << dt;
    for (const std::string& name : {a, b}) {
      const ir::BufferInfo& bi = *buf.at(name);
      uint64_t once = 0, other = 0;
      for (uint64_t x = bi.base; x < bi.base + bi.bytes; ++x) {
        auto it = read.find(x);
        (it != read.end() && it->second == 1 ? once : other)++;
      }
      EXPECT_EQ(once, bi.bytes) << name << " DT " << dt << ": " << other << " bytes not read exactly once";
    }
    uint64_t total = 0;
    for (const auto& [addr, n] : read) total += uint64_t(n);
    EXPECT_EQ(total, uint64_t((M * K + K * N) * es)) << "DT " << dt << ": bytes read outside A and B";
  }
}

// The default (bf16) persistent/data-parallel GEMM behind `gtsim waves` and the other dtypes share the
// tile menu's shapes; each plans and simulates, and the time ordering follows the rates (tf32 slowest).
TEST(GemmDtype, WavesSimulatesEveryTensorDtypeOnTheH200) {
  auto hw = load_hw("h200-sxm", kFewSms);
  std::map<std::string, double> us;
  for (const char* dt : {"bf16", "f16", "tf32", "e4m3"}) {
    analytic::WavesRequest r;
    r.M = r.N = 768, r.K = 1024, r.dtype = dt, r.tile = "128x128", r.suggestions = false;
    auto j = analytic::waves(*hw, r).json;
    EXPECT_EQ(j["dtype"], dt);
    us[dt] = j["time_us"].get<double>();
  }
  EXPECT_NEAR(us["f16"], us["bf16"], 0.02 * us["bf16"]);
  double expect = mma_rate("h200-sxm", "bf16") / mma_rate("h200-sxm", "tf32");
  EXPECT_NEAR(us["tf32"] / us["bf16"], expect, 0.15 * expect);
  EXPECT_GT(us["tf32"], us["e4m3"]);
}
