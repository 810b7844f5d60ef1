#!/usr/bin/env bash
# One device call, from the repository root on the device machine:
#   validation/cuda/run_h200.sh BATCH [micro|apps|all|fresh|parts|store|gemm|align|vec|pipes|history|fp32|fp32k|banks|tiles|tiles1|tilesnl|mma|l2bw|sweeps|lat|ops|burst|steady|srate|tstamp|skew|barst]
# builds the twins there, writes device info, runs canary / sweeps / canary, records ptxas, SASS,
# a memcheck of the small app checks and Nsight Compute metrics, and packs everything into
# $OUT/data_BATCH.tar.gz (re-packed after every phase) next to the log. `parts` runs only the
# read-only / write-only HBM streams (stream_rw) and the naive attention's launches one by one;
# `store` the QK GEMM's epilogue stores alone (store_tile) with Nsight Compute sections (issue
# stalls, memory workload) of it and of attn_qk_gemm. `history` profiles stream_copy launched back
# to back through rotating buffers, then on the same buffers (copy_history), with Nsight Compute's
# cache control off (the L2 each launch leaves is the next one's) and on (flushed before each). `fp32`
# profiles gemm_fp32 at 1024^3 as its timing runs it (the 6th launch) with cache control off and on.
# `banks` times and profiles the register outer product alone (ffma_outer), `tiles` gemm_fp32's tile
# loop with and without its math (tile_loop); `tiles1` the same with one CTA per SM (each launch asks
# for 100000 bytes of dynamic shared memory it does not use). `mma` times mma_throughput alone (f16, bf16, tf32 and
# e4m3, which sm_90 emulates) and profiles its four launches (instruction mix, pipes, issue stalls).
# `tilesnl` times tile_loop with and without its global loads (the tile's values made in registers).
# `l2bw` times l2_read (the L2-to-SM read bandwidth of 1 to 132 SMs, each reading its own 64 KB) and
# profiles its launches (L2 and L1 throughput, issue stalls). `sweeps` times flash attention over eight
# sequence lengths and gemm_fp32 over K (b24); `lat` the latency chains of op_latency and flash
# attention over heads (b25); `ops` op_latency's latencies and rates (b26); `burst` the shared pipe's
# service order after a barrier (lds_burst, per-warp clock64 stamps), then tile_loop again; `steady`
# a load-then-FFMA loop with and without a barrier, per-warp stamps (lds_steady), then ffma_outer again.
# `skew` (b40): whether some SMs run gemm_fp32's tile loop slower than others, and why: tile_stamp (now with
# every CTA's loop span in SM cycles and its start and end in globaltimer ns: tile_span.csv), then the L2 hit
# latency seen from every SM (sm_latency: one CTA per SM, 1022 dependent L2 loads each, every load's cycles),
# then the plain gemm_fp32 K sweep at 1024^2 again (b24's sweep).
# `srate`: an SM's store rate by store shape (whole lines, half sectors, whole sectors of half lines) on
# 1-132 SMs with 8 and 32 warps each (store_rate), then store_tile's BH = 1 points again.
set -uo pipefail
BATCH=${1:-b1}
WHAT=${2:-micro}
has() { [ "$WHAT" = all ] || [ "$WHAT" = "$1" ]; }  # whether this call runs part $1
source "$(dirname "${BASH_SOURCE[0]}")/device_lib.sh"  # OUT, D, B, T, the log, run, pack
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,launch__waves_per_multiprocessor,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,sm__cycles_elapsed.max
PM=$M,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,lts__t_sectors_op_write.sum
ncu_run() {  # $1 = csv name, $2 = kernel-name regex, rest = runner command
  local f=$1 k=$2; shift 2
  run timeout 90 ncu --clock-control none --kernel-name "$k" --launch-count 80 --metrics $M --csv \
    --log-file "$D/$f" $T --out=/tmp --batch=ncu "$@" > "$D/$f.err" 2>&1
  tail -c 300 "$D/$f.err"; wc -l "$D/$f"
}
ncu_source() {  # $1 = csv name, ncu selection options, --, runner command: per-SASS-instruction stall samples
  local f=$1 sel=(); shift
  while [ "$1" != -- ]; do sel+=("$1"); shift; done; shift
  run timeout 200 ncu --clock-control none "${sel[@]}" --section SourceCounters --section WarpStateStats --page source \
    --print-source sass --csv --log-file "$D/$f" $T --out=/tmp --batch=ncu "$@" > "$D/$f.err" 2>&1
  tail -c 300 "$D/$f.err"; wc -l "$D/$f"; gzip -f "$D/$f"; pack
}
ncu_raw() {  # $1 = csv name, $2 = kernel-name regex, $3 = launches, $4 = metrics, rest = runner command:
  # issue stalls, scheduler and memory sections (--page raw), one launch per point, the L2 carried over
  local f=$1 k=$2 n=$3 m=$4; shift 4
  run timeout 150 ncu --clock-control none --cache-control none --kernel-name "$k" --launch-count "$n" --section WarpStateStats \
    --section SchedulerStats --section MemoryWorkloadAnalysis --metrics "$m" --csv --page raw \
    --log-file "$D/$f" $T --out=/tmp --batch=ncu --ncu=1 "$@" > "$D/$f.err" 2>&1
  tail -c 300 "$D/$f.err"; wc -l "$D/$f"; pack
}
MICRO='regex:^(twins::)?(stream_copy|strided_copy|pointer_chase|divergence|bank_conflicts|fixed_work|mma_throughput|empty)$'
APPS='regex:^(twins::)?(gemm_tiled|gemm_fp32|gemm_persistent|attn_qk_gemm|elementwise_fused|elementwise_sin|elementwise_cos|elementwise_square|elementwise_add|softmax_rows|flash_attn_fwd)$'

