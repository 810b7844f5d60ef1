// gemm_fp32 twin (kernels_ir/lib/gemm_fp32.kir): C[M,N] = A[M,K] B[K,N] in fp32 on the CUDA cores (no
// tensor cores), the classic SGEMM: CTA tile 128 x 128, k-step 8, 256 threads each computing an 8 x 8
// block of C (rows (tid / 16) * 8, columns (tid % 16) * 8) in 64 accumulators. Per k-step the CTA
// stages the A tile transposed (As[k][m]) and the B tile (Bs[k][n]) in static shared memory
// (2 x 8 x 128 x 4 B = 8192 B), no double buffering (bar.sync, 8 k of 2 + 2 ld.shared.v4 and 64 FFMA,
// bar.sync). VEC = 4 (16-byte global loads) when K and N are multiples of 4, else 1; edge tiles
// masked (zero fill). Checked against an fp32 reference with double accumulation.
#include "apps.cuh"

namespace twins {

constexpr int FBM = 128, FBN = 128, FBK = 8;

// kStore false (gemm_fp32_nostore, experiment b34 only): the epilogue stores nothing unless an
// accumulator holds a value the inputs cannot produce, so the math stays and the C stores go.
template <int VEC, bool kStore>
__device__ __forceinline__ void gemm_fp32_body(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ __align__(16) float As[FBK * FBM];  // transposed: As[k * FBM + m]
  __shared__ __align__(16) float Bs[FBK * FBN];
  const int m0 = blockIdx.y * FBM, n0 = blockIdx.x * FBN;
  const int tm = threadIdx.x / 16 * 8, tn = threadIdx.x % 16 * 8;
  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;
  const int KT = (K + FBK - 1) / FBK;
  for (int kt = 0; kt < KT; ++kt) {
    const int k0 = kt * FBK;
#pragma unroll
    for (int c = 0; c < 4 / VEC; ++c) {  // A tile (BM x BK) and B tile (BK x BN): 4 elements per thread
      const int q = (c * 256 + threadIdx.x) * VEC;
      const int ar = q / FBK, ac = q % FBK, br = q / FBN, bc = q % FBN;
      const bool oka = m0 + ar < M && k0 + ac < K, okb = k0 + br < K && n0 + bc < N;
      if constexpr (VEC == 4) {
        float4 a = oka ? *reinterpret_cast<const float4*>(A + size_t(m0 + ar) * K + k0 + ac) : make_float4(0, 0, 0, 0);
        float4 b = okb ? *reinterpret_cast<const float4*>(B + size_t(k0 + br) * N + n0 + bc) : make_float4(0, 0, 0, 0);
        As[(ac + 0) * FBM + ar] = a.x;
        As[(ac + 1) * FBM + ar] = a.y;
        As[(ac + 2) * FBM + ar] = a.z;
        As[(ac + 3) * FBM + ar] = a.w;
        *reinterpret_cast<float4*>(Bs + br * FBN + bc) = b;
      } else {
        As[ac * FBM + ar] = oka ? A[size_t(m0 + ar) * K + k0 + ac] : 0.f;
        Bs[br * FBN + bc] = okb ? B[size_t(k0 + br) * N + n0 + bc] : 0.f;
      }
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < FBK; ++k) {
      float4 a0 = *reinterpret_cast<const float4*>(As + k * FBM + tm);
      float4 a1 = *reinterpret_cast<const float4*>(As + k * FBM + tm + 4);
      float4 b0 = *reinterpret_cast<const float4*>(Bs + k * FBN + tn);
      float4 b1 = *reinterpret_cast<const float4*>(Bs + k * FBN + tn + 4);
      const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int r = m0 + tm + i;
#pragma unroll
    for (int j = 0; j < 8 / VEC; ++j) {
      const int c = n0 + tn + j * VEC;
      if (r >= M || c >= N) continue;
      if (!kStore && acc[i][4 * j % 8] != -12345.f) continue;
      if constexpr (VEC == 4)
        *reinterpret_cast<float4*>(C + size_t(r) * N + c) =
            make_float4(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2], acc[i][4 * j + 3]);
      else
        C[size_t(r) * N + c] = acc[i][j];
    }
  }
}

// reference: one thread per element, double accumulation
template <int VEC>
__global__ void __launch_bounds__(256) gemm_fp32(const float* A, const float* B, float* C, int M, int N, int K) {
  gemm_fp32_body<VEC, true>(A, B, C, M, N, K);
}

__global__ void __launch_bounds__(256) gemm_fp32_nostore(const float* A, const float* B, float* C, int M, int N, int K) {
  gemm_fp32_body<4, false>(A, B, C, M, N, K);
}

__global__ void gemm_ref_f32(const float* A, const float* B, float* C, int M, int N, int K) {
  int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y;
  if (c >= N) return;
  double s = 0;
  for (int k = 0; k < K; ++k) s += double(A[size_t(r) * K + k]) * double(B[size_t(k) * N + c]);
  C[size_t(r) * N + c] = float(s);
}

static int fp32_vec(int K, int N) { return K % 4 == 0 && N % 4 == 0 ? 4 : 1; }

void gemm_fp32_point(int M, int N, int K, const char* sweep, bool store) {
  float *A, *B, *C, *R;
  CK(cudaMalloc(&A, size_t(M) * K * 4));
  CK(cudaMalloc(&B, size_t(K) * N * 4));
  CK(cudaMalloc(&C, size_t(M) * N * 4));
  CK(cudaMalloc(&R, size_t(M) * N * 4));
  uint32_t seed = uint32_t(M * 131 + N * 7 + K) ^ 0x5eedu;
  fill_range(A, size_t(M) * K, -1.f, 1.f, seed);
  fill_range(B, size_t(K) * N, -1.f, 1.f, seed + 1);
  poison(C, size_t(M) * N * 4);
  const int vec = fp32_vec(K, N);
  dim3 grid((N + FBN - 1) / FBN, (M + FBM - 1) / FBM);
  Timing t = time_launches([&](int) {
    if (!store)
      gemm_fp32_nostore<<<grid, 256, 0, g.stream>>>(A, B, C, M, N, K);
    else if (vec == 4)
      gemm_fp32<4><<<grid, 256, 0, g.stream>>>(A, B, C, M, N, K);
    else
      gemm_fp32<1><<<grid, 256, 0, g.stream>>>(A, B, C, M, N, K);
  });
  if (!store) gemm_fp32<4><<<grid, 256, 0, g.stream>>>(A, B, C, M, N, K);  // C for the check
  CKL();
  gemm_ref_f32<<<dim3((N + 255) / 256, M), 256>>>(A, B, R, M, N, K);
  CKL();
  double nf = 0, err = rel_err_f32(C, R, size_t(M) * N, &nf);
  bool ok = err < 1e-4;  // fp32 accumulation over K = 4096: ~5e-6 expected
  double flops = 2.0 * M * N * K;
  Row r = base_row("gemm_fp32", sweep);
  r.set("M", M).set("N", N).set("K", K).set("vec", vec).set("grid_x", int(grid.x)).set("grid_y", int(grid.y));
  r.set("block", 256).set("smem_bytes", int((FBM * FBK + FBK * FBN) * 4));
  r.set("tflops", flops / (t.median_us * 1e6)).set("rel_err", err).set("nonfinite", nf);
  emit("gemm_fp32", r.set("check", ok ? "ok" : "FAIL"), &t);
  log("gemm_fp32 %s %dx%dx%d vec %d: %.1f us %.1f TFLOP/s err %.2e %s\n", sweep, M, N, K, vec, t.median_us,
      flops / (t.median_us * 1e6), err, ok ? "ok" : "FAIL");
  for (float* p : {A, B, C, R}) CK(cudaFree(p));
}

}  // namespace twins
