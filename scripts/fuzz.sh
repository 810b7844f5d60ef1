#!/usr/bin/env bash
# Bounded libFuzzer run of the parsers (docs/fuzzing.md).
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     TARGET: kernel config workload tpu (default: all)
# Configures build-fuzz with clang and GTSIM_FUZZ=ON, builds only the fuzz targets, regenerates the
# seed corpus from the shipped files, and runs each target for SECONDS_PER_TARGET (default 60; 0 =
# no time limit, e.g. with FUZZ_ARGS=-runs=1000000 for the long run). The corpus each run grows is
# kept in build-fuzz/corpus/<target>/. A crash, timeout, leak or out-of-memory input is kept in
# build-fuzz/artifacts/<target>/; the script prints its path and the top of the report, goes on
# with the other targets, and exits 1 at the end when any was found.
# Environment: FUZZ_ARGS (extra libFuzzer flags), FUZZ_BUILD_DIR (default build-fuzz), CXX_FUZZ
# (default clang++), FUZZ_CONFIGURE=0 (use FUZZ_BUILD_DIR as it is configured).
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
shift || true
targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=(kernel config workload tpu)
for t in "${targets[@]}"; do
  case "$t" in kernel | config | workload | tpu) ;; *) echo "fuzz: unknown target '$t', expected kernel, config, workload or tpu" >&2; exit 2 ;; esac
done
[[ "$secs" =~ ^[0-9]+$ ]] || { echo "fuzz: SECONDS_PER_TARGET must be a whole number, got '$secs'" >&2; exit 2; }
dir="${FUZZ_BUILD_DIR:-build-fuzz}"
cxx="${CXX_FUZZ:-clang++}"
command -v "$cxx" > /dev/null || { echo "fuzz: $cxx not found (scripts/setup.sh installs clang)" >&2; exit 2; }

start=$(date +%s)
# FUZZ_CONFIGURE=0 keeps a build folder configured elsewhere with GTSIM_FUZZ=ON (.ci/run's sanitizer build)
if [ "${FUZZ_CONFIGURE:-1}" = 0 ]; then
  grep -q '^GTSIM_FUZZ:BOOL=ON' "$dir/CMakeCache.txt" 2> /dev/null \
    || { echo "fuzz: FUZZ_CONFIGURE=0 but $dir is not configured with GTSIM_FUZZ=ON" >&2; exit 2; }
else
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$cxx" -DGTSIM_FUZZ=ON \
    -DGTSIM_BUILD_TESTS=OFF -DGTSIM_BUILD_BENCH=OFF -DGTSIM_BUILD_CUDA=OFF > "$dir.configure.log" 2>&1 \
    || { cat "$dir.configure.log"; exit 2; }
fi
cmake --build "$dir" -j"$(nproc)" --target "${targets[@]/#/fuzz_}"
echo "fuzz: build took $(( $(date +%s) - start )) s"
bash fuzz/make_corpus.sh "$dir/corpus/seeds"

# A smaller quarantine, and free memory handed back to the system: every config input builds a whole
# machine (tens of MB of short-lived allocations), and with ASan's defaults (a 256 MB quarantine, freed
# size-class memory kept forever) the process's peak RSS climbs past -rss_limit_mb over a long run
# with no leak (finding F2, fuzz/FINDINGS.md). Allocation stacks are kept 4 frames deep: ASan stores every
# distinct one for good, and the recursive parsers make a new one at every nesting depth (a heap report
# still shows the crash's full stack).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0:quarantine_size_mb=64:allocator_release_to_os_interval_ms=500:malloc_context_size=4}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
found=()
for t in "${targets[@]}"; do
  corpus="$dir/corpus/$t" art="$dir/artifacts/$t" log="$dir/logs/fuzz_$t.log"
  mkdir -p "$corpus" "$art" "$(dirname "$log")"
  before=$(ls "$art" | wc -l)
  args=(-timeout=10 -rss_limit_mb=2048 -max_len=65536 -dict="fuzz/$t.dict" -artifact_prefix="$art/"
        -print_final_stats=1)
  [ "$secs" -gt 0 ] && args+=(-max_total_time="$secs")
  echo "fuzz: $t for ${secs} s ${FUZZ_ARGS:-}"
  set +e
  # shellcheck disable=SC2086 # FUZZ_ARGS is a list of flags
  "$dir/fuzz/fuzz_$t" "${args[@]}" ${FUZZ_ARGS:-} "$corpus" "$dir/corpus/seeds/$t" > "$log" 2>&1
  rc=$?
  set -e
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  echo "fuzz: $t: exit $rc, ${runs:-?} executions, ${rate:-?} exec/s, corpus $(ls "$corpus" | wc -l) files"
  new=$(ls -t "$art" | head -n $(( $(ls "$art" | wc -l) - before )))
  if [ "$rc" -ne 0 ] || [ -n "$new" ]; then
    for a in $new; do
      found+=("$art/$a")
      echo "fuzz: $t: FOUND $art/$a (reproduce: $dir/fuzz/fuzz_$t $art/$a)"
    done
    [ -n "$new" ] || found+=("$log")
    # the top of the report: what happened, then the first frames in gtsim's code (cut to 240 columns)
    { grep -m6 -E 'ERROR|ALARM|runtime error:|SUMMARY|terminate called|what\(\)|^fuzz_' "$log" || true
      grep -E '^ +#[0-9]+ .* in gtsim' "$log" | head -12 || true; } | cut -c1-240
    echo "fuzz: $t: whole report in $log"
  fi
done
echo "fuzz: total $(( $(date +%s) - start )) s"
if [ "${#found[@]}" -gt 0 ]; then
  echo "fuzz: ${#found[@]} failing input(s); see docs/fuzzing.md to minimize one and add it to fuzz/regressions/" >&2
  exit 1
fi
echo "fuzz: no crash, timeout or leak"
