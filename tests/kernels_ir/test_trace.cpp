#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "helpers.hpp"
#include "kernels_ir/trace.hpp"

using namespace gtsim::ir;
using namespace gtsim::ir::test;

TEST(TraceSectors, StreamCopyWarpLoadIs16SectorsIn4Lines) {
  auto p = build_lib("stream_copy.kir", {{"n", 1 << 20}});
  auto v = run_warp(*p);
  ASSERT_EQ(v.size(), 8u);  // one line per warp access: 4 loads, 4 stores
  for (const auto& d : v) {
    EXPECT_EQ(d.access_bytes, 16);
    auto sc = count_sectors_lines(d);
    EXPECT_EQ(sc.sectors, 16u);
    EXPECT_EQ(sc.lines, 4u);
  }
  std::string t = trace_warp(*p, {0, 0, 0}, 0, 100);
  EXPECT_NE(t.find("sectors=16 lines=4"), std::string::npos) << t;
  EXPECT_NE(t.find("+16*lane"), std::string::npos) << t;
  EXPECT_EQ(std::count(t.begin(), t.end(), '\n'), 8);
}

TEST(TraceSectors, ColumnWiseAccessTouches32Sectors) {
  auto p = build_lib("strided_copy.kir", {{"n", 1 << 20}, {"stride", 1024}});
  auto v = run_warp(*p);  // the run-time divisions' integer work first, then the load and the store
  auto ld = std::find_if(v.begin(), v.end(), [](const auto& d) { return d.op == OpClass::kLdGlobal; });
  auto st = std::find_if(v.begin(), v.end(), [](const auto& d) { return d.op == OpClass::kStGlobal; });
  ASSERT_TRUE(ld != v.end() && st != v.end());
  auto sc = count_sectors_lines(*ld);
  EXPECT_EQ(sc.sectors, 32u);
  EXPECT_EQ(sc.lines, 32u);
  EXPECT_EQ(count_sectors_lines(*st).sectors, 4u);  // the store is coalesced
}

namespace {
uint32_t bank_wavefronts(int stride) {
  auto p = build_lib("bank_conflicts.kir", {{"stride", stride}, {"iters", 8}});
  for (const auto& d : run_warp(*p))
    if (d.op == OpClass::kLdShared) return shared_wavefronts(d);
  return 0;
}
}  // namespace

TEST(TraceBanks, Stride2Is2Wavefronts) { EXPECT_EQ(bank_wavefronts(2), 2u); }
TEST(TraceBanks, Stride33Is1Wavefront) { EXPECT_EQ(bank_wavefronts(33), 1u); }
TEST(TraceBanks, Stride32Is32Wavefronts) { EXPECT_EQ(bank_wavefronts(32), 32u); }
TEST(TraceBanks, SameWordIsShared) { EXPECT_EQ(bank_wavefronts(0), 1u); }

TEST(TraceBanks, GemmLdmatrixIsConflictFree) {
  auto p = build_lib("gemm_tiled.kir", {{"M", 256}, {"N", 256}, {"K", 64}});
  int n = 0;
  for (const auto& d : run_warp(*p)) {
    if (d.op != OpClass::kLdMatrix) continue;
    EXPECT_EQ(shared_wavefronts(d), 4u) << p->instruction(d.static_id).text;  // 512 bytes = 4 wavefronts
    ++n;
  }
  EXPECT_EQ(n, 2 * 2 * 6);
}

