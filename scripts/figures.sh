#!/usr/bin/env bash
# Regenerates every figure under docs/figures/ (each is also shown, with its command, in README.md,
# docs/architecture.md or a tutorial): small sizes, about two minutes on two cores. Each command
# writes NAME.svg with its numbers (NAME.dat) and gnuplot script (NAME.gp) beside it.
#   scripts/figures.sh [GTSIM] [OUT]   (defaults: build/cli/gtsim, docs/figures; OUT gets the same
#                                       file names, so a test can regenerate into a temp folder)
set -euo pipefail
cd "$(dirname "$0")/.."
GTSIM=${1:-build/cli/gtsim}
OUT=${2:-docs/figures}
mkdir -p "$OUT"
run() {  # the documented command, its --plot path moved from docs/figures to OUT
  local t0=$SECONDS args=() prev=
  for a in "$@"; do
    [[ $prev == --plot ]] && a="$OUT/$(basename "$a")"
    args+=("$a")
    prev=$a
  done
  "$GTSIM" "${args[@]}" > /dev/null
  echo "  $((SECONDS - t0)) s: gtsim $*" >&2
}

# Two lanes at once (two cores): the waves range, and the other three.
(
  # P10: the wave staircase over N, with the padded alternatives of one shape
  run waves --hw hw_configs/h200-sxm.yaml --gemm 2304x1920x128 --tile 256x128 --range N=1024:4608:512 --plot docs/figures/waves.svg
) &
lane=$!
# P2: the roofline with each kernel of a workload placed
run roofline --hw hw_configs/h200-sxm.yaml --workload docs/figures/mlp_small.yaml --plot docs/figures/roofline.svg
# P9: throughput against n, each point coloured by the largest power of two dividing n
run sweep --hw hw_configs/h200-sxm.yaml --kernel kernels_ir/lib/gemm_tiled.kir --param M,N,K=248:264 --threads 2 --csv /dev/null --plot docs/figures/sweep_alignment.svg
# P13: per-op bars per machine, device time and launch/dispatch
run compare --workload docs/figures/mlp_small.yaml --hw hw_configs/a100-40gb.yaml --hw hw_configs/tpu-v5e.yaml --plot docs/figures/compare.svg
wait "$lane"
