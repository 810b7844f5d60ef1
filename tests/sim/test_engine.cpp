// The engine's rules: events run in (tick, priority, insertion) order, time never goes back,
// clocks convert without drift, bandwidth servers keep their rate, the watchdog ends runs.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "sim/error.hpp"
#include "sim/simulation.hpp"

namespace gtsim {
namespace {

struct Recorder : EventHandler {
  std::vector<std::pair<Tick, uint64_t>> seen;
  void handle_event(Tick now, uint32_t, uint64_t arg) override { seen.push_back({now, arg}); }
};

TEST(EventQueue, OrdersByTickThenPriorityThenInsertion) {
  Simulation sim;
  Recorder r;
  sim.schedule(20, &r, 0, 1);
  sim.schedule(10, &r, 0, 2, /*priority=*/5);
  sim.schedule(10, &r, 0, 3, /*priority=*/-1);
  sim.schedule(10, &r, 0, 4, /*priority=*/5);
  sim.schedule(5, &r, 0, 5);
  sim.run();
  std::vector<uint64_t> order;
  for (auto& [t, a] : r.seen) order.push_back(a);
  EXPECT_EQ(order, (std::vector<uint64_t>{5, 3, 2, 4, 1}));
  EXPECT_EQ(sim.now(), 20u);
}

TEST(EventQueue, SchedulingInThePastIsRefused) {
  Simulation sim;
  struct Late : EventHandler {
    Simulation* s;
    void handle_event(Tick now, uint32_t, uint64_t) override { s->schedule(now - 1, this); }
  } late;
  late.s = &sim;
  sim.schedule(100, &late);
  EXPECT_THROW(sim.run(), SimulationError);
}

TEST(EventQueue, RunStopsAtUntilAndResumes) {
  Simulation sim;
  Recorder r;
  for (Tick t = 1; t <= 10; ++t) sim.schedule(t * 100, &r, 0, t);
  sim.run(550);
  EXPECT_EQ(r.seen.size(), 5u);
  sim.run();
  EXPECT_EQ(r.seen.size(), 10u);
}

TEST(ClockDomain, CyclesToTicksHasNoDriftOverBillionsOfCycles) {
  ClockDomain sm(1410.0);
  // 1410 MHz: period 709.2198... ps. 1.41e9 cycles are exactly one second.
  EXPECT_EQ(sm.ticks(uint64_t(1'410'000'000)), 1'000'000'000'000ull);
  EXPECT_NEAR(sm.cycles(1'000'000'000'000ull), 1.41e9, 1.0);
  ClockDomain h(1980.0);
  EXPECT_EQ(h.cycle_start(1980), 1'000'000ull);  // 1980 cycles = 1 us
  EXPECT_EQ(h.next_edge(h.cycle_start(7)), h.cycle_start(7));
  EXPECT_EQ(h.next_edge(h.cycle_start(7) + 1), h.cycle_start(8));
}

TEST(ClockDomain, RetimedClockKeepsCountingCyclesAtTheNewRate) {
  // Hopper's SM clock drops under tensor-core load between kernels: cycles go on from the first
  // edge at or after the change, at the new period.
  ClockDomain c(1980.0);
  Tick at = c.cycle_start(1980) + 1;  // just after 1 us
  c.retime(1000.0, at);
  EXPECT_EQ(c.cycle_start(1981), ClockDomain(1980.0).cycle_start(1981));  // the first edge after `at`
  EXPECT_EQ(c.cycle_at(c.cycle_start(1981)), 1981u);
  EXPECT_EQ(c.cycle_start(1981 + 1000) - c.cycle_start(1981), 1'000'000ull);  // 1000 cycles at 1 GHz = 1 us
  EXPECT_EQ(c.cycle_at(c.cycle_start(1981) + 999'999), 1981u + 999u);
  EXPECT_EQ(c.ticks(uint64_t(7)), 7000u);  // durations at the new rate
  EXPECT_DOUBLE_EQ(c.mhz(), 1000.0);
}

TEST(BandwidthServer, LongStreamKeepsTheConfiguredRate) {
  BandwidthServer hbm(4800.0);  // 4.8 TB/s = 4800 bytes per ns
  Tick done = 0;
  for (int i = 0; i < 1'000'000; ++i) done = hbm.reserve(0, 64);
  double ns = double(done) / 1000.0;
  EXPECT_NEAR(64e6 / ns, 4800.0, 4800.0 * 1e-6);
}

TEST(BandwidthServer, IdleServerStartsAtArrival) {
  BandwidthServer s(1.0);  // 1 byte per ns
  EXPECT_EQ(s.reserve(5000, 10), 15000u);
  EXPECT_EQ(s.reserve(1000, 10), 25000u);  // queued behind the first
  EXPECT_EQ(s.queue_delay_ticks(), 14000u);
}

struct Chain : EventHandler {
  Simulation* sim;
  uint64_t count = 0;
  uint64_t limit;
  bool progress;
  void handle_event(Tick now, uint32_t, uint64_t) override {
    if (progress) sim->note_progress();
    if (++count < limit) sim->schedule(now + 7 + (count % 13), this);
  }
};

TEST(Watchdog, NoProgressEndsTheRunWithADiagnostic) {
  Simulation sim;
  sim.limits().max_events_without_progress = 1000;
  sim.set_stall_reporter([] { return std::string("warp 3 waits at bar.sync"); });
  Chain c;
  c.sim = &sim;
  c.limit = 1'000'000;
  c.progress = false;
  sim.schedule(0, &c);
  try {
    sim.run();
    FAIL() << "expected a watchdog error";
  } catch (const SimulationError& e) {
    EXPECT_NE(std::string(e.what()).find("no progress"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("warp 3 waits"), std::string::npos);
  }
}

TEST(Watchdog, SimulatedTimeLimitEndsTheRun) {
  Simulation sim;
  sim.limits().max_tick = 10'000;
  Chain c;
  c.sim = &sim;
  c.limit = 1'000'000;
  c.progress = true;
  sim.schedule(0, &c);
  EXPECT_THROW(sim.run(), SimulationError);
}

uint64_t run_chain_signature() {
  Simulation sim;
  Chain c;
  c.sim = &sim;
  c.limit = 200'000;
  c.progress = true;
  sim.schedule(0, &c);
  return sim.run() ^ (sim.events_processed() << 20);
}

TEST(Simulation, TwoSimulationsOnTwoThreadsMatchEachAlone) {
  uint64_t alone = run_chain_signature();
  uint64_t a = 0, b = 0;
  std::thread t1([&] { a = run_chain_signature(); });
  std::thread t2([&] { b = run_chain_signature(); });
  t1.join();
  t2.join();
  EXPECT_EQ(a, alone);
  EXPECT_EQ(b, alone);
}

TEST(Stats, HierarchicalJsonByComponentPath) {
  StatGroup root;
  auto& hits = root.child("l2").child("slice0").counter("hits", "sector hits", "sectors");
  auto& miss = root.child("l2").child("slice1").counter("hits", "sector hits", "sectors");
  hits += 3;
  miss += 4;
  root.child("l2").formula("hit_rate", "hit rate", "ratio", [&] { return hits.value() / 10.0; });
  auto j = root.to_json();
  EXPECT_EQ(j["l2"]["slice0"]["hits"], 3);
  EXPECT_DOUBLE_EQ(j["l2"]["hit_rate"].get<double>(), 0.3);
  EXPECT_EQ(root.sum_counters("hits"), 7u);
  auto m = root.to_json(true);
  EXPECT_EQ(m["l2"]["slice0"]["hits"]["unit"], "sectors");
  ASSERT_NE(root.find("l2/slice1/hits"), nullptr);
}

// Sampled simulation extrapolates only the loop's share of a count: increments made inside a LoopWork
// scope are counted apart, scopes nest and restore, and another thread's scope is not this one's.
TEST(Stats, CounterSeparatesLoopWorkFromTheRest) {
  StatGroup root;
  Counter& c = root.counter("inst_executed", "warp instructions", "warp instructions");
  c += 5;
  {
    Counter::LoopWork loop(true);
    ++c;
    c += 2;
    {
      Counter::LoopWork prologue(false);
      c += 10;
    }
    c += 1;
    std::thread other([&] {
      Counter local("x", "", "");
      local += 7;
      EXPECT_EQ(local.loop_value(), 0u);
    });
    other.join();
  }
  c += 4;
  c.add_unattributed(100);
  EXPECT_EQ(c.value(), 123u);
  EXPECT_EQ(c.loop_value(), 4u);
  EXPECT_FALSE(Counter::loop_work());
  c.reset();
  EXPECT_EQ(c.loop_value(), 0u);
}

}  // namespace
}  // namespace gtsim
