// softmax twin: rows of a 4096 x 4096 fp32 matrix (uniform in [-8, 8)), one CTA (256 threads) per row,
// the row in registers (float4 per thread x T / 1024), two block reductions (max, sum) through 32 B of
// shared memory; checked against a double-accumulating reference. The bf16-output instantiation is
// naive attention's softmax. No IR kernel.
#include "apps.cuh"

namespace twins {

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
      *reinterpret_cast<uint2*>(P + e) =
          make_uint2(pack_bf16(v[k].x * inv, v[k].y * inv), pack_bf16(v[k].z * inv, v[k].w * inv));
  }
}
template <typename OutT>
static void launch_softmax_t(const float* S, OutT* P, int rows, int T, float scale) {
  switch (T) {
    case 1024:
      softmax_rows<1, OutT><<<rows, 256, 0, g.stream>>>(S, P, scale);
      break;
    case 2048:
      softmax_rows<2, OutT><<<rows, 256, 0, g.stream>>>(S, P, scale);
      break;
    case 4096:
      softmax_rows<4, OutT><<<rows, 256, 0, g.stream>>>(S, P, scale);
      break;
    default:
      std::fprintf(stderr, "softmax: T=%d unsupported\n", T);
      std::exit(5);
  }
}
void launch_softmax_f32(const float* S, float* P, int rows, int T, float scale) {
  launch_softmax_t(S, P, rows, T, scale);
}
void launch_softmax_bf16(const float* S, bf16* P, int rows, int T, float scale) {
  launch_softmax_t(S, P, rows, T, scale);
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

void softmax_point(int rows, int T) {
  const int sets = 4;  // 4 input/output sets (1 GiB) rotate so each launch starts from HBM
  size_t n = size_t(rows) * T;
  float *S, *P, *R;
  CK(cudaMalloc(&S, sets * n * 4));
  CK(cudaMalloc(&P, sets * n * 4));
  CK(cudaMalloc(&R, n * 4));
  fill_range(S, sets * n, -8.f, 8.f, uint32_t(rows * 31 + T));
  poison(P, sets * n * 4);
  Timing t = time_launches([&](int i) { launch_softmax_f32(S + (i % sets) * n, P + (i % sets) * n, rows, T, 1.0f); });
  for (int i = 0; i < sets; ++i) launch_softmax_f32(S + i * n, P + i * n, rows, T, 1.0f);
  softmax_ref<<<(rows + 127) / 128, 128>>>(S, R, rows, T, 1.0f);
  CKL();
  double nf = 0, err = rel_err_f32(P, R, n, &nf);
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

}  // namespace twins
