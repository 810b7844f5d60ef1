// The calendar queue (Simulation's default) must pop events in exactly the binary heap's
// (tick, priority, insertion sequence) order: the same random schedules through both.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "sim/event_queue.hpp"
#include "sim/simulation.hpp"

namespace gtsim {
namespace {

// Interleaves pushes and pops as a simulation does: each pop may push events at or after the
// popped tick (same tick, near future, beyond the calendar's ring, far beyond), with ties in
// tick and priority. Returns the popped (tick, priority, seq) sequence.
std::vector<Event> drive(EventQueue& q, uint64_t seed, unsigned bucket_hint) {
  std::mt19937_64 rng(seed);
  std::vector<Event> out;
  uint64_t seq = 0;
  Tick now = 0;
  auto push = [&](Tick t) {
    int32_t prio = int32_t(rng() % 4) - 1;
    if (rng() % 50 == 0) prio = 1 << 30;
    q.push(Event{t, prio, seq++, nullptr, uint32_t(rng() % 7), rng()});
  };
  auto delta = [&]() -> Tick {
    switch (rng() % 8) {
      case 0: return 0;                                        // same tick
      case 1: return rng() % 3;                                // a few ticks
      case 2: return rng() % (Tick(1) << bucket_hint);         // within a bucket
      case 3: case 4: return rng() % 100'000;                  // near future
      case 5: return rng() % 50'000'000;                       // beyond the ring
      case 6: return (Tick(1) << 40) + rng() % 1000;           // far beyond
      default: return 505 * (rng() % 64);                      // on a clock grid
    }
  };
  for (int i = 0; i < 2000; ++i) push(delta());
  for (int step = 0; step < 200'000 && !q.empty(); ++step) {
    Event e = q.pop();
    EXPECT_GE(e.tick, now);
    now = e.tick;
    out.push_back(e);
    int n = step < 150'000 ? int(rng() % 3) : int(rng() % 2);
    for (int k = 0; k < n; ++k) push(now + delta());
  }
  while (!q.empty()) out.push_back(q.pop());
  return out;
}

TEST(EventQueueEquivalence, CalendarPopsInTheHeapsOrder) {
  for (uint64_t seed : {1ull, 2ull, 3ull, 42ull}) {
    for (unsigned shift : {0u, 4u, 10u}) {
      for (unsigned ring : {6u, 8u, 14u}) {
        HeapEventQueue heap;
        CalendarEventQueue cal(shift, ring);
        std::vector<Event> a = drive(heap, seed, shift), b = drive(cal, seed, shift);
        ASSERT_EQ(a.size(), b.size());
        for (size_t i = 0; i < a.size(); ++i) {
          ASSERT_EQ(a[i].tick, b[i].tick) << "seed " << seed << " shift " << shift << " ring " << ring << " at " << i;
          ASSERT_EQ(a[i].priority, b[i].priority) << i;
          ASSERT_EQ(a[i].seq, b[i].seq) << i;
          ASSERT_EQ(a[i].kind, b[i].kind) << i;
          ASSERT_EQ(a[i].arg, b[i].arg) << i;
        }
      }
    }
  }
}

TEST(EventQueueEquivalence, TopAndSizeAgree) {
  HeapEventQueue heap;
  CalendarEventQueue cal(3, 6);
  std::mt19937_64 rng(7);
  uint64_t seq = 0;
  Tick now = 0;
  for (int i = 0; i < 50'000; ++i) {
    if (heap.empty() || rng() % 3 != 0) {
      Event e{now + rng() % 5000, int32_t(rng() % 3), seq++, nullptr, 0, 0};
      heap.push(e);
      cal.push(e);
    } else {
      ASSERT_EQ(heap.top().seq, cal.top().seq);
      now = heap.pop().tick;
      cal.pop();
    }
    ASSERT_EQ(heap.size(), cal.size());
    ASSERT_EQ(heap.empty(), cal.empty());
    if (!heap.empty()) {
      ASSERT_EQ(heap.top().seq, cal.top().seq);
    }
  }
}

// Simulation runs the same handlers in the same order with either queue.
TEST(EventQueueEquivalence, SimulationOrderMatchesHeapQueue) {
  struct Chain : EventHandler {
    Simulation* sim = nullptr;
    std::mt19937_64 rng{11};
    std::vector<std::pair<Tick, uint64_t>> seen;
    void handle_event(Tick now, uint32_t, uint64_t arg) override {
      seen.push_back({now, arg});
      if (seen.size() < 100'000)
        for (int k = int(rng() % 3); k > 0; --k)
          sim->schedule(now + (rng() % 4 == 0 ? 0 : rng() % 3'000'000), this, 0, rng(), int32_t(rng() % 2));
    }
  };
  auto run = [](std::unique_ptr<EventQueue> q) {
    Simulation sim(std::move(q));
    Chain c;
    c.sim = &sim;
    for (int i = 0; i < 100; ++i) sim.schedule(Tick(i) * 777, &c, 0, uint64_t(i));
    sim.run();
    return c.seen;
  };
  auto a = run(std::make_unique<HeapEventQueue>());
  auto b = run(nullptr);  // the default: the calendar queue
  EXPECT_EQ(a, b);
  EXPECT_GT(a.size(), 1000u);
}

}  // namespace
}  // namespace gtsim
