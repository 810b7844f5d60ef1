// CUDA twin of kernels_ir/lib/gemm_wgmma.kir: Hopper's warp-specialized, persistent, TMA + wgmma GEMM.
//   C[M,N] = A[M,K] * B, bf16 in, fp32 accumulate, bf16 out, row-major A and C.
// B's layout (the 7th argument):
//   kn (default, as the IR kernel): B row-major [K, N]. Its shared-memory box is N-contiguous (MN-major),
//      so the wgmma reads it transposed (imm-trans-b = 1) through an MN-major 128-byte-swizzle descriptor.
//      TMA boxes are at most 128 bytes wide under the 128-byte swizzle, so a stage's B box is BN / 64
//      boxes of 64 (N) x BK (K), each 8 KB, laid one after another.
//   nk (fallback): B given as [N, K] (K-major: C = A * B^T, cuBLAS's "TN", torch's linear). One box
//      BN (N) x 64 (K) per stage, read with a K-major descriptor like A's (imm-trans-b = 0).
//   If kn fails the check while nk passes, the MN-major descriptor (LBO / SBO) is the suspect.
// Structure (as the IR kernel): 384 threads; warpgroup 0 is the producer (setmaxnreg.dec to 40; thread 0
// issues the TMA copies), warpgroups 1 and 2 are consumers (setmaxnreg.inc to 232), each computing
// 64 rows x BN of the BM = 128 x BN tile with wgmma.m64nBNk16 (BN = 128 or 256), BK = 64, STAGES = 4;
// per stage a `full` mbarrier (1 arrival: the producer's arrive.expect_tx, plus the copies' bytes) and an
// `empty` mbarrier (one arrival per consumer warp, of every CTA of the cluster, after wgmma.wait_group 1
// shows the k-tile before done). Persistent grid (one CTA per SM; with clusters, as many as fit at
// once), tiles ctaid, ctaid + grid, ...; the stage / phase counter g runs on across tiles.
// CLUSTER = 2 (implemented): CTAs 2c and 2c + 1 compute tiles (2i, j) and (2i + 1, j); each loads half
// of the B box (BK / 2 rows of K for kn, BN / 2 rows of N for nk) and multicasts it to both (ctaMask
// 0b11); each full barrier expects A's bytes plus the whole B box; the consumers release a stage on the
// empty barriers of both CTAs (the partner's producer writes into this CTA's stage too).
// Epilogue: bf16 pairs stored to global straight from the accumulator fragment (no smem staging).
// Edges: TMA zero-fills out-of-bounds box parts; stores are masked. Needs K % 8 == 0 and N % 8 == 0.
// Every mbarrier wait gives up after 2^26 polls or ~4 s and traps (a bug fails fast, not forever).
//
// Build: validation/cuda/build_wgmma_twin.sh OUTDIR (sm_90a; the file is empty unless GTSIM_WGMMA_TWIN is
// defined, so the gtsim_twins builds that glob this folder for plain sm_90 skip it).
// Run:   gemm_wgmma_twin M N K [BN=256] [CLUSTER=1|2] [reps=20] [kn|nk]   (env WGMMA_GRID overrides grid)
// Prints one CSV line m,n,k,bn,cluster,time_us_events,time_us_graph,tflops_graph,max_rel_err,ok on
// stdout (the header and the setup on stderr). Exit 0 ok, 3 check failed, 1 usage, 2 CUDA error.
// Inputs are multiples of 1/8 in [-1, 1], so the fp32 sums are exact and the error is bf16 rounding of
// C alone (max_rel_err <= 2^-8, bf16's unit roundoff); the check passes below 1e-2.
#ifdef GTSIM_WGMMA_TWIN
#include <cuda.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "gemm_wgmma_twin needs sm_90a: build with -gencode=arch=compute_90a,code=sm_90a"
#endif

