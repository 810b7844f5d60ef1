// Rules: `compare` runs one workload on a GPU config and a TPU config side by side: per op and in
// total, time, matrix-unit utilization, HBM bytes, intensity, bound, winner and why; a TPU run of a
// workload that does not fit HBM is refused with the sizes.
#include <gtest/gtest.h>

#include <iostream>

#include "models/tpu/compare.hpp"
#include "sim/error.hpp"

namespace gtsim::tpu {
namespace {

std::string src(const std::string& f) { return std::string(GTSIM_SOURCE_DIR) + "/" + f; }

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
      "ops:\n  - {name: e, op: elementwise, expr: \"x + x\", out: y}\noutputs: [y]\n", "big.yaml");
  try {
    run_tpu_workload(v5e, big);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("16000000000 bytes of HBM"), std::string::npos) << m;
    EXPECT_NE(m.find("needs"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace gtsim::tpu
