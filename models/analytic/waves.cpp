#include "models/analytic/waves.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <sstream>

#include "models/analytic/gemm_select.hpp"

namespace gtsim::analytic {

void parse_gemm_shape(const std::string& s, WavesRequest& r) {
  long long m = 0, n = 0, k = 0;
  char tail = 0;
  if (std::sscanf(s.c_str(), "%lldx%lldx%lld%c", &m, &n, &k, &tail) != 3 || m < 1 || n < 1 || k < 1)
    throw InputError(SourcePos{"--gemm", 0, 0},
                     "expected MxNxK with positive integers (e.g. 1792x1792x1792), got '" + s + "'");
  r.M = m, r.N = n, r.K = k;
}

namespace {

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

struct Candidate {
  int64_t M, N, K;
  std::string why;
};

// The same problem on another tile shape or schedule (no padding), planned.
struct Alternative {
  GemmPlan plan;
  std::string kind, why;
};

// The MMA work of the busiest SM, in elements of C: ceil(tiles / SMs) tiles of bm x bn (the SMs share
// the tiles; those resident at once share the SM's tensor cores). A closed form to choose which tiles
// to simulate: it sees tile and wave quantization, not the bandwidth a smaller tile costs (the
// simulation decides).
double busiest_sm_work(const GemmPlan& p) {
  const int64_t sms = std::max<int64_t>(1, p.sms);
  return double((p.tiles + sms - 1) / sms) * double(p.tile.bm) * double(p.tile.bn);
}

// Alternatives that keep the problem: other menu tiles whose busiest SM has at least 10% less work
// (the two with the least; none with --tile auto, which has simulated the whole menu), and split-K
// when the tiles do not fill one wave (bf16 only: gemm_splitk.kir).
std::vector<Alternative> alternatives(const ConfigNode& hw, const GemmPlan& best, GemmSchedule sched, bool auto_tile) {
  std::vector<Alternative> out;
  if (!auto_tile && sched == GemmSchedule::kDataParallel) {
    std::vector<std::pair<double, GemmPlan>> ranked;
    const double now = busiest_sm_work(best);
    for (const auto& t : gemm_tile_menu(best.dtype)) {
      if (t.str() == best.tile.str()) continue;
      GemmPlan q;
      try {
        q = plan_gemm(hw, best.M, best.N, best.K, t, sched, 0, best.dtype);
      } catch (const InputError&) {
        continue;  // a tile this machine cannot launch (its shared memory per CTA) is no alternative
      }
      const double work = busiest_sm_work(q);
      if (q.ctas_per_sm > 0 && work <= 0.9 * now) ranked.push_back({work, q});
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < ranked.size() && i < 2; ++i)
      out.push_back({ranked[i].second, "tile", "tile " + ranked[i].second.tile.str() + " (the same problem)"});
  }
  if (sched == GemmSchedule::kDataParallel && best.dtype == "bf16" && best.tiles < best.wave_size) {
    try {
      GemmPlan q = plan_gemm(hw, best.M, best.N, best.K, best.tile, GemmSchedule::kSplitK, 0, best.dtype);
      if (q.ksplit > 1)
        out.push_back({q, "split-k", "split K in " + std::to_string(q.ksplit) + " (fills the SMs, then reduces)"});
    } catch (const InputError&) {
    }
  }
  return out;
}

// Padded shapes near (M, N, K): aligned to 16 bytes (8 bf16, 16 e4m3, 4 tf32 or f32 elements: 16-byte
// vectors), whole tiles, and the smallest growth of N (then M) that fills the last wave.
std::vector<Candidate> candidates(const GemmPlan& p) {
  std::vector<Candidate> c;
  const int64_t a = 16 / gemm_elem_bytes(p.dtype);  // elements per 16 bytes
  if (!p.aligned())
    c.push_back({round_up(p.M, a), round_up(p.N, a), round_up(p.K, a),
                 "pad to multiples of " + std::to_string(a) + ": 16-byte vector loads"});
  if (p.tile_efficiency < 1.0)
    c.push_back({round_up(p.M, p.tile.bm), round_up(p.N, p.tile.bn), round_up(p.K, a), "pad M, N to whole tiles"});
  if (p.schedule == GemmSchedule::kDataParallel && p.last_wave_fill < 1.0) {
    // Fewest tiles that still fit the previous wave count: shrink N to drop the partial wave,
    // or grow N until the last wave is full.
    for (int64_t n = round_up(p.N, a); n <= p.N + a * p.tile.bn; n += a) {
      int64_t tiles = ((p.M + p.tile.bm - 1) / p.tile.bm) * ((n + p.tile.bn - 1) / p.tile.bn);
      if (tiles % p.wave_size == 0) {
        c.push_back({round_up(p.M, a), n, round_up(p.K, a), "grow N to fill the last wave"});
        break;
      }
    }
    // (shrinking N would drop the partial wave, but it is another problem: only padding is offered)
  }
  std::vector<Candidate> out;
  std::set<std::tuple<int64_t, int64_t, int64_t>> seen{{p.M, p.N, p.K}};
  for (auto& x : c)
    if (seen.insert({x.M, x.N, x.K}).second) out.push_back(x);
  return out;
}

}  // namespace

WavesReport waves(const ConfigNode& hw, const WavesRequest& request) {
  WavesRequest req = request;
  req.dtype = canonical_gemm_dtype(req.dtype);  // fp16, fp8, fp32 -> f16, e4m3, f32
  // Neither --tile nor --schedule: the kernel a library would pick (`gtsim gemm`'s analytic ranking),
  // so `waves`, `gemm`, `workload` and `compare` answer one GEMM with one kernel.
  const bool library = req.tile.empty() && req.schedule.empty();
  std::optional<GemmPlan> pick;
  if (library) {
    pick = rank_gemm_candidates(hw, req.M, req.N, req.K, req.dtype).front().plan;
    req.schedule = schedule_name(pick->schedule);
    if (pick->schedule == GemmSchedule::kSplitK || pick->schedule == GemmSchedule::kAlign1) req.split = pick->ksplit;
  }
  GemmSchedule sched = parse_schedule(req.schedule.empty() ? "data-parallel" : req.schedule);
  std::vector<GemmTile> tiles;
  const std::string tile = library ? pick->tile_name() : !req.tile.empty() ? req.tile : default_gemm_tile(req.dtype);
  const bool ws = sched == GemmSchedule::kWarpSpecialized, a1 = sched == GemmSchedule::kAlign1;
  if (library)
    tiles = {pick->tile};
  else if (tile == "auto")
    tiles = ws ? gemm_wgmma_menu() : a1 ? gemm_align1_menu() : gemm_tile_menu(req.dtype);
  else if (a1)
    tiles = {parse_align1_tile(tile)};
  else
    tiles = {ws ? parse_wgmma_tile(tile) : parse_tile(tile, req.dtype)};
  GemmPlan best;
  GemmTiming best_t;
  nlohmann::json tried = nlohmann::json::array();
  for (const auto& t : tiles) {
    GemmPlan p = plan_gemm(hw, req.M, req.N, req.K, t, sched, req.split, req.dtype);
    GemmTiming tm;
    if (req.simulate) tm = simulate_gemm(hw, p, req.exact);
    tried.push_back({{"tile", t.str()}, {"time_us", tm.time_us}, {"waves", p.waves}});
    if (tried.size() == 1 || (req.simulate && tm.time_us < best_t.time_us)) best = p, best_t = tm;
  }
  WavesReport r;
  r.json = best.to_json();
  r.json["hw"] = hw.find("name") ? hw.at("name").scalar() : "";
  if (req.simulate) {
    r.json["time_us"] = best_t.time_us;
    r.json["tflops"] = best_t.tflops;
    r.json["sampled"] = best_t.sampled;
    r.json["fraction_simulated"] = best_t.fraction_simulated;
    r.json["estimated_error_pct"] = best_t.estimated_error_pct;
    r.json["dram_bytes"] = best_t.dram_bytes;
    r.json["l2_read_bytes"] = best_t.l2_read_bytes;
    if (best_t.reduce_us > 0 || sched == GemmSchedule::kSplitK) r.json["reduce_time_us"] = best_t.reduce_us;
  } else {
    r.json["time_us"] = nullptr;
  }
  if (tile == "auto") r.json["autotune"] = tried;
  r.json["kernel"] = gemm_kernel_file(best);
  r.json["model"] = library ? "the kernel gtsim gemm picks" : "the tile and schedule asked for";
  nlohmann::json sugg = nlohmann::json::array();
  if (req.suggestions) {
    auto suggest = [&](const GemmPlan& q, const std::string& kind, const std::string& why) {
      nlohmann::json s = {{"gemm", std::to_string(q.M) + "x" + std::to_string(q.N) + "x" + std::to_string(q.K)},
                          {"kind", kind},
                          {"why", why},
                          {"tile", q.tile.str()},
                          {"schedule", schedule_name(q.schedule)},
                          {"tiles", q.tiles},
                          {"waves", q.waves},
                          {"last_wave_fill", q.last_wave_fill},
                          {"tile_efficiency", q.tile_efficiency},
                          {"vector_bytes", q.vector_bytes}};
      // what the padding costs: the extra multiply-adds of the padded shape, in % of the problem's
      s["padding_pct"] =
          100.0 * (double(q.M) * double(q.N) * double(q.K) / (double(req.M) * double(req.N) * double(req.K)) - 1.0);
      if (req.simulate) s["time_us"] = simulate_gemm(hw, q, req.exact).time_us;
      sugg.push_back(s);
    };
    for (const auto& c : candidates(best))  // the library's pick again for a padded shape
      suggest(library ? rank_gemm_candidates(hw, c.M, c.N, c.K, req.dtype).front().plan
                      : plan_gemm(hw, c.M, c.N, c.K, best.tile, sched, req.split, req.dtype),
              "pad", c.why);
    for (const auto& a : alternatives(hw, best, sched, tile == "auto")) suggest(a.plan, a.kind, a.why);
    // fastest first when simulated (a padding that does not pay comes last)
    if (req.simulate)
      std::stable_sort(sugg.begin(), sugg.end(), [](const nlohmann::json& x, const nlohmann::json& y) {
        return x["time_us"].get<double>() < y["time_us"].get<double>();
      });
  }
  r.json["suggestions"] = sugg;
  std::ostringstream o;
  char buf[256];
  const std::string engine = std::string(req.dtype == "f32" ? "CUDA-core FFMA"
                                         : ws               ? "TMA + wgmma, gemm_wgmma.kir"
                                         : a1               ? "mma.sync m16n8k8, element loads, gemm_align1.kir"
                                                            : "tensor-core mma.sync") +
                             (library ? "; the kernel gtsim gemm picks" : "");
  std::snprintf(buf, sizeof buf, "GEMM %lldx%lldx%lld %s (%s), tile %s, %s on %s\n", (long long)req.M, (long long)req.N,
                (long long)req.K, req.dtype.c_str(), engine.c_str(), best.tile_name().c_str(),
                schedule_name(sched).c_str(), r.json["hw"].get<std::string>().c_str());
  o << buf;
  std::snprintf(buf, sizeof buf,
                "  tiles %lld (%lld x %lld)  ctas/SM %u (%s)  wave size %lld  waves %lld  last wave fill %.2f\n",
                (long long)best.tiles, (long long)best.tiles_m, (long long)best.tiles_n, best.ctas_per_sm,
                best.occupancy_limiter.c_str(), (long long)best.wave_size, (long long)best.waves, best.last_wave_fill);
  o << buf;
  if (sched == GemmSchedule::kPersistent || ws) {
    std::snprintf(buf, sizeof buf, "  grid %lld CTAs, %s per CTA %lld..%lld%s\n", (long long)best.grid, "tiles",
                  (long long)best.tiles_per_cta_min, (long long)best.tiles_per_cta_max,
                  ws && best.tile.cluster > 1 ? " (clusters of 2 CTAs: B multicast)" : "");
    o << buf;
  } else if (sched == GemmSchedule::kSplitK || (a1 && best.ksplit > 1)) {
    std::snprintf(
        buf, sizeof buf, "  grid %lld CTAs, %lld K slices per tile%s\n", (long long)best.grid, (long long)best.ksplit,
        best.ksplit > 1 ? " (fp32 partials in a workspace, then a reduction launch)" : " (no split: data-parallel)");
    o << buf;
  }
  std::snprintf(buf, sizeof buf, "  tile efficiency %.3f  vector bytes %d (%s)\n", best.tile_efficiency,
                best.vector_bytes, best.aligned() ? "aligned" : "misaligned");
  o << buf;
  if (req.simulate) {
    std::snprintf(buf, sizeof buf, "  time %.2f us  %.1f TFLOP/s%s\n", best_t.time_us, best_t.tflops,
                  best_t.sampled ? "  (sampled)" : "");
    o << buf;
    if (best_t.reduce_us > 0) {
      std::snprintf(buf, sizeof buf, "  of which the reduction launch %.2f us\n", best_t.reduce_us);
      o << buf;
    }
  }
  if (tile == "auto")
    for (const auto& t : tried) {
      std::snprintf(buf, sizeof buf, "  tried tile %-9s waves %lld", t["tile"].get<std::string>().c_str(),
                    (long long)t["waves"].get<int64_t>());
      o << buf;
      if (req.simulate) {
        std::snprintf(buf, sizeof buf, "  %.2f us%s", t["time_us"].get<double>(),
                      t["tile"].get<std::string>() == best.tile.str() ? "  (chosen)" : "");
        o << buf;
      }
      o << "\n";
    }
  for (const auto& s : sugg) {
    std::snprintf(buf, sizeof buf, "  try %-16s %-9s %-45s waves %lld fill %.2f vec %dB pads %.1f%%",
                  s["gemm"].get<std::string>().c_str(), s["tile"].get<std::string>().c_str(),
                  s["why"].get<std::string>().c_str(), (long long)s["waves"].get<int64_t>(),
                  s["last_wave_fill"].get<double>(), s["vector_bytes"].get<int>(), s["padding_pct"].get<double>());
    o << buf;
    if (s.contains("time_us")) {
      std::snprintf(buf, sizeof buf, "  %.2f us", s["time_us"].get<double>());
      o << buf;
    }
    o << "\n";
  }
  r.text = o.str();
  return r;
}

}  // namespace gtsim::analytic
