// pointer_chase twin (docs/microbenchmarks.md). Grid 1, block 256. chain: u64[footprint/8]; node j
// at byte j*stride holds the byte offset of the next node; one random cycle built on the host:
//   s = seed(1); perm = 0..n-1; for i = n-1 .. 1: j = splitmix64(s) % i; swap(perm[i], perm[j]);
//   next(perm[k]) = perm[(k+1) % n].
// Warm-up: all threads read the footprint with 16-byte loads, 4 independent loads per iteration,
// xor-folded into a sink; bar.sync; thread 0 chases `hops` dependent 8-byte loads from offset 0
// and stores the final pointer and its sink. L2 is scrubbed (512 MiB write) before each launch.
// The "timed" variant is the same kernel plus clock64/globaltimer reads around the chase loop
// (in-kernel cycles per hop), with hops capped at 65536.
#include <algorithm>
#include <vector>

#include "common.cuh"

namespace twins {

template <bool TIMED>
__global__ void __launch_bounds__(256)
    pointer_chase(const uint64_t* chain, uint64_t footprint_bytes, uint64_t hops, uint64_t* out) {
  const uint4* v = reinterpret_cast<const uint4*>(chain);
  uint64_t nvec = footprint_bytes / 16;
  uint32_t sink = 0;
  for (uint64_t base = 0; base < nvec; base += 4 * 256) {
    uint4 x[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      uint64_t idx = base + j * 256 + threadIdx.x;
      x[j] = idx < nvec ? v[idx] : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) sink ^= x[j].x ^ x[j].y ^ x[j].z ^ x[j].w;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    long long c0 = 0, c1 = 0;
    unsigned long long t0 = 0, t1 = 0;
    if (TIMED) {
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0)::"memory");
      c0 = clock64();
    }
    uint64_t p = 0;
    for (uint64_t h = 0; h < hops; ++h)
      p = *reinterpret_cast<const uint64_t*>(reinterpret_cast<const char*>(chain) + p);
    if (TIMED) {
      // consume p before reading the clock so the last load is inside the interval
      if (p == ~0ull) sink = 0;
      asm volatile("" ::"l"(p) : "memory");
      c1 = clock64();
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1)::"memory");
      out[2] = uint64_t(c1 - c0);
      out[3] = t1 - t0;
    }
    out[0] = p;
    out[1] = sink;
  }
}

__global__ void scrub_k(float4* p, size_t n, float v) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = make_float4(v, v, v, v);
}

static float4* g_scrub = nullptr;
static const size_t kScrubBytes = size_t(512) << 20;
static void scrub() {
  if (!g_scrub) CK(cudaMalloc(&g_scrub, kScrubBytes));
  scrub_k<<<4 * g.sms, 512>>>(g_scrub, kScrubBytes / 16, 1.0f);
  CKL();
}

struct Chain {
  std::vector<uint64_t> host;  // u64[footprint/8]
  uint64_t* dev = nullptr;
  uint64_t footprint = 0, stride = 0;
  uint64_t walk(uint64_t hops) const {
    uint64_t p = 0;
    for (uint64_t h = 0; h < hops; ++h) p = host[p / 8];
    return p;
  }
  ~Chain() {
    if (dev) cudaFree(dev);
  }
};

static void build_chain(Chain& c, uint64_t footprint, uint64_t stride, uint64_t seed) {
  uint64_t n = footprint / stride;
  std::vector<uint64_t> perm(n);
  for (uint64_t i = 0; i < n; ++i) perm[i] = i;
  uint64_t s = seed;
  for (uint64_t i = n - 1; i >= 1; --i) {
    uint64_t j = splitmix64(s) % i;
    std::swap(perm[i], perm[j]);
  }
  c.host.assign(footprint / 8, 0xA5A5A5A5A5A5A5A5ull);  // non-node words: recognisable filler
  for (uint64_t k = 0; k < n; ++k) c.host[perm[k] * stride / 8] = perm[(k + 1) % n] * stride;
  c.footprint = footprint;
  c.stride = stride;
  CK(cudaMalloc(&c.dev, footprint));
  CK(cudaMemcpy(c.dev, c.host.data(), footprint, cudaMemcpyHostToDevice));
}

