#!/usr/bin/env bash
# One device call, from the repository root on the device machine (issue 34's library batch):
#   validation/cuda/run_library.sh BATCH [GTSIM_DIR]
# times cuBLAS's bf16 GEMM (every square n 64..4096, LLM and skinny shapes, a cold-L2 sample) and
# PyTorch's attention (SDPA backends, eager naive attention) with validation/cuda/library_batch.py,
# then names the kernels the libraries pick with Nsight Compute (library_ncu.py; cache control on,
# clock control off). When validation/cuda/gemm_wgmma_twin.cu is there, it is built (sm_90a) and run
# (twin_wgmma.csv: the twin of kernels_ir/lib/gemm_wgmma.kir). With GTSIM_DIR (a carried folder holding
# bin/gtsim and lib/ with its shared libraries), the model's first-shot prediction of a sample of the
# batch's GEMM points is computed on the machine's cores while the GPU measures (first_shot_gemm.csv,
# validation/library_first_shot.sh, one process per point). Everything lands in $OUT/data_BATCH.tar.gz
# with the log as run.log.
set -uo pipefail
BATCH=${1:-b45}
source "$(dirname "${BASH_SOURCE[0]}")/device_lib.sh"
device_info
GT=${2:-}
FS_PID=
if [ -n "$GT" ] && [ -x "$GT/bin/gtsim" ]; then  # the model's first shot, on the CPU cores, beside the GPU work
  export LD_LIBRARY_PATH=$GT/lib:${LD_LIBRARY_PATH:-} GTSIM_DATA=$PWD GTSIM_COMMIT=${GTSIM_COMMIT:-unknown}
  "$GT/bin/gtsim" --version || true
  FS_SHAPES=${FS_SHAPES:-}
  # the config of the GPU the batch runs on: an H200's own, else the H100's
  FS_HW=$PWD/hw_configs/h100-sxm.yaml
  nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && FS_HW=$PWD/hw_configs/h200-sxm.yaml
  echo "first shot on $FS_HW"
  ( mkdir -p /tmp/fs && cd /tmp/fs && for s in $FS_SHAPES; do echo "$s"; done |
      xargs -P 14 -I{} sh -c 'mkdir -p /tmp/fs/{} && cd /tmp/fs/{} && timeout ${FS_TIMEOUT:-240} bash '"$PWD"'/validation/library_first_shot.sh '"$GT"'/bin/gtsim '"$FS_HW"' /tmp/fs/{} {} > log 2>&1' ) &
  FS_PID=$!
fi
run python3 validation/cuda/library_batch.py "$D" ${N0:-64} ${N1:-4096}
pack
if [ -f validation/cuda/gemm_wgmma_twin.cu ] && [ "${TWIN:-1}" = 1 ]; then
  run bash validation/cuda/build_wgmma_twin.sh /tmp/twin && {
    cuobjdump --dump-sass /tmp/twin/gemm_wgmma_twin 2>/dev/null | grep -cE "HGMMA|UTMALDG" || true
    echo "m,n,k,bn,cluster,time_us_events,time_us_graph,tflops_graph,max_rel_err,ok" > "$D/twin_wgmma.csv"
    for a in "1024 1024 1024 256 1" "2048 2048 2048 256 1" "2048 2048 2048 256 2" "4096 4096 4096 256 1" \
             "4096 4096 4096 256 2" "4096 4096 4096 128 2" "8192 8192 8192 256 2"; do
      timeout 60 /tmp/twin/gemm_wgmma_twin $a 20 | tail -1 | tee -a "$D/twin_wgmma.csv"
    done
  }
  pack
fi
[ "${NCU:-1}" = 1 ] && run timeout ${NCU_TIMEOUT:-240} ncu --clock-control none --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_static,dram__bytes_read.sum,dram__bytes_write.sum \
  --csv --log-file "$D/ncu_library.csv" python3 validation/cuda/library_ncu.py > "$D/problems.csv" 2> "$D/ncu_library.err"
tail -c 400 "$D/ncu_library.err"; wc -l "$D/ncu_library.csv" "$D/problems.csv"
pack
if [ -n "$FS_PID" ]; then
  wait "$FS_PID"
  for f in /tmp/fs/*/first_shot_gemm.csv; do tail -n +2 "$f"; done | sort -t, -k1,1n -k2,2n > /tmp/fs_rows.csv
  { head -1 "$(ls /tmp/fs/*/first_shot_gemm.csv | head -1)"; cat /tmp/fs_rows.csv; } > "$D/first_shot_gemm.csv"
  cat "$D/first_shot_gemm.csv"
  for f in /tmp/fs/*/log; do grep -l -iE "error|timeout" "$f" && tail -3 "$f"; done
  pack
fi
echo "== summary"
python3 - "$D" <<'PY'
import csv, sys
d = sys.argv[1]
import os
rows = list(csv.DictReader(open(f"{d}/cublas_square.csv"))) if os.path.exists(f"{d}/cublas_square.csv") else []
print("square rows", len(rows))
for r in rows:
    if int(r["n"]) in (64, 256, 512, 1024, 1792, 1793, 2048, 2049, 3072, 4096): print("sq", r["n"], r["time_us"], r["tflops"])
for f in ("cublas_shapes.csv", "attention.csv"):
    if not os.path.exists(f"{d}/{f}"): continue
    for r in csv.DictReader(open(f"{d}/{f}")): print(f[:-4], *r.values())
PY
