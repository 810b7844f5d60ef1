# The common preamble of the device scripts (run_h200.sh, run_profile.sh), sourced by them from the
# repository root on the device machine once BATCH is set:
#   $OUT (default /tmp/gtsim_out) gets run_BATCH.log (all output from here on) and data_BATCH.tar.gz;
#   $D = /tmp/gtsim_BATCH (made empty) holds the batch's files, $B = /tmp/gtsim_build the build,
#   $T the runner. run CMD... echoes the command, runs it and prints its rc (returning 0); pack
#   tars $D (with the log as run.log) into $OUT/data_BATCH.tar.gz, and runs again on exit.
OUT=${OUT:-/tmp/gtsim_out}
D=/tmp/gtsim_$BATCH
B=/tmp/gtsim_build
mkdir -p "$OUT" && rm -rf "$D" && mkdir -p "$D"
exec > >(tee -a "$OUT/run_$BATCH.log") 2>&1
T=$B/gtsim_twins
run() { echo "+ $*"; "$@"; echo "rc=$? at $(date +%T)"; }
pack() { cp "$OUT/run_$BATCH.log" "$D/run.log" 2>/dev/null; tar czf "$OUT/data_$BATCH.tar.gz" -C "$D" .; }
trap pack EXIT

# the date and the GPU's identity, state and clocks ($D/nvidia_smi.csv)
device_info() {
  date -u
  nvidia-smi --query-gpu=uuid,name,driver_version,pstate,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw,power.limit \
    --format=csv > "$D/nvidia_smi.csv"
  cat "$D/nvidia_smi.csv"
}
# the nvcc version, the twins built into $B (validation/cuda/build.sh) and its ptxas report in $D
build_twins() {
  nvcc --version | tail -2
  run validation/cuda/build.sh "$B" || exit 1
  cp "$B/ptxas.txt" "$D/"
}
