#!/usr/bin/env bash
# Writes docs/validation.md, its figures as JSON (docs/validation.json, read by the accuracy tests), its
# scatter plot and the configs' error bands from the committed H200
# data and the model in this tree (tests/validation/test_doc_fresh.cpp checks the page is not stale).
# About 30 minutes on 2 cores. Usage: scripts/validation_page.sh [path/to/gtsim]
set -euo pipefail
cd "$(dirname "$0")/.."
G="${1:-build/cli/gtsim}"
cal="$(mktemp --suffix=.json)" figures="$(mktemp --suffix=.json)"
trap 'rm -f "$cal" "$figures"' EXIT
"$G" calibrate --hw hw_configs/h200-sxm.yaml --data validation/data/h200 --dry-run --json "$cal" > /dev/null
"$G" validate --hw hw_configs/h200-sxm.yaml --data validation/data/h200 --calibration-json "$cal" \
  --plot docs/validation_scatter.png --out-doc docs/validation.md --json "$figures" --write-error-bands
# The page's figures for the accuracy test (tests/validation), compact: the twins' fidelity details (on
# the page) left out, the page's inputs fingerprint recorded beside them.
python3 - "$figures" docs/validation.json <<'EOF'
import json, re, sys
j = json.load(open(sys.argv[1]))
fp = re.search(r"Inputs fingerprint: `([0-9a-f]+)`", open("docs/validation.md").read()).group(1)
if j.setdefault("inputs_fingerprint", fp) != fp:
    sys.exit("validation_page: the JSON and the page were written from different inputs")
j.pop("twin_fidelity", None)
with open(sys.argv[2], "w") as out:
    json.dump(j, out, separators=(",", ":"))
    out.write("\n")
EOF
