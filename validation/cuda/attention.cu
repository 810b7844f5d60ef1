// attention twins, B*H heads of T x d = 64, bf16 (uniform [-1, 1)):
//   naive  S = Q K^T (attn_qk_gemm, fp32 in HBM), P = softmax(S / sqrt(d)) (softmax_rows, bf16 in HBM),
//          O = P V (gemm_tiled): 3 kernels;
//   flash  flash_attn_fwd, the twin of kernels_ir/lib/flash_attention_fwd.kir: one kernel, 64 query
//          rows per CTA of 4 warps (16 rows each), Q in registers (ldmatrix once), 64-key K/V blocks
//          double-buffered through cp.async, S and O on mma.sync m16n8k16, online softmax in the log2
//          domain; shared tiles unpadded and XOR-swizzled (chunk ^ row % 8), static 40960 B.
// Both are checked (two heads) against an fp32 reference. T must be a multiple of 64.
#include "apps.cuh"

namespace twins {

constexpr int FD = 64, FBR = 64, FBC = 64;  // head dim, query rows per CTA, key block

// 64 x 64 bf16 tiles, unpadded, XOR-swizzled in 16-byte chunks: chunk ^ row % 8 (128-byte rows)
__device__ __forceinline__ int fswz(int row, int col) { return row * FD + (((col >> 3) ^ (row & 7)) << 3) + (col & 7); }

__global__ void __launch_bounds__(128, 4)
    flash_attn_fwd(const bf16* Q, const bf16* K, const bf16* V, bf16* O, int T, float scale_log2) {
  __shared__ __align__(128) bf16 Qs[FBR * FD];
  __shared__ __align__(128) bf16 Ks[2][FBC * FD];
  __shared__ __align__(128) bf16 Vs[2][FBC * FD];
  const int qb = blockIdx.x, bh = blockIdx.y, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const size_t base = size_t(bh) * T * FD;
  auto load_tile = [&](bf16* dst, const bf16* src) {  // 64 x 64 bf16: 512 16-byte chunks
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      int idx = c * 128 + threadIdx.x, r = idx / 8, col = (idx % 8) * 8;
      cp_async<16>(dst + fswz(r, col), src + size_t(r) * FD + col, true);
    }
  };
  load_tile(Qs, Q + base + size_t(qb) * FBR * FD);
  cp_commit();
  load_tile(Ks[0], K + base);
  load_tile(Vs[0], V + base);
  cp_commit();
  cp_wait<1>();  // Q has landed
  __syncthreads();
  uint32_t qf[4][4];
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) ldsm_x4(qf[kk], Qs + fswz(warp * 16 + lane % 16, kk * 16 + (lane / 16) * 8));
  float o[8][4], m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
#pragma unroll
  for (int n = 0; n < 8; ++n)
