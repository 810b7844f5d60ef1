#!/usr/bin/env bash
# One device call, from the repository root on the device machine (issue 34's library batch):
#   validation/cuda/run_library.sh BATCH
# times cuBLAS's bf16 GEMM (every square n 64..4096, LLM and skinny shapes, a cold-L2 sample) and
# PyTorch's attention (SDPA backends, eager naive attention) with validation/cuda/library_batch.py,
# then names the kernels the libraries pick with Nsight Compute (library_ncu.py; cache control on,
# clock control off). Everything lands in $OUT/data_BATCH.tar.gz with the log as run.log.
set -uo pipefail
BATCH=${1:-b45}
source "$(dirname "${BASH_SOURCE[0]}")/device_lib.sh"
device_info
run python3 validation/cuda/library_batch.py "$D"
pack
run timeout 240 ncu --clock-control none --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_static,dram__bytes_read.sum,dram__bytes_write.sum \
  --csv --log-file "$D/ncu_library.csv" python3 validation/cuda/library_ncu.py > "$D/problems.csv" 2> "$D/ncu_library.err"
tail -c 400 "$D/ncu_library.err"; wc -l "$D/ncu_library.csv" "$D/problems.csv"
pack
echo "== summary"
python3 - "$D" <<'PY'
import csv, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(f"{d}/cublas_square.csv")))
for r in rows:
    if int(r["n"]) in (64, 256, 512, 1024, 1792, 1793, 2048, 2049, 3072, 4096): print("sq", r["n"], r["time_us"], r["tflops"])
for f in ("cublas_shapes.csv", "attention.csv"):
    for r in csv.DictReader(open(f"{d}/{f}")): print(f[:-4], *r.values())
PY
