#!/usr/bin/env bash
# Writes tests/ctest_costs.txt from ctest's record of the last Release run (build/Testing/Temporary/
# CTestCostData.txt): the tests that took 5 s or more, longest first. scripts/test.sh seeds a fresh
# build's record with it, so that ctest -j starts the longest tests first instead of in file order
# (on two cores a five-minute test started last is five minutes of one idle core).
set -euo pipefail
cd "$(dirname "$0")/.."
rec="${1:-build/Testing/Temporary/CTestCostData.txt}"
[ -s "$rec" ] || { echo "test_costs: no ctest record at $rec (run the tests first)" >&2; exit 2; }
awk 'NF == 3 && $3 + 0 >= 5 { printf "%s 1 %.1f\n", $1, $3 }' "$rec" | sort -k3 -n -r > tests/ctest_costs.txt
echo "test_costs: $(wc -l < tests/ctest_costs.txt) tests of 5 s or more in tests/ctest_costs.txt"