TEST(ChaseAddresses, FollowTheLoadedValuesVisitingEveryNodeOnce) {
  const int64_t footprint = 1 << 16, stride = 256, hops = footprint / stride;
  auto p = build_lib("pointer_chase.kir", {{"footprint_bytes", footprint}, {"stride_bytes", stride}});
  uint64_t base = p->buffers()[0].base;
  std::set<uint64_t> seen;
  uint64_t expect_next = 0;
  int loads = 0;
  for (const auto& d : run_warp(*p)) {
    if (d.op != OpClass::kLdGlobal || d.access_bytes != 8) continue;
    EXPECT_EQ(d.active, 1u);
    uint64_t off = d.addr[0] - base;
    EXPECT_EQ(off, expect_next);
    EXPECT_EQ(off % stride, 0u);
    seen.insert(off);
    ++loads;
    break;  // the first load starts at node 0; the full walk below checks the rest
  }
  // full walk: collect the sequence of chase addresses
  seen.clear();
  std::vector<uint64_t> seq;
  for (const auto& d : run_warp(*p))
    if (d.op == OpClass::kLdGlobal && d.access_bytes == 8) seq.push_back(d.addr[0] - base);
  ASSERT_EQ(int64_t(seq.size()), hops);
  EXPECT_EQ(seq[0], 0u);
  for (auto o : seq) seen.insert(o);
  EXPECT_EQ(int64_t(seen.size()), hops);  // every node exactly once per cycle
  EXPECT_EQ(loads, 1);
}

// cp.async's src-size (PTX: bytes read from the source, the rest of the copy zero-filled): a lane
// copying 0 bytes reads no global memory but still writes its shared destination, as the twins' edge
// tiles do (validation/cuda/apps.cuh cp_async). Predicated off, the same lanes write nothing.
TEST(TraceSectors, CpAsyncZeroFillWritesSharedWithoutReadingGlobal) {
  auto p = build_text(R"(kernel k() {
  grid 1 block 32
  buffer g : f32[64]
  shared s : f32[64]
  cp.async.ca.8 s[lane * 2], g[lane * 2], select(lane < 8, 8, 0)
  @(lane < 8) cp.async.ca.8 s[lane * 2], g[lane * 2]
  cp.async.commit
  cp.async.wait 0
}
)");
  auto v = run_warp(*p);
  ASSERT_GE(v.size(), 2u);
  const DynInst& zfill = v[0];
  const DynInst& pred = v[1];
  ASSERT_EQ(zfill.op, OpClass::kCpAsync);
  EXPECT_EQ(zfill.active, kFullMask);                 // every lane executes (and writes shared)
  EXPECT_EQ(zfill.addr_active, 0xffu);                // only lanes 0-7 read
  EXPECT_EQ(count_sectors_lines(zfill).sectors, 2u);  // 8 lanes x 8 bytes = 64 bytes
  EXPECT_EQ(shared_wavefronts(zfill), 2u);            // 32 lanes x 8 bytes = 256 bytes written
  EXPECT_EQ(pred.active, 0xffu);
  EXPECT_EQ(count_sectors_lines(pred).sectors, 2u);
  EXPECT_EQ(shared_wavefronts(pred), 1u);  // only 64 bytes written
}

// The register arrays of flash_attention_fwd are sized from its tile parameters: the workloads lower
// attention at head dims other than the twin's 64 (transformer_block: dh = 128) and the whole warp
// runs there, each pass issuing D / 8 x Bc / 16 P V mma.sync.
TEST(TraceRegisters, FlashAttentionRunsAtTheHeadDimsAndKeyBlocksWorkloadsUse) {
  for (int64_t D : {64, 128})
    for (int64_t Bc : {32, 64}) {
      SCOPED_TRACE("D=" + std::to_string(D) + " Bc=" + std::to_string(Bc));
      auto p = build_lib("flash_attention_fwd.kir", {{"T", 2 * Bc}, {"H", 1}, {"D", D}, {"Bc", Bc}});
      std::vector<DynInst> v;
      ASSERT_NO_THROW(v = run_warp(*p));
      const auto mma = std::count_if(v.begin(), v.end(), [](const auto& d) { return d.op == OpClass::kMma; });
      EXPECT_EQ(mma, 2 * (D / 16 * Bc / 8 + D / 8 * Bc / 16));  // two passes of S = Q K^T and O += P V
      auto b = build_lib("flash_attention_bwd.kir", {{"T", 2 * Bc}, {"H", 1}, {"D", D}, {"Bc", Bc}, {"Br", Bc}});
      EXPECT_NO_THROW(run_warp(*b));
    }
}
