// Application twins, for held-out validation (never used for fitting):
//   gemm_tiled   C[M,N] = A[M,K] B[K,N], bf16 in, fp32 accumulate, bf16 out, row-major; mma.sync
//                m16n8k16 fed by ldmatrix, 3-stage cp.async pipeline, BM = BN = 128, BK = 32, 256
//                threads as 2 x 4 warps with 64 x 32 warp tiles; shared tiles padded by 8 elements
//                per row (As[BM][BK+8], Bs[BK][BN+8], as kernels_ir/lib/gemm_persistent.kir);
//                VEC = min(8, lowbit(K), lowbit(N)) elements per global copy: 16/8/4-byte cp.async,
//                or 2-byte ld.global + st.shared when VEC == 1; edge tiles masked (zero fill);
//                grid (cdiv(N,128), cdiv(M,128)).
//   elementwise  y = sin(x)^2 + cos(x)^2 over 2^28 fp32: fused (1 kernel) and unfused (sin, cos,
//                square, square, add: 5 kernels through HBM).
//   softmax      rows of a 4096 x 4096 fp32 matrix, one CTA (256 threads) per row, row in registers.
//   attention    B*H = 64, d = 64, bf16: naive (S = QK^T fp32 in HBM, softmax -> P bf16 in HBM,
//                O = PV, with the gemm above) and flash-attention forward (one kernel, 64 query rows
//                per CTA of 4 warps, 64-key blocks double-buffered through cp.async, online softmax).
// Every output is poisoned first and checked against an fp32 reference kernel.
#include <cuda_bf16.h>

#include <cmath>
#include <vector>

#include "common.cuh"

namespace twins {

typedef __nv_bfloat16 bf16;

// ---------------------------------------------------------------- PTX helpers
__device__ __forceinline__ uint32_t smem_u32(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }
template <int BYTES>
__device__ __forceinline__ void cp_async(void* s, const void* gptr, bool pred) {
  uint32_t sa = smem_u32(s);
  int sz = pred ? BYTES : 0;  // src-size 0: zero fill
  if constexpr (BYTES == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(sa), "l"(gptr), "r"(sz) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(sa), "l"(gptr), "n"(BYTES), "r"(sz) : "memory");
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p)));
}
__device__ __forceinline__ void ldsm_x4_t(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p)));
}
__device__ __forceinline__ void mma_bf16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

// ---------------------------------------------------------------- gemm_tiled
constexpr int BM = 128, BN = 128, BK = 32, STAGES = 3, AST = BK + 8, BST = BN + 8;

struct GemmArgs {
  const bf16* A;
  const bf16* B;  // B[K][N] row-major, or (BT) Bt[N][K] row-major
  void* C;
  int M, N, K;
  long long sA, sB, sC;  // batch strides (elements), blockIdx.z
  float alpha;
};

template <int VEC>
__device__ __forceinline__ void copy_vec(bf16* dst, const bf16* src, bool ok) {
  if constexpr (VEC == 8) cp_async<16>(dst, src, ok);
  else if constexpr (VEC == 4) cp_async<8>(dst, src, ok);
  else if constexpr (VEC == 2) cp_async<4>(dst, src, ok);
  else *dst = ok ? *src : __float2bfloat16(0.0f);  // 2-byte ld.global + st.shared
}

