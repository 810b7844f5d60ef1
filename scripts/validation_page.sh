#!/usr/bin/env bash
# Writes docs/validation.md, its figures as JSON (docs/validation.json, read by the accuracy tests), its
# scatter plot and the configs' error bands from the committed H200
# data and the model in this tree (tests/validation/test_doc_fresh.cpp checks the page is not stale).
# About 30 minutes on 2 cores. Usage: scripts/validation_page.sh [path/to/gtsim]
set -euo pipefail
cd "$(dirname "$0")/.."
G="${1:-build/cli/gtsim}"
cal="$(mktemp --suffix=.json)"
trap 'rm -f "$cal"' EXIT
"$G" calibrate --hw hw_configs/h200-sxm.yaml --data validation/data/h200 --dry-run --json "$cal" > /dev/null
"$G" validate --hw hw_configs/h200-sxm.yaml --data validation/data/h200 --calibration-json "$cal" \
  --plot docs/validation_scatter.png --out-doc docs/validation.md --json docs/validation.json --write-error-bands