namespace {

constexpr int BM = 128, BK = 64, STAGES = 4, CONSUMERS = 2, NTHREADS = 128 * (CONSUMERS + 1);
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;   // 128 * 40 + 256 * 232 = 64512 <= 65536
constexpr uint32_t SPIN_POLLS = 1u << 26;
constexpr unsigned long long SPIN_NS = 4000000000ull;

// ---------------------------------------------------------------- device helpers (PTX)
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
// waits for the completion of the phase of parity `parity`; bounded (see the header). Default (.acquire.cta)
// semantics, as for the arrivals below: .cluster scope costs an L1 invalidate per wait and a
// MEMBAR.ALL.GPU per arrival (it halved CLUSTER=2's speed), and the copies and the wgmma reads that these
// barriers order are async-proxy traffic that the mbarrier's own transaction tracking orders
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  uint32_t done;
  unsigned long long t0 = 0;
  for (uint32_t n = 0;; ++n) {
    asm volatile(
        "{\n .reg .pred p;\n"
        " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    if (done) return;
    // no printf before the trap: a call in the kernel makes ptxas serialize the wgmma (C7510)
    if (n == 0) t0 = globaltimer();
    else if ((n & 255) == 0 && (n >= SPIN_POLLS || globaltimer() - t0 > SPIN_NS)) __trap();
  }
}
// one arrival on `bar` in every CTA of the cluster (CLUSTER == 1: the local one)
template <int CLUSTER>
__device__ __forceinline__ void mbar_release(uint32_t bar) {
  if constexpr (CLUSTER == 1) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
  } else {
#pragma unroll
    for (uint32_t r = 0; r < CLUSTER; ++r) {
      asm volatile(
          "{\n .reg .b32 ra;\n"
          " mapa.shared::cluster.u32 ra, %0, %1;\n"
          " mbarrier.arrive.shared::cluster.b64 _, [ra];\n}"
          ::"r"(bar), "r"(r) : "memory");
    }
  }
}
__device__ __forceinline__ void tma_load(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
      ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1) : "memory");
}
// lands at offset `dst` of every CTA in `mask`, completing bytes on the barrier at `bar` of each
__device__ __forceinline__ void tma_load_mc(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1,
                                            uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%4, %5}], [%2], %3;"
      ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "h"(mask), "r"(c0), "r"(c1) : "memory");
}
__device__ __forceinline__ void cluster_sync_all() {   // every thread of every CTA of the cluster
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}
// wgmma shared-memory matrix descriptor: start >> 4 in [0,14), LBO >> 4 in [16,30), SBO >> 4 in
// [32,46), base offset 0 (every swizzle atom is 1024-byte aligned), layout 1 = 128-byte swizzle in [62,64)
__device__ __forceinline__ uint64_t make_desc(uint32_t saddr, uint32_t lbo, uint32_t sbo) {
  return static_cast<uint64_t>((saddr & 0x3FFFF) >> 4) | (static_cast<uint64_t>(lbo >> 4) << 16) |
         (static_cast<uint64_t>(sbo >> 4) << 32) | (1ull << 62);
}

#define WG_REGS64                                                                    \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "           \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define WG_REGS128                                                                                       \
  WG_REGS64 ", "                                                                                         \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "                     \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "                     \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "         \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define WG_F8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), \
                 "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define WG_F64(i) WG_F8(i), WG_F8(i + 8), WG_F8(i + 16), WG_F8(i + 24), \
                  WG_F8(i + 32), WG_F8(i + 40), WG_F8(i + 48), WG_F8(i + 56)