template <int VEC, bool BT>
__device__ __forceinline__ void gemm_load(const GemmArgs& p, const bf16* A, const bf16* B, bf16* As, bf16* Bs, int tm,
                                          int tn, int kt, int st) {
#pragma unroll(VEC >= 4 ? 4 : 2)
  for (int l = 0; l < BM * BK / (256 * VEC); ++l) {
    int e = (l * 256 + threadIdx.x) * VEC, r = e / BK, c = e % BK;
    int gr = tm * BM + r, gc = kt * BK + c;
    bool ok = gr < p.M && gc < p.K;
    copy_vec<VEC>(As + st * BM * AST + r * AST + c, ok ? A + size_t(gr) * p.K + gc : A, ok);
  }
  if constexpr (!BT) {
#pragma unroll(VEC >= 4 ? 4 : 2)
    for (int l = 0; l < BK * BN / (256 * VEC); ++l) {
      int e = (l * 256 + threadIdx.x) * VEC, r = e / BN, c = e % BN;
      int gr = kt * BK + r, gc = tn * BN + c;
      bool ok = gr < p.K && gc < p.N;
      copy_vec<VEC>(Bs + st * BK * BST + r * BST + c, ok ? B + size_t(gr) * p.N + gc : B, ok);
    }
  } else {
#pragma unroll(VEC >= 4 ? 4 : 2)
    for (int l = 0; l < BN * BK / (256 * VEC); ++l) {
      int e = (l * 256 + threadIdx.x) * VEC, r = e / BK, c = e % BK;
      int gr = tn * BN + r, gc = kt * BK + c;
      bool ok = gr < p.N && gc < p.K;
      copy_vec<VEC>(Bs + st * BN * AST + r * AST + c, ok ? B + size_t(gr) * p.K + gc : B, ok);
    }
  }
}

template <bool BT>
constexpr int gemm_smem_bytes() {
  return STAGES * (BM * AST + (BT ? BN * AST : BK * BST)) * 2;
}

template <int VEC, bool BT, bool OUTF32>
__global__ void __launch_bounds__(256) gemm_tiled(GemmArgs p) {
  extern __shared__ __align__(16) unsigned char smem[];
  bf16* As = reinterpret_cast<bf16*>(smem);
  bf16* Bs = As + STAGES * BM * AST;
  const int tn = blockIdx.x, tm = blockIdx.y, z = blockIdx.z;
  const bf16* A = p.A + z * p.sA;
  const bf16* B = p.B + z * p.sB;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, wm = warp / 4, wn = warp % 4;
  float acc[4][4][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;
  const int KT = (p.K + BK - 1) / BK;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < KT) gemm_load<VEC, BT>(p, A, B, As, Bs, tm, tn, s, s);
    cp_commit();
  }
  for (int kt = 0; kt < KT; ++kt) {
    cp_wait<STAGES - 2>();
    __syncthreads();
    int nk = kt + STAGES - 1;
    if (nk < KT) gemm_load<VEC, BT>(p, A, B, As, Bs, tm, tn, nk, nk % STAGES);
    cp_commit();
    const int st = kt % STAGES;
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      uint32_t af[4][4], bfr[2][4];
#pragma unroll
      for (int i = 0; i < 4; ++i)
        ldsm_x4(af[i], As + st * BM * AST + (wm * 64 + i * 16 + lane % 16) * AST + kk * 16 + (lane / 16) * 8);
#pragma unroll
      for (int j2 = 0; j2 < 2; ++j2) {
        if constexpr (!BT)
          ldsm_x4_t(bfr[j2], Bs + st * BK * BST + (kk * 16 + lane % 16) * BST + wn * 32 + j2 * 16 + (lane / 16) * 8);
        else
          ldsm_x4(bfr[j2], Bs + st * BN * AST + (wn * 32 + j2 * 16 + lane % 8 + (lane / 16) * 8) * AST + kk * 16 +
                               ((lane / 8) % 2) * 8);
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) mma_bf16(acc[i][j], af[i], bfr[j / 2][(j % 2) * 2], bfr[j / 2][(j % 2) * 2 + 1]);
    }
  }
  cp_wait<0>();
  // epilogue: each lane holds 2 x 2 fp32 of every 16 x 8 tile
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        int r = tm * BM + wm * 64 + i * 16 + lane / 4 + h * 8;
        int c = tn * BN + wn * 32 + j * 8 + (lane % 4) * 2;
        if (r >= p.M || c >= p.N) continue;
        float v0 = acc[i][j][2 * h] * p.alpha, v1 = acc[i][j][2 * h + 1] * p.alpha;
        size_t off = size_t(z) * p.sC + size_t(r) * p.N + c;
        bool pair = c + 1 < p.N && (p.N % 2 == 0);
        if constexpr (OUTF32) {
          float* C = static_cast<float*>(p.C);
          if (pair) *reinterpret_cast<float2*>(C + off) = make_float2(v0, v1);
          else {
            C[off] = v0;
            if (c + 1 < p.N) C[off + 1] = v1;
          }
        } else {
          bf16* C = static_cast<bf16*>(p.C);
          if (pair) *reinterpret_cast<uint32_t*>(C + off) = pack_bf16(v0, v1);
          else {
            C[off] = __float2bfloat16(v0);
            if (c + 1 < p.N) C[off + 1] = __float2bfloat16(v1);
          }
        }
      }
}

