// Rules: `compare` runs one workload on a GPU config and a TPU config side by side: per op and in
// total, time, matrix-unit utilization, HBM bytes, intensity, bound, winner and why; a TPU run of a
// workload that does not fit HBM is refused with the sizes (in GiB). Issue 35 item 3, compare tells
// the truth: device time apart from launch/dispatch in the columns and the verdict (both ratios and
// which part of the gap dominates); attained FLOP/s and bytes/s against the machine's own ceilings
// and the bound named from them (no HBM bytes: never memory-bound); MXU fill and padding waste for
// TPU ops; capacities in GiB; machine names unique; the JSON carries the table's fields.
#include <gtest/gtest.h>

#include <iostream>

#include "models/tpu/compare.hpp"
#include "sim/error.hpp"
#include "tests/test_paths.hpp"

namespace gtsim::tpu {
namespace {

using gtsim::testing::src;

// A small MLP (the GPU simulation of the full transformer_block takes minutes: that one runs
// through the CLI, see docs/tutorials/p13-tpu-vs-gpu.md).
const char* kMlp =
    "name: mlp\nparams: {T: 512, D: 512, F: 1024}\n"
    "tensors:\n  x: {dtype: bf16, shape: [T, D]}\n  w_up: {dtype: bf16, shape: [D, F]}\n"
    "ops:\n  - {name: up, op: matmul, a: x, b: w_up, out: u}\n"
    "  - {name: act, op: elementwise, expr: \"gelu(u)\", out: y}\noutputs: [y]\n";

TEST(TpuCompare, WorkloadOnA100AndV5eSideBySide) {
  auto w = wl::Workload::load_string(kMlp, "mlp.yaml");
  std::vector<std::shared_ptr<ConfigNode>> hw = {ConfigNode::load_file(src("hw_configs/a100-40gb.yaml")),
                                                 ConfigNode::load_file(src("hw_configs/tpu-v5e.yaml"))};
  CompareResult r = compare(w, hw);
  std::cout << r.text;
  ASSERT_EQ(r.json["machines"].size(), 2u);
  ASSERT_EQ(r.json["ops"].size(), 2u);
  for (const auto& op : r.json["ops"]) {
    for (const auto& [name, m] : op["machines"].items()) {
      EXPECT_GT(m["time_us"].get<double>(), 0) << op["op"] << " on " << name;
      EXPECT_FALSE(m["bound"].get<std::string>().empty());
    }
    EXPECT_FALSE(op["why"].get<std::string>().empty());
    if (op["kind"] == "matmul") {
      const auto& t = op["machines"]["Google TPU v5e"];
      EXPECT_GT(t["matrix_unit_utilization"].get<double>(), 0.05) << op["op"];
      EXPECT_GT(t["hbm_bytes"].get<uint64_t>(), 0u);
      EXPECT_TRUE(op["machines"]["NVIDIA A100-SXM4-40GB"]["mxu_fill"].is_null()) << "a GPU has no MXU";
      EXPECT_GE(t["mxu_fill"].get<double>(), 0.99) << "512, 1024: multiples of 128";
    }
  }
  EXPECT_TRUE(r.json["total"].contains("winner"));
}

TEST(TpuCompare, TpuRunOfAWorkloadAndHbmRefusal) {
  auto w = wl::Workload::load_string(kMlp, "mlp.yaml");
  TpuConfig v5e = TpuConfig::load(src("hw_configs/tpu-v5e.yaml"));
  TpuWorkloadReport rep = run_tpu_workload(v5e, w);
  EXPECT_GT(rep.total_us, rep.dispatch_us);
  auto big = wl::Workload::load_string(
      "name: big\ntensors:\n  x: {dtype: f32, shape: [65536, 65536]}\n"
      "ops:\n  - {name: e, op: elementwise, expr: \"x + x\", out: y}\noutputs: [y]\n",
      "big.yaml");
  try {
    run_tpu_workload(v5e, big);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("17180000000 bytes of HBM (16 GiB"), std::string::npos) << m;
    EXPECT_NE(m.find("needs"), std::string::npos) << m;
  }
}

// Vector ops only (the teaching GPU's GEMM does not fit its shared memory): quick on both machines.
const char* kVec =
    "name: vec\nparams: {R: 64, C: 256}\ntensors:\n  x: {dtype: f32, shape: [R, C]}\n"
    "ops:\n  - {name: scale, op: elementwise, expr: \"x * 2\", out: s}\n"
    "  - {name: softmax, op: softmax, input: s, out: p}\n"
    "  - {name: shift, op: elementwise, expr: \"p + 1\", out: y}\noutputs: [y]\n";

std::vector<std::shared_ptr<ConfigNode>> tiny_and_v5e() {
  return {ConfigNode::load_file(src("hw_configs/teach-tiny.yaml")),
          ConfigNode::load_file(src("hw_configs/tpu-v5e.yaml"))};
}

TEST(TpuCompare, DeviceTimeAndDispatchAreSeparateAndTheVerdictSaysBothRatios) {
  auto w = wl::Workload::load_string(kVec, "vec.yaml");
  CompareResult r = compare(w, tiny_and_v5e());
  const auto& tot = r.json["total"];
  for (const auto& m : r.json["machines"]) {
    const std::string name = m["name"];
    double dev = 0, disp = 0;
    for (const auto& op : r.json["ops"]) {
      const auto& x = op["machines"][name];
      EXPECT_NEAR(x["time_us"].get<double>(), x["device_us"].get<double>() + x["dispatch_us"].get<double>(), 1e-6);
      dev += x["device_us"].get<double>(), disp += x["dispatch_us"].get<double>();
    }
    EXPECT_NEAR(tot[name]["device_us"].get<double>(), dev, 1e-6) << name;
    // a TPU's dispatch is charged once per workload, not to its ops
    if (m["target"] == "tpu") {
      EXPECT_EQ(disp, 0.0);
      EXPECT_NEAR(tot[name]["dispatch_us"].get<double>(), m["per_call_overhead_us"].get<double>(), 1e-9);
    } else {
      EXPECT_GT(disp, 0.0) << "a GPU kernel pays its launch";
    }
    EXPECT_NEAR(tot[name]["time_us"].get<double>(),
                tot[name]["device_us"].get<double>() + tot[name]["dispatch_us"].get<double>(), 1e-6)
        << name;
  }
  const std::string why = tot["why"];
  EXPECT_NE(why.find("faster in total"), std::string::npos) << why;
  EXPECT_NE(why.find("device time alone"), std::string::npos) << why;
  EXPECT_NE(why.find("dominates"), std::string::npos) << why;
  EXPECT_GT(tot["ratio_total"].get<double>(), 0.0);
  EXPECT_GT(tot["ratio_device"].get<double>(), 0.0);
  // v5e's fitted 102 us dispatch dwarfs this small MLP's device time: the gap is the dispatch's
  EXPECT_EQ(tot["dominant"], "launch/dispatch") << why;
  EXPECT_NE(r.text.find("device_us"), std::string::npos);
}

TEST(TpuCompare, BoundIsNamedFromAttainedFractionsAndNoBytesIsNeverMemoryBound) {
  EXPECT_EQ(attained_bound(0.9, 0.1, 100, 10, 0), "compute");
  EXPECT_EQ(attained_bound(0.1, 0.9, 100, 10, 0), "memory");
  EXPECT_EQ(attained_bound(0.6, 0.8, 100, 10, 0), "memory");
  EXPECT_EQ(attained_bound(0.1, 0.9, 0, 10, 0), "latency") << "0 HBM bytes: never memory-bound";
  EXPECT_EQ(attained_bound(0.1, 0.1, 100, 10, 0), "latency");
  EXPECT_EQ(attained_bound(0.1, 0.1, 100, 2, 3.5), "overhead");
  auto w = wl::Workload::load_string(kVec, "vec.yaml");
  CompareResult r = compare(w, tiny_and_v5e());
  for (const auto& op : r.json["ops"])
    for (const auto& [name, x] : op["machines"].items()) {
      double dev = x["device_us"].get<double>();
      EXPECT_NEAR(x["attained_flops_per_s"].get<double>(), double(x["flops"].get<uint64_t>()) / (dev * 1e-6),
                  1e-6 * x["attained_flops_per_s"].get<double>());
      EXPECT_NEAR(x["attained_bytes_per_s"].get<double>(), double(x["hbm_bytes"].get<uint64_t>()) / (dev * 1e-6),
                  1e-6 * x["attained_bytes_per_s"].get<double>() + 1e-9);
      EXPECT_EQ(x["bound"], attained_bound(x["fraction_of_peak_flops"], x["fraction_of_peak_bytes"], x["hbm_bytes"],
                                           dev, x["dispatch_us"]))
          << op["op"] << " on " << name;
      EXPECT_LE(x["fraction_of_peak_flops"].get<double>(), 1.0 + 1e-9) << op["op"] << " on " << name;
    }
  // the reasons quote what was attained, not the datasheet pair
  EXPECT_EQ(r.text.find("peak 197 vs"), std::string::npos);
}

TEST(TpuCompare, TpuOpsShowMxuFillAndPaddingWaste) {
  // N = 200 pads to 256 columns of the 128-wide array; K = 100 to 128 rows: fill well below 1.
  auto w = wl::Workload::load_string(
      "name: pad\ntensors:\n  a: {dtype: bf16, shape: [512, 100]}\n  b: {dtype: bf16, shape: [100, 200]}\n"
      "ops:\n  - {name: mm, op: matmul, a: a, b: b, out: c}\noutputs: [c]\n",
      "pad.yaml");
  CompareResult r = compare(w, {ConfigNode::load_file(src("hw_configs/tpu-v5e.yaml")),
                                ConfigNode::load_file(src("hw_configs/tpu-v6e.yaml"))});
  const auto& mm = r.json["ops"][0]["machines"];
  const auto& t = mm["Google TPU v5e"];
  double fill = t["mxu_fill"].get<double>();
  EXPECT_NEAR(fill, (100.0 * 200.0) / (128.0 * 256.0), 0.02);
  EXPECT_NEAR(t["padding_waste_flops"].get<double>(), 1 / fill - 1, 1e-6);
  EXPECT_GT(t["padding_waste"].get<double>(), 0.05) << "100 and 200 columns padded to 128 and 256 lanes";
  // v6e's 256-wide array pads the same operands further
  EXPECT_LT(mm["Google TPU v6e"]["mxu_fill"].get<double>(), fill);
  EXPECT_NE(r.json["ops"][0]["why"].get<std::string>().find("MXU fill"), std::string::npos) << r.json["ops"][0]["why"];
}

TEST(TpuCompare, SameNamedMachinesGetUniqueNamesAndCapacitiesAreInGiB) {
  auto w = wl::Workload::load_string(kMlp, "mlp.yaml");
  std::vector<std::shared_ptr<ConfigNode>> hw = {
      ConfigNode::load_file(src("hw_configs/tpu-v5e.yaml")),
      ConfigNode::load_file(src("hw_configs/tpu-v5e.yaml"), {"dispatch.overhead_us=0"})};
  CompareResult r = compare(w, hw);
  ASSERT_EQ(r.json["machines"].size(), 2u);
  EXPECT_EQ(r.json["machines"][0]["name"], "Google TPU v5e");
  EXPECT_EQ(r.json["machines"][1]["name"], "Google TPU v5e (2)");
  EXPECT_EQ(r.json["machines"][1]["config_name"], "Google TPU v5e");
  EXPECT_EQ(r.json["ops"][0]["machines"].size(), 2u) << "neither overwrites the other";
  EXPECT_EQ(r.json["total"]["winner"], "Google TPU v5e (2)") << "no dispatch";
  EXPECT_NE(r.text.find("renamed"), std::string::npos);
  // v5e's 16 GiB (hbm.capacity_gb: 17.18, decimal GB) is printed in binary units
  EXPECT_NEAR(r.json["machines"][0]["hbm_capacity_gib"].get<double>(), 17.18e9 / 1073741824.0, 1e-9);
  EXPECT_NE(r.text.find("16.00 GiB"), std::string::npos) << r.text;
}

// A cast on the TPU streams its input in one dtype and its output in another through VMEM: HBM moves
// 2 + 4 bytes per element from bf16 to f32, and 4 + 2 back (the same figure the GPU's min_bytes has).
TEST(TpuCompare, ACastMovesItsInputAndOutputDtypesThroughHbm) {
  TpuConfig v5e = TpuConfig::load(src("hw_configs/tpu-v5e.yaml"));
  for (auto [from, to] : {std::pair{"bf16", "f32"}, std::pair{"f32", "bf16"}}) {
    auto w = wl::Workload::load_string(
        std::string("name: cast\ntensors:\n  x: {dtype: ") + from +
            ", shape: [1024, 4096]}\nops:\n  - {name: c, op: cast, input: x, dtype: " + to + ", out: y}\n",
        "cast.yaml");
    TpuWorkloadReport rep = run_tpu_workload(v5e, w);
    ASSERT_EQ(rep.ops.size(), 1u);
    EXPECT_EQ(rep.ops[0].min_bytes, uint64_t(1024) * 4096 * 6) << from << " -> " << to;
    EXPECT_NEAR(double(rep.ops[0].hbm_bytes) / double(rep.ops[0].min_bytes), 1.0, 0.01) << from << " -> " << to;
  }
}

}  // namespace
}  // namespace gtsim::tpu
