#!/usr/bin/env bash
# One device call, from the repository root on the device machine:
#   validation/cuda/run_profile.sh BATCH
# The tensor-core / shared-pipe calibration microbenchmark (mma_shared) timed, then Nsight Compute
# sections (issue-stall reasons, pipe utilization, shared wavefronts) of mma_shared, of gemm_tiled
# at 4096^3, of softmax_rows and of divergence, so that the model's time split can be compared with
# the hardware's. Everything lands in $OUT/data_BATCH.tar.gz (re-packed after every phase).
set -uo pipefail
BATCH=${1:-b4}
source "$(dirname "${BASH_SOURCE[0]}")/device_lib.sh"  # OUT, D, B, T, the log, run, pack
device_info
build_twins
run $T --out="$D" --batch="$BATCH" device canary_start mma_shared canary_end
cuobjdump --dump-sass $T | gzip > "$D/sass.txt.gz"
pack
SECT="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section InstructionStats"
MET=sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,smsp__inst_executed.sum,sm__cycles_elapsed.max,gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
prof() {  # $1 = csv name, $2 = kernel-name regex, $3 = launches, rest = runner command
  local f=$1 k=$2 n=$3; shift 3
  run timeout 150 ncu --clock-control none --kernel-name "$k" --launch-count "$n" $SECT --metrics $MET --csv --page details \
    --log-file "$D/$f" $T --out=/tmp --batch=ncu --ncu=1 "$@" > "$D/$f.err" 2>&1
  tail -c 300 "$D/$f.err"; wc -l "$D/$f"
  pack
}
prof ncu_mma_shared.csv 'regex:mma_shared' 4 mma_shared --iters=512
prof ncu_gemm.csv 'regex:gemm_tiled' 1 apps
prof ncu_divergence.csv 'regex:divergence' 6 divergence
prof ncu_softmax.csv 'regex:softmax_rows' 1 apps
python3 validation/cuda/summarize.py "$D"
grep -h "mma_shared" "$D/run.log" | tail -12