static int lowbit(int x) { return x & -x; }
static int gemm_vec(int K, int N) { return std::min(8, std::min(lowbit(K), lowbit(N))); }

template <int VEC, bool BT, bool OUTF32>
static void launch_gemm_t(const GemmArgs& p, int batch) {
  static bool attr = false;
  if (!attr) {
    CK(cudaFuncSetAttribute(gemm_tiled<VEC, BT, OUTF32>, cudaFuncAttributeMaxDynamicSharedMemorySize, gemm_smem_bytes<BT>()));
    attr = true;
  }
  dim3 grid((p.N + BN - 1) / BN, (p.M + BM - 1) / BM, batch);
  gemm_tiled<VEC, BT, OUTF32><<<grid, 256, gemm_smem_bytes<BT>(), g.stream>>>(p);
}
static void launch_gemm(const GemmArgs& p, int batch, bool bt, bool outf32) {
  int vec = gemm_vec(p.K, bt ? 8 : p.N);
  if (bt && outf32) {  // attention S = Q K^T
    if (vec == 8) launch_gemm_t<8, true, true>(p, batch);
    else launch_gemm_t<1, true, true>(p, batch);
    return;
  }
  switch (vec) {
    case 8: launch_gemm_t<8, false, false>(p, batch); break;
    case 4: launch_gemm_t<4, false, false>(p, batch); break;
    case 2: launch_gemm_t<2, false, false>(p, batch); break;
    default: launch_gemm_t<1, false, false>(p, batch); break;
  }
}

// fp32 reference: C = alpha * A B (B row-major [K][N] or BT [N][K]), 16 x 16 shared tiles
__global__ void gemm_ref(const bf16* A, const bf16* B, float* C, int M, int N, int K, bool bt, float alpha) {
  __shared__ float as[16][17], bs[16][17];
  int r = blockIdx.y * 16 + threadIdx.y, c = blockIdx.x * 16 + threadIdx.x;
  float s = 0;
  for (int k0 = 0; k0 < K; k0 += 16) {
    int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
    as[threadIdx.y][threadIdx.x] = (r < M && ka < K) ? __bfloat162float(A[size_t(r) * K + ka]) : 0.f;
    float bv = 0;
    if (kb < K && c < N) bv = __bfloat162float(bt ? B[size_t(c) * K + kb] : B[size_t(kb) * N + c]);
    bs[threadIdx.y][threadIdx.x] = bv;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 16; ++k) s += as[threadIdx.y][k] * bs[k][threadIdx.x];
    __syncthreads();
  }
  if (r < M && c < N) C[size_t(r) * N + c] = s * alpha;
}

// sum (x - ref)^2, sum ref^2, count of non-finite x
template <typename T>
__global__ void relerr_k(const T* x, const float* ref, size_t n, double* acc) {
  double e = 0, r = 0, bad = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    float v;
    if constexpr (sizeof(T) == 2) v = __bfloat162float(x[i]);
    else v = x[i];
    if (!isfinite(v)) bad += 1;
    else e += double(v - ref[i]) * double(v - ref[i]);
    r += double(ref[i]) * double(ref[i]);
  }
  atomicAdd(acc, e);
  atomicAdd(acc + 1, r);
  atomicAdd(acc + 2, bad);
}
template <typename T>
static double rel_err(const T* x, const float* ref, size_t n, double* nonfinite) {
  double* d;
  CK(cudaMalloc(&d, 3 * sizeof(double)));
  CK(cudaMemset(d, 0, 3 * sizeof(double)));
  relerr_k<T><<<2 * g.sms, 256>>>(x, ref, n, d);
  CKL();
  double h[3];
  CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  CK(cudaFree(d));
  *nonfinite = h[2];
  return h[2] > 0 ? INFINITY : std::sqrt(h[0] / std::max(h[1], 1e-30));
}

