#!/bin/sh
# Run every command block of docs/tutorials/*.md and README.md and rewrite its output (--check: compare
# only, exit 1 on a difference). The convention and the masked fields: scripts/tutorials.py, docs/tutorials/README.md.
exec python3 "$(dirname "$0")/tutorials.py" "$@"
