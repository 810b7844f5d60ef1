// Shared pieces of the application twins (apps.cu: the driver run_apps and the checks; gemm.cu,
// gemm_fp32.cu, gemm_persistent.cu, elementwise.cu, softmax.cu, attention.cu: one application each).
// The twins are held-out validation only (never fitted to); see docs/measurements.md.
#pragma once

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
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(sa), "l"(gptr), "n"(BYTES), "r"(sz)
                 : "memory");
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
// the same with a shared-window byte address (precomputed offsets stay in registers)
__device__ __forceinline__ void ldsm_x4_a(uint32_t (&r)[4], uint32_t a) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}
__device__ __forceinline__ void ldsm_x4_t_a(uint32_t (&r)[4], uint32_t a) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}
__device__ __forceinline__ void mma_bf16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

inline int lowbit(int x) { return x & -x; }

// gemm_tiled's shared-tile swizzles (gemm.cu; mma_shared.cu runs the same tiles): 16-byte chunks of
// 8 bf16 XOR-swizzled. swz_a: a [rows][32] tile (A, or Bt when B is given as [N][K]), 4 chunks per
// row, chunk ^ (row / 2) % 4; swz_b: a [32][128] tile (B), 16 chunks per row, chunk ^ row % 8.
constexpr int kSwzK = 32, kSwzN = 128;  // the tiles' row lengths (gemm_tiled's BK and BN)
__device__ __forceinline__ int swz_a(int row, int col) {
  return row * kSwzK + (((col >> 3) ^ ((row >> 1) & 3)) << 3) + (col & 7);
}
__device__ __forceinline__ int swz_b(int row, int col) {
  return row * kSwzN + (((col >> 3) ^ (row & 7)) << 3) + (col & 7);
}

// ---------------------------------------------------------------- shared host helpers (apps.cu)
// relative L2 error of x against the fp32 reference (INFINITY when x holds a non-finite value)
double rel_err_bf16(const bf16* x, const float* ref, size_t n, double* nonfinite);
double rel_err_f32(const float* x, const float* ref, size_t n, double* nonfinite);
void fill_bf16(bf16* p, size_t n, uint32_t seed);                        // uniform [-1, 1), bf16
void fill_range(float* p, size_t n, float lo, float hi, uint32_t seed);  // uniform [lo, hi)
// fp32 reference C = alpha * A B (A [M][K]; B [K][N] row-major, or bt: [N][K])
void gemm_ref_bf16(const bf16* A, const bf16* B, float* C, int M, int N, int K, bool bt, float alpha);

// ---------------------------------------------------------------- the data-parallel gemm (gemm.cu)
struct GemmArgs {
  const bf16* A;
  const bf16* B;  // B[K][N] row-major, or (BT) Bt[N][K] row-major
  void* C;
  int M, N, K;
  long long sA, sB, sC;  // batch strides (elements), blockIdx.z
  float alpha;
};
// bt: B given as [N][K] (attention's Q K^T); outf32: fp32 output (else bf16)
void launch_gemm(const GemmArgs& p, int batch, bool bt, bool outf32);
// softmax rows (softmax.cu): P = softmax(scale * S) per row of T in {1024, 2048, 4096}
void launch_softmax_f32(const float* S, float* P, int rows, int T, float scale);
void launch_softmax_bf16(const float* S, bf16* P, int rows, int T, float scale);

// ---------------------------------------------------------------- the points (one file each)
void gemm_point(int M, int N, int K, const char* sweep);             // gemm.cu
void gemm_fp32_point(int M, int N, int K, const char* sweep, bool store = true);        // gemm_fp32.cu
void gemm_persistent_point(int M, int N, int K, const char* sweep);  // gemm_persistent.cu
void elementwise_points(size_t n);                                   // elementwise.cu
void softmax_point(int rows, int T);                                 // softmax.cu
void attention_points(int BH, int T, bool flash_only = false);      // attention.cu
void attention_parts(int BH, int T);                                 // attention.cu: the naive launches one by one

}  // namespace twins
