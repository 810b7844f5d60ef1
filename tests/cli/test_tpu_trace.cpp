// `--trace PATH.json` on TPU configs: per TensorCore a track per MXU (folds, weight loads, streams,
// drains), per DMA engine, the vector unit and the scalar unit's waits; the chip's programs (and a
// workload's ops) and an HBM bandwidth counter (models/tpu/tpu_timeline.hpp). The tests parse the
// file and check its tracks, their time order and nesting, that the MXU busy time and the DMA bytes
// on it are the run's own figures, and that recording changes nothing the run reports.
#include <gtest/gtest.h>
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

// tpu-v5e: one TensorCore, 4 MXUs, 4 DMA engines, 1500 MHz (hw_configs/tpu-v5e.yaml).
const std::string kMatmul =
    "run --hw hw_configs/tpu-v5e.yaml --kernel kernels_ir/lib/tpu_matmul.kir --param M=1024 --param N=1024 "
    "--param K=1024 --param BN=512";
constexpr double kV5eMhz = 1500;

// Track names by (pid, tid).
std::map<std::pair<int, int>, std::string> track_names(const json& t) {
  std::map<std::pair<int, int>, std::string> names;
  for (const json& m : events_of(t, "M"))
    if (m["name"] == "thread_name") names[{m["pid"].get<int>(), m["tid"].get<int>()}] = m["args"]["name"];
  return names;
}

TEST(TpuTrace, RunHasTracksPerMxuDmaEngineAndUnitThatAddUpToTheRun) {
  fs::path trace = trace_temp("run.json");
  CliResult with = gtsim_cli(kMatmul + " --json - --trace " + trace.string());
  ASSERT_EQ(with.rc, 0) << with.err;
  EXPECT_NE(with.err.find("ui.perfetto.dev"), std::string::npos);
  json r = json::parse(with.out), t = json::parse(slurp(trace));
  fs::remove(trace);
  ASSERT_TRUE(t.contains("traceEvents"));
  EXPECT_FALSE(t["otherData"]["truncated"].get<bool>());
  expect_tracks_ordered_and_nested(t);

  auto names = track_names(t);
  std::set<std::string> have;
  for (const auto& [key, name] : names) have.insert(name);
  for (int m = 0; m < 4; ++m)
    for (const char* what : {" folds (busy)", " weight load", " stream", " drain"})
      EXPECT_TRUE(have.count("MXU " + std::to_string(m) + what)) << "no track MXU " << m << what;
  for (int e = 0; e < 4; ++e) EXPECT_TRUE(have.count("DMA engine " + std::to_string(e))) << "no DMA engine " << e;
  EXPECT_TRUE(have.count("vector unit"));
  EXPECT_TRUE(have.count("scalar unit (waits, syncs)"));

  // The busiest MXU's folds add up to the run's mxu_cycles; the DMAs' bytes to its HBM bytes; the
  // chip track ends at the run's time (dispatch + device).
  std::map<std::pair<int, int>, double> busy;
  double dma_bytes = 0, end = 0, last_vector_end = 0;
  int program_slices = 0;
  for (const json& e : events_of(t, "X")) {
    std::pair<int, int> key{e["pid"].get<int>(), e["tid"].get<int>()};
    const std::string& track = names[key];
    end = std::max(end, e["ts"].get<double>() + e["dur"].get<double>());
    if (track.find("folds (busy)") != std::string::npos) busy[key] += e["dur"].get<double>();
    if (track.rfind("DMA engine", 0) == 0) {
      dma_bytes += e["args"]["bytes"].get<double>();
      std::string dir = e["args"]["direction"];
      EXPECT_TRUE(dir == "HBM -> VMEM" || dir == "VMEM -> HBM") << dir;
    }
    if (track == "vector unit") last_vector_end = e["ts"].get<double>() + e["dur"].get<double>();
    if (e["pid"] == 1 && e["name"] != "dispatch") ++program_slices;
  }
  EXPECT_EQ(program_slices, 1);
  double busiest = 0;
  for (const auto& [key, us] : busy) busiest = std::max(busiest, us);
  double mxu_us = r["mxu_cycles"].get<double>() / kV5eMhz;
  ASSERT_GT(mxu_us, 0);
  EXPECT_NEAR(busiest, mxu_us, 0.01 * mxu_us);
  EXPECT_EQ(dma_bytes, r["hbm_read_bytes"].get<double>() + r["hbm_write_bytes"].get<double>());
  EXPECT_NEAR(end, r["time_us"].get<double>(), 1e-3);
  EXPECT_LE(last_vector_end, end + 1e-3);

  // The HBM counter integrates to the bytes moved.
  std::vector<std::pair<double, double>> bw;
  for (const json& c : events_of(t, "C"))
    if (c["name"] == "HBM bandwidth")
      bw.push_back({c["ts"], c["args"]["read GB/s"].get<double>() + c["args"]["write GB/s"].get<double>()});
  ASSERT_GT(bw.size(), 3u);
  double bytes = 0;
  for (size_t i = 0; i + 1 < bw.size(); ++i) bytes += bw[i].second * 1e3 * (bw[i + 1].first - bw[i].first);
  EXPECT_NEAR(bytes, dma_bytes, 0.02 * dma_bytes);

  // Recording changes nothing the run reports.
  CliResult without = gtsim_cli(kMatmul + " --json -");
  ASSERT_EQ(without.rc, 0) << without.err;
  json w = json::parse(without.out);
  r.erase("sim_wall_seconds");
  w.erase("sim_wall_seconds");
  EXPECT_EQ(r, w);
}