__global__ void fill_bf16_k(bf16* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ (seed * 0x9e3779b9u);
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    p[i] = __float2bfloat16(float(h & 0xffff) * (2.0f / 65536.0f) - 1.0f);  // uniform [-1, 1)
  }
}
static void fill_bf16(bf16* p, size_t n, uint32_t seed) {
  fill_bf16_k<<<4 * g.sms, 256>>>(p, n, seed);
  CKL();
}

static void gemm_point(int M, int N, int K, const char* sweep) {
  bf16 *A, *B, *C;
  float* R;
  CK(cudaMalloc(&A, size_t(M) * K * 2));
  CK(cudaMalloc(&B, size_t(K) * N * 2));
  CK(cudaMalloc(&C, size_t(M) * N * 2));
  CK(cudaMalloc(&R, size_t(M) * N * 4));
  uint32_t seed = uint32_t(M * 131 + N * 7 + K);
  fill_bf16(A, size_t(M) * K, seed);
  fill_bf16(B, size_t(K) * N, seed + 1);
  poison(C, size_t(M) * N * 2);
  GemmArgs p{A, B, C, M, N, K, 0, 0, 0, 1.0f};
  Timing t = time_launches([&](int) { launch_gemm(p, 1, false, false); });
  CKL();
  gemm_ref<<<dim3((N + 15) / 16, (M + 15) / 16), dim3(16, 16)>>>(A, B, R, M, N, K, false, 1.0f);
  CKL();
  double nf = 0, err = rel_err(C, R, size_t(M) * N, &nf);
  bool ok = err < 1e-2;
  double flops = 2.0 * M * N * K;
  Row r = base_row("gemm_tiled", sweep);
  r.set("M", M).set("N", N).set("K", K).set("vec", gemm_vec(K, N)).set("grid_x", (N + BN - 1) / BN);
  r.set("grid_y", (M + BM - 1) / BM).set("block", 256).set("smem_bytes", gemm_smem_bytes<false>());
  r.set("tflops", flops / (t.median_us * 1e6)).set("rel_err", err).set("nonfinite", nf);
  emit("gemm_tiled", r.set("check", ok ? "ok" : "FAIL"), &t);
  log("gemm %s %dx%dx%d vec %d: %.1f us %.1f TFLOP/s err %.2e %s\n", sweep, M, N, K, gemm_vec(K, N), t.median_us,
      flops / (t.median_us * 1e6), err, ok ? "ok" : "FAIL");
  CK(cudaFree(A));
  CK(cudaFree(B));
  CK(cudaFree(C));
  CK(cudaFree(R));
}

// ---------------------------------------------------------------- elementwise
__global__ void __launch_bounds__(256) elementwise_fused(const float4* x, float4* y, size_t n4) {
  size_t i = blockIdx.x * size_t(256) + threadIdx.x;
  if (i >= n4) return;
  float4 v = x[i], o;
  float s, c;
  s = sinf(v.x), c = cosf(v.x), o.x = s * s + c * c;
  s = sinf(v.y), c = cosf(v.y), o.y = s * s + c * c;
  s = sinf(v.z), c = cosf(v.z), o.z = s * s + c * c;
  s = sinf(v.w), c = cosf(v.w), o.w = s * s + c * c;
  y[i] = o;
}
#define EW_UNARY(NAME, EXPR)                                                            \
  __global__ void __launch_bounds__(256) NAME(const float4* x, float4* y, size_t n4) { \
    size_t i = blockIdx.x * size_t(256) + threadIdx.x;                                 \
    if (i >= n4) return;                                                               \
    float4 v = x[i];                                                                   \
    auto f = [](float a) { return EXPR; };                                             \
    y[i] = make_float4(f(v.x), f(v.y), f(v.z), f(v.w));                                \
  }
