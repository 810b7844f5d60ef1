// Resource limits of the engine (sim/simulation.hpp RunLimits): each can be set, ends the run with a
// LimitError that names the limit, the value reached and the flag that raises it, and never changes
// a result.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "sim/error.hpp"
#include "sim/simulation.hpp"

namespace gtsim {
namespace {

// Restores the process-wide limits after each test.
class Limits : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = run_limits(); }
  void TearDown() override { set_run_limits(saved_); }
  RunLimits saved_;
};

// An endless chain of events, each 1 ns after the last, each counted as progress.
struct Forever : EventHandler {
  Simulation* sim = nullptr;
  void handle_event(Tick now, uint32_t, uint64_t) override {
    sim->note_progress();
    sim->schedule(now + kTicksPerNs, this);
  }
};

std::string run_until_limit(Simulation& sim) {
  Forever f;
  f.sim = &sim;
  sim.schedule(0, &f);
  try {
    sim.run();
  } catch (const LimitError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a LimitError";
  return "";
}

TEST_F(Limits, DefaultsAreTheDocumentedOnes) {
  RunLimits d;
  EXPECT_EQ(d.max_sim_seconds, 10);
  EXPECT_EQ(d.max_events, 20'000'000'000ull);
  EXPECT_EQ(d.max_host_seconds, 0);
  EXPECT_EQ(d.max_memory_gib, 2);
  EXPECT_EQ(d.max_warp_instructions, 1e12);
  Simulation sim;
  EXPECT_EQ(sim.limits().max_tick, Tick(10) * 1000 * 1000 * kTicksPerUs);
}

TEST_F(Limits, SimulatedTimeLimitCanBeRaisedAndNamesItsFlag) {
  RunLimits l;
  l.max_sim_seconds = 1e-6;  // 1 us: 1000 events of 1 ns
  set_run_limits(l);
  Simulation sim;
  std::string msg = run_until_limit(sim);
  EXPECT_NE(msg.find("simulated time limit reached"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1e-06 s"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--max-sim-seconds"), std::string::npos) << msg;
  EXPECT_LE(sim.now(), Tick(1) * kTicksPerUs);

  // Above the old fixed 10 s: the limit follows the setting.
  l.max_sim_seconds = 20;
  set_run_limits(l);
  Simulation longer;
  EXPECT_EQ(longer.limits().max_tick, Tick(20) * 1000 * 1000 * kTicksPerUs);
}

TEST_F(Limits, SimulatedTimeLimitBeyondATickIsNoLimit) {
  RunLimits l;
  l.max_sim_seconds = 1e30;
  set_run_limits(l);
  Simulation sim;
  EXPECT_EQ(sim.limits().max_tick, kTickMax);
}

TEST_F(Limits, EventLimitNamesTheEventsReachedAndItsFlag) {
  RunLimits l;
  l.max_events = 5000;
  set_run_limits(l);
  Simulation sim;
  std::string msg = run_until_limit(sim);
  EXPECT_NE(msg.find("event limit reached: 5001 events (the limit is 5000)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--max-events"), std::string::npos) << msg;
  EXPECT_EQ(sim.events_processed(), 5001u);
}

TEST_F(Limits, HostTimeLimitEndsAnEndlessRunWithinAFractionOfASecond) {
  RunLimits l;
  l.max_host_seconds = 0.2;
  set_run_limits(l);
  Simulation sim;
  sim.limits().max_tick = kTickMax;
  auto t0 = std::chrono::steady_clock::now();
  std::string msg = run_until_limit(sim);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 5.0);
  EXPECT_NE(msg.find("host time limit reached"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(the limit is 0.2 s)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--max-host-seconds"), std::string::npos) << msg;
}

TEST_F(Limits, LimitErrorIsASimulationError) {
  RunLimits l;
  l.max_events = 10;
  set_run_limits(l);
  Simulation sim;
  Forever f;
  f.sim = &sim;
  sim.schedule(0, &f);
  EXPECT_THROW(sim.run(), SimulationError);
}

TEST_F(Limits, LimitsDoNotChangeAResult) {
  struct Count : EventHandler {
    Simulation* sim = nullptr;
    uint64_t n = 0;
    void handle_event(Tick now, uint32_t, uint64_t) override {
      sim->note_progress();
      if (++n < 100'000) sim->schedule(now + 3, this);
    }
  };
  auto run = [] {
    Simulation sim;
    Count c;
    c.sim = &sim;
    sim.schedule(0, &c);
    return sim.run();
  };
  Tick plain = run();
  RunLimits l;
  l.max_host_seconds = 3600;  // checked, never reached
  l.max_events = 1'000'000;
  set_run_limits(l);
  EXPECT_EQ(run(), plain);
}

}  // namespace
}  // namespace gtsim
