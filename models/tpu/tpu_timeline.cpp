// TpuTimeline: records the TensorCores' units as slices and writes them as Chrome trace-event JSON
// (the format ui.perfetto.dev opens), laid out call after call.
#include "models/tpu/tpu_timeline.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace gtsim::tpu {

namespace {
constexpr int kChipPid = 1, kHbmPid = 2, kFirstTcPid = 10;
constexpr int kScalarTid = 0, kVectorTid = 1, kFirstDmaTid = 10;
// Per MXU m: tids from 100 (m + 1): +0 folds, +1 weight load, +2 stream, +10.. drain lanes.
constexpr int kMxuTids = 100, kFoldTid = 0, kLoadTid = 1, kStreamTid = 2, kFirstDrainTid = 10;
constexpr size_t kMaxDrainLanes = 90;

int mxu_tid(uint32_t mxu, int what) { return kMxuTids * int(mxu + 1) + what; }
double round_us(double x) { return std::round(x * 1e4) / 1e4; }  // 0.1 ns
double tick_us(Tick t) { return double(t) / double(kTicksPerUs); }

thread_local TpuTimeline* g_active = nullptr;

std::string track_name(int tid) {
  if (tid == kScalarTid) return "scalar unit (waits, syncs)";
  if (tid == kVectorTid) return "vector unit";
  if (tid < kMxuTids) return "DMA engine " + std::to_string(tid - kFirstDmaTid);
  int m = tid / kMxuTids - 1, what = tid % kMxuTids;
  std::string mxu = "MXU " + std::to_string(m);
  if (what == kFoldTid) return mxu + " folds (busy)";
  if (what == kLoadTid) return mxu + " weight load";
  if (what == kStreamTid) return mxu + " stream";
  int lane = what - kFirstDrainTid;
  return mxu + " drain" + (lane ? " " + std::to_string(lane + 1) : std::string());
}
}  // namespace

TpuTimeline::TpuTimeline(const TimelineOptions& opt, const TpuConfig& cfg)
    : opt_(opt), clock_(cfg.core_mhz), dispatch_us_(cfg.dispatch_us), mxus_(std::max<uint32_t>(1, cfg.mxu.count)) {
  opt_.window_cycles = std::max<uint32_t>(1, opt_.window_cycles);
}

TpuTimeline* TpuTimeline::active() { return g_active; }

TimelineScope::TimelineScope(TpuTimeline* t) : prev_(g_active) { g_active = t; }
TimelineScope::~TimelineScope() { g_active = prev_; }

bool TpuTimeline::recording(Tick t, uint64_t events) {
  if (!stopped_ && events_ + events <= opt_.max_events) return true;
  if (!stopped_ || (uint32_t(calls_.size() - 1) == stopped_call_ && t < stopped_at_)) {
    stopped_call_ = uint32_t(calls_.size() - 1);
    stopped_at_ = t;
  }
  stopped_ = true;
  return false;
}

void TpuTimeline::add(int pid, int tid, std::string name, Tick ts, Tick end, nlohmann::json args) {
  if (!recording(ts)) return;
  slices_.push_back(
      {pid, tid, uint32_t(calls_.size() - 1), std::move(name), ts, std::max(end, ts) - ts, std::move(args)});
  ++events_;
}

void TpuTimeline::begin_call(const std::string& program) {
  calls_.push_back(program);
  call_end_.push_back(0);
  drain_lanes_.clear();
}

void TpuTimeline::end_call(Tick device_end) {
  if (!call_end_.empty()) call_end_.back() = device_end;
  if (!calls_.empty()) ++events_;  // the call's slice
}

void TpuTimeline::dma(uint32_t tc, uint32_t engine, Tick start, Tick end, bool to_hbm, uint64_t bytes,
                      uint64_t useful_bytes, const std::string& buffer, uint32_t semaphore) {
  if (!recording(start)) return;
  dmas_.push_back({uint32_t(calls_.size() - 1), start, end, to_hbm, bytes});
  add(kFirstTcPid + int(tc), kFirstDmaTid + int(engine), std::string(to_hbm ? "store " : "load ") + buffer, start, end,
      {{"direction", to_hbm ? "VMEM -> HBM" : "HBM -> VMEM"},
       {"bytes", bytes},
       {"useful_bytes", useful_bytes},
       {"buffer", buffer},
       {"semaphore", semaphore}});
}

void TpuTimeline::weight_load(uint32_t tc, uint32_t mxu, Tick start, Tick end, uint32_t k, uint32_t n) {
  add(kFirstTcPid + int(tc), mxu_tid(mxu, kLoadTid), "weights", start, end, {{"k", k}, {"n", n}});
}

