#!/usr/bin/env bash
# Sets up a fresh Debian machine, builds gtsim and runs the main job: a tiled bf16 tensor-core GEMM
# on the shipped A100 config, with its report (time, waves, bytes per level, where the time went).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
./build/cli/gtsim run --hw hw_configs/a100-40gb.yaml --kernel kernels_ir/lib/gemm_tiled.kir \
  --param M=2048 --param N=2048 --param K=2048
