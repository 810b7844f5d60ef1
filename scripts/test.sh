#!/usr/bin/env bash
# Sets up a fresh Debian machine, builds gtsim and runs every test (ctest).
# The `accuracy` label runs last: its Accuracy* tests (the model against held-out H200 measurements,
# targets from issue 9) are reported, not gating: their figures are the model's honest accuracy
# (docs/validation.md); its Validation.* and Calibration.* tests gate.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# a unity build (several sources per compiler run) takes half the time of one source at a time
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON
cmake --build build -j"$(nproc)"
# a fresh build has no record of the tests' times: seed it so that the longest start first (scripts/test_costs.sh)
rec=build/Testing/Temporary/CTestCostData.txt
if [ ! -s "$rec" ] && [ -s tests/ctest_costs.txt ]; then
  mkdir -p "$(dirname "$rec")"
  { cat tests/ctest_costs.txt; echo ---; } > "$rec"
fi
ctest --test-dir build --output-on-failure -j"$(nproc)" -LE accuracy
# the label's Validation.* and Calibration.* (the model against the measurements it was built on, the
# config re-fit from them) gate like the rest; only the Accuracy* targets are reported
ctest --test-dir build --output-on-failure -j"$(nproc)" -L accuracy -E '^Accuracy'
if ! ctest --test-dir build --output-on-failure -j"$(nproc)" -L accuracy -R '^Accuracy'; then
  echo "test.sh: held-out accuracy targets not met yet (reported above and in docs/validation.md)"
fi
