#!/usr/bin/env bash
# The model's prediction for a library batch's GEMM points (issue 34), written before any model change
# that looks at the batch: validation/library_first_shot.sh GTSIM HW BATCH_DIR [SHAPE...]
# SHAPE = MxNxK (default: a sample of the square curve and the lm_head pair). Each shape is asked of
# `gtsim gemm` when the binary has it (the library-like selection), else of `gtsim waves` (the tool's
# answer before `gemm` existed: its default tile); the measured time is cublas_square.csv's or
# cublas_shapes.csv's. Writes BATCH_DIR/first_shot_gemm.csv (appends one row per shape as it goes).
set -euo pipefail
G=$1 HW=$2 DIR=$3; shift 3
SHAPES=("$@")
[ ${#SHAPES[@]} -gt 0 ] || SHAPES=(1792x1792x1792 1793x1793x1793 2048x2048x2048 2049x2049x2049 3072x3072x3072 4096x4096x4096 8192x50304x768 8192x50257x768)
OUT=$DIR/first_shot_gemm.csv
REV=${GTSIM_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
if "$G" --help | grep -qE "^  gemm "; then CMD=gemm; else CMD=waves; fi
[ -f "$OUT" ] || echo "m,n,k,measured_us,predicted_us,error_pct,command,kernel,tile,schedule,commit,host_s" > "$OUT"
for s in "${SHAPES[@]}"; do
  IFS=x read -r m n k <<< "$s"
  meas=$(python3 - "$DIR" "$m" "$n" "$k" <<'PY'
import csv, sys
d, m, n, k = sys.argv[1], *map(int, sys.argv[2:])
for f in ("cublas_square.csv", "cublas_shapes.csv"):
    try:
        for r in csv.DictReader(open(f"{d}/{f}")):
            if (int(r["m"]), int(r["n"]), int(r["k"])) == (m, n, k): print(r["time_us"]); sys.exit()
    except FileNotFoundError: pass
print("")
PY
)
  t0=$(date +%s.%N)
  if [ $CMD = gemm ]; then j=$("$G" gemm --hw "$HW" "$m" "$n" "$k" --json -); else
    j=$("$G" waves --hw "$HW" --gemm "${m}x${n}x${k}" --no-suggestions --json -); fi
  t1=$(date +%s.%N)
  python3 - "$m" "$n" "$k" "$meas" "$CMD" "$REV" "$(echo "$t1 - $t0" | bc)" "$j" >> "$OUT" <<'PY'
import json, sys
m, n, k, meas, cmd, rev, host, j = sys.argv[1:]
j = json.loads(j)
p = j["time_us"]
err = f"{(p / float(meas) - 1) * 100:.1f}" if meas else ""  # on throughput: measured / simulated - 1
print(f"{m},{n},{k},{meas},{p:.3f},{err},{cmd},{j.get('kernel', 'gemm_persistent')},{j.get('tile', '')},{j.get('schedule', '')},{rev},{float(host):.1f}")
PY
  tail -1 "$OUT"
done
