#!/usr/bin/env bash
# Builds validation/cuda/gtsim_twins with nvcc (no CMake needed), and writes the ptxas resource
# report (registers, shared memory, spills per kernel) next to it. Usage: build.sh [OUTDIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../build_twins}
mkdir -p "$out"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
# the application twins (apps.cu: driver; gemm*, elementwise*, softmax*, attention*: one app each);
# without apps.cu, apps_stub.cu stands in and none of the app files is built
if [ -f "$here/apps.cu" ]; then
  srcs=$(ls "$here"/*.cu | grep -v '/apps_stub\.cu$')
else
  srcs=$(ls "$here"/*.cu | grep -Ev '/(gemm|elementwise|softmax|attention)[^/]*\.cu$')
fi
: > "$out/ptxas.txt"
pids=()
for s in $srcs; do
  b=$(basename "$s" .cu)
  ( "$NVCC" -O3 -std=c++17 -arch=sm_90 -lineinfo -Xptxas -v -c "$s" -o "$out/$b.o" 2> "$out/$b.ptxas" \
      || { cat "$out/$b.ptxas" >&2; exit 1; } ) &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
for s in $srcs; do b=$(basename "$s" .cu); echo "== $b.cu" >> "$out/ptxas.txt"; cat "$out/$b.ptxas" >> "$out/ptxas.txt"; done
objs=$(for s in $srcs; do echo "$out/$(basename "$s" .cu).o"; done)
"$NVCC" -arch=sm_90 -o "$out/gtsim_twins" $objs -ldl
echo "built $out/gtsim_twins"
