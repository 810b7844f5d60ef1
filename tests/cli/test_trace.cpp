// `--trace PATH.json` on run and workload: a Chrome trace-event timeline (ui.perfetto.dev) with a
// track per SM's CTA slots and sub-partitions, memory counter tracks and a kernel track. The tests
// parse the file and check its tracks, their nesting, time order and that its counters add up to the
// run's own totals; and that recording changes nothing the run reports.
#include <gtest/gtest.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>

#include "tests/cli/cli_harness.hpp"
#include "tests/cli/trace_test_util.hpp"

namespace gtsim::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kGemm =
    "run --hw hw_configs/a100-40gb.yaml --kernel kernels_ir/lib/gemm_tiled.kir --param M=512 --param N=512 "
    "--param K=512 --exact";

TEST(Trace, RunTimelineHasEveryCtaOnItsSmsSlotsInsideTheKernel) {
  fs::path trace = trace_temp("run.json");
  CliResult with = gtsim_cli(kGemm + " --json - --trace " + trace.string());
  ASSERT_EQ(with.rc, 0) << with.err;
  EXPECT_NE(with.err.find("ui.perfetto.dev"), std::string::npos);
  json r = json::parse(with.out), t = json::parse(slurp(trace));
  fs::remove(trace);
  ASSERT_TRUE(t.contains("traceEvents"));
  expect_tracks_ordered_and_nested(t);

  json kernels = json::array(), ctas = json::array();
  std::set<std::string> names;
  for (const json& e : events_of(t, "X")) {
    if (e["pid"] == 1) kernels.push_back(e);
    if (e["name"].get<std::string>().rfind("CTA ", 0) == 0) ctas.push_back(e);
  }
  for (const json& m : events_of(t, "M")) names.insert(m["args"].value("name", std::string()));
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0]["name"], "gemm_tiled");
  // The kernel's slice spans its cycles at its clock.
  double mhz = r["sm_mhz"];
  EXPECT_NEAR(kernels[0]["dur"].get<double>() * mhz, r["cycles"].get<double>(), 2.0);
  // Every CTA exactly once (exact run), on an SM's CTA-slot track, inside the kernel.
  ASSERT_EQ(ctas.size(), r["ctas"].get<size_t>());
  std::set<uint64_t> ids;
  double k0 = kernels[0]["ts"], k1 = k0 + kernels[0]["dur"].get<double>();
  for (const json& c : ctas) {
    ids.insert(c["args"]["cta"].get<uint64_t>());
    EXPECT_GE(c["pid"].get<int>(), 10);
    EXPECT_LT(c["tid"].get<int>(), 100);
    EXPECT_GE(c["ts"].get<double>(), k0 - 1e-3);
    EXPECT_LE(c["ts"].get<double>() + c["dur"].get<double>(), k1 + 1e-3);
  }
  EXPECT_EQ(ids.size(), ctas.size());
  EXPECT_TRUE(names.count("SM 0") && names.count("CTA slot 0") && names.count("sub-partition 0"));
  EXPECT_TRUE(names.count("memory (L2, HBM)"));

  // Sub-partition tracks: a state per run of windows, issuing or the stall that held the warps.
  size_t sp_slices = 0;
  for (const json& e : events_of(t, "X"))
    if (e["tid"].get<int>() >= 100) {
      ++sp_slices;
      std::string n = e["name"];
      EXPECT_TRUE(n == "issuing" || n.rfind("stall: ", 0) == 0) << n;
      EXPECT_GE(e["args"]["issue_pct"].get<double>(), 0.0);
      EXPECT_LE(e["args"]["issue_pct"].get<double>(), 100.0);
    }
  EXPECT_GT(sp_slices, 0u);

  // The DRAM read counter integrates to the run's DRAM read bytes.
  std::vector<std::pair<double, double>> rd;
  for (const json& c : events_of(t, "C"))
    if (c["name"] == "DRAM bandwidth") rd.push_back({c["ts"], c["args"]["read GB/s"]});
  ASSERT_GT(rd.size(), 3u);
  double bytes = 0;
  for (size_t i = 0; i < rd.size(); ++i)
    bytes += rd[i].second * 1e3 * ((i + 1 < rd.size() ? rd[i + 1].first : k1) - rd[i].first);
  EXPECT_NEAR(bytes, r["dram_read_bytes"].get<double>(), 0.02 * r["dram_read_bytes"].get<double>());

  // Recording changes nothing the run reports.
  CliResult without = gtsim_cli(kGemm + " --json -");
  ASSERT_EQ(without.rc, 0) << without.err;
  json w = json::parse(without.out);
  for (const char* k : {"cycles", "events", "dram_read_bytes", "dram_write_bytes", "warp_instructions", "l2_hit_rate"})
    EXPECT_EQ(r[k], w[k]) << k;
}