EW_UNARY(elementwise_sin, sinf(a))
EW_UNARY(elementwise_cos, cosf(a))
EW_UNARY(elementwise_square, a* a)
__global__ void __launch_bounds__(256) elementwise_add(const float4* a, const float4* b, float4* y, size_t n4) {
  size_t i = blockIdx.x * size_t(256) + threadIdx.x;
  if (i >= n4) return;
  float4 u = a[i], v = b[i];
  y[i] = make_float4(u.x + v.x, u.y + v.y, u.z + v.z, u.w + v.w);
}
__global__ void near_one_k(const float* y, size_t n, unsigned long long* bad) {
  unsigned long long b = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    b += !(fabsf(y[i] - 1.0f) < 1e-5f);
  if (b) atomicAdd(bad, b);
}
__global__ void fill_range_k(float* p, size_t n, float lo, float hi) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u;
    h ^= h >> 16;
    h *= 0x7feb352d;
    h ^= h >> 15;
    p[i] = lo + (hi - lo) * float(h >> 8) * (1.0f / 16777216.0f);
  }
}

static void elementwise_points(size_t n) {
  float *x, *y, *s, *c, *s2, *c2;
  for (float** p : {&x, &y, &s, &c, &s2, &c2}) CK(cudaMalloc(p, n * 4));
  fill_range_k<<<4 * g.sms, 256>>>(x, n, -100.f, 100.f);
  CKL();
  size_t n4 = n / 4;
  unsigned grid = unsigned((n4 + 255) / 256);
  auto F4 = [](float* p) { return reinterpret_cast<float4*>(p); };
  unsigned long long* bad_d;
  CK(cudaMalloc(&bad_d, 8));
  for (int fused = 1; fused >= 0; --fused) {
    poison(y, n * 4);
    auto launch = [&](int) {
      if (fused) elementwise_fused<<<grid, 256, 0, g.stream>>>(F4(x), F4(y), n4);
      else {
        elementwise_sin<<<grid, 256, 0, g.stream>>>(F4(x), F4(s), n4);
        elementwise_cos<<<grid, 256, 0, g.stream>>>(F4(x), F4(c), n4);
        elementwise_square<<<grid, 256, 0, g.stream>>>(F4(s), F4(s2), n4);
        elementwise_square<<<grid, 256, 0, g.stream>>>(F4(c), F4(c2), n4);
        elementwise_add<<<grid, 256, 0, g.stream>>>(F4(s2), F4(c2), F4(y), n4);
      }
    };
    Timing t = time_launches(launch);
    CK(cudaMemset(bad_d, 0, 8));
    near_one_k<<<4 * g.sms, 256>>>(y, n, bad_d);
    CKL();
    unsigned long long bad = 0;
    CK(cudaMemcpy(&bad, bad_d, 8, cudaMemcpyDeviceToHost));
    double bytes = (fused ? 2.0 : 11.0) * 4.0 * n;
    Row r = base_row("elementwise", fused ? "fused" : "unfused");
    r.set("n", uint64_t(n)).set("kernels", fused ? 1 : 5).set("grid", grid).set("block", 256).set("hbm_bytes_min", bytes);
    r.set("tbps", bytes / (t.median_us * 1e6)).set("not_one", uint64_t(bad));
    emit("elementwise", r.set("check", bad ? "FAIL" : "ok"), &t);
    log("elementwise %s: %.1f us, %.2f TB/s %s\n", fused ? "fused" : "unfused", t.median_us, bytes / (t.median_us * 1e6),
        bad ? "FAIL" : "ok");
  }
  for (float* p : {x, y, s, c, s2, c2}) CK(cudaFree(p));
  CK(cudaFree(bad_d));
}

// ---------------------------------------------------------------- softmax rows
__device__ __forceinline__ float block_reduce(float v, bool is_max, float* red) {
#pragma unroll
  for (int o = 16; o; o >>= 1) {
    float u = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, u) : v + u;
  }
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = v;
  __syncthreads();
  v = red[0];
#pragma unroll
  for (int w = 1; w < 8; ++w) v = is_max ? fmaxf(v, red[w]) : v + red[w];
  __syncthreads();
  return v;
}

