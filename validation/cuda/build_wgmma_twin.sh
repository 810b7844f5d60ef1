#!/usr/bin/env bash
# Builds the standalone wgmma GEMM twin (validation/cuda/gemm_wgmma_twin.cu) for sm_90a.
# Usage: validation/cuda/build_wgmma_twin.sh OUTDIR   (run from the repository root)
# Writes OUTDIR/gemm_wgmma_twin and OUTDIR/gemm_wgmma_twin.ptxas (ptxas's register / spill report).
set -euo pipefail
out=${1:?usage: build_wgmma_twin.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
"$NVCC" -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -DGTSIM_WGMMA_TWIN -Xptxas -v \
  -o "$out/gemm_wgmma_twin" "$here/gemm_wgmma_twin.cu" -lcuda 2> "$out/gemm_wgmma_twin.ptxas" \
  || { cat "$out/gemm_wgmma_twin.ptxas" >&2; exit 1; }
grep -Ei 'warning|error' "$out/gemm_wgmma_twin.ptxas" >&2 || true
echo "built $out/gemm_wgmma_twin"