// D(64 x BN, fp32) (+)= A(64 x 16, smem desc) * B(16 x BN, smem desc); scale_d == 0: D = A * B
template <int BN, int TRANS_B>
__device__ __forceinline__ void wgmma(float (&d)[BN / 2], uint64_t da, uint64_t db, int scale_d) {
  if constexpr (BN == 256) {
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %130, 0;\n"
        " wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {" WG_REGS128 "}, %128, %129, p, 1, 1, 0, %131;\n}"
        : WG_F64(0), WG_F64(64)
        : "l"(da), "l"(db), "r"(scale_d), "n"(TRANS_B));
  } else {
    static_assert(BN == 128, "BN: 128 or 256");
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %66, 0;\n"
        " wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {" WG_REGS64 "}, %64, %65, p, 1, 1, 0, %67;\n}"
        : WG_F64(0)
        : "l"(da), "l"(db), "r"(scale_d), "n"(TRANS_B));
  }
}
template <int N>
__device__ __forceinline__ void fence_operands(float (&d)[N]) {   // pins the accumulators in place
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory"); }

// ---------------------------------------------------------------- the kernel
template <int BN>
constexpr int smem_bytes() { return STAGES * (BM * BK + BK * BN) * 2 + 2 * STAGES * 8 + 1024; }

// B_NK: B given as [N, K] (K-major); else row-major [K, N] (MN-major in shared memory)
template <int BN, int CLUSTER, bool B_NK>
__global__ void __launch_bounds__(NTHREADS, 1)
gemm_wgmma(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
           __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  constexpr uint32_t A_BYTES = BM * BK * 2;               // 16 KB: 128 rows of 128 bytes
  constexpr uint32_t B_BYTES = BK * BN * 2;               // 32 / 16 KB
  constexpr uint32_t STAGE_BYTES = A_BYTES + B_BYTES;     // multiple of 1024: every box stays atom-aligned
  constexpr int BKS = BK / CLUSTER;                       // kn: the K rows of each B box this CTA loads
  constexpr int BNS = BN / CLUSTER;                       // nk: the N rows of the B box this CTA loads
  extern __shared__ uint8_t smem_raw[];
  // 128-byte swizzle atoms are 1024 bytes: align the ring (the same offset in every CTA of a cluster)
  const uint32_t base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const uint32_t bars = base + STAGES * STAGE_BYTES;
  auto full = [&](int s) { return bars + 8u * s; };
  auto empty = [&](int s) { return bars + 8u * (STAGES + s); };

  const int TN = (N + BN - 1) / BN, TMT = (M + BM - 1) / BM, KT = (K + BK - 1) / BK;
  const int rank = static_cast<int>(blockIdx.x % CLUSTER);  // == %cluster_ctarank for cluster dims (CLUSTER,1,1)
  const int cid = blockIdx.x / CLUSTER, NCL = gridDim.x / CLUSTER;
  const int TILES = (TMT + CLUSTER - 1) / CLUSTER * TN;     // work items: a cluster's CLUSTER tiles

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full(s), 1);                                 // the producer's arrive.expect_tx
      mbar_init(empty(s), CONSUMERS * 4 * CLUSTER);          // one per consumer warp of each CTA
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(&tmA)) : "memory");
    asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(&tmB)) : "memory");
  }
  __syncthreads();
  if constexpr (CLUSTER > 1) cluster_sync_all();            // the partner's barriers exist before multicasts

  const int wg = threadIdx.x / 128;
  if (wg == 0) {
    // ------------------------------------------------------------ producer
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(PRODUCER_REGS));
    if (threadIdx.x == 0) {
      uint32_t g = 0;
      for (int t = cid; t < TILES; t += NCL) {
        const int tm = t / TN * CLUSTER + rank, tn = t % TN;
        const int tma = tm < TMT ? tm : TMT - 1;              // past-the-edge row of a cluster: loads, stores none
        for (int kt = 0; kt < KT; ++kt, ++g) {
          const int s = g % STAGES;
          if (g >= STAGES) mbar_wait(empty(s), (g / STAGES - 1) & 1);   // its last use is released
          const uint32_t sA = base + s * STAGE_BYTES, sB = sA + A_BYTES;
          mbar_expect_tx(full(s), STAGE_BYTES);               // A + the whole B box (both halves)
          tma_load(sA, &tmA, full(s), kt * BK, tma * BM);
          if constexpr (!B_NK) {
#pragma unroll
            for (int c = 0; c < BN / 64; ++c) {               // 64-column boxes, BK rows each (this CTA: BKS)
              const uint32_t dst = sB + c * (BK * 128) + rank * (BKS * 128);
              const int c0 = tn * BN + c * 64, c1 = kt * BK + rank * BKS;
              if constexpr (CLUSTER == 1) tma_load(dst, &tmB, full(s), c0, c1);
              else tma_load_mc(dst, &tmB, full(s), c0, c1, (1u << CLUSTER) - 1);
            }
          } else {
            const uint32_t dst = sB + rank * (BNS * 128);
            const int c0 = kt * BK, c1 = tn * BN + rank * BNS;
            if constexpr (CLUSTER == 1) tma_load(dst, &tmB, full(s), c0, c1);
            else tma_load_mc(dst, &tmB, full(s), c0, c1, (1u << CLUSTER) - 1);
          }
        }
      }
    }
  } else {
    // ------------------------------------------------------------ consumers
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(CONSUMER_REGS));
    const int cw = wg - 1, warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    float d[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) d[i] = 0.f;
    uint32_t g = 0;
    for (int t = cid; t < TILES; t += NCL) {
      const int tm = t / TN * CLUSTER + rank, tn = t % TN;
      for (int kt = 0; kt < KT; ++kt, ++g) {
        const int s = g % STAGES;
        mbar_wait(full(s), (g / STAGES) & 1);
        const uint32_t sA = base + s * STAGE_BYTES + cw * (64 * 128), sB = base + s * STAGE_BYTES + A_BYTES;
        fence_operands(d);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
          // A: K-major, rows of 128 bytes, 8-row groups 1024 bytes apart (SBO); k16 step = 32 bytes
          const uint64_t da = make_desc(sA + kk * 32, 16, 1024);
          if constexpr (B_NK) {       // B: K-major like A
            wgmma<BN, 0>(d, da, make_desc(sB + kk * 32, 16, 1024), kt > 0 || kk > 0);
          } else {                    // B: MN-major; LBO = next 64-column box (BK rows of 128 bytes),
                                      // SBO = next 8 K rows (1024 bytes); k16 step = 16 rows = 2048 bytes
            wgmma<BN, 1>(d, da, make_desc(sB + kk * 2048, BK * 128, 1024), kt > 0 || kk > 0);
          }
        }
        wgmma_commit();
        fence_operands(d);
        wgmma_wait<1>();                                      // the k-tile before is done: free its stage
        if (kt > 0 && lane == 0) mbar_release<CLUSTER>(empty((g + STAGES - 1) % STAGES));
      }
      wgmma_wait<0>();
      fence_operands(d);
      if (lane == 0) mbar_release<CLUSTER>(empty((g + STAGES - 1) % STAGES));
      // epilogue: fragment d[4j + {0,1}] -> row r0, cols 8j + 2(lane%4) + {0,1}; d[4j + {2,3}] -> row r0 + 8
      const int r0 = tm * BM + cw * 64 + warp * 16 + lane / 4;
      const int cbase = tn * BN + (lane % 4) * 2;
      __nv_bfloat162* row0 = reinterpret_cast<__nv_bfloat162*>(C + static_cast<size_t>(r0) * N);
      __nv_bfloat162* row1 = reinterpret_cast<__nv_bfloat162*>(C + static_cast<size_t>(r0 + 8) * N);
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        const int c = cbase + j * 8;
        if (c < N) {
          if (r0 < M) row0[c / 2] = __floats2bfloat162_rn(d[4 * j], d[4 * j + 1]);
          if (r0 + 8 < M) row1[c / 2] = __floats2bfloat162_rn(d[4 * j + 2], d[4 * j + 3]);
        }
      }
    }
  }
  // no CTA may leave while its partner can still multicast into it or arrive on its barriers
  if constexpr (CLUSTER > 1) cluster_sync_all();
}