void TpuTimeline::fold(uint32_t tc, uint32_t mxu, Tick busy_from, Tick stream_start, Tick stream_end, Tick drain_end,
                       uint32_t rows, uint32_t k, uint32_t n) {
  if (!recording(busy_from, 3)) return;
  int pid = kFirstTcPid + int(tc);
  nlohmann::json args = {{"rows", rows}, {"k", k}, {"n", n}};
  add(pid, mxu_tid(mxu, kFoldTid), "fold", busy_from, drain_end, args);
  add(pid, mxu_tid(mxu, kStreamTid), "stream", stream_start, stream_end, args);
  // Drains of consecutive folds overlap (the next fold streams in while this one drains): the first
  // lane free at the drain's start.
  size_t key = size_t(tc) * mxus_ + mxu;
  if (drain_lanes_.size() <= key) drain_lanes_.resize(key + 1);
  auto& lanes = drain_lanes_[key];
  size_t lane = 0;
  while (lane < lanes.size() && lanes[lane] > stream_end) ++lane;
  if (lane == lanes.size() && lane < kMaxDrainLanes) lanes.push_back(0);
  lane = std::min(lane, lanes.size() - 1);
  lanes[lane] = std::max(lanes[lane], drain_end);
  add(pid, mxu_tid(mxu, kFirstDrainTid + int(lane)), "drain", stream_end, drain_end, args);
}

void TpuTimeline::vector(uint32_t tc, Tick start, Tick end, uint32_t rows, uint32_t cols, uint64_t vregs,
                         double alu_ops, double transcendentals, bool reduce) {
  add(kFirstTcPid + int(tc), kVectorTid, reduce ? "vector (reduce)" : "vector", start, end,
      {{"rows", rows},
       {"cols", cols},
       {"vregs", vregs},
       {"alu_ops_per_element", alu_ops},
       {"transcendentals_per_element", transcendentals}});
}

void TpuTimeline::scalar_wait(uint32_t tc, const std::string& what, Tick from, Tick to) {
  if (to <= from) return;
  add(kFirstTcPid + int(tc), kScalarTid, what, from, to, nlohmann::json::object());
}

