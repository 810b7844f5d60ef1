// The config reader refuses silence: each class of error names the file, line, column and YAML
// path, and says what was expected.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sim/config.hpp"
#include "tests/sim/config_fixture.hpp"

namespace gtsim {
namespace {
namespace fs = std::filesystem;

using test::ConfigFiles;

TEST_F(ConfigFiles, MisspeltKeyIsAnErrorWithFileLineAndKey) {
  auto p = write("gpu.yaml", "sm:\n  count: 4\n  cuont: 5\n");
  auto root = ConfigNode::load_file(p);
  EXPECT_EQ(root->at("sm").param<uint32_t>("count").get(), 4u);
  std::string m = message_of([&] { root->require_all_used(); });
  EXPECT_NE(m.find("gpu.yaml:3:3"), std::string::npos) << m;
  EXPECT_NE(m.find("cuont"), std::string::npos) << m;
}

TEST_F(ConfigFiles, WrongTypeNamesPathAndExpectation) {
  auto p = write("gpu.yaml", "l1:\n  assoc: eight\n");
  auto root = ConfigNode::load_file(p);
  std::string m = message_of([&] { root->at("l1").param<uint32_t>("assoc").get(); });
  EXPECT_NE(m.find("gpu.yaml:2:10"), std::string::npos) << m;
  EXPECT_NE(m.find("l1.assoc"), std::string::npos) << m;
  EXPECT_NE(m.find("non-negative integer"), std::string::npos) << m;
  EXPECT_NE(m.find("eight"), std::string::npos) << m;
}

TEST_F(ConfigFiles, OutOfRangeSaysTheBound) {
  auto p = write("gpu.yaml", "l1:\n  assoc: 0\n");
  auto root = ConfigNode::load_file(p);
  std::string m = message_of([&] { root->at("l1").param<uint32_t>("assoc").range(1, 64).get(); });
  EXPECT_NE(m.find(">= 1"), std::string::npos) << m;
  EXPECT_NE(m.find("gpu.yaml:2"), std::string::npos) << m;
}

TEST_F(ConfigFiles, MissingRequiredKeyPointsAtTheMap) {
  auto p = write("gpu.yaml", "hbm:\n  latency_ns: 300\n");
  auto root = ConfigNode::load_file(p);
  std::string m = message_of([&] { root->at("hbm").param<double>("bandwidth_gbps").get(); });
  EXPECT_NE(m.find("missing required key \"bandwidth_gbps\""), std::string::npos) << m;
  EXPECT_NE(m.find("gpu.yaml:2"), std::string::npos) << m;
}

TEST_F(ConfigFiles, YamlSyntaxErrorHasPosition) {
  auto p = write("bad.yaml", "sm:\n  count: [1, 2\n");
  std::string m = message_of([&] { ConfigNode::load_file(p); });
  EXPECT_NE(m.find("bad.yaml:"), std::string::npos) << m;
  EXPECT_NE(m.find("YAML syntax error"), std::string::npos) << m;
}

TEST_F(ConfigFiles, BaseInheritanceMergesMapsAndKeepsPositions) {
  write("base.yaml", "name: base\nsm:\n  count: 108\n  max_ctas: 32\n");
  auto p = write("child.yaml", "base: base.yaml\nname: child\nsm:\n  count: 2\n");
  auto root = ConfigNode::load_file(p);
  EXPECT_EQ(root->at("name").as<std::string>(), "child");
  EXPECT_EQ(root->at("sm").param<int>("count").get(), 2);
  EXPECT_EQ(root->at("sm").param<int>("max_ctas").get(), 32);
  EXPECT_NE(root->at("sm").at("max_ctas").pos().file.find("base.yaml"), std::string::npos);
  EXPECT_NE(root->at("sm").at("count").pos().file.find("child.yaml"), std::string::npos);
}

TEST_F(ConfigFiles, BaseCycleIsRefused) {
  write("a.yaml", "base: b.yaml\n");
  write("b.yaml", "base: a.yaml\n");
  std::string m = message_of([&] { ConfigNode::load_file((dir / "a.yaml").string()); });
  EXPECT_NE(m.find("cycle"), std::string::npos) << m;
}

TEST_F(ConfigFiles, MissingBaseFileIsNamed) {
  auto p = write("c.yaml", "base: nowhere.yaml\n");
  std::string m = message_of([&] { ConfigNode::load_file(p); });
  EXPECT_NE(m.find("nowhere.yaml"), std::string::npos) << m;
  EXPECT_NE(m.find("c.yaml:1"), std::string::npos) << m;
}

TEST_F(ConfigFiles, SetOverridesApplyAfterInheritance) {
  auto p = write("g.yaml", "sm:\n  count: 108\nhbm:\n  bandwidth_gbps: 1555\n");
  auto root = ConfigNode::load_file(p, {"sm.count=2", "hbm.bandwidth_gbps=99.5"});
  EXPECT_EQ(root->at("sm").param<int>("count").get(), 2);
  EXPECT_DOUBLE_EQ(root->at("hbm").param<double>("bandwidth_gbps").get(), 99.5);
  std::string m = message_of([&] { ConfigNode::load_file(p, {"sm.count"}); });
  EXPECT_NE(m.find("PATH=VALUE"), std::string::npos) << m;
}

TEST_F(ConfigFiles, UnknownImplListsRegisteredOnes) {
  auto p = write("g.yaml", "hbm:\n  impl: magic\n");
  auto root = ConfigNode::load_file(p);
  std::string m = message_of([&] { root->at("hbm").impl({"bandwidth_server", "banked"}); });
  EXPECT_NE(m.find("magic"), std::string::npos);
  EXPECT_NE(m.find("bandwidth_server, banked"), std::string::npos) << m;
}

TEST_F(ConfigFiles, ResolvedConfigRoundTrips) {
  write("base.yaml", "sm:\n  count: 108\n  units: {fp32: {lanes: 16}}\n");
  auto p = write("child.yaml", "base: base.yaml\nsm:\n  count: 2\n");
  auto root = ConfigNode::load_file(p);
  auto again = ConfigNode::load_string(root->to_yaml());
  EXPECT_EQ(again->to_json(), root->to_json());
  EXPECT_EQ(root->to_json()["sm"]["units"]["fp32"]["lanes"], 16);
}

}  // namespace
}  // namespace gtsim