// ---------------------------------------------------------------- init, reference, check
__global__ void init_bf16(__nv_bfloat16* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull ^ (static_cast<uint64_t>(seed) << 32);
    h ^= h >> 31; h *= 0xBF58476D1CE4E5B9ull; h ^= h >> 29;
    p[i] = __float2bfloat16(static_cast<float>(static_cast<int>(h % 17) - 8) * 0.125f);  // exact in bf16
  }
}
// R = A * B in fp32 (16 x 16 tiles through shared memory); B_NK: B is [N, K]
template <bool B_NK>
__global__ void ref_gemm(const __nv_bfloat16* A, const __nv_bfloat16* B, float* R, int M, int N, int K) {
  __shared__ float As[16][17], Bs[16][17];
  const int tx = threadIdx.x, ty = threadIdx.y, m = blockIdx.y * 16 + ty, n = blockIdx.x * 16 + tx;
  float acc = 0.f;
  for (int k0 = 0; k0 < K; k0 += 16) {
    As[ty][tx] = (m < M && k0 + tx < K) ? __bfloat162float(A[static_cast<size_t>(m) * K + k0 + tx]) : 0.f;
    if (B_NK) {   // Bs[k][n]: read along K (coalesced), store transposed
      const int nb = blockIdx.x * 16 + ty;
      Bs[tx][ty] = (nb < N && k0 + tx < K) ? __bfloat162float(B[static_cast<size_t>(nb) * K + k0 + tx]) : 0.f;
    } else {
      Bs[ty][tx] = (n < N && k0 + ty < K) ? __bfloat162float(B[static_cast<size_t>(k0 + ty) * N + n]) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < 16; ++kk) acc += As[ty][kk] * Bs[kk][tx];
    __syncthreads();
  }
  if (m < M && n < N) R[static_cast<size_t>(m) * N + n] = acc;
}
// max over elements of |C - R| / max(|R|, 1/64) (nonzero R are multiples of 1/64); NaN / Inf -> 3e38
__global__ void max_rel_err(const __nv_bfloat16* C, const float* R, size_t n, unsigned* out) {
  float e = 0.f;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float c = __bfloat162float(C[i]), r = R[i];
    float x = fabsf(c - r) / fmaxf(fabsf(r), 1.f / 64);
    if (!(x <= 3e38f)) x = 3e38f;
    e = fmaxf(e, x);
  }
  for (int o = 16; o > 0; o /= 2) e = fmaxf(e, __shfl_xor_sync(0xffffffffu, e, o));
  if ((threadIdx.x & 31) == 0) atomicMax(out, __float_as_uint(e));   // non-negative floats order as uints
}