nlohmann::json TpuTimeline::to_json(const std::vector<OpSpan>* ops) const {
  // Where each call starts (us): after the dispatch, back to back, or within its op.
  std::vector<double> start(calls_.size(), 0.0);
  double t = dispatch_us_;
  struct OpSlice {
    std::string name;
    double ts, dur;
    nlohmann::json args;
  };
  std::vector<OpSlice> op_slices;
  size_t c = 0;
  if (ops) {
    for (const OpSpan& op : *ops) {
      double at = t;
      for (int p = 0; p < op.programs && c < calls_.size(); ++p, ++c) {
        start[c] = at;
        at += tick_us(call_end_[c]);
      }
      nlohmann::json args = {{"kind", op.kind}, {"programs", op.programs}, {"time_us", op.time_us}};
      if (!op.note.empty()) args["note"] = op.note;
      op_slices.push_back({op.name, t, std::max(op.time_us, at - t), args});
      t += std::max(op.time_us, at - t);
    }
  }
  for (; c < calls_.size(); ++c) {
    start[c] = t;
    t += tick_us(call_end_[c]);
  }
  const double end_us = t;
  auto abs_us = [&](uint32_t call, Tick tk) { return round_us(start[call] + tick_us(tk)); };

  nlohmann::json ev = nlohmann::json::array();
  auto meta = [&](const char* what, int pid, int tid, const nlohmann::json& args) {
    nlohmann::json e = {{"ph", "M"}, {"name", what}, {"pid", pid}, {"args", args}};
    if (tid >= 0) e["tid"] = tid;
    ev.push_back(e);
  };
  meta("process_name", kChipPid, -1, {{"name", "TPU chip"}});
  meta("process_sort_index", kChipPid, -1, {{"sort_index", 0}});
  meta("thread_name", kChipPid, 0, {{"name", "dispatch and programs"}});
  if (ops) meta("thread_name", kChipPid, 1, {{"name", "ops"}});
  meta("process_name", kHbmPid, -1, {{"name", "HBM"}});
  meta("process_sort_index", kHbmPid, -1, {{"sort_index", 1}});
  std::set<std::pair<int, int>> used;
  for (const Slice& s : slices_) used.insert({s.pid, s.tid});
  int named = -1;
  for (auto [pid, tid] : used) {
    if (pid != named) {
      meta("process_name", pid, -1, {{"name", "TensorCore " + std::to_string(pid - kFirstTcPid)}});
      meta("process_sort_index", pid, -1, {{"sort_index", pid}});
      named = pid;
    }
    meta("thread_name", pid, tid, {{"name", track_name(tid)}});
    meta("thread_sort_index", pid, tid, {{"sort_index", tid}});
  }

  auto slice = [&](int pid, int tid, const std::string& name, double ts, double dur, const nlohmann::json& args) {
    ev.push_back({{"ph", "X"},
                  {"name", name},
                  {"pid", pid},
                  {"tid", tid},
                  {"ts", round_us(ts)},
                  {"dur", round_us(dur)},
                  {"args", args}});
  };
  if (dispatch_us_ > 0)
    slice(kChipPid, 0, "dispatch", 0, dispatch_us_,
          {{"note", "the per-call overhead from the config, once per run or workload"}});
  for (size_t i = 0; i < calls_.size(); ++i)
    slice(kChipPid, 0, calls_[i], start[i], tick_us(call_end_[i]),
          {{"device_us", tick_us(call_end_[i])}, {"cycles", uint64_t(clock_.cycles(call_end_[i]) + 0.5)}});
  for (const OpSlice& o : op_slices) slice(kChipPid, 1, o.name, o.ts, o.dur, o.args);

  std::vector<const Slice*> order;
  for (const Slice& s : slices_) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(), [&](const Slice* a, const Slice* b) {
    return std::make_tuple(a->pid, a->tid, abs_us(a->call, a->ts)) <
           std::make_tuple(b->pid, b->tid, abs_us(b->call, b->ts));
  });
  for (const Slice* s : order) {
    double ts = abs_us(s->call, s->ts);
    slice(s->pid, s->tid, s->name, ts, abs_us(s->call, s->ts + s->dur) - ts, s->args);
  }

  // HBM bandwidth per window: each DMA's bytes spread evenly over its time; runs of equal values
  // are one sample (a counter holds its value).
  uint64_t budget = opt_.max_events > events_ ? opt_.max_events - events_ : 0;
  bool truncated = stopped_;
  std::string note;
  if (stopped_)
    note = "recording stopped at " + std::to_string(abs_us(stopped_call_, stopped_at_)) + " us (call " +
           std::to_string(stopped_call_) + ", " + calls_[stopped_call_] + ") after " + std::to_string(opt_.max_events) +
           " events; raise --trace-limit to see the rest";
  double window_us = double(opt_.window_cycles) / clock_.mhz();
  if (!dmas_.empty() && end_us > dispatch_us_) {
    size_t n = size_t(std::ceil((end_us - dispatch_us_) / window_us)) + 1;
    std::vector<double> rd(n, 0.0), wr(n, 0.0);
    for (const Dma& d : dmas_) {
      double a = start[d.call] + tick_us(d.start) - dispatch_us_, b = start[d.call] + tick_us(d.end) - dispatch_us_;
      auto& v = d.write ? wr : rd;
      if (b <= a) {
        v[std::min(n - 1, size_t(a / window_us))] += double(d.bytes);
        continue;
      }
      double per_us = double(d.bytes) / (b - a);
      for (size_t w = size_t(a / window_us); w < n && double(w) * window_us < b; ++w) {
        double lo = std::max(a, double(w) * window_us), hi = std::min(b, double(w + 1) * window_us);
        if (hi > lo) v[w] += per_us * (hi - lo);
      }
    }
    double last_r = -1, last_w = -1;
    auto sample = [&](double ts, double r, double w) {
      if (r == last_r && w == last_w) return true;
      if (budget == 0) {
        if (!truncated) {
          truncated = true;
          note = "recording stopped at " + std::to_string(round_us(ts)) + " us (the HBM counter) after " +
                 std::to_string(opt_.max_events) + " events; raise --trace-limit to see the rest";
        }
        return false;
      }
      --budget;
      ev.push_back({{"ph", "C"},
                    {"name", "HBM bandwidth"},
                    {"pid", kHbmPid},
                    {"ts", round_us(ts)},
                    {"args", {{"read GB/s", r}, {"write GB/s", w}}}});
      last_r = r, last_w = w;
      return true;
    };
    bool more = true;
    for (size_t w = 0; w < n && more; ++w) {
      double ts = dispatch_us_ + double(w) * window_us;
      if (ts + 1e-4 >= end_us) break;
      double len = std::min(window_us, end_us - ts);            // the last window ends with the run
      more = sample(ts, rd[w] / len / 1e3, wr[w] / len / 1e3);  // bytes/us / 1e3 = GB/s
    }
    if (more) sample(end_us, 0, 0);  // the end: nothing in flight
  }

  nlohmann::json other = {{"generator", "gtsim"},
                          {"target", "tpu"},
                          {"time", "simulated time in microseconds, the dispatch first"},
                          {"programs", calls_.size()},
                          {"dispatch_us", dispatch_us_},
                          {"window_cycles", opt_.window_cycles},
                          {"trace_limit_events", opt_.max_events},
                          {"truncated", truncated}};
  if (ops) other["ops"] = ops->size();
  if (truncated) other["truncated_note"] = note;
  return {{"traceEvents", ev}, {"displayTimeUnit", "ns"}, {"otherData", other}};
}

}  // namespace gtsim::tpu