#pragma unroll
    for (int r = 0; r < 4; ++r) o[n][r] = 0.f;
  // per-lane byte offsets of the K (ldmatrix) and V (ldmatrix.trans) fragments: the swizzle term
  // (row % 8 = lane % 8) does not depend on the 16-row block, which is an immediate offset
  uint32_t koff[4], voff[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    koff[i] = uint32_t(fswz(lane % 8 + (lane / 16) * 8, i * 16 + ((lane / 8) % 2) * 8)) * 2;
    voff[i] = uint32_t(fswz(lane % 16, i * 16 + (lane / 16) * 8)) * 2;
  }
  const uint32_t ks0 = smem_u32(Ks[0]), vs0 = smem_u32(Vs[0]);
  const int nb = T / FBC;
  for (int j = 0; j < nb; ++j) {
    const int b = j % 2;
    if (j + 1 < nb) {
      load_tile(Ks[b ^ 1], K + base + size_t(j + 1) * FBC * FD);
      load_tile(Vs[b ^ 1], V + base + size_t(j + 1) * FBC * FD);
    }
    cp_commit();
    cp_wait<1>();  // K/V tile j has landed
    __syncthreads();
    float s[8][4];
#pragma unroll
    for (int n = 0; n < 8; ++n)
#pragma unroll
      for (int r = 0; r < 4; ++r) s[n][r] = 0.f;
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
#pragma unroll
      for (int j2 = 0; j2 < 4; ++j2) {
        uint32_t kf[4];
        ldsm_x4_a(kf, ks0 + b * (FBC * FD * 2) + koff[kk] + j2 * (16 * FD * 2));
        mma_bf16(s[2 * j2], qf[kk], kf[0], kf[1]);
        mma_bf16(s[2 * j2 + 1], qf[kk], kf[2], kf[3]);
      }
      // online softmax (log2 domain); this lane holds rows lane/4 (regs 0,1) and lane/4 + 8 (regs 2,3)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float mx = -INFINITY;
#pragma unroll
      for (int n = 0; n < 8; ++n) mx = fmaxf(mx, fmaxf(s[n][2 * h], s[n][2 * h + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      float mnew = fmaxf(m[h], mx * scale_log2);
      float alpha = exp2f(m[h] - mnew);
      float rs = 0;
#pragma unroll
      for (int n = 0; n < 8; ++n) {
        s[n][2 * h] = exp2f(s[n][2 * h] * scale_log2 - mnew);
        s[n][2 * h + 1] = exp2f(s[n][2 * h + 1] * scale_log2 - mnew);
        rs += s[n][2 * h] + s[n][2 * h + 1];
        o[n][2 * h] *= alpha;
        o[n][2 * h + 1] *= alpha;
      }
      l[h] = l[h] * alpha + rs;
      m[h] = mnew;
    }
    // O += P V
#pragma unroll
    for (int t = 0; t < 4; ++t) {
      uint32_t pa[4] = {pack_bf16(s[2 * t][0], s[2 * t][1]), pack_bf16(s[2 * t][2], s[2 * t][3]),
                        pack_bf16(s[2 * t + 1][0], s[2 * t + 1][1]), pack_bf16(s[2 * t + 1][2], s[2 * t + 1][3])};
#pragma unroll
      for (int j2 = 0; j2 < 4; ++j2) {
        uint32_t vf[4];
        ldsm_x4_t_a(vf, vs0 + b * (FBC * FD * 2) + voff[j2] + t * (16 * FD * 2));
        mma_bf16(o[2 * j2], pa, vf[0], vf[1]);
        mma_bf16(o[2 * j2 + 1], pa, vf[2], vf[3]);
      }
    }
    __syncthreads();  // everyone is done with buffer b (refilled in the next iteration)
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float L = l[h];
    L += __shfl_xor_sync(0xffffffffu, L, 1);
    L += __shfl_xor_sync(0xffffffffu, L, 2);
    float inv = 1.0f / L;
    size_t row = size_t(qb) * FBR + warp * 16 + lane / 4 + h * 8;
#pragma unroll
    for (int n = 0; n < 8; ++n)
      *reinterpret_cast<uint32_t*>(O + base + row * FD + n * 8 + (lane % 4) * 2) =
          pack_bf16(o[n][2 * h] * inv, o[n][2 * h + 1] * inv);
  }
}

// fp32 reference for one head: one thread per query row
__global__ void attn_ref(const bf16* Q, const bf16* K, const bf16* V, float* R, int T, float scale) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= T) return;
  float q[FD], acc[FD];
#pragma unroll
  for (int d = 0; d < FD; ++d) q[d] = __bfloat162float(Q[size_t(row) * FD + d]), acc[d] = 0;
  float m = -INFINITY;
  for (int j = 0; j < T; ++j) {
    float s = 0;
#pragma unroll
    for (int d = 0; d < FD; ++d) s += q[d] * __bfloat162float(K[size_t(j) * FD + d]);
    m = fmaxf(m, s * scale);
  }
  float sum = 0;
  for (int j = 0; j < T; ++j) {
    float s = 0;
#pragma unroll
    for (int d = 0; d < FD; ++d) s += q[d] * __bfloat162float(K[size_t(j) * FD + d]);
    float p = expf(s * scale - m);
    sum += p;
#pragma unroll
    for (int d = 0; d < FD; ++d) acc[d] += p * __bfloat162float(V[size_t(j) * FD + d]);
  }
#pragma unroll
  for (int d = 0; d < FD; ++d) R[size_t(row) * FD + d] = acc[d] / sum;
}

// The naive attention's buffers (Q, K, V in bf16 with fresh inputs; S in f32, P in bf16, O) and its
// three launches, for attention_points and attention_parts.
struct NaiveAttention {
  int BH, T;
  size_t nq, nS;
  bf16 *Q, *K, *V, *O, *P;
  float* S;
  NaiveAttention(int bh, int t) : BH(bh), T(t), nq(size_t(bh) * t * FD), nS(size_t(bh) * t * t) {
    CK(cudaMalloc(&Q, nq * 2));
    CK(cudaMalloc(&K, nq * 2));
    CK(cudaMalloc(&V, nq * 2));
    CK(cudaMalloc(&O, nq * 2));
    CK(cudaMalloc(&S, nS * 4));
    CK(cudaMalloc(&P, nS * 2));
    fill_bf16(Q, nq, 11u + T);
    fill_bf16(K, nq, 12u + T);
    fill_bf16(V, nq, 13u + T);
  }
  ~NaiveAttention() {
    for (void* p : {(void*)Q, (void*)K, (void*)V, (void*)O, (void*)P, (void*)S}) CK(cudaFree(p));
  }
  // part 0: S = Q K^T (f32 out); 1: P = softmax(S / sqrt(d)) in bf16; 2: O = P V
  void launch(int part) const {
    if (part == 0) {
      GemmArgs qk{Q, K, S, T, T, FD, (long long)T * FD, (long long)T * FD, (long long)T * T, 1.0f};
      launch_gemm(qk, BH, true, true);
    } else if (part == 1) {
      launch_softmax_bf16(S, P, BH * T, T, 1.0f / std::sqrt(float(FD)));
    } else {
      GemmArgs pv{P, V, O, T, FD, T, (long long)T * T, (long long)T * FD, (long long)T * FD, 1.0f};
      launch_gemm(pv, BH, false, false);
    }
  }
};