double point_pointer_chase(uint64_t footprint, uint64_t stride, const char* file, bool timed_variant) {
  Chain c;
  build_chain(c, footprint, stride, 1);
  uint64_t hops = footprint / stride;
  uint64_t* out;
  CK(cudaMalloc(&out, 4 * 8));
  scrub();
  // twin: one launch per repeat, L2 scrubbed before each (outside the events)
  poison(out, 32);
  auto launch = [&](int) { pointer_chase<false><<<1, 256, 0, g.stream>>>(c.dev, footprint, hops, out); };
  int reps = footprint >= (uint64_t(64) << 20) ? 5 : g.repeats;
  Timing t = time_launches(launch, 1, reps, 1, scrub);
  uint64_t h[4];
  CK(cudaMemcpy(h, out, 32, cudaMemcpyDeviceToHost));
  bool ok = h[0] == c.walk(hops);
  // hops = 0: warm-up alone (the chase removed), for the difference method
  Timing t0 = time_launches([&](int) { pointer_chase<false><<<1, 256, 0, g.stream>>>(c.dev, footprint, 0, out); }, 1,
                            reps, 1, scrub);
  Row r = base_row("pointer_chase", "twin");
  r.set("footprint_bytes", footprint).set("stride_bytes", stride).set("hops", hops).set("grid", 1).set("block", 256);
  double ns_hop = (t.median_us - t0.median_us) * 1e3 / hops;
  double mhz = 0.5 * (t.before.sm_mhz + t.after.sm_mhz);
  r.set("warmup_only_us", t0.median_us).set("ns_per_hop_diff", ns_hop).set("cycles_per_hop_diff", ns_hop * mhz * 1e-3);
  emit(file, r.set("check", ok ? "ok" : "FAIL"), &t);
  log("pointer_chase %llu B: total %.1f us, warm-up %.1f us, %.1f ns/hop (diff) %s\n", (unsigned long long)footprint,
      t.median_us, t0.median_us, ns_hop, ok ? "ok" : "FAIL");
  if (timed_variant) {
    uint64_t th = hops < 65536 ? hops : 65536;
    std::vector<double> cyc, ns;
    Timing tt = time_launches([&](int) { pointer_chase<true><<<1, 256, 0, g.stream>>>(c.dev, footprint, th, out); }, 1,
                              g.repeats, 1, scrub);
    // read the counters of the last launch, then repeat a few more single launches for a median
    for (int k = 0; k < (g.quick ? 1 : 5); ++k) {
      scrub();
      pointer_chase<true><<<1, 256>>>(c.dev, footprint, th, out);
      CKL();
      CK(cudaMemcpy(h, out, 32, cudaMemcpyDeviceToHost));
      cyc.push_back(double(h[2]) / th);
      ns.push_back(double(h[3]) / th);
    }
    std::sort(cyc.begin(), cyc.end());
    std::sort(ns.begin(), ns.end());
    bool ok2 = h[0] == c.walk(th);
    Row q = base_row("pointer_chase", "clock64");
    q.set("footprint_bytes", footprint).set("stride_bytes", stride).set("hops", th).set("grid", 1).set("block", 256);
    q.set("cycles_per_hop", cyc[cyc.size() / 2]).set("ns_per_hop", ns[ns.size() / 2]);
    q.set("cycles_per_hop_min", cyc.front()).set("cycles_per_hop_max", cyc.back());
    q.set("implied_sm_mhz", cyc[cyc.size() / 2] / ns[ns.size() / 2] * 1e3);
    emit(std::string(file) + "_clock64", q.set("check", ok2 ? "ok" : "FAIL"), &tt);
    log("pointer_chase %llu B clock64: %.1f cycles/hop, %.1f ns/hop %s\n", (unsigned long long)footprint,
        cyc[cyc.size() / 2], ns[ns.size() / 2], ok2 ? "ok" : "FAIL");
  }
  CK(cudaFree(out));
  return t.median_us;
}

// b40 `sm_latency`: the L2 hit latency seen from every SM. One CTA per SM (a 32-thread CTA holding 160 KB of
// dynamic shared memory, so no second one fits), thread 0 of each chasing the same 8 MB chain (128-byte
// nodes, L2-resident: the launch before warms it) from its own node, 1024 dependent loads past the L1
// (ld.global.cg); the clock at each hop goes to shared memory, then to lat[cta * 1024 + hop] (the host
// takes differences); smid[cta] is the CTA's SM.
constexpr int kSmHops = 1024;
// CTA b's first node (byte offset): spread over the chain so that the SMs do not chase in step
__host__ __device__ inline uint64_t sm_chain_start(uint64_t b, uint64_t nodes, uint64_t stride) {
  return b * 7919u % nodes * stride;
}
__global__ void __launch_bounds__(32)
    sm_latency(const uint64_t* chain, uint64_t nodes, uint64_t stride, unsigned* lat, unsigned* smid, uint64_t* sink) {
  extern __shared__ unsigned hop_cycles[];
  if (threadIdx.x != 0) return;
  uint64_t p = sm_chain_start(blockIdx.x, nodes, stride);
  // hop_cycles[h]: the clock when iteration h starts, read before the wait for load h - 1's value (in-order
  // issue), so that hop_cycles[h + 2] - hop_cycles[h + 1] is load h's latency plus the loop's few instructions
  for (int h = 0; h < kSmHops; ++h) {
    hop_cycles[h] = unsigned(clock64());
    p = __ldcg(reinterpret_cast<const unsigned long long*>(reinterpret_cast<const char*>(chain) + p));
  }
  for (int h = 0; h < kSmHops; ++h) lat[size_t(blockIdx.x) * kSmHops + h] = hop_cycles[h];
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  smid[blockIdx.x] = s;
  sink[blockIdx.x] = p;
}

