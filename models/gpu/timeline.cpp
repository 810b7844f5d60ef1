// Timeline: records CTA residency, sub-partition states per window and memory counters, and
// writes them as Chrome trace-event JSON (the format ui.perfetto.dev opens).
#include "models/gpu/timeline.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>
#include <utility>

namespace gtsim::gpu {

namespace {
constexpr uint64_t kNone = ~0ull;
constexpr int kGpuPid = 1, kMemoryPid = 2, kFirstSmPid = 10, kFirstSpTid = 100;
const char* const kStallNames[] = {"memory", "dependency", "unit busy", "not selected", "barrier"};

double round_us(double x) { return std::round(x * 1e4) / 1e4; }  // 0.1 ns
}  // namespace

Timeline::Timeline(const TimelineOptions& opt, const ClockDomain& clock, uint32_t sms, uint32_t sub_partitions,
                   uint32_t cta_slots, std::function<MemorySample()> memory)
    : opt_(opt),
      clock_(clock),
      sms_(sms),
      sps_(sub_partitions),
      slots_(cta_slots),
      memory_(std::move(memory)),
      cta_open_(size_t(sms) * cta_slots, kNone),
      cta_id_(size_t(sms) * cta_slots, 0),
      windows_(size_t(sms) * sub_partitions) {
  opt_.window_cycles = std::max<uint32_t>(1, opt_.window_cycles);
}

double Timeline::us(uint64_t cycle) const { return round_us(double(clock_.cycle_start(cycle)) / double(kTicksPerUs)); }

bool Timeline::recording(uint64_t cycle, uint64_t events) {
  if (events_ + events <= opt_.max_events) return true;
  stopped_at_ = std::min(stopped_at_, cycle);
  return false;
}

void Timeline::begin_kernel(const std::string& name, uint64_t start_cycle) {
  kernel_ = name;
  kernel_start_ = start_cycle;
  for (auto& w : windows_) w.clear();
  last_ = memory_();
  last_cycle_ = start_cycle;
  next_sample_ = start_cycle + opt_.window_cycles;
}

void Timeline::end_kernel(uint64_t end_cycle, nlohmann::json args) {
  next_sample_ = 0;
  sample(end_cycle);
  next_sample_ = kNone;
  flush_windows(end_cycle);
  if (recording(kernel_start_)) {
    slices_.push_back({kGpuPid, 0, kernel_, us(kernel_start_), us(end_cycle) - us(kernel_start_), std::move(args)});
    ++events_;
  }
  ++kernels_;
}

void Timeline::cta_begin(uint32_t sm, uint32_t slot, uint64_t cta, uint64_t cycle) {
  size_t k = size_t(sm) * slots_ + slot;
  cta_open_[k] = cycle;
  cta_id_[k] = cta;
}

void Timeline::cta_end(uint32_t sm, uint32_t slot, uint64_t cycle) {
  size_t k = size_t(sm) * slots_ + slot;
  uint64_t begin = cta_open_[k];
  cta_open_[k] = kNone;
  if (begin == kNone || !recording(begin)) return;
  double ts = us(begin);
  slices_.push_back({kFirstSmPid + int(sm), int(slot), "CTA " + std::to_string(cta_id_[k]), ts,
                     std::max(0.0, us(std::max(cycle, begin)) - ts), nlohmann::json{{"cta", cta_id_[k]}}});
  ++events_;
}

Timeline::Window* Timeline::window(uint32_t sm, uint32_t sp, uint64_t cycle) {
  if (cycle < kernel_start_) cycle = kernel_start_;
  auto& w = windows_[size_t(sm) * sps_ + sp];
  size_t i = size_t((cycle - kernel_start_) / opt_.window_cycles);
  if (i >= w.size()) {
    if (!recording(cycle, i + 1 - w.size())) return nullptr;
    events_ += i + 1 - w.size();  // at most one slice each
    w.resize(i + 1);
  }
  return &w[i];
}

void Timeline::issued(uint32_t sm, uint32_t sp, uint64_t cycle) {
  if (Window* w = window(sm, sp, cycle)) ++w->issued;
}

void Timeline::stalled(uint32_t sm, uint32_t sp, StallKind kind, uint64_t from, uint64_t to) {
  from = std::max(from, kernel_start_);
  const uint64_t size = opt_.window_cycles;
  while (from < to) {
    uint64_t edge = kernel_start_ + ((from - kernel_start_) / size + 1) * size;
    uint64_t until = std::min(to, edge);
    Window* w = window(sm, sp, from);
    if (!w) return;
    w->stall[size_t(kind)] += uint32_t(until - from);
    from = until;
  }
}

void Timeline::sample(uint64_t cycle) {
  if (cycle < next_sample_) return;
  next_sample_ = cycle + opt_.window_cycles;
  if (cycle <= last_cycle_ || !recording(cycle, 4)) return;
  MemorySample m = memory_();
  double t0 = us(last_cycle_), t1 = us(cycle), dt = t1 - t0;
  if (dt > 0) {
    auto gbps = [dt](uint64_t now, uint64_t before) { return now >= before ? double(now - before) / dt / 1e3 : 0.0; };
    counters_.push_back({"L2 bandwidth", t0, {{"GB/s", gbps(m.l2_sectors * 32, last_.l2_sectors * 32)}}});
    counters_.push_back({"DRAM bandwidth",
                         t0,
                         {{"read GB/s", gbps(m.dram_read_bytes, last_.dram_read_bytes)},
                          {"write GB/s", gbps(m.dram_write_bytes, last_.dram_write_bytes)}}});
    counters_.push_back({"requests in flight", t1, {{"requests", m.requests_in_flight}}});
    counters_.push_back({"HBM backlog", t1, {{"ns", double(m.hbm_backlog) / double(kTicksPerNs)}}});
    events_ += 4;
  }
  last_ = m;
  last_cycle_ = cycle;
}

// One slice per run of windows in the same state: "issuing" when the sub-partition issued in at least
// half the window's cycles, else the stall that held most warp-cycles ("not selected" means another warp
// issued: then "issuing"); windows with nothing resident make no slice.
void Timeline::flush_windows(uint64_t end_cycle) {
  const uint64_t size = opt_.window_cycles;
  for (uint32_t sm = 0; sm < sms_; ++sm)
    for (uint32_t sp = 0; sp < sps_; ++sp) {
      const auto& ws = windows_[size_t(sm) * sps_ + sp];
      auto state = [&](const Window& w) -> std::string {
        if (w.issued * 2 >= size) return "issuing";
        size_t best = size_t(StallKind::kCount);
        for (size_t k = 0; k < size_t(StallKind::kCount); ++k)
          if (k != size_t(StallKind::kNotSelected) && w.stall[k] > 0 &&
              (best == size_t(StallKind::kCount) || w.stall[k] > w.stall[best]))
            best = k;
        if (best != size_t(StallKind::kCount)) return std::string("stall: ") + kStallNames[best];
        return w.issued > 0 || w.stall[size_t(StallKind::kNotSelected)] > 0 ? "issuing" : "";
      };
      size_t i = 0;
      while (i < ws.size()) {
        std::string name = state(ws[i]);
        size_t j = i + 1;
        while (j < ws.size() && state(ws[j]) == name) ++j;
        if (!name.empty()) {
          uint64_t b = kernel_start_ + i * size, e = std::min(end_cycle, kernel_start_ + j * size);
          if (e > b) {
            uint64_t issued = 0;
            std::array<uint64_t, size_t(StallKind::kCount)> stall{};
            for (size_t k = i; k < j; ++k) {
              issued += ws[k].issued;
              for (size_t r = 0; r < stall.size(); ++r) stall[r] += ws[k].stall[r];
            }
            nlohmann::json args = {{"issue_pct", std::round(1000.0 * double(issued) / double(e - b)) / 10.0},
                                   {"cycles", e - b}};
            nlohmann::json st = nlohmann::json::object();
            for (size_t r = 0; r < stall.size(); ++r) st[kStallNames[r]] = stall[r];
            args["stalled_warp_cycles"] = st;
            slices_.push_back({kFirstSmPid + int(sm), kFirstSpTid + int(sp), name, us(b), us(e) - us(b), args});
          }
        }
        i = j;
      }
    }
}

nlohmann::json Timeline::to_json() const {
  nlohmann::json ev = nlohmann::json::array();
  auto meta = [&](const char* what, int pid, int tid, const nlohmann::json& args) {
    nlohmann::json e = {{"ph", "M"}, {"name", what}, {"pid", pid}, {"args", args}};
    if (tid >= 0) e["tid"] = tid;
    ev.push_back(e);
  };
  meta("process_name", kGpuPid, -1, {{"name", "GPU"}});
  meta("process_sort_index", kGpuPid, -1, {{"sort_index", 0}});
  meta("thread_name", kGpuPid, 0, {{"name", "kernels"}});
  meta("process_name", kMemoryPid, -1, {{"name", "memory (L2, HBM)"}});
  meta("process_sort_index", kMemoryPid, -1, {{"sort_index", 1}});
  // Names only for the tracks that hold something (an SM's unused CTA slots make no track).
  std::set<std::pair<int, int>> used;
  for (const Slice& s : slices_)
    if (s.pid >= kFirstSmPid) used.insert({s.pid, s.tid});
  int named = -1;
  for (auto [pid, tid] : used) {
    if (pid != named) {
      meta("process_name", pid, -1, {{"name", "SM " + std::to_string(pid - kFirstSmPid)}});
      meta("process_sort_index", pid, -1, {{"sort_index", pid}});
      named = pid;
    }
    std::string name =
        tid >= kFirstSpTid ? "sub-partition " + std::to_string(tid - kFirstSpTid) : "CTA slot " + std::to_string(tid);
    meta("thread_name", pid, tid, {{"name", name}});
    meta("thread_sort_index", pid, tid, {{"sort_index", tid}});
  }
  std::vector<const Slice*> order;
  for (const Slice& s : slices_) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(), [](const Slice* a, const Slice* b) {
    return std::tie(a->pid, a->tid, a->ts) < std::tie(b->pid, b->tid, b->ts);
  });
  for (const Slice* s : order)
    ev.push_back({{"ph", "X"},
                  {"name", s->name},
                  {"pid", s->pid},
                  {"tid", s->tid},
                  {"ts", s->ts},
                  {"dur", round_us(s->dur)},
                  {"args", s->args}});
  std::vector<const CounterSample*> cs;
  for (const CounterSample& c : counters_) cs.push_back(&c);
  std::stable_sort(cs.begin(), cs.end(),
                   [](const CounterSample* a, const CounterSample* b) { return a->name < b->name; });
  for (const CounterSample* c : cs)
    ev.push_back({{"ph", "C"}, {"name", c->name}, {"pid", kMemoryPid}, {"ts", c->ts}, {"args", c->args}});
  nlohmann::json other = {{"generator", "gtsim"},
                          {"time", "simulated time in microseconds"},
                          {"kernels", kernels_},
                          {"window_cycles", opt_.window_cycles},
                          {"trace_limit_events", opt_.max_events},
                          {"truncated", stopped_at_ != kNone}};
  if (stopped_at_ != kNone)
    other["truncated_note"] = "recording stopped at " + std::to_string(us(stopped_at_)) + " us (cycle " +
                              std::to_string(stopped_at_) + ") after " + std::to_string(opt_.max_events) +
                              " events; raise --trace-limit to see the rest";
  return {{"traceEvents", ev}, {"displayTimeUnit", "ns"}, {"otherData", other}};
}

