// The config reader under hostile input (found by fuzzing): alias bombs, deep nesting, extra
// documents, out-of-range integers, non-finite and unphysical numbers, invalid UTF-8, a `base:`
// that is a directory, and misspelt keys. Each is refused with file:line:col and what was expected,
// never a crash, a hang or a silently wrong value.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "sim/config.hpp"
#include "sim/config_rules.hpp"
#include "tests/sim/config_fixture.hpp"

namespace gtsim {
namespace {
namespace fs = std::filesystem;

class ConfigHardening : public test::ConfigFiles {};

bool has(const std::string& m, const std::string& part) { return m.find(part) != std::string::npos; }

long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// ---- 1. alias bombs and nesting ----

TEST_F(ConfigHardening, AliasBombIsRefusedAtTheAliasQuicklyAndInLittleMemory) {
  // "Billion laughs": each anchor a list of ten aliases of the previous: 10^9 nodes expanded.
  std::string text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  const char* names = "abcdefghi";
  for (int i = 1; i < 9; ++i) {
    text += std::string(1, names[i]) + ": &" + names[i] + " [";
    for (int k = 0; k < 10; ++k) text += std::string(k ? ", " : "") + "*" + names[i - 1];
    text += "]\n";
  }
  auto p = write("bomb.yaml", text);
  const long rss_before = peak_rss_kb();
  const auto t0 = std::chrono::steady_clock::now();
  std::string m = message_of([&] { ConfigNode::load_file(p); });
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(has(m, "YAML aliases expand to more than 100000 nodes, expected a config of at most 100000")) << m;
  // The budget is passed at an alias of line 5 (e: ten aliases of d, 11111 nodes each).
  EXPECT_TRUE(has(m, "bomb.yaml:5:")) << m;
  EXPECT_LT(secs, 1.0);
  EXPECT_LT(peak_rss_kb() - rss_before, 64 * 1024) << "KB of peak memory grown";
}

TEST_F(ConfigHardening, AliasOfAHugeStringIsRefusedByTheTextBudget) {
  std::string text = "s: &s \"" + std::string(1 << 20, 'x') + "\"\nl: [";
  for (int k = 0; k < 100; ++k) text += std::string(k ? ", " : "") + "*s";
  text += "]\n";
  std::string m = message_of([&] { ConfigNode::load_string(text, "big.yaml"); });
  EXPECT_TRUE(has(m, "YAML aliases expand to more than 33554432 bytes")) << m.substr(0, 300);
  EXPECT_TRUE(has(m, "big.yaml:2:")) << m.substr(0, 300);
}

TEST_F(ConfigHardening, AliasThatContainsItselfIsAnErrorNotACrash) {
  std::string m = message_of([&] { ConfigNode::load_string("a: &x [1, *x]\n", "cyc.yaml"); });
  EXPECT_TRUE(has(m, "cyc.yaml:1:11: alias *x refers to a node that contains it")) << m;
}

TEST_F(ConfigHardening, AliasWithinTheBudgetIsAnIndependentCopyWithItsOwnPath) {
  auto root = ConfigNode::load_string("a: &x {b: 1, c: 2}\nd: *x\n", "al.yaml");
  EXPECT_EQ(root->at("d").at("b").path(), "d.b");
  EXPECT_EQ(root->at("d").param<int>("b").get(), 1);
  EXPECT_EQ(root->at("a").param<int>("c").get(), 2);
  // Reading d.b did not mark a.b read: the copy's use is its own.
  std::string m = message_of([&] { root->require_all_used(); });
  EXPECT_TRUE(has(m, "(a.b)")) << m;
  EXPECT_TRUE(has(m, "(d.c)")) << m;
}

std::string nested_flow_seqs(int n) { return "a: " + std::string(size_t(n), '[') + std::string(size_t(n), ']') + "\n"; }

TEST_F(ConfigHardening, FlowNestingDeeperThanTheLimitIsAnErrorNotACrash) {
  std::string m = message_of([&] { ConfigNode::load_string(nested_flow_seqs(100000), "deep.yaml"); });
  // The root map is level 1, the first `[` (column 4) level 2: level 257 is column 259.
  EXPECT_TRUE(has(m, "deep.yaml:1:259: YAML nesting deeper than 256 levels, expected a config of at most 256 levels"))
      << m;
  std::string maps;
  for (int i = 0; i < 100000; ++i) maps += "{a: ";
  maps += "1" + std::string(100000, '}');
  m = message_of([&] { ConfigNode::load_string("x: " + maps + "\n", "deepmap.yaml"); });
  EXPECT_TRUE(has(m, "deepmap.yaml:1:") && has(m, "YAML nesting deeper than 256 levels")) << m;
}

TEST_F(ConfigHardening, BlockNestingDeeperThanTheLimitIsAnErrorNotACrash) {
  std::string text;
  for (int i = 0; i < 400; ++i) text += std::string(size_t(i), ' ') + "a:\n";
  std::string m = message_of([&] { ConfigNode::load_string(text, "block.yaml"); });
  EXPECT_TRUE(has(m, "block.yaml:257:") && has(m, "YAML nesting deeper than 256 levels")) << m;
  std::string dashes = "l:\n";
  for (int i = 0; i < 5000; ++i) dashes += "- ";
  m = message_of([&] { ConfigNode::load_string(dashes + "x\n", "dash.yaml"); });
  EXPECT_TRUE(has(m, "dash.yaml:2:") && has(m, "YAML nesting deeper than 256 levels")) << m;
}

TEST_F(ConfigHardening, NestingAtTheLimitLoadsAndEveryWalkHandlesIt) {
  auto root = ConfigNode::load_string(nested_flow_seqs(254), "ok.yaml");  // 1 map + 254 lists + ... = 255 levels
  const ConfigNode* n = &root->at("a");
  for (int i = 0; i < 253; ++i) n = &(*n)[0];
  EXPECT_EQ(n->size(), 0u);
  EXPECT_EQ(ConfigNode::load_string(root->to_yaml())->to_json(), root->to_json());
  EXPECT_TRUE(root->unused_keys().empty());
  root->mark_used_recursively();
  root->rebase_paths("");
}

TEST_F(ConfigHardening, SetPathOrValueDeeperThanTheLimitIsRefused) {
  auto p = write("g.yaml", "a: 1\n");
  std::string path = "k";
  for (int i = 0; i < 300; ++i) path += ".k";
  std::string m = message_of([&] { ConfigNode::load_file(p, {path + "=1"}); });
  EXPECT_TRUE(has(m, "a path deeper than 256 levels")) << m.substr(0, 200);
  m = message_of([&] { ConfigNode::load_file(p, {"a=" + std::string(1000, '[') + std::string(1000, ']')}); });
  EXPECT_TRUE(has(m, "<--set a=") && has(m, "YAML nesting deeper than 256 levels")) << m.substr(m.size() - 200);
}

// ---- 2. one document per file ----

TEST_F(ConfigHardening, SecondYamlDocumentIsAnErrorAtItsStart) {
  auto p = write("two.yaml", "a: 1\n---\nb: 2\n");
  std::string m = message_of([&] { ConfigNode::load_file(p); });
  EXPECT_TRUE(has(m, "two.yaml:2:1: a second YAML document starts here")) << m;
  EXPECT_TRUE(has(m, "expected one document per file")) << m;
  // An empty second document is a second document too; a leading `---` or a closing `...` is not.
  EXPECT_NE(message_of([&] { ConfigNode::load_string("a: 1\n---\n", "e.yaml"); }), "");
  EXPECT_EQ(ConfigNode::load_string("---\na: 1\n...\n")->at("a").as<int>(), 1);
}

// ---- 3. integers ----

TEST_F(ConfigHardening, NegativeIntegerIntoUnsignedIsOutOfRangeNotWrapped) {
  auto p = write("g.yaml", "sm:\n  count: -1\n");
  auto root = ConfigNode::load_file(p);
  std::string m = message_of([&] { root->at("sm").param<uint32_t>("count").get(); });
  EXPECT_TRUE(has(m, "g.yaml:2:10: sm.count: -1 is out of range, expected an integer in [0, 4294967295]")) << m;
}

TEST_F(ConfigHardening, IntegerAboveTheTargetTypeIsOutOfRangeNotTruncated) {
  auto root = ConfigNode::load_string("n: 1099511627776\n", "g.yaml");  // 2^40
  std::string m = message_of([&] { root->param<uint32_t>("n").get(); });
  EXPECT_TRUE(has(m, "g.yaml:1:4: n: 1099511627776 is out of range, expected an integer in [0, 4294967295]")) << m;
  EXPECT_EQ(root->param<uint64_t>("n").get(), 1099511627776ull);
  m = message_of([&] { root->param<int32_t>("n").get(); });
  EXPECT_TRUE(has(m, "expected an integer in [-2147483648, 2147483647]")) << m;
}

TEST_F(ConfigHardening, EveryIntegerWidthChecksItsRange) {
  auto v = [](const std::string& s) { return ConfigNode::load_string("v: " + s + "\n", "i.yaml")->at("v").clone("v"); };
  EXPECT_EQ(v("127")->as<int8_t>(), 127);
  EXPECT_EQ(v("-128")->as<int8_t>(), -128);
  EXPECT_TRUE(has(message_of([&] { v("128")->as<int8_t>(); }), "in [-128, 127]"));
  EXPECT_TRUE(has(message_of([&] { v("-129")->as<int8_t>(); }), "-129 is out of range"));
  EXPECT_EQ(v("255")->as<uint8_t>(), 255);
  EXPECT_TRUE(has(message_of([&] { v("256")->as<uint8_t>(); }), "in [0, 255]"));
  EXPECT_TRUE(has(message_of([&] { v("-1")->as<uint16_t>(); }), "in [0, 65535]"));
  EXPECT_EQ(v("-9223372036854775808")->as<int64_t>(), std::numeric_limits<int64_t>::min());
  EXPECT_TRUE(has(message_of([&] { v("9223372036854775808")->as<int64_t>(); }), "out of range"));
  EXPECT_TRUE(has(message_of([&] { v("-9223372036854775809")->as<int64_t>(); }), "out of range"));
  EXPECT_EQ(v("18446744073709551615")->as<uint64_t>(), std::numeric_limits<uint64_t>::max());
  EXPECT_TRUE(has(message_of([&] { v("18446744073709551616")->as<uint64_t>(); }),
                  "18446744073709551616 is out of range, expected an integer in [0, 18446744073709551615]"));
  EXPECT_TRUE(has(message_of([&] { v("18446744073709551615")->as<int64_t>(); }), "out of range"));
  EXPECT_TRUE(has(message_of([&] { v("1e30")->as<uint64_t>(); }), "1e30 is out of range"));
  EXPECT_TRUE(has(message_of([&] { v("1e999")->as<int>(); }), "1e999 is out of range"));
  EXPECT_TRUE(has(message_of([&] { v("0x1_0000_0000_0000_0000")->as<uint64_t>(); }), "out of range"));
  EXPECT_EQ(v("0xff")->as<uint32_t>(), 255u);
  EXPECT_EQ(v("-0x10")->as<int>(), -16);
  EXPECT_EQ(v("1_000")->as<int>(), 1000);
  EXPECT_EQ(v("1e6")->as<uint32_t>(), 1000000u);
  EXPECT_EQ(v("2.0")->as<int>(), 2);
  EXPECT_EQ(v("-0")->as<uint32_t>(), 0u);
  for (const char* bad : {"0x", "0xg", "2.5", ".inf", "nan", "1-2", "--1", "", "ten"})
    EXPECT_TRUE(has(message_of([&] { v(std::string("\"") + bad + "\"")->as<int>(); }), "expected an integer, got"))
        << bad;
}

// ---- 4. floats: finite, and inside each key's physical range ----

TEST_F(ConfigHardening, NanAndInfinityAreNotNumbers) {
  for (const char* bad : {".nan", ".NaN", "nan", ".inf", "-.inf", "inf", "-Infinity", "1e999"}) {
    auto root = ConfigNode::load_string(std::string("hbm:\n  latency_ns: ") + bad + "\n", "f.yaml");
    std::string m = message_of([&] { root->at("hbm").param<double>("latency_ns").get(); });
    EXPECT_TRUE(has(m, "f.yaml:2:15: hbm.latency_ns: expected a finite number, got \"" + std::string(bad) + "\"")) << m;
  }
}

TEST_F(ConfigHardening, TinyRateIsOutsideThePhysicalRange) {
  auto root = ConfigNode::load_string("hbm:\n  bandwidth_gbps: 1e-300\n", "r.yaml");
  // Even a reader that only asks for positive() cannot take it.
  std::string m = message_of([&] { root->at("hbm").param<double>("bandwidth_gbps").positive().get(); });
  EXPECT_TRUE(has(m,
                  "r.yaml:2:19: hbm.bandwidth_gbps: 1e-300 is outside the physical range of a bandwidth, "
                  "expected a value in [0.001, 1000000000000] GB/s"))
      << m;
  // A reader that reads the scalar directly meets the same rule.
  m = message_of([&] { root->at("hbm").at("bandwidth_gbps").as<double>(); });
  EXPECT_TRUE(has(m, "outside the physical range")) << m;
}

TEST_F(ConfigHardening, HugeLatencyIsOutsideThePhysicalRange) {
  auto root = ConfigNode::load_string("hbm:\n  latency_ns: 1e300\nl2:\n  hit_latency_cycles: 1e300\n", "l.yaml");
  std::string m = message_of([&] { root->at("hbm").param<double>("latency_ns").min(0).get(); });
  EXPECT_TRUE(has(m,
                  "l.yaml:2:15: hbm.latency_ns: 1e300 is outside the physical range of a latency, expected a "
                  "value in [0, 1000000] ns"))
      << m;
  m = message_of([&] { root->at("l2").param<double>("hit_latency_cycles").get(); });
  EXPECT_TRUE(has(m, "expected a value in [0, 1000000] cycles")) << m;
}

TEST_F(ConfigHardening, SetValuesMeetTheSameRules) {
  auto p = write("g.yaml", "hbm:\n  bandwidth_gbps: 1555\n  latency_ns: 300\n");
  auto root = ConfigNode::load_file(p, {"hbm.bandwidth_gbps=1e-300"});
  std::string m = message_of([&] { root->at("hbm").param<double>("bandwidth_gbps").get(); });
  EXPECT_TRUE(has(m, "<--set hbm.bandwidth_gbps=1e-300>:1:1: hbm.bandwidth_gbps: 1e-300 is outside")) << m;
  root = ConfigNode::load_file(p, {"hbm.latency_ns=.nan"});
  m = message_of([&] { root->at("hbm").param<double>("latency_ns").get(); });
  EXPECT_TRUE(has(m, "expected a finite number")) << m;
}

TEST_F(ConfigHardening, ZeroMeansNoneWhereTheRuleSaysSo) {
  auto root = ConfigNode::load_string("l2:\n  requests_per_cycle_per_slice: 0\n  far: 1\n", "z.yaml");
  EXPECT_EQ(root->at("l2").param<double>("requests_per_cycle_per_slice").get(), 0.0);
  root = ConfigNode::load_string("l2:\n  requests_per_cycle_per_slice: 1e-300\n", "z.yaml");
  std::string m = message_of([&] { root->at("l2").param<double>("requests_per_cycle_per_slice").get(); });
  EXPECT_TRUE(has(m, "expected a value in 0 or [0.001, 1024] requests/cycle")) << m;
  root = ConfigNode::load_string("clocks:\n  sm_mhz: 1\n", "c.yaml");
  m = message_of([&] { root->at("clocks").param<double>("sm_mhz").get(); });
  EXPECT_TRUE(has(m, "expected a value in (1, 100000] MHz")) << m;
}

TEST_F(ConfigHardening, RulesMatchByPatternFirstMatchWins) {
  using config_rules::rule_for;
  ASSERT_NE(rule_for("sm.tensor.mma_sync_flops_per_cycle.f16"), nullptr);
  EXPECT_STREQ(rule_for("sm.tensor.mma_sync_flops_per_cycle.f16")->unit, "flop/cycle");
  EXPECT_STREQ(rule_for("noc.bytes_per_cycle_per_sm")->unit, "bytes/cycle");
  EXPECT_STREQ(rule_for("sm.tensor.ldmatrix_writeback_cycles_per_reg")->unit, "cycles");
  EXPECT_STREQ(rule_for("sm.shared.carveouts_kb[3]")->unit, "KB");
  EXPECT_STREQ(rule_for("launch.overhead_us")->unit, "us");
  EXPECT_EQ(rule_for("name"), nullptr);
  EXPECT_EQ(rule_for("ops[2].trans_a"), nullptr);
  EXPECT_EQ(rule_for("ops[0].count"), nullptr);  // a workload's count is not a hardware unit
  EXPECT_STREQ(rule_for("sm.units.fp32.lanes")->what, "a count of hardware units");
}

// Every number of every shipped machine config is inside its key's range (the table is not
// tighter than the machines we ship), and every rule is stated in docs/config.md.
TEST_F(ConfigHardening, EveryShippedConfigNumberIsInsideItsPhysicalRange) {
  int checked = 0;
  std::function<void(const ConfigNode&)> walk = [&](const ConfigNode& n) {
    if (n.is_map())
      for (const auto& k : n.keys()) walk(*n.map_get_shared(k));
    if (n.is_seq())
      for (size_t i = 0; i < n.size(); ++i) walk(n[i]);
    double v;
    if (n.is_scalar() && config_detail::parse_number(n.raw_scalar(), v) == config_detail::NumStatus::kOk) {
      EXPECT_NO_THROW(n.as<double>()) << n.pos().str() << " " << n.path();
      ++checked;
    }
  };
  for (const auto& e : fs::directory_iterator(fs::path(GTSIM_SOURCE_DIR) / "hw_configs"))
    if (e.path().extension() == ".yaml") walk(*ConfigNode::load_file(e.path().string()));
  EXPECT_GT(checked, 500);
}

TEST_F(ConfigHardening, EveryPhysicalRangeRuleIsDocumented) {
  std::ifstream in(fs::path(GTSIM_SOURCE_DIR) / "docs" / "config.md");
  std::stringstream ss;
  ss << in.rdbuf();
  for (const auto& r : config_rules::rules()) {
    EXPECT_TRUE(has(ss.str(), std::string("`") + r.pattern + "`")) << r.pattern;
    EXPECT_TRUE(has(ss.str(), config_rules::range_text(r))) << config_rules::range_text(r);
  }
}

// ---- 5. UTF-8 ----

TEST_F(ConfigHardening, InvalidUtf8IsRefusedAtLoadWithItsPosition) {
  auto p = write("u.yaml", "target: gpu\nname: \"\xff\xfe\"\n");
  std::string m = message_of([&] { ConfigNode::load_file(p); });
  EXPECT_TRUE(has(m, "u.yaml:2:8: invalid UTF-8 (byte 0xff), expected UTF-8 text")) << m;
  // In a comment, a key, an overlong form or a surrogate: refused all the same.
  for (const char* bad : {"a: 1 # \xc3\n", "\xe9t\xe9: 1\n", "a: \"\xc0\xaf\"\n", "a: \"\xed\xa0\x80\"\n"})
    EXPECT_TRUE(has(message_of([&] { ConfigNode::load_string(bad, "b.yaml"); }), "invalid UTF-8")) << bad;
  EXPECT_TRUE(has(message_of([&] { ConfigNode::load_file(write("g.yaml", "a: 1\n"), {"a=\xff"}); }), "invalid UTF-8"));
  // Valid UTF-8 loads and reaches JSON intact.
  auto root = ConfigNode::load_string("name: \"H\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x9a\x80\"\n");
  EXPECT_EQ(root->to_json().dump(), "{\"name\":\"H\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x9a\x80\"}");
}

// ---- 6. base: ----

TEST_F(ConfigHardening, BaseThatIsADirectoryIsRefusedAtTheBaseKey) {
  fs::create_directories(dir / "sub");
  auto p = write("c.yaml", "name: c\nbase: sub\n");
  std::string m = message_of([&] { ConfigNode::load_file(p); });
  EXPECT_TRUE(has(m, "c.yaml:2:1: base: \"sub\" is a directory, expected a config file")) << m;
  m = message_of([&] { ConfigNode::load_file(dir.string()); });
  EXPECT_TRUE(has(m, "is a directory, expected a config file")) << m;
}

TEST_F(ConfigHardening, MissingBaseFileNamesTheLine) {
  auto p = write("c.yaml", "# a comment\nbase: nowhere.yaml\n");
  std::string m = message_of([&] { ConfigNode::load_file(p); });
  EXPECT_TRUE(has(m, "c.yaml:2:1: base: \"nowhere.yaml\" does not exist")) << m;
}

TEST_F(ConfigHardening, BaseChainLongerThanTheLimitIsRefused) {
  for (int i = 0; i < 40; ++i) write("f" + std::to_string(i) + ".yaml", "base: f" + std::to_string(i + 1) + ".yaml\n");
  write("f40.yaml", "a: 1\n");
  std::string m = message_of([&] { ConfigNode::load_file((dir / "f0.yaml").string()); });
  EXPECT_TRUE(has(m, "chain of more than 32 base: files")) << m;
}

TEST_F(ConfigHardening, FileLargerThanTheLimitIsRefusedBeforeParsing) {
  auto p = write("big.yaml", "a: 1\n#" + std::string(ConfigNode::kMaxFileBytes, 'x') + "\n");
  std::string m = message_of([&] { ConfigNode::load_file(p); });
  EXPECT_TRUE(has(m, "is larger than 16777216 bytes")) << m;
}

// ---- 7. did you mean ----

TEST_F(ConfigHardening, UnknownKeySuggestsTheClosestKeyTheReaderAskedFor) {
  auto root = ConfigNode::load_string("sm:\n  cuont: 4\n  sub_partitions: 4\n  wibble: 1\n", "d.yaml");
  const ConfigNode& sm = root->at("sm");
  EXPECT_EQ(sm.param<uint32_t>("count").or_default(1), 1u);
  sm.param<uint32_t>("sub_partitions").get();
  auto u = root->unused_keys();
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(u[0].str(),
            "d.yaml:2:3: unknown key \"cuont\" (sm.cuont): not a setting of this model; did you mean \"count\"?");
  EXPECT_TRUE(has(u[1].str(), "\"wibble\"") && has(u[1].str(), "check the spelling against docs/config.md"))
      << u[1].str();
}

TEST_F(ConfigHardening, MissingRequiredKeyNamesACloseUnknownKey) {
  auto root = ConfigNode::load_string("hbm:\n  latency_ns: 300\n  bandwith_gbps: 1555\n", "m.yaml");
  std::string m = message_of([&] { root->at("hbm").param<double>("bandwidth_gbps").get(); });
  EXPECT_TRUE(has(m,
                  "m.yaml:2:3: hbm: missing required key \"bandwidth_gbps\" (did you misspell it as "
                  "\"bandwith_gbps\" at m.yaml:3:3?)"))
      << m;
  // A key that was read is not offered, nor is one that is far away.
  root->at("hbm").param<double>("latency_ns").get();
  m = message_of([&] { root->at("hbm").param<double>("latency_us").get(); });
  EXPECT_FALSE(has(m, "misspell")) << m;
}

TEST_F(ConfigHardening, EditDistanceCountsSwapsAsOneEdit) {
  EXPECT_EQ(config_detail::edit_distance("cuont", "count"), 1u);
  EXPECT_EQ(config_detail::edit_distance("bandwith_gbps", "bandwidth_gbps"), 1u);
  EXPECT_EQ(config_detail::edit_distance("", "abc"), 3u);
  EXPECT_EQ(config_detail::closest("lanes", {"latency_cycles", "lane", "banks"}), "lane");
  EXPECT_EQ(config_detail::closest("xyz", {"count", "lanes"}), "");
}

TEST_F(ConfigHardening, OneOfAndImplSuggestTheClosestAllowedName) {
  auto root = ConfigNode::load_string("shared:\n  arbitration: round_robn\nhbm:\n  impl: bankd\n", "o.yaml");
  std::string m = message_of([&] {
    root->at("shared").param<std::string>("arbitration").one_of({"fifo", "round_robin", "sub_partition"}).get();
  });
  EXPECT_TRUE(has(m,
                  "o.yaml:2:16: shared.arbitration: expected one of \"fifo\", \"round_robin\", \"sub_partition\", "
                  "got \"round_robn\"; did you mean \"round_robin\"?"))
      << m;
  m = message_of([&] { root->at("hbm").impl({"bandwidth_server", "banked"}); });
  EXPECT_TRUE(has(m, "registered: bandwidth_server, banked; did you mean \"banked\"?")) << m;
}

TEST_F(ConfigHardening, JsonNeverWrapsLargeIntegers) {
  auto root =
      ConfigNode::load_string("a: 18446744073709551615\nb: -9223372036854775808\nc: 18446744073709551616\nd: -0\n");
  auto j = root->to_json();
  EXPECT_EQ(j["a"].get<uint64_t>(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(j["b"].get<int64_t>(), std::numeric_limits<int64_t>::min());
  EXPECT_TRUE(j["c"].is_number_float());
  EXPECT_EQ(j["d"].get<int64_t>(), 0);
}

}  // namespace
}  // namespace gtsim