device_info
nvidia-smi -q > "$D/nvidia_smi_q.txt" 2>&1
build_twins
run $T --out="$D" --batch="$BATCH" device canary_start
pack
if has micro; then run timeout 200 $T --out="$D" --batch="$BATCH" micro; pack; fi
if [ "$WHAT" = history ]; then
  for cc in none all; do
    run timeout 150 ncu --clock-control none --cache-control $cc --kernel-name 'regex:^(twins::)?stream_copy$' \
      --launch-count 60 --metrics $M --csv --log-file "$D/ncu_copy_history_$cc.csv" $T --out=/tmp --batch=ncu \
      copy_history > "$D/ncu_copy_history_$cc.csv.err" 2>&1
    tail -c 300 "$D/ncu_copy_history_$cc.csv.err"; wc -l "$D/ncu_copy_history_$cc.csv"; pack
    # gemm_tiled's five --ncu=3 launches (n = 1024, 1025, 1026, 1028, 1793): inputs left in the L2 by
    # their initialisation (none) against a flushed L2 (all)
    run timeout 150 ncu --clock-control none --cache-control $cc --kernel-name 'regex:gemm_tiled' --launch-count 5 \
      --metrics $M --csv --log-file "$D/ncu_gemm_l2start_$cc.csv" $T --out=/tmp --batch=ncu --ncu=3 apps \
      > "$D/ncu_gemm_l2start_$cc.csv.err" 2>&1
    tail -c 300 "$D/ncu_gemm_l2start_$cc.csv.err"; wc -l "$D/ncu_gemm_l2start_$cc.csv"; pack
  done