nlohmann::json join_timelines(const std::vector<nlohmann::json>& parts) {
  nlohmann::json events = nlohmann::json::array(), other = nlohmann::json::object();
  std::set<std::string> meta_seen;
  double offset = 0;
  uint64_t kernels = 0;
  bool truncated = false;
  for (const nlohmann::json& p : parts) {
    if (!p.is_object()) continue;
    if (other.empty()) other = p["otherData"];
    kernels += p["otherData"].value("kernels", uint64_t(0));
    truncated = truncated || p["otherData"].value("truncated", false);
    double end = offset;
    for (nlohmann::json e : p["traceEvents"]) {
      if (e["ph"] == "M") {
        if (meta_seen.insert(e.dump()).second) events.push_back(e);
        continue;
      }
      e["ts"] = round_us(e["ts"].get<double>() + offset);
      end = std::max(end, e["ts"].get<double>() + e.value("dur", 0.0));
      events.push_back(std::move(e));
    }
    offset = end;
  }
  other["kernels"] = kernels;
  other["truncated"] = truncated;
  if (parts.size() > 1) other["machines"] = "each kernel on a fresh machine, placed one after another";
  return {{"traceEvents", events}, {"displayTimeUnit", "ns"}, {"otherData", other}};
}

}  // namespace gtsim::gpu
