#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "models/mem/hbm.hpp"
#include "models/mem/memory_system_impl.hpp"
#include "tests/models/mem_test_util.hpp"

namespace gtsim::mem {
namespace {

using ir::OpClass;
using testing::MemFixture;
using testing::warp_access;

// Writes (or reads) `bytes` starting at `base` with fully coalesced warp accesses, one line each,
// spread over the SMs, all issued at once.
void stream(MemFixture& f, OpClass op, uint64_t base, uint64_t bytes, uint32_t sms, bool cg = true) {
  uint32_t sm = 0;
  for (uint64_t a = base; a < base + bytes; a += 128) {
    auto d = warp_access(op, a, 4, 4);
    d.cache_global = !cg;
    f.mem->issue(sm, d, f.sim.now(), &f.rec, a);
    sm = (sm + 1) % sms;
  }
  f.sim.run();
}

TEST(L2Cache, TensorSmallerThanL2StaysDirtyWithoutDramWrites) {
  MemFixture f;  // 1 MiB L2
  f.mem->begin_kernel(0);
  stream(f, OpClass::kStGlobal, 0, 256 * 1024, 2);
  f.mem->end_kernel();
  auto t = f.mem->totals();
  EXPECT_EQ(t.dram_write_bytes, 0u);
  EXPECT_EQ(t.dram_read_bytes, 0u);  // whole sectors written: no read for ownership
}

TEST(L2Cache, TensorSeveralTimesL2EvictsAboutItsSizeMinusWhatStays) {
  MemFixture f;
  f.mem->begin_kernel(0);
  uint64_t bytes = 4 << 20, l2 = 1 << 20;
  stream(f, OpClass::kStGlobal, 0, bytes, 2);
  double wr = double(f.mem->totals().dram_write_bytes);
  EXPECT_GT(wr, double(bytes - l2) * 0.97);
  EXPECT_LE(wr, double(bytes - l2 / 2));
}

TEST(L2Cache, ContentsCarryOverToTheNextKernel) {
  MemFixture f;
  f.mem->begin_kernel(64 * 1024);
  stream(f, OpClass::kStGlobal, 0, 256 * 1024, 2);
  f.mem->end_kernel();
  auto before = f.mem->totals();
  f.mem->begin_kernel(64 * 1024);
  stream(f, OpClass::kLdGlobal, 0, 256 * 1024, 2, false);
  f.mem->end_kernel();
  auto after = f.mem->totals();
  EXPECT_EQ(after.dram_read_bytes, before.dram_read_bytes);
  EXPECT_EQ(after.l2_sector_hits - before.l2_sector_hits, 256u * 1024 / 32);
  nlohmann::json m;
  f.mem->add_metrics(m, before);
  EXPECT_DOUBLE_EQ(m["lts__t_sector_hit_rate.pct"].get<double>(), 100.0);
  EXPECT_EQ(m["dram__bytes_read.sum"].get<uint64_t>(), 0u);
  EXPECT_EQ(m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"].get<uint64_t>(), 256u * 1024 / 32);
}

// Lines per slice of the 16-slice fixture for `lines`.
std::vector<int> slice_load(const MemorySystemImpl& impl, const std::vector<uint64_t>& lines) {
  std::vector<int> load(16, 0);
  for (uint64_t l : lines) ++load[impl.slice_of(l)];
  return load;
}

TEST(L2Cache, HashSpreadsAPowerOfTwoStrideOverSlices) {
  MemFixture f;  // 16 slices
  auto* impl = dynamic_cast<MemorySystemImpl*>(f.mem.get());
  ASSERT_NE(impl, nullptr);
  for (uint64_t stride_lines : {16u, 32u, 64u, 1024u}) {
    std::vector<uint64_t> lines;
    for (uint64_t i = 0; i < 256; ++i) lines.push_back(i * stride_lines);
    std::vector<int> load = slice_load(*impl, lines);
    int used = int(std::count_if(load.begin(), load.end(), [](int n) { return n > 0; }));
    EXPECT_EQ(used, 16) << "stride " << stride_lines << " lines";
    EXPECT_LE(*std::max_element(load.begin(), load.end()), 32) << "stride " << stride_lines;  // <= 2x even
  }
}

// The row segments of a padded matrix (64 bytes of each row at a 2064-byte pitch, gemm_tiled's A
// tile at 1032^3) must spread over the slices too: the XOR-fold at shifts 7, 14, 21, 28 sent them to
// 30 of 80.
TEST(L2Cache, HashSpreadsTheRowsOfAPaddedPitchOverSlices) {
  MemFixture f;  // 16 slices
  auto* impl = dynamic_cast<MemorySystemImpl*>(f.mem.get());
  ASSERT_NE(impl, nullptr);
  for (uint64_t pitch : {2064u, 2080u, 4112u, 8208u}) {
    std::set<uint64_t> rows;
    for (uint64_t r = 0; r < 1024; ++r)
      for (uint64_t b = 0; b < 64; b += 32) rows.insert(((1ull << 30) + r * pitch + b) / 128);
    std::vector<int> load = slice_load(*impl, std::vector<uint64_t>(rows.begin(), rows.end()));
    double even = double(rows.size()) / 16;
    EXPECT_LE(*std::max_element(load.begin(), load.end()), 1.5 * even) << "pitch " << pitch << " bytes";
  }
}

TEST(Hbm, LongStreamSustainsTheConfiguredBandwidthWithinOnePercent) {
  MemFixture f(testing::small_machine_yaml(), 16);  // 16 SM ports x 64 B/cycle > 400 GB/s
  f.mem->begin_kernel(0);
  uint64_t bytes = 64ull << 20;
  stream(f, OpClass::kLdGlobal, 0, bytes, 16);
  ASSERT_EQ(f.rec.done.size(), bytes / 128);
  Tick first = kTickMax, last = 0;
  for (auto& d : f.rec.done) first = std::min(first, d.second), last = std::max(last, d.second);
  double rate = double(bytes - 128) / (double(last - first) / kTicksPerNs);  // bytes per ns = GB/s
  EXPECT_NEAR(rate, 400.0, 4.0);
  EXPECT_EQ(f.mem->totals().dram_read_bytes, bytes);
}

// Mean HBM read latency when `k` line reads arrive together.
double mean_latency_with_burst_of(uint32_t k) {
  MemFixture f(testing::small_machine_yaml(), 16);
  f.mem->begin_kernel(0);
  stream(f, OpClass::kLdGlobal, 0, uint64_t(k) * 128, 16);
  auto* h = dynamic_cast<const Histogram*>(f.sim.stats().find("mem/hbm/read_latency_ns"));
  return h ? h->mean() : -1;
}

TEST(Hbm, LoadedLatencyRisesWithQueueOccupancy) {
  double l1 = mean_latency_with_burst_of(1), l64 = mean_latency_with_burst_of(64),
         l4k = mean_latency_with_burst_of(4096);
  EXPECT_NEAR(l1, 300.0, 1.0);  // idle: hbm.latency_ns
  EXPECT_GT(l64, l1 + 5);
  EXPECT_GT(l4k, l64 * 1.5);
  MemFixture f(testing::small_machine_yaml(), 16);
  f.mem->begin_kernel(0);
  stream(f, OpClass::kLdGlobal, 0, 4096 * 128, 16);
  auto* q = dynamic_cast<const Histogram*>(f.sim.stats().find("mem/hbm/queue_bytes"));
  ASSERT_NE(q, nullptr);
  EXPECT_GT(q->max(), 64 * 1024.0);
}

TEST(Hbm, UnknownImplListsTheRegisteredOnes) {
  auto yaml = testing::small_machine_yaml();
  yaml.replace(yaml.find("impl: bandwidth_server"), 22, "impl: ddr9");
  try {
    MemFixture f(yaml);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("bandwidth_server"), std::string::npos) << what;
    EXPECT_NE(what.find("banked"), std::string::npos) << what;
  }
}

const char* kBanked =
    ", banked: {channels: 8, banks_per_channel: 16, row_bytes: 2048, interleave_bytes: 256, "
    "trcd_ns: 14, tcl_ns: 14, trp_ns: 14}";

TEST(HbmBanked, SequentialStreamHitsOpenRowsRandomLinesDoNot) {
  auto yaml = testing::small_machine_yaml(kBanked);
  yaml.replace(yaml.find("impl: bandwidth_server"), 22, "impl: banked");
  MemFixture seq(yaml, 16), rnd(yaml, 16);
  seq.mem->begin_kernel(0);
  rnd.mem->begin_kernel(0);
  stream(seq, OpClass::kLdGlobal, 0, 4 << 20, 16);
  uint64_t x = 1;
  for (int i = 0; i < 32768; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    auto d = warp_access(OpClass::kLdGlobal, ((x >> 20) % (1ull << 24)) * 128, 0, 4, 1u);
    d.cache_global = false;
    rnd.mem->issue(uint32_t(i % 16), d, 0, &rnd.rec, uint64_t(i));
  }
  rnd.sim.run();
  auto hits = [](MemFixture& f) {
    return double(f.sim.stats().find("mem/hbm/row_hits")->value_json().get<uint64_t>()) /
           double(f.sim.stats().find("mem/hbm/reads")->value_json().get<uint64_t>());
  };
  EXPECT_GT(hits(seq), 0.8);
  EXPECT_LT(hits(rnd), 0.2);
  EXPECT_GT(rnd.sim.now() * 1.0 / (32768.0 * 128), seq.sim.now() * 1.0 / double(4 << 20));  // random is slower per byte
}

// The small machine with extra l2 keys (appended inside its l2 map).
std::string with_l2(const std::string& extra) {
  std::string y = testing::small_machine_yaml();
  const std::string key = "bytes_per_cycle_per_slice: 64";
  return y.replace(y.find(key), key.size(), key + ", " + extra);
}

// Time (ns) for `requests` store requests to L2-resident lines, all issued at once from 64 SMs (their
// crossbar ports outrun the 16 slices): one sector per line (32 lanes, 128 B apart) or whole lines.
double l2_store_ns(const std::string& yaml, bool one_sector, uint64_t requests, uint64_t* near = nullptr) {
  MemFixture f(yaml, 64);
  f.mem->begin_kernel(0);
  const uint64_t lines = 4096;  // 512 KiB: within the 1 MiB L2
  if (one_sector) {
    for (uint64_t i = 0; i < requests / 32; ++i)
      f.mem->issue(uint32_t(i % 64), warp_access(OpClass::kStGlobal, (i * 32 % lines) * 128, 128, 4), 0, &f.rec, i);
  } else {
    for (uint64_t i = 0; i < requests; ++i)
      f.mem->issue(uint32_t(i % 64), warp_access(OpClass::kStGlobal, (i % lines) * 128, 4, 4), 0, &f.rec, i);
  }
  f.sim.run();
  if (near) *near = f.sim.stats().find("mem/l2/near_lookups")->value_json().get<uint64_t>();
  Tick last = 0;  // stores complete when their slice accepts them
  for (const auto& d : f.rec.done) last = std::max(last, d.second);
  return double(last) / double(kTicksPerNs);
}

TEST(L2Slice, OneSectorRequestsAreBoundByTheSliceRequestRate) {
  // A slice takes one request per cycle whatever its size and 64 B per cycle: a one-sector store
  // costs a cycle, a whole line two. Without the request limit, a sector costs half a cycle.
  const uint64_t n = 16384;
  double limited = l2_store_ns(with_l2("requests_per_cycle_per_slice: 1"), false, n) /
                   l2_store_ns(with_l2("requests_per_cycle_per_slice: 1"), true, n);
  double unlimited =
      l2_store_ns(testing::small_machine_yaml(), false, n) / l2_store_ns(testing::small_machine_yaml(), true, n);
  EXPECT_NEAR(limited, 2.0, 0.3);
  EXPECT_GT(unlimited, 3.2);
}

TEST(L2Partitions, FarRequestsAreHandledByANearSliceFirst) {
  // Half of the lines are homed in the far partition; each of those also costs a slice of the SM's
  // own partition: 1.5x the slice work of the same stream.
  const uint64_t n = 16384;
  uint64_t near = 0;
  double with = l2_store_ns(with_l2("near_partition_lookup: true"), false, n, &near);
  double without = l2_store_ns(testing::small_machine_yaml(), false, n);
  EXPECT_NEAR(double(near) / double(n), 0.5, 0.1);
  EXPECT_NEAR(with / without, 1.5, 0.2);
}

// Time (ns) for the SMs `sms` to read 64 KB each of L2-resident lines (ld.global.cg, one line per warp
// access, all issued at once), with noc `extra` (sms_per_group ...) on a 4-SM machine.
double group_read_ns(const std::string& extra, const std::vector<uint32_t>& sms) {
  std::string y = testing::small_machine_yaml();
  const std::string key = "noc: {bytes_per_cycle_per_sm: 64, latency_cycles: 20";
  y.replace(y.find(key), key.size(), key + extra);
  MemFixture f(y, 4);
  const uint64_t per_sm = 64 * 1024;
  stream(f, OpClass::kStGlobal, 0, per_sm * sms.size(), 1);  // into the L2 (1 MB): resident, dirty
  Tick start = f.sim.now();
  f.rec.done.clear();
  for (size_t k = 0; k < sms.size(); ++k)
    for (uint64_t a = k * per_sm; a < (k + 1) * per_sm; a += 128) {
      auto d = warp_access(OpClass::kLdGlobal, a, 4, 4);
      d.cache_global = false;
      f.mem->issue(sms[k], d, f.sim.now(), &f.rec, a);
    }
  f.sim.run();
  Tick last = 0;
  for (const auto& d : f.rec.done) last = std::max(last, d.second);
  return double(last - start) / double(kTicksPerNs);
}

TEST(Crossbar, SmsOfOneGroupShareItsLinkToTheL2) {
  // noc.sms_per_group = 2: SMs 0 and 1 share one link of 64 B/cycle (as wide as each SM's port), SMs
  // 0 and 2 have one each. Two SMs of one group move their 128 KB over one link: 1024 cycles (1 GHz)
  // longer than over two; without groups the placement does not matter.
  const std::string groups = ", sms_per_group: 2, bytes_per_cycle_per_group: 64";
  double same = group_read_ns(groups, {0, 1}), apart = group_read_ns(groups, {0, 2});
  EXPECT_NEAR(same - apart, 65536.0 / 64.0, 60);
  EXPECT_NEAR(apart, group_read_ns("", {0, 2}), 5);
  EXPECT_NEAR(group_read_ns("", {0, 1}), group_read_ns("", {0, 2}), 5);
}

TEST(Hbm, MixedReadsAndWritesPayTheBusTurnaround) {
  // bandwidth_gbps is a pure stream's rate; 1:1 traffic pays the whole mixed_traffic_overhead.
  auto run = [](double overhead, int pattern) {  // 0: writes only, 1: reads only, 2: alternating
    HbmSpecs s;
    s.bandwidth_gbps = 1000;
    s.latency_ns = 0;
    s.mixed_traffic_overhead = overhead;
    StatGroup stats("hbm");
    register_hbm_models();
    auto h = make_hbm_model(s, stats);
    Tick done = 0;
    for (int i = 0; i < 200000; ++i)
      done = std::max(done, h->access(0, uint64_t(i) * 128, 128, pattern == 0 || (pattern == 2 && i % 2)));
    return double(done);
  };
  // a pure stream pays only while its first ~1 MiB settles the write fraction (25.6 MB here)
  EXPECT_NEAR(run(0.125, 0) / run(0, 0), 1.0, 0.02);
  EXPECT_NEAR(run(0.125, 1) / run(0, 1), 1.0, 0.02);
  EXPECT_NEAR(run(0.125, 2) / run(0, 2), 1.125, 0.01);
}

TEST(MemorySystem, SameInputsGiveIdenticalResults) {
  auto run = [] {
    MemFixture f(testing::small_machine_yaml(), 4);
    f.mem->begin_kernel(16 * 1024);
    for (uint64_t i = 0; i < 2000; ++i)
      f.mem->issue(uint32_t(i % 4),
                   warp_access(i % 3 ? OpClass::kLdGlobal : OpClass::kStGlobal, (i * 7919) % 100000 * 64, 68, 4),
                   f.sim.now(), &f.rec, i);
    f.sim.run();
    return std::make_pair(f.rec.done, f.sim.stats().to_json().dump());
  };
  EXPECT_EQ(run(), run());
}

// l2.near_copies: loads of lines homed in the far partition leave a copy in the SM's own partition.
std::string with_near_copies(bool on) {
  std::string y = with_l2(on ? "near_copies: true" : "near_copies: false");
  const std::string key = "far_extra_cycles: 0";
  return y.replace(y.find(key), key.size(), "far_extra_cycles: 100");
}

// Load latencies (ns) of SM 0's second pass over `lines` lines (.cg loads, one line at a time).
std::vector<double> second_pass_ns(const std::string& yaml, uint64_t lines) {
  MemFixture f(yaml, 2);
  f.mem->begin_kernel(0);
  std::vector<double> out;
  for (int pass = 0; pass < 2; ++pass)
    for (uint64_t i = 0; i < lines; ++i) {
      auto d = warp_access(OpClass::kLdGlobal, i * 128, 4, 4);
      d.cache_global = false;
      Tick start = f.sim.now();
      Tick done = f.run_one(0, d);
      if (pass == 1) out.push_back(double(done - start) / double(kTicksPerNs));
    }
  return out;
}

TEST(L2Partitions, AFarLineReadAgainIsServedByItsNearCopyAtTheNearLatency) {
  // Half of 256 lines are homed in the far partition (100 cycles further). Read again from the same
  // SM, each is found in its near copy: every load takes the near latency. Without copies the far
  // half keeps paying the crossing.
  auto spread = [](const std::vector<double>& v) {
    auto range = std::minmax_element(v.begin(), v.end());
    double lo = *range.first, hi = *range.second;
    double far = double(std::count_if(v.begin(), v.end(), [lo](double x) { return x > lo + 50; }));
    return std::pair{hi - lo, far / double(v.size())};
  };
  auto [spread_on, far_on] = spread(second_pass_ns(with_near_copies(true), 256));
  auto [spread_off, far_off] = spread(second_pass_ns(with_near_copies(false), 256));
  EXPECT_LT(spread_on, 5.0);
  EXPECT_EQ(far_on, 0.0);
  EXPECT_NEAR(spread_off, 100.0, 5.0);
  EXPECT_NEAR(far_off, 0.5, 0.15);
}

// DRAM bytes that SM 0's second pass over `bytes` (all loads issued at once) reads.
uint64_t second_pass_dram_bytes(const std::string& yaml, uint64_t bytes) {
  MemFixture f(yaml, 2);
  f.mem->begin_kernel(0);
  stream(f, OpClass::kLdGlobal, 0, bytes, 1);
  uint64_t before = f.mem->totals().dram_read_bytes;
  stream(f, OpClass::kLdGlobal, 0, bytes, 1);
  return f.mem->totals().dram_read_bytes - before;
}

TEST(L2Partitions, OneSmSeesAboutOnePartitionOfTheL2WithNearCopies) {
  // 768 KiB read twice by one SM from a 1 MiB L2 of two partitions: without copies it all stays. With
  // them its own partition must hold all of it (its half and copies of the far half): the near-homed
  // half misses to DRAM, while the far-homed half is found at its home, a second level behind.
  const uint64_t bytes = 768 * 1024;
  double off = double(second_pass_dram_bytes(with_near_copies(false), bytes)) / double(bytes);
  double on = double(second_pass_dram_bytes(with_near_copies(true), bytes)) / double(bytes);
  EXPECT_LT(off, 0.02);
  EXPECT_NEAR(on, 0.5, 0.1);
  // 384 KiB fits one partition with its copies: nothing read again.
  EXPECT_LT(double(second_pass_dram_bytes(with_near_copies(true), bytes / 2)) / double(bytes / 2), 0.02);
}

TEST(L2Partitions, AStoreDropsTheCopiesOfOtherPartitions) {
  // SM 0 (partition 0) reads 64 lines, copying the far-homed ones; SM 1 (partition 1, their home)
  // stores to them; SM 0's next reads cross to the home slices again. Stores from SM 0 itself keep
  // its copies (they take the new data).
  auto misses_after_store = [](uint32_t writer) {
    MemFixture f(with_near_copies(true), 2);
    f.mem->begin_kernel(0);
    stream(f, OpClass::kLdGlobal, 0, 64 * 128, 1);
    for (uint64_t a = 0; a < 64 * 128; a += 128) f.run_one(writer, warp_access(OpClass::kStGlobal, a, 4, 4));
    auto count = [&] { return f.sim.stats().find("mem/l2/near_copy_misses")->value_json().get<uint64_t>(); };
    uint64_t before = count();
    stream(f, OpClass::kLdGlobal, 0, 64 * 128, 1);
    return count() - before;
  };
  EXPECT_NEAR(double(misses_after_store(1)), 32.0, 10.0);
  EXPECT_EQ(misses_after_store(0), 0u);
}

}  // namespace
}  // namespace gtsim::mem