fi
if has apps; then run timeout 200 $T --out="$D" --batch="$BATCH" apps; pack; fi
# `fresh` (b42, the first first-shot batch; docs/validation.md): application shapes never measured before
# (apps --only=fresh), then the memory effects of issue 38: hot copies whose 8n-byte footprint spans
# 8-128 MiB around the 60 MiB L2 (the whole GPU's effective L2) and cold ones beside them, small hot
# copies for the back-to-back launch gap (stream against graph), strided gathers up to a 1024-element
# stride, the one-SM pointer chase sweep again; then Nsight Compute's DRAM bytes and L2 hit rate of every
# fresh application launch and of the hot copies, the L2 carried over between launches (cache control off)
if [ "$WHAT" = fresh ]; then
  run timeout 300 $T --out="$D" --batch="$BATCH" apps --only=fresh; pack
  HOT=4096,16384,65536,262144,1048576,2097152,3145728,4194304,5242880,5767168,6291456,6815744,7340032,7864320,8388608,9437184,10485760,12582912,16777216
  run timeout 200 $T --out="$D" --batch="$BATCH" stream_copy --hot_n=$HOT --cold_n=2097152,4194304,6291456,8388608,12582912; pack
  run timeout 200 $T --out="$D" --batch="$BATCH" strided_copy --strides=1,2,4,8,16,32,64,128,256,512,1024; pack
  run timeout 200 $T --out="$D" --batch="$BATCH" pointer_chase; pack
  run timeout 60 $T --out="$D" --batch="$BATCH" empty; pack
  run timeout 200 ncu --clock-control none --cache-control none --kernel-name "$APPS" --launch-count 200 --metrics $M --csv \
    --log-file "$D/ncu_fresh.csv" $T --out=/tmp --batch=ncu --ncu=1 apps --only=fresh > "$D/ncu_fresh.csv.err" 2>&1
  tail -c 300 "$D/ncu_fresh.csv.err"; wc -l "$D/ncu_fresh.csv"; pack
  run timeout 150 ncu --clock-control none --cache-control none --kernel-name 'regex:^(twins::)?stream_copy$' --launch-count 100 \
    --metrics $M --csv --log-file "$D/ncu_hot_copy.csv" $T --out=/tmp --batch=ncu --ncu=1 stream_copy --hot_n=$HOT \
    > "$D/ncu_hot_copy.csv.err" 2>&1
  tail -c 300 "$D/ncu_hot_copy.csv.err"; wc -l "$D/ncu_hot_copy.csv"; pack
fi
# `sweeps`: flash attention at eight sequence lengths (BH = 64; the naive one at 1024, 2048 and 4096
# only, the lengths its softmax twin has), gemm_fp32's square points and a K sweep at M = N = 1024
if [ "$WHAT" = sweeps ]; then
  run timeout 300 $T --out="$D" --batch="$BATCH" apps --only=attention,gemm_fp32 \
    --attn_t=256,512,768,1024,1280,1536,2048,4096 --fp32_k=128,256,512,1024,2048
  pack
fi
# `lat`: the dependent-issue latency of FFMA, MUFU.EX2, SHFL.BFLY, HMMA.16816 and FMNMX (op_latency, one
# warp), then flash attention at T = 2048 with 4, 8, 16 and 64 heads (1, 2, 4 and 16 CTAs per SM: the
# occupancy sweep, variant flash_bh)
if [ "$WHAT" = lat ]; then
  run timeout 120 $T --out="$D" --batch="$BATCH" op_latency
  pack
  run timeout 200 $T --out="$D" --batch="$BATCH" apps --only=none --flash_bh=4,8,16,64
  pack
fi
# `ops`: op_latency alone: the latency chains and the rates (8 chains a thread, 8 warps per sub-partition)
if [ "$WHAT" = ops ]; then run timeout 200 $T --out="$D" --batch="$BATCH" op_latency; pack; fi
if [ "$WHAT" = srate ]; then
  run timeout 120 $T --out="$D" --batch="$BATCH" store_rate; pack
  run timeout 200 $T --out="$D" --batch="$BATCH" store_tile; pack
  # each pattern at 66 and 132 CTAs of 8 warps under Nsight Compute (its 3rd launch, the L2 carried over):
  # DRAM and L2 write sectors, the L2's throughput
  for c in 66 132; do
    for p in 0 1 2; do
      run timeout 100 ncu --clock-control none --cache-control none --kernel-name-base mangled \
        --kernel-name "regex:store_rateILi${p}E" --launch-skip 2 --launch-count 1 \
        --metrics $PM,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_requests_op_write.sum,sm__cycles_active.avg \
        --csv --page raw --log-file "$D/ncu_store_rate_p${p}_c$c.csv" $T --out=/tmp --batch=ncu store_rate --srate_ctas=$c \
        > "$D/ncu_store_rate_p${p}_c$c.csv.err" 2>&1
      tail -c 200 "$D/ncu_store_rate_p${p}_c$c.csv.err"; wc -l "$D/ncu_store_rate_p${p}_c$c.csv"; pack
    done
  done