TEST(Trace, SampledRunSaysOnTheKernelWhatWasFastForwarded) {
  fs::path trace = trace_temp("sampled.json");
  CliResult c = gtsim_cli(
      "run --hw hw_configs/a100-40gb.yaml --kernel kernels_ir/lib/gemm_tiled.kir --param M=1024 --param N=1024 "
      "--param K=1024 --json - --trace " +
      trace.string());
  ASSERT_EQ(c.rc, 0) << c.err;
  json r = json::parse(c.out), t = json::parse(slurp(trace));
  fs::remove(trace);
  ASSERT_LT(r["sampling"]["fraction_simulated"].get<double>(), 1.0) << "sampling did not engage: pick a larger run";
  json k;
  for (const json& e : events_of(t, "X"))
    if (e["pid"] == 1) k = e;
  ASSERT_TRUE(k.is_object());
  EXPECT_LT(k["args"]["fraction_simulated"].get<double>(), 1.0);
  EXPECT_NE(k["args"].value("not_on_this_timeline", std::string()).find("fast-forwarded"), std::string::npos);
  // The timeline shows only the simulated cycles: shorter than the kernel's time.
  EXPECT_LT(k["dur"].get<double>() * r["sm_mhz"].get<double>(), r["cycles"].get<double>());
}

TEST(Trace, LimitStopsRecordingAndTheFileSaysWhere) {
  fs::path trace = trace_temp("limit.json");
  CliResult c = gtsim_cli(kGemm + " --trace-limit 40 --trace " + trace.string());
  ASSERT_EQ(c.rc, 0) << c.err;
  json t = json::parse(slurp(trace));
  fs::remove(trace);
  EXPECT_LE(events_of(t, "X").size() + events_of(t, "C").size(), 40u);
  EXPECT_TRUE(t["otherData"]["truncated"].get<bool>());
  EXPECT_NE(t["otherData"].value("truncated_note", std::string()).find("--trace-limit"), std::string::npos);
  EXPECT_NE(c.err.find("recording stopped"), std::string::npos);
  expect_tracks_ordered_and_nested(t);
}

TEST(Trace, WorkloadHasOneKernelSliceEachInOrder) {
  for (std::string carry : {"", " --no-carry-l2"}) {
    fs::path trace = trace_temp("workload.json");
    CliResult c = gtsim_cli(
        "workload --hw hw_configs/a100-40gb.yaml --workload kernels_ir/workloads/fusion_sincos.yaml --param n=2^20 "
        "--no-fusion --json -" +
        carry + " --trace " + trace.string());
    ASSERT_EQ(c.rc, 0) << c.err;
    json r = json::parse(c.out), t = json::parse(slurp(trace));
    fs::remove(trace);
    std::vector<std::string> want, got;
    for (const json& k : r["kernels"]) want.push_back(k["kernel"]);
    double end = -1;
    for (const json& e : events_of(t, "X"))
      if (e["pid"] == 1) {
        got.push_back(e["name"]);
        EXPECT_GE(e["ts"].get<double>(), end - 1e-3) << "kernels overlap" << carry;
        end = e["ts"].get<double>() + e["dur"].get<double>();
      }
    EXPECT_EQ(got, want) << carry;
    EXPECT_EQ(t["otherData"]["kernels"].get<size_t>(), want.size());
    expect_tracks_ordered_and_nested(t);
  }
}

// Bad --trace requests fail before any simulation (a kernel that would run for hours), exit 2,
// and write nothing.
TEST(Trace, BadTraceRequestsFailBeforeTheRunAndWriteNothing) {
  const std::string huge =
      "run --hw hw_configs/a100-40gb.yaml --kernel kernels_ir/lib/gemm_tiled.kir --param M=65536 --param N=65536 "
      "--param K=65536 --exact --max-warp-instructions 1e15";
  fs::path txt = trace_temp("trace.txt");
  CliResult c = gtsim_cli(huge + " --trace " + txt.string());
  EXPECT_EQ(c.rc, 2);
  EXPECT_NE(c.err.find("expected a path ending in .json"), std::string::npos) << c.err;
  EXPECT_FALSE(fs::exists(txt));
  c = gtsim_cli(huge + " --trace /nonexistent-gtsim-dir/t.json");
  EXPECT_EQ(c.rc, 2);
  EXPECT_NE(c.err.find("/nonexistent-gtsim-dir"), std::string::npos) << c.err;
  struct statvfs fsinfo {};
  if (::statvfs("/dev/shm", &fsinfo) != 0 || double(fsinfo.f_bavail) * double(fsinfo.f_frsize) > 1e11)
    GTEST_SKIP() << "no small file system to fill";
  c = gtsim_cli(huge + " --trace-limit 1e9 --trace /dev/shm/gtsim_trace_too_large.json");
  EXPECT_EQ(c.rc, 2);
  EXPECT_NE(c.err.find("too large to write"), std::string::npos) << c.err;
  EXPECT_FALSE(fs::exists("/dev/shm/gtsim_trace_too_large.json"));
}

}  // namespace
}  // namespace gtsim::test
