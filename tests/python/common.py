"""Shared setup of the Python tests: run from the source tree (ctest sets the working directory),
with PYTHONPATH naming build/python and GTSIM_BIN the gtsim executable of the same build."""
import json
import os
import subprocess
import sys

SRC = os.environ.get("GTSIM_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
os.chdir(SRC)
GTSIM_BIN = os.environ.get("GTSIM_BIN", os.path.join(SRC, "build", "cli", "gtsim"))

import gtsim  # noqa: E402  (after the chdir: relative paths resolve against the source tree)

A100 = "hw_configs/a100-40gb.yaml"
GEMM = "kernels_ir/lib/gemm_tiled.kir"


def cli(*args, check=True):
    """Runs the gtsim executable; returns (exit code, stdout, stderr)."""
    p = subprocess.run([GTSIM_BIN, *args], capture_output=True, text=True)
    if check and p.returncode != 0:
        sys.exit(f"gtsim {' '.join(args)} failed ({p.returncode}): {p.stderr}")
    return p.returncode, p.stdout, p.stderr


def cli_json(*args):
    return json.loads(cli(*args)[1])


failures = []


def expect(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def done():
    if failures:
        sys.exit(f"{len(failures)} check(s) failed: {failures}")
    print("all checks passed")