fi
if [ "$WHAT" = steady ]; then
  run timeout 120 $T --out="$D" --batch="$BATCH" lds_steady; pack
  run timeout 200 $T --out="$D" --batch="$BATCH" ffma_outer; pack
fi
# `tstamp` (b36-b38; b38 adds a stamp before the first barrier, every CTA's stamps and its SM): gemm_fp32's tile loop with per-warp clock stamps around its barriers (tile_stamp), at 8,
# 1 and 0 k-steps, with global loads (through the L1 and, b37, past it) and without, n = 1024 and 2048; then
# ffma_outer again; b37: the plain loops with loads under Nsight Compute
if [ "$WHAT" = tstamp ]; then
  run timeout 200 $T --out="$D" --batch="$BATCH" tile_stamp; pack
  run timeout 200 $T --out="$D" --batch="$BATCH" ffma_outer; pack
  # b37: the plain tile loops with loads through the L1 (.ca) and past it (.cg), 1 and 8 k-steps, n = 1024
  # and 2048, under Nsight Compute (one launch each, the L2 carried over): L1 data-pipe wavefronts, cycles
  run timeout 150 ncu --clock-control none --cache-control none --kernel-name-base mangled \
    --kernel-name "regex:tile_loopILi[18]ELb1ELb0ELb[01]E" --launch-count 8 \
    --metrics $PM,sm__cycles_active.avg,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum \
    --csv --page raw --log-file "$D/ncu_tile_cg.csv" $T --out=/tmp --batch=ncu --ncu=1 tile_stamp > "$D/ncu_tile_cg.csv.err" 2>&1
  tail -c 300 "$D/ncu_tile_cg.csv.err"; wc -l "$D/ncu_tile_cg.csv"; pack
fi
if [ "$WHAT" = skew ]; then
  run timeout 200 $T --out="$D" --batch="$BATCH" sm_latency; pack
  run timeout 200 $T --out="$D" --batch="$BATCH" tile_stamp; pack
  run timeout 200 $T --out="$D" --batch="$BATCH" apps --only=none --fp32_k=128,256,512,1024,2048; pack
fi
# `barst` (b41): whether a barrier waits for the shared stores before it (bar_store: warps 0 and 4, or all
# eight, store 0-8 STS.128 each, then every warp loads warp 0's last store after the barrier; per-warp
# clock stamps), then lds_steady again
if [ "$WHAT" = barst ]; then
  run timeout 200 $T --out="$D" --batch="$BATCH" bar_store; pack
  run timeout 200 $T --out="$D" --batch="$BATCH" lds_steady; pack
fi
if [ "$WHAT" = burst ]; then
  run timeout 120 $T --out="$D" --batch="$BATCH" lds_burst; pack
  run timeout 200 $T --out="$D" --batch="$BATCH" tile_loop; pack
fi
# `fp32k`: gemm_fp32 at M = N = 1024 over K = 8 ... 1024 (graph-timed), with its C stores and without
# (gemm_fp32_nostore: the same loop, an epilogue that stores nothing), then K = 8 and 128 of each under
# Nsight Compute (6th launch, L2 carried over: the cycles, the stores' sectors, the issue stalls)
if [ "$WHAT" = fp32k ]; then
  run timeout 200 $T --out="$D" --batch="$BATCH" apps --only=none --fp32_k=8,16,32,64,128,256,1024 --fp32_nostore=1; pack
  for k in 8 128; do
    for kn in gemm_fp32 gemm_fp32_nostore; do
      run timeout 100 ncu --clock-control none --cache-control none --kernel-name "regex:^(twins::)?$kn\$" \
        --launch-skip 5 --launch-count 1 --section WarpStateStats --section SchedulerStats --metrics $PM,sm__cycles_active.avg,sm__cycles_active.max \
        --csv --page raw --log-file "$D/ncu_${kn}_k$k.csv" $T --out=/tmp --batch=ncu apps --only=none --fp32_k=$k \
        --fp32_nostore=1 > "$D/ncu_${kn}_k$k.csv.err" 2>&1
      tail -c 200 "$D/ncu_${kn}_k$k.csv.err"; wc -l "$D/ncu_${kn}_k$k.csv"; pack
    done
  done
