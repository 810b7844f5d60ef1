#!/usr/bin/env bash
# Sampled against exact, kernel by kernel: cycles and DRAM bytes, the fraction simulated and both
# runs' host time (the JSON's sim_wall_seconds). Usage: bench/sampling_error.sh [path/to/gtsim] (default build/cli/gtsim).
# The machine: the A100 config cut to 4 SMs and a 1 MB L2 in 8 slices (the sizes of
# tests/models/test_sampling.cpp), so that the exact runs take seconds. Prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
G=${1:-build/cli/gtsim}
S=(--set sm.count=4 --set l2.size_bytes=1048576 --set l2.slices=8)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| kernel | parameters | cycles | DRAM bytes | simulated | sampled host | exact host |"
echo "|---|---|---|---|---|---|---|"
while read -r k params; do
  [ -z "$k" ] && continue
  P=(); for p in $params; do
    case "$p" in set:*) P+=(--set "${p#set:}") ;; *) P+=(--param "$p") ;; esac  # set:KEY=VALUE: a config override
  done
  "$G" run --hw hw_configs/a100-40gb.yaml --kernel "kernels_ir/lib/$k.kir" \
    "${S[@]}" "${P[@]}" --json "$tmp/s.json" >/dev/null
  "$G" run --exact --hw hw_configs/a100-40gb.yaml \
    --kernel "kernels_ir/lib/$k.kir" "${S[@]}" "${P[@]}" --json "$tmp/e.json" >/dev/null
  python3 - "$k" "$params" "$tmp" <<'PY'
import json, sys
k, params, d = sys.argv[1:4]
s, e = json.load(open(d + "/s.json")), json.load(open(d + "/e.json"))
dram = lambda j: j["dram_read_bytes"] + j["dram_write_bytes"]
pct = lambda a, b: 100.0 * (a - b) / b if b else 0.0
print(f"| {k} | {params} | {pct(s['cycles'], e['cycles']):+.2f}% | {pct(dram(s), dram(e)):+.2f}% | "
      f"{100 * s['sampling']['fraction_simulated']:.0f}% | {s['sim_wall_seconds']:.1f} s | {e['sim_wall_seconds']:.1f} s |")
PY
done <<'LIST'
gemm_tiled M=1024 N=1024 K=1024
gemm_persistent M=1024 N=1024 K=1024 GRID=4
gemm_fp32 M=1024 N=1024 K=512
gemm_fp32 M=256 N=256 K=1024 set:l2.size_bytes=41943040
fixed_work ctas=1 work=4096
flash_attention_fwd B=1 H=2 T=2048 D=64
stream_copy n=4194304
strided_copy n=1048576 stride=8
softmax_rows rows=1024 T=1024
divergence ways=4 work=512
bank_conflicts stride=4 iters=512
LIST