// ---------------------------------------------------------------- host
#define CK(call)                                                                                   \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__, __LINE__,    \
              cudaGetErrorString(e_));                                                             \
      exit(2);                                                                                     \
    }                                                                                              \
  } while (0)

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// a 2-D bf16 tensor map: rows x cols row-major (cols contiguous), box box_rows x box_cols, 128-byte swizzle
CUtensorMap make_map(const void* p, uint64_t rows, uint64_t cols, uint32_t box_rows, uint32_t box_cols) {
  CUtensorMap m;
  std::memset(&m, 0, sizeof m);
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {cols * 2};
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t estr[2] = {1, 1};
  const CUresult r = cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(p), dims,
                                            strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                            CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);   // OOB -> zeros
  if (r != CUDA_SUCCESS) {
    fprintf(stderr, "cuTensorMapEncodeTiled failed (%d): rows %llu cols %llu box %u x %u\n", static_cast<int>(r),
            static_cast<unsigned long long>(rows), static_cast<unsigned long long>(cols), box_rows, box_cols);
    exit(2);
  }
  return m;
}

struct Problem {
  int M, N, K, bn, cluster, reps;
  bool b_nk;
  __nv_bfloat16 *A, *B, *C;
  cudaStream_t stream;
  int sms;
};
struct Timing {
  double us_events, us_graph;
};