fi
# `fp32`: gemm_fp32 at 1024^3 (the held-out point) as its timing runs it, the 6th launch (inputs in the
# L2 from the launches before: cache control none) and after a flush (all): the stall, scheduler,
# memory and pipe sections (--page raw), the per-pipe counts, and per-SASS-instruction stall samples
if [ "$WHAT" = fp32 ]; then
  P=smsp__inst_executed.sum,sm__inst_executed_pipe_alu.sum,sm__inst_executed_pipe_fma.sum,sm__inst_executed_pipe_fmaheavy.sum,sm__inst_executed_pipe_fmalite.sum,sm__inst_executed_pipe_uniform.sum,sm__inst_executed_pipe_lsu.sum,sm__inst_executed_pipe_adu.sum,sm__inst_executed_pipe_cbu.sum,sm__cycles_active.max
  for cc in none all; do
    run timeout 150 ncu --clock-control none --cache-control $cc --kernel-name 'regex:gemm_fp32' --launch-skip 5 \
      --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
      --section SchedulerStats --section ComputeWorkloadAnalysis --section InstructionStats --metrics $PM,$P --csv \
      --page raw --log-file "$D/ncu_fp32_$cc.csv" $T --out=/tmp --batch=ncu apps --only=gemm_fp32 \
      > "$D/ncu_fp32_$cc.csv.err" 2>&1
    tail -c 300 "$D/ncu_fp32_$cc.csv.err"; wc -l "$D/ncu_fp32_$cc.csv"; pack
  done
  ncu_source ncu_fp32_source.csv --cache-control none --kernel-name 'regex:gemm_fp32' --launch-skip 5 --launch-count 1 \
    -- apps --only=gemm_fp32
fi
# `banks`: the register outer product alone (ffma_outer: fragments held in registers, or loaded from
# shared memory by broadcast or at gemm_fp32's addresses; 1 and 2 CTAs per SM), timed; then its twelve
# launches under Nsight Compute (issue stalls, scheduler, instruction mix, pipe counts; --page raw) and the
# per-SASS-instruction stall samples of the `gemm` one with 132 CTAs and iters = 256
if [ "$WHAT" = banks ]; then
  run timeout 200 $T --out="$D" --batch="$BATCH" ffma_outer; pack
  P=smsp__inst_executed.sum,sm__inst_executed_pipe_fma.sum,sm__inst_executed_pipe_fmaheavy.sum,sm__inst_executed_pipe_fmalite.sum,sm__inst_executed_pipe_lsu.sum,sm__cycles_active.max
  run timeout 150 ncu --clock-control none --kernel-name 'regex:ffma_outer' --launch-count 12 --section WarpStateStats \
    --section SchedulerStats --section InstructionStats --section ComputeWorkloadAnalysis --metrics $PM,$P --csv \
    --page raw --log-file "$D/ncu_ffma_outer.csv" $T --out=/tmp --batch=ncu --ncu=1 ffma_outer > "$D/ncu_ffma_outer.csv.err" 2>&1
  tail -c 300 "$D/ncu_ffma_outer.csv.err"; wc -l "$D/ncu_ffma_outer.csv"; pack
  ncu_source ncu_ffma_outer_source.csv --kernel-name 'regex:ffma_outer' --launch-skip 8 --launch-count 1 -- --ncu=1 ffma_outer
fi
# `tiles`: gemm_fp32's tile loop with 0, 1, 2, 4 or its 8 k-steps of math (tile_loop, n = 1024 and
# 2048), timed; then its ten launches under Nsight Compute with the L2 carried over (--page raw) and the
# stall samples of the whole loop (8 k-steps) at n = 1024
if [ "$WHAT" = tiles ]; then
  run timeout 200 $T --out="$D" --batch="$BATCH" tile_loop; pack
  ncu_raw ncu_tile_loop.csv 'regex:tile_loop' 10 $PM tile_loop
  ncu_source ncu_tile_loop_source.csv --cache-control none --kernel-name 'regex:tile_loop' --launch-skip 4 --launch-count 1 \
    -- --ncu=1 tile_loop
