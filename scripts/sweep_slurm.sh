#!/usr/bin/env bash
# gtsim sweep as a Slurm job array: each array task runs one shard (--shard I/N, I = the task id,
# N = the array's size), and the last step merges the shards into the CSV one unsharded sweep writes.
#
#   sbatch --array=0-15 scripts/sweep_slurm.sh OUT_DIR -- --hw hw_configs/a100-40gb.yaml \
#          --kernel kernels_ir/lib/gemm_tiled.kir --param M,N,K=64:4096
#   # when every task has finished:
#   scripts/sweep_slurm.sh --merge OUT_DIR curve.csv
#
# Outside Slurm, SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT can be set by hand to run one shard.
# GTSIM (default build/cli/gtsim) names the binary. Every shard is deterministic: the merged CSV is
# byte-identical to `gtsim sweep` run in one process with any --threads.
#SBATCH --job-name=gtsim-sweep
#SBATCH --cpus-per-task=1
#SBATCH --output=gtsim-sweep-%A_%a.log
set -euo pipefail
G=${GTSIM:-build/cli/gtsim}
if [ "${1:-}" = "--merge" ]; then
  [ $# -eq 3 ] || { echo "usage: $0 --merge OUT_DIR CSV" >&2; exit 2; }
  exec "$G" merge --csv "$3" "$2"/shard-*.csv
fi
[ $# -ge 2 ] && [ "$2" = "--" ] || { echo "usage: $0 OUT_DIR -- SWEEP_ARGS... (or --merge OUT_DIR CSV)" >&2; exit 2; }
out=$1
shift 2
i=${SLURM_ARRAY_TASK_ID:?run under sbatch --array, or set SLURM_ARRAY_TASK_ID}
n=${SLURM_ARRAY_TASK_COUNT:?run under sbatch --array, or set SLURM_ARRAY_TASK_COUNT}
mkdir -p "$out"
exec "$G" sweep "$@" --shard "$i/$n" --threads "${SLURM_CPUS_PER_TASK:-1}" --no-progress --csv "$out/shard-$i.csv"