// one CTA of 256 threads per row of T = V4 * 1024 fp32; P = softmax(scale * S) per row
template <int V4, typename OutT>
__global__ void __launch_bounds__(256) softmax_rows(const float* S, OutT* P, float scale) {
  __shared__ float red[8];
  const size_t T = size_t(V4) * 1024, row = blockIdx.x;
  const float4* in = reinterpret_cast<const float4*>(S + row * T);
  float4 v[V4];
  float m = -INFINITY;
#pragma unroll
  for (int k = 0; k < V4; ++k) {
    v[k] = in[k * 256 + threadIdx.x];
    m = fmaxf(m, fmaxf(fmaxf(v[k].x, v[k].y), fmaxf(v[k].z, v[k].w)));
  }
  m = block_reduce(m, true, red);
  const float sl = scale * 1.4426950408889634f;
  float sum = 0;
#pragma unroll
  for (int k = 0; k < V4; ++k) {
    v[k].x = exp2f((v[k].x - m) * sl), v[k].y = exp2f((v[k].y - m) * sl);
    v[k].z = exp2f((v[k].z - m) * sl), v[k].w = exp2f((v[k].w - m) * sl);
    sum += v[k].x + v[k].y + v[k].z + v[k].w;
  }
  float inv = 1.0f / block_reduce(sum, false, red);
#pragma unroll
  for (int k = 0; k < V4; ++k) {
    size_t e = row * T + size_t(k * 256 + threadIdx.x) * 4;
    if constexpr (sizeof(OutT) == 4)
      *reinterpret_cast<float4*>(P + e) = make_float4(v[k].x * inv, v[k].y * inv, v[k].z * inv, v[k].w * inv);
    else
      *reinterpret_cast<uint2*>(P + e) = make_uint2(pack_bf16(v[k].x * inv, v[k].y * inv), pack_bf16(v[k].z * inv, v[k].w * inv));
  }
}
template <typename OutT>
static void launch_softmax(const float* S, OutT* P, int rows, int T, float scale) {
  switch (T) {
    case 1024: softmax_rows<1, OutT><<<rows, 256, 0, g.stream>>>(S, P, scale); break;
    case 2048: softmax_rows<2, OutT><<<rows, 256, 0, g.stream>>>(S, P, scale); break;
    case 4096: softmax_rows<4, OutT><<<rows, 256, 0, g.stream>>>(S, P, scale); break;
    default: std::fprintf(stderr, "softmax: T=%d unsupported\n", T); std::exit(5);
  }
}
// reference: one thread per row, double accumulation
__global__ void softmax_ref(const float* S, float* R, int rows, int T, float scale) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const float* s = S + size_t(row) * T;
  float m = -INFINITY;
  for (int j = 0; j < T; ++j) m = fmaxf(m, s[j]);
  double sum = 0;
  for (int j = 0; j < T; ++j) sum += exp(double(scale) * (s[j] - m));
  for (int j = 0; j < T; ++j) R[size_t(row) * T + j] = float(exp(double(scale) * (s[j] - m)) / sum);
}

static void softmax_point(int rows, int T) {
  const int sets = 4;  // 4 input/output sets (1 GiB) rotate so each launch starts from HBM
  size_t n = size_t(rows) * T;
  float *S, *P, *R;
  CK(cudaMalloc(&S, sets * n * 4));
  CK(cudaMalloc(&P, sets * n * 4));
  CK(cudaMalloc(&R, n * 4));
  fill_range_k<<<4 * g.sms, 256>>>(S, sets * n, -8.f, 8.f);
  CKL();
  poison(P, sets * n * 4);
  Timing t = time_launches([&](int i) { launch_softmax<float>(S + (i % sets) * n, P + (i % sets) * n, rows, T, 1.0f); });
  for (int i = 0; i < sets; ++i) launch_softmax<float>(S + i * n, P + i * n, rows, T, 1.0f);
  softmax_ref<<<(rows + 127) / 128, 128>>>(S, R, rows, T, 1.0f);
  CKL();
  double nf = 0, err = rel_err(P, R, n, &nf);
  bool ok = err < 1e-5;
  double bytes = 8.0 * n;
  Row r = base_row("softmax", "rows");
  r.set("rows", rows).set("T", T).set("grid", rows).set("block", 256).set("hbm_bytes_min", bytes);
  r.set("tbps", bytes / (t.median_us * 1e6)).set("rel_err", err);
  emit("softmax", r.set("check", ok ? "ok" : "FAIL"), &t);
  log("softmax %dx%d: %.1f us %.2f TB/s err %.2e %s\n", rows, T, t.median_us, bytes / (t.median_us * 1e6), err,
      ok ? "ok" : "FAIL");
  CK(cudaFree(S));
  CK(cudaFree(P));
  CK(cudaFree(R));
}