void attention_points(int BH, int T, bool flash_only) {
  NaiveAttention na(BH, T);
  bf16 *Q = na.Q, *K = na.K, *V = na.V, *O = na.O;
  size_t nq = na.nq;
  float* R;
  CK(cudaMalloc(&R, size_t(2) * T * FD * 4));
  const float scale = 1.0f / std::sqrt(float(FD));
  const int heads[2] = {0, BH - 1};
  for (int h = 0; h < 2; ++h) {
    size_t off = size_t(heads[h]) * T * FD;
    attn_ref<<<(T + 127) / 128, 128>>>(Q + off, K + off, V + off, R + size_t(h) * T * FD, T, scale);
  }
  CKL();
  for (int flash = 0; flash < 2; ++flash) {
    if (!flash && (flash_only || (T != 1024 && T != 2048 && T != 4096))) continue;  // the naive softmax twin's lengths
    poison(O, nq * 2);
    if (!flash) poison(na.S, na.nS * 4), poison(na.P, na.nS * 2);
    auto launch = [&](int) {
      if (flash) {
        flash_attn_fwd<<<dim3(T / FBR, BH), 128, 0, g.stream>>>(Q, K, V, O, T, scale * 1.4426950408889634f);
      } else {
        for (int part = 0; part < 3; ++part) na.launch(part);
      }
    };
    Timing t = time_launches(launch);
    double err = 0, nf = 0;
    for (int h = 0; h < 2; ++h) {
      double nfh = 0;
      err = std::max(err, rel_err_bf16(O + size_t(heads[h]) * T * FD, R + size_t(h) * T * FD, size_t(T) * FD, &nfh));
      nf += nfh;
    }
    bool ok = err < 2e-2;
    double flops = 4.0 * BH * double(T) * T * FD;
    // flash_only: the occupancy sweep (variant flash_bh: BH heads at one T, run_h200.sh sweeps)
    Row r = base_row("attention", flash ? (flash_only ? "flash_bh" : "flash") : "naive");
    r.set("BH", BH).set("T", T).set("d", FD).set("kernels", flash ? 1 : 3);
    r.set("grid", flash ? std::to_string(T / FBR) + "x" + std::to_string(BH) : std::string("3 kernels"));
    r.set("block", flash ? 128 : 256).set("flops", flops).set("tflops", flops / (t.median_us * 1e6));
    r.set("rel_err", err).set("nonfinite", nf);
    emit("attention", r.set("check", ok ? "ok" : "FAIL"), &t);
    log("attention %s BH=%d T=%d: %.1f us %.1f TFLOP/s err %.2e %s\n", flash ? "flash" : "naive", BH, T, t.median_us,
        flops / (t.median_us * 1e6), err, ok ? "ok" : "FAIL");
  }
  CK(cudaFree(R));
}

// The naive attention's three launches timed one at a time (batch b5 on): which of them the summed
// time's error comes from. Same shapes and launches as attention_points; rows in attention_parts.csv
// (kernel attention_parts, variant qk / softmax / pv) with the bytes each must move at least.
void attention_parts(int BH, int T) {
  NaiveAttention na(BH, T);
  const double nq = double(na.nq), nS = double(na.nS);
  const char* parts[3] = {"qk", "softmax", "pv"};
  // bytes each launch must move: QK reads Q, K and writes S (f32); softmax reads S, writes P (bf16);
  // PV reads P, V and writes O
  const double bytes[3] = {nq * 4 + nS * 4, nS * 6, nS * 2 + nq * 4};
  for (int k = 0; k < 3; ++k) {
    Timing t = time_launches([&](int) { na.launch(k); });
    Row r = base_row("attention_parts", parts[k]);
    r.set("BH", BH).set("T", T).set("d", FD).set("min_bytes", bytes[k]).set("gbps", bytes[k] / (t.median_us * 1e3));
    emit("attention_parts", r.set("check", "n/a"), &t);
    log("attention part %s BH=%d T=%d: %.1f us, %.0f GB/s at the minimum bytes\n", parts[k], BH, T, t.median_us,
        bytes[k] / (t.median_us * 1e3));
  }
}

}  // namespace twins