int run_sm_latency(const std::vector<std::string>& a) {
  (void)a;
  Chain c;
  const uint64_t fp = uint64_t(8) << 20, stride = 128, nodes = fp / stride;
  build_chain(c, fp, stride, 40);
  const int ctas = g.sms;
  unsigned *lat, *sm;
  uint64_t* sink;
  CK(cudaMalloc(&lat, size_t(ctas) * kSmHops * 4));
  CK(cudaMalloc(&sm, size_t(ctas) * 4));
  CK(cudaMalloc(&sink, size_t(ctas) * 8));
  const int smem = 160 * 1024;
  CK(cudaFuncSetAttribute(sm_latency, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  for (int launch = 0; launch < 3; ++launch) {  // launch 0 warms the L2; 1 and 2 are recorded
    sm_latency<<<ctas, 32, smem, g.stream>>>(c.dev, nodes, stride, lat, sm, sink);
    CKL();
    CK(cudaStreamSynchronize(g.stream));
    if (launch == 0) continue;
    const size_t nc = static_cast<size_t>(ctas);
    std::vector<unsigned> h(nc * kSmHops), hs(nc);
    std::vector<uint64_t> hsink(nc);
    CK(cudaMemcpy(h.data(), lat, h.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hs.data(), sm, hs.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hsink.data(), sink, hsink.size() * 8, cudaMemcpyDeviceToHost));
    for (int b = 0; b < ctas; ++b) {  // clocks -> each load's cycles (hop_cycles' comment)
      std::vector<unsigned> lat_b(kSmHops - 2);
      for (int k = 0; k + 2 < kSmHops; ++k)
        lat_b[size_t(k)] = h[size_t(b) * kSmHops + size_t(k) + 2] - h[size_t(b) * kSmHops + size_t(k) + 1];
      std::copy(lat_b.begin(), lat_b.end(), h.begin() + size_t(b) * kSmHops);
    }
    for (int b = 0; b < ctas; ++b) {
      std::vector<double> v(h.begin() + size_t(b) * kSmHops, h.begin() + size_t(b) * kSmHops + kSmHops - 2);
      uint64_t p = sm_chain_start(uint64_t(b), nodes, stride);
      for (int k = 0; k < kSmHops; ++k) p = c.host[p / 8];
      double mean = 0;
      for (double x : v) mean += x;
      mean /= double(v.size());
      std::sort(v.begin(), v.end());
      Row r = base_row("sm_latency", "l2_cg");
      r.set("launch", launch).set("cta", b).set("smid", uint32_t(hs[size_t(b)])).set("hops", kSmHops - 2);
      r.set("footprint_bytes", fp).set("mean_cycles", mean).set("p10_cycles", v[v.size() / 10]);
      r.set("median_cycles", v[v.size() / 2]).set("p90_cycles", v[v.size() * 9 / 10]);
      r.set("min_cycles", v.front()).set("max_cycles", v.back());
      emit("sm_latency", r.set("check", hsink[size_t(b)] == p ? "ok" : "FAIL"), nullptr);
      if (launch == 2 && b < 4)
        log("sm_latency cta %d sm %u: mean %.1f median %.0f p10 %.0f p90 %.0f\n", b, hs[size_t(b)], mean,
            v[v.size() / 2], v[v.size() / 10], v[v.size() * 9 / 10]);
    }
    // every load's node and cycles (for the near / far split per SM), launch 2 only
    if (launch == 2)
      for (int b = 0; b < ctas; ++b) {
        Row r = base_row("sm_latency", "hops");
        std::string all;  // node:cycles of each load, node = its byte offset / 128 in the chain
        uint64_t q = sm_chain_start(uint64_t(b), nodes, stride);
        for (int k = 0; k + 2 < kSmHops; ++k, q = c.host[q / 8])
          all += (k ? " " : "") + std::to_string(q / stride) + ":" + std::to_string(h[size_t(b) * kSmHops + size_t(k)]);
        r.set("cta", b).set("smid", uint32_t(hs[size_t(b)])).set("hop_cycles", all);
        emit("sm_latency_hops", r, nullptr);
      }
  }
  for (void* q : {(void*)lat, (void*)sm, (void*)sink}) CK(cudaFree(q));
  return 0;
}

int run_pointer_chase(const std::vector<std::string>& a) {
  uint64_t stride = uint64_t(arg_i(a, "stride", 128));
  uint64_t maxfp = uint64_t(arg_i(a, "max", int64_t(512) << 20));
  std::vector<uint64_t> fps;
  for (uint64_t f = 4096; f <= maxfp; f *= 2) fps.push_back(f);
  const uint64_t K = 1024, M = 1024 * 1024;
  for (uint64_t f : {96 * K, 160 * K, 192 * K, 224 * K, 320 * K, 384 * K, 24 * M, 28 * M, 36 * M, 40 * M, 44 * M,
                     48 * M, 52 * M, 56 * M, 60 * M, 80 * M, 96 * M})
    if (f <= maxfp) fps.push_back(f);
  std::sort(fps.begin(), fps.end());
  if (g.quick) fps = {4096, 65536};
  for (uint64_t f : fps) point_pointer_chase(f, stride, "pointer_chase", true);
  return 0;
}

}  // namespace twins