// ---------------------------------------------------------------- attention
constexpr int FD = 64, FBR = 64, FBC = 64, FST = FD + 8;  // head dim, query rows, key block, smem row

__global__ void __launch_bounds__(128) flash_attn_fwd(const bf16* Q, const bf16* K, const bf16* V, bf16* O, int T,
                                                      float scale_log2) {
  __shared__ __align__(16) bf16 Qs[FBR * FST];
  __shared__ __align__(16) bf16 Ks[2][FBC * FST];
  __shared__ __align__(16) bf16 Vs[2][FBC * FST];
  const int qb = blockIdx.x, bh = blockIdx.y, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const size_t base = size_t(bh) * T * FD;
  auto load_tile = [&](bf16* dst, const bf16* src) {  // 64 x 64 bf16: 512 16-byte chunks
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      int idx = c * 128 + threadIdx.x, r = idx / 8, col = (idx % 8) * 8;
      cp_async<16>(dst + r * FST + col, src + size_t(r) * FD + col, true);
    }
  };
  load_tile(Qs, Q + base + size_t(qb) * FBR * FD);
  load_tile(Ks[0], K + base);
  load_tile(Vs[0], V + base);
  cp_commit();
  float o[8][4], m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
#pragma unroll
  for (int n = 0; n < 8; ++n)
#pragma unroll
    for (int r = 0; r < 4; ++r) o[n][r] = 0.f;
  uint32_t qf[4][4];
  const int nb = T / FBC;
  for (int j = 0; j < nb; ++j) {
    const int b = j % 2;
    if (j + 1 < nb) {
      load_tile(Ks[b ^ 1], K + base + size_t(j + 1) * FBC * FD);
      load_tile(Vs[b ^ 1], V + base + size_t(j + 1) * FBC * FD);
    }
    cp_commit();
    cp_wait<1>();
    __syncthreads();
    if (j == 0) {
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) ldsm_x4(qf[kk], Qs + (warp * 16 + lane % 16) * FST + kk * 16 + (lane / 16) * 8);
    }
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
        ldsm_x4(kf, Ks[b] + (j2 * 16 + lane % 8 + (lane / 16) * 8) * FST + kk * 16 + ((lane / 8) % 2) * 8);
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
        ldsm_x4_t(vf, Vs[b] + (t * 16 + lane % 16) * FST + j2 * 16 + (lane / 16) * 8);
        mma_bf16(o[2 * j2], pa, vf[0], vf[1]);
        mma_bf16(o[2 * j2 + 1], pa, vf[2], vf[3]);
      }
    }
    __syncthreads();  // buffer b is refilled two iterations on
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