template <int BN, int CLUSTER, bool B_NK>
Timing run(const Problem& p) {
  auto kernel = gemm_wgmma<BN, CLUSTER, B_NK>;
  constexpr int smem = smem_bytes<BN>();
  CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const CUtensorMap tmA = make_map(p.A, p.M, p.K, BM, BK);
  const CUtensorMap tmB = B_NK ? make_map(p.B, p.N, p.K, BN / CLUSTER, BK)    // [N, K]: box BN/CL x 64
                               : make_map(p.B, p.K, p.N, BK / CLUSTER, 64);   // [K, N]: box BK/CL x 64

  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = CLUSTER;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.blockDim = dim3(NTHREADS);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = p.stream;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  int grid = p.sms / CLUSTER * CLUSTER;
  if (CLUSTER > 1) {   // only the clusters that fit at once: a persistent grid must not run in two waves
    int fit = 0;
    cfg.gridDim = dim3(grid);
    if (cudaOccupancyMaxActiveClusters(&fit, kernel, &cfg) == cudaSuccess && fit > 0 && fit * CLUSTER < grid)
      grid = fit * CLUSTER;
    (void)cudaGetLastError();
    fprintf(stderr, "gemm_wgmma_twin: at most %d clusters of %d at once\n", fit, CLUSTER);
  }
  if (const char* e = getenv("WGMMA_GRID")) grid = atoi(e) / CLUSTER * CLUSTER;
  if (grid < CLUSTER) grid = CLUSTER;
  cfg.gridDim = dim3(grid);
  fprintf(stderr, "gemm_wgmma_twin: grid %d x %d threads, cluster %d, smem %d B, B layout %s\n", grid, NTHREADS,
          CLUSTER, smem, B_NK ? "nk ([N,K], K-major)" : "kn ([K,N] row-major)");

  auto launch = [&]() { CK(cudaLaunchKernelEx(&cfg, kernel, tmA, tmB, p.C, p.M, p.N, p.K)); };
  for (int i = 0; i < 3; ++i) launch();
  CK(cudaStreamSynchronize(p.stream));

  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  float ms = 0.f;
  CK(cudaEventRecord(e0, p.stream));
  for (int i = 0; i < p.reps; ++i) launch();
  CK(cudaEventRecord(e1, p.stream));
  CK(cudaEventSynchronize(e1));
  CK(cudaEventElapsedTime(&ms, e0, e1));
  Timing t;
  t.us_events = 1e3 * ms / p.reps;

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CK(cudaStreamBeginCapture(p.stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < p.reps; ++i) launch();
  CK(cudaStreamEndCapture(p.stream, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  CK(cudaGraphLaunch(exec, p.stream));   // warm
  CK(cudaStreamSynchronize(p.stream));
  CK(cudaEventRecord(e0, p.stream));
  CK(cudaGraphLaunch(exec, p.stream));
  CK(cudaEventRecord(e1, p.stream));
  CK(cudaEventSynchronize(e1));
  CK(cudaEventElapsedTime(&ms, e0, e1));
  t.us_graph = 1e3 * ms / p.reps;
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  return t;
}

template <int BN, int CLUSTER>
Timing run_layout(const Problem& p) { return p.b_nk ? run<BN, CLUSTER, true>(p) : run<BN, CLUSTER, false>(p); }

Timing dispatch(const Problem& p) {
  if (p.bn == 256) return p.cluster == 2 ? run_layout<256, 2>(p) : run_layout<256, 1>(p);
  return p.cluster == 2 ? run_layout<128, 2>(p) : run_layout<128, 1>(p);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s M N K [BN=256|128] [CLUSTER=1|2] [reps=20] [kn|nk]\n", argv[0]);
    return 1;
  }
  Problem p{};
  p.M = atoi(argv[1]);
  p.N = atoi(argv[2]);
  p.K = atoi(argv[3]);
  p.bn = argc > 4 ? atoi(argv[4]) : 256;
  p.cluster = argc > 5 ? atoi(argv[5]) : 1;
  p.reps = argc > 6 ? atoi(argv[6]) : 20;
  p.b_nk = argc > 7 && std::strcmp(argv[7], "nk") == 0;
  if (argc > 7 && !p.b_nk && std::strcmp(argv[7], "kn") != 0) {
    fprintf(stderr, "B layout: kn or nk\n");
    return 1;
  }
  if (p.M <= 0 || p.N <= 0 || p.K <= 0 || p.N % 8 || p.K % 8 || (p.bn != 128 && p.bn != 256) ||
      (p.cluster != 1 && p.cluster != 2) || p.reps <= 0) {
    fprintf(stderr, "need M, N, K > 0, N and K multiples of 8 (TMA), BN 128|256, CLUSTER 1|2, reps > 0\n");
    return 1;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  if (prop.major != 9) {
    fprintf(stderr, "needs a Hopper GPU (sm_90); found %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
    return 2;
  }
  p.sms = prop.multiProcessorCount;
  fprintf(stderr, "gemm_wgmma_twin: %s, %d SMs\n", prop.name, p.sms);
  const size_t nA = static_cast<size_t>(p.M) * p.K, nB = static_cast<size_t>(p.K) * p.N,
               nC = static_cast<size_t>(p.M) * p.N;
  float* R;
  unsigned* err;
  CK(cudaMalloc(&p.A, nA * 2));
  CK(cudaMalloc(&p.B, nB * 2));
  CK(cudaMalloc(&p.C, nC * 2));
  CK(cudaMalloc(&R, nC * 4));
  CK(cudaMalloc(&err, 4));
  CK(cudaStreamCreateWithFlags(&p.stream, cudaStreamNonBlocking));
  init_bf16<<<1024, 256, 0, p.stream>>>(p.A, nA, 1);
  init_bf16<<<1024, 256, 0, p.stream>>>(p.B, nB, 2);
  CK(cudaMemsetAsync(p.C, 0, nC * 2, p.stream));
  CK(cudaGetLastError());

  const Timing t = dispatch(p);

  const dim3 rgrid((p.N + 15) / 16, (p.M + 15) / 16);
  if (p.b_nk) ref_gemm<true><<<rgrid, dim3(16, 16), 0, p.stream>>>(p.A, p.B, R, p.M, p.N, p.K);
  else ref_gemm<false><<<rgrid, dim3(16, 16), 0, p.stream>>>(p.A, p.B, R, p.M, p.N, p.K);
  CK(cudaMemsetAsync(err, 0, 4, p.stream));
  max_rel_err<<<2 * p.sms, 256, 0, p.stream>>>(p.C, R, nC, err);
  CK(cudaGetLastError());
  unsigned bits = 0;
  CK(cudaMemcpyAsync(&bits, err, 4, cudaMemcpyDeviceToHost, p.stream));
  CK(cudaStreamSynchronize(p.stream));
  float e;
  std::memcpy(&e, &bits, 4);
  const bool ok = e < 1e-2f;
  const double tflops = 2.0 * p.M * p.N * p.K / (t.us_graph * 1e-6) / 1e12;
  fprintf(stderr, "m,n,k,bn,cluster,time_us_events,time_us_graph,tflops_graph,max_rel_err,ok\n");
  printf("%d,%d,%d,%d,%d,%.3f,%.3f,%.2f,%.3e,%d\n", p.M, p.N, p.K, p.bn, p.cluster, t.us_events, t.us_graph,
         tflops, e, ok ? 1 : 0);
  CK(cudaFree(p.A));
  CK(cudaFree(p.B));
  CK(cudaFree(p.C));
  CK(cudaFree(R));
  CK(cudaFree(err));
  CK(cudaStreamDestroy(p.stream));
  return ok ? 0 : 3;
}
#endif  // GTSIM_WGMMA_TWIN