TEST(TpuTrace, EachTensorCoreHasItsOwnTracks) {
  fs::path trace = trace_temp("v4.json");
  CliResult c = gtsim_cli(
      "run --hw hw_configs/tpu-v4.yaml --kernel kernels_ir/lib/tpu_matmul.kir --param M=1024 --param N=1024 "
      "--param K=1024 --param BN=512 --trace " +
      trace.string());
  ASSERT_EQ(c.rc, 0) << c.err;
  json t = json::parse(slurp(trace));
  fs::remove(trace);
  expect_tracks_ordered_and_nested(t);
  std::set<std::string> processes;
  for (const json& m : events_of(t, "M"))
    if (m["name"] == "process_name") processes.insert(m["args"]["name"]);
  EXPECT_TRUE(processes.count("TPU chip"));
  EXPECT_TRUE(processes.count("HBM"));
  EXPECT_TRUE(processes.count("TensorCore 0"));
}

TEST(TpuTrace, LimitStopsRecordingAndTheFileSaysWhere) {
  fs::path trace = trace_temp("limit.json");
  CliResult c = gtsim_cli(kMatmul + " --trace-limit 40 --trace " + trace.string());
  ASSERT_EQ(c.rc, 0) << c.err;
  json t = json::parse(slurp(trace));
  fs::remove(trace);
  EXPECT_TRUE(t["otherData"]["truncated"].get<bool>());
  EXPECT_NE(t["otherData"].value("truncated_note", std::string()).find("--trace-limit"), std::string::npos);
  EXPECT_NE(c.err.find("recording stopped"), std::string::npos) << c.err;
  EXPECT_LE(events_of(t, "X").size() + events_of(t, "C").size(), 40u + 2u);  // + the dispatch and the program
}

TEST(TpuTrace, WorkloadHasOneOpSliceEachInOrder) {
  fs::path trace = trace_temp("workload.json");
  CliResult c = gtsim_cli(
      "workload --hw hw_configs/tpu-v5e.yaml --workload kernels_ir/workloads/fusion_sincos.yaml --param n=2^20 "
      "--json - --trace " +
      trace.string());
  if (c.rc == 2 && c.err.find("--trace, --cuda-graph") != std::string::npos)
    GTEST_SKIP() << "gtsim workload still refuses --trace on TPU configs (cli/cmd_workloads.cpp): " << c.err;
  ASSERT_EQ(c.rc, 0) << c.err;
  json r = json::parse(c.out), t = json::parse(slurp(trace));
  fs::remove(trace);
  expect_tracks_ordered_and_nested(t);
  auto names = track_names(t);
  std::vector<json> ops;
  for (const json& e : events_of(t, "X"))
    if (names[{e["pid"].get<int>(), e["tid"].get<int>()}] == "ops") ops.push_back(e);
  ASSERT_EQ(ops.size(), r["ops"].size());
  double end = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ(ops[i]["name"], r["ops"][i]["op"]);
    EXPECT_NEAR(ops[i]["dur"].get<double>(), r["ops"][i]["time_us"].get<double>(), 1e-3);
    end = ops[i]["ts"].get<double>() + ops[i]["dur"].get<double>();
  }
  EXPECT_NEAR(end, r["total_us"].get<double>(), 1e-3);
}

}  // namespace
}  // namespace gtsim::test