fi
# `mma`: mma_throughput's four dtypes, timed, then one launch of each under Nsight Compute (--page raw:
# executed instructions per pipe and opcode, issue stalls)
if [ "$WHAT" = mma ]; then
  run timeout 200 $T --out="$D" --batch="$BATCH" mma; pack
  run timeout 150 ncu --clock-control none --kernel-name 'regex:mma_throughput' --launch-count 4 --section WarpStateStats \
    --section InstructionStats --section ComputeWorkloadAnalysis --metrics $M --csv --page raw \
    --log-file "$D/ncu_mma.csv" $T --out=/tmp --batch=ncu --ncu=1 mma > "$D/ncu_mma.csv.err" 2>&1
  tail -c 300 "$D/ncu_mma.csv.err"; wc -l "$D/ncu_mma.csv"; pack
fi
# `tiles1`: tile_loop with one CTA per SM (n = 1024 as before, n = 2048 in two waves instead of two CTAs
# per SM), timed; then its ten launches under Nsight Compute with the L2 carried over (--page raw)
if [ "$WHAT" = tiles1 ]; then
  run timeout 200 $T --out="$D" --batch="$BATCH" --pad_smem=100000 tile_loop; pack
  ncu_raw ncu_tile_loop.csv 'regex:tile_loop' 10 $PM --pad_smem=100000 tile_loop
fi
# `tilesnl`: tile_loop with and without its global loads, timed; then the twenty launches under Nsight
# Compute with the L2 carried over (--page raw: issue stalls, scheduler, shared-memory wavefronts) and the
# per-SASS-instruction stall samples of the no-load loop with 2 k-steps at n = 1024
if [ "$WHAT" = tilesnl ]; then
  run timeout 200 $T --out="$D" --batch="$BATCH" --noload=1 tile_loop; pack
  ncu_raw ncu_tile_loop.csv 'regex:tile_loop' 20 $PM --noload=1 tile_loop
  ncu_source ncu_tile_loop_noload2_source.csv --cache-control none --kernel-name 'regex:tile_loop' --launch-skip 7 --launch-count 1 \
    -- --ncu=1 --noload=1 tile_loop
fi
# `l2bw`: l2_read (each CTA its own 64 KB in the L2, read past the L1), timed, with every CTA's SM
# recorded and the 1024-thread points also in clusters of 8 and 16 (b21 on); then one launch of each
# unclustered point under Nsight Compute with the L2 carried over (--page raw: L2 and L1 throughput, issue
# stalls). (b18 and b19 ran l2_read's first version: b18 as this from 8 and 32 MB; b19 the timing alone.)
if [ "$WHAT" = l2bw ]; then
  run timeout 200 $T --out="$D" --batch="$BATCH" l2_read; pack
  L2M=lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sector_hit_rate.pct,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__m_xbar2l1tex_read_bytes.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct,sm__cycles_elapsed.max,gpu__time_duration.sum
  ncu_raw ncu_l2_read.csv 'regex:l2_read' 32 $L2M --clusters=0 l2_read
fi
if has parts; then
  run timeout 200 $T --out="$D" --batch="$BATCH" stream_rw; pack
  run timeout 200 $T --out="$D" --batch="$BATCH" apps --only=naive_parts; pack
fi
SECT="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats"
prof_sections() {  # $1 = csv name, $2 = kernel-name regex, $3 = launches, rest = runner command
  local f=$1 k=$2 n=$3; shift 3
  run timeout 150 ncu --clock-control none --kernel-name "$k" --launch-count "$n" $SECT --metrics $PM --csv \
    --page details --log-file "$D/$f" $T --out=/tmp --batch=ncu --ncu=1 "$@" > "$D/$f.err" 2>&1
  tail -c 300 "$D/$f.err"; wc -l "$D/$f"; pack
}
if has store; then
  run timeout 200 $T --out="$D" --batch="$BATCH" store_tile stream_rw; pack
  prof_sections ncu_store_tile.csv 'regex:store_tile' 10 store_tile
  prof_sections ncu_qk.csv 'regex:attn_qk_gemm' 1 apps