static void attention_points(int BH, int T) {
  size_t nq = size_t(BH) * T * FD, nS = size_t(BH) * T * T;
  bf16 *Q, *K, *V, *O, *P;
  float *S, *R;
  CK(cudaMalloc(&Q, nq * 2));
  CK(cudaMalloc(&K, nq * 2));
  CK(cudaMalloc(&V, nq * 2));
  CK(cudaMalloc(&O, nq * 2));
  CK(cudaMalloc(&S, nS * 4));
  CK(cudaMalloc(&P, nS * 2));
  CK(cudaMalloc(&R, size_t(2) * T * FD * 4));
  fill_bf16(Q, nq, 11u + T);
  fill_bf16(K, nq, 12u + T);
  fill_bf16(V, nq, 13u + T);
  const float scale = 1.0f / std::sqrt(float(FD));
  const int heads[2] = {0, BH - 1};
  for (int h = 0; h < 2; ++h) {
    size_t off = size_t(heads[h]) * T * FD;
    attn_ref<<<(T + 127) / 128, 128>>>(Q + off, K + off, V + off, R + size_t(h) * T * FD, T, scale);
  }
  CKL();
  for (int flash = 0; flash < 2; ++flash) {
    poison(O, nq * 2);
    if (!flash) poison(S, nS * 4), poison(P, nS * 2);
    auto launch = [&](int) {
      if (flash) {
        flash_attn_fwd<<<dim3(T / FBR, BH), 128, 0, g.stream>>>(Q, K, V, O, T, scale * 1.4426950408889634f);
      } else {
        GemmArgs qk{Q, K, S, T, T, FD, (long long)T * FD, (long long)T * FD, (long long)T * T, 1.0f};
        launch_gemm(qk, BH, true, true);
        launch_softmax<bf16>(S, P, BH * T, T, scale);
        GemmArgs pv{P, V, O, T, FD, T, (long long)T * T, (long long)T * FD, (long long)T * FD, 1.0f};
        launch_gemm(pv, BH, false, false);
      }
    };
    Timing t = time_launches(launch);
    double err = 0, nf = 0;
    for (int h = 0; h < 2; ++h) {
      double nfh = 0;
      err = std::max(err, rel_err(O + size_t(heads[h]) * T * FD, R + size_t(h) * T * FD, size_t(T) * FD, &nfh));
      nf += nfh;
    }
    bool ok = err < 2e-2;
    double flops = 4.0 * BH * double(T) * T * FD;
    Row r = base_row("attention", flash ? "flash" : "naive");
    r.set("BH", BH).set("T", T).set("d", FD).set("kernels", flash ? 1 : 3);
    r.set("grid", flash ? std::to_string(T / FBR) + "x" + std::to_string(BH) : std::string("3 kernels"));
    r.set("block", flash ? 128 : 256).set("flops", flops).set("tflops", flops / (t.median_us * 1e6));
    r.set("rel_err", err).set("nonfinite", nf);
    emit("attention", r.set("check", ok ? "ok" : "FAIL"), &t);
    log("attention %s BH=%d T=%d: %.1f us %.1f TFLOP/s err %.2e %s\n", flash ? "flash" : "naive", BH, T, t.median_us,
        flops / (t.median_us * 1e6), err, ok ? "ok" : "FAIL");
  }
  for (void* p : {(void*)Q, (void*)K, (void*)V, (void*)O, (void*)P, (void*)S, (void*)R}) CK(cudaFree(p));
}

int run_apps(const std::vector<std::string>& args) {
  bool ncu = arg_i(args, "ncu", 0) != 0;
  std::string only = arg(args, "only", "");
  auto want = [&](const char* k) { return only.empty() || only.find(k) != std::string::npos; };
  if (g.quick) {  // selftest / memcheck: small shapes through every code path (VEC 8, 4, 2, 1)
    gemm_point(512, 512, 512, "quick");
    gemm_point(300, 200, 68, "quick");
    gemm_point(130, 1030, 1030, "quick");
    gemm_point(257, 257, 257, "quick");
    softmax_point(64, 4096);
    attention_points(2, 1024);
    return 0;
  }
  if (ncu) {  // one launch of each representative, for Nsight Compute
    g.ncu = true;
    gemm_point(4096, 4096, 4096, "ncu");
    gemm_point(1793, 1793, 1793, "ncu");
    gemm_point(1030, 1030, 1030, "ncu");
    gemm_point(2304, 1152, 4096, "ncu");
    elementwise_points(size_t(1) << 28);
    softmax_point(4096, 4096);
    attention_points(64, 2048);
    g.ncu = false;
    return 0;
  }
  if (want("gemm")) {
    for (int n : {4096, 1792, 1793, 1800}) gemm_point(n, n, n, "square");
    for (int n = 1024; n <= 1100; ++n) gemm_point(n, n, n, "square_align");
    for (int N = 128; N <= 8192; N += 128) gemm_point(2304, N, 4096, "n_sweep");
  }
  if (want("elementwise")) elementwise_points(size_t(1) << 28);
  if (want("softmax")) softmax_point(4096, 4096);
  if (want("attention"))
    for (int T : {1024, 2048, 4096}) attention_points(64, T);
  return 0;
}

}  // namespace twins