fi
# `gemm`: the same sections of gemm_tiled's representatives, with the square_align neighbours 1028
# (VEC 4: 8-byte cp.async.ca) and 1032 (VEC 8) after them
if has gemm; then prof_sections ncu_gemm_align.csv 'regex:gemm_tiled' 6 apps; fi
# `align`: the square_align neighbours 1024, 1028, 1032, 1040, 1064, 1100 with every metric the
# sections collect (--page raw: the issue-stall reasons among them)
if has align; then
  run timeout 150 ncu --clock-control none --kernel-name 'regex:gemm_tiled' --launch-count 6 $SECT --metrics $PM \
    --csv --page raw --log-file "$D/ncu_gemm_stalls.csv" $T --out=/tmp --batch=ncu --ncu=2 apps > "$D/ncu_gemm_stalls.csv.err" 2>&1
  tail -c 300 "$D/ncu_gemm_stalls.csv.err"; wc -l "$D/ncu_gemm_stalls.csv"; pack
fi
# `vec`: the same raw metrics of gemm_tiled at n = 1024, 1025, 1026, 1028 and 1793 (VEC 8, 1, 2, 4, 1)
if has vec; then
  run timeout 150 ncu --clock-control none --kernel-name 'regex:gemm_tiled' --launch-count 5 $SECT --metrics $PM \
    --csv --page raw --log-file "$D/ncu_gemm_vec.csv" $T --out=/tmp --batch=ncu --ncu=3 apps > "$D/ncu_gemm_vec.csv.err" 2>&1
  tail -c 300 "$D/ncu_gemm_vec.csv.err"; wc -l "$D/ncu_gemm_vec.csv"; pack
fi
# `pipes`: the same five gemm_tiled launches with the instruction-mix sections (executed instructions
# per pipe: ALU, FMA / FMA-heavy, uniform ...), the per-pipe counts by name, then the per-SASS-instruction
# executed counts and stall samples (SourceCounters, --page source) of the VEC 1 and VEC 2 launches
if has pipes; then
  run timeout 150 ncu --clock-control none --kernel-name 'regex:gemm_tiled' --launch-count 5 --section ComputeWorkloadAnalysis \
    --section InstructionStats --section WarpStateStats --section SchedulerStats --metrics $PM --csv --page raw \
    --log-file "$D/ncu_gemm_pipes.csv" $T --out=/tmp --batch=ncu --ncu=3 apps > "$D/ncu_gemm_pipes.csv.err" 2>&1
  tail -c 300 "$D/ncu_gemm_pipes.csv.err"; wc -l "$D/ncu_gemm_pipes.csv"; pack
  P=smsp__inst_executed.sum,sm__inst_executed_pipe_alu.sum,sm__inst_executed_pipe_fma.sum,sm__inst_executed_pipe_fmaheavy.sum,sm__inst_executed_pipe_fmalite.sum,sm__inst_executed_pipe_uniform.sum,sm__inst_executed_pipe_lsu.sum,sm__inst_executed_pipe_adu.sum,sm__inst_executed_pipe_cbu.sum,sm__cycles_active.max
  run timeout 120 ncu --clock-control none --kernel-name 'regex:gemm_tiled' --launch-count 5 --metrics $P --csv --page raw \
    --log-file "$D/ncu_gemm_pipe_counts.csv" $T --out=/tmp --batch=ncu --ncu=3 apps > "$D/ncu_gemm_pipe_counts.csv.err" 2>&1
  tail -c 300 "$D/ncu_gemm_pipe_counts.csv.err"; wc -l "$D/ncu_gemm_pipe_counts.csv"; pack
  ncu_source ncu_gemm_source.csv --kernel-name 'regex:gemm_tiled' --launch-skip 1 --launch-count 2 -- --ncu=3 apps
fi
run $T --out="$D" --batch="$BATCH" canary_end
nvidia-smi --query-gpu=uuid,pstate,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> "$D/nvidia_smi.csv"
cuobjdump --dump-sass $T | gzip > "$D/sass.txt.gz"
pack
if has apps; then
  run timeout 60 compute-sanitizer --tool memcheck --print-limit 20 $T --out=/tmp apps_quick > "$D/memcheck.txt" 2>&1
  tail -5 "$D/memcheck.txt"
fi
has micro && ncu_run ncu.csv "$MICRO" ncu_set
has apps && ncu_run ncu_apps.csv "$APPS" apps --ncu=1
pack
python3 validation/cuda/summarize.py "$D"
