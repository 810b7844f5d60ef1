"""Errors are Python exceptions carrying the CLI's file:line:col diagnostics."""
import os
import re
import tempfile

from common import A100, GEMM, cli, done, expect, gtsim

LOC = re.compile(r"[^\s:]+:\d+:\d+")

# a bad --set value
try:
    gtsim.run(A100, GEMM, params={"M": 256}, sets={"sm.count": "many"})
    expect(False, "bad --set raises")
except gtsim.InputError as e:
    _, _, err = cli("run", "--hw", A100, "--kernel", GEMM, "--param", "M=256", "--set", "sm.count=many", check=False)
    expect(str(e) == err.strip(), f"bad --set: message {str(e)!r} is the CLI's {err.strip()!r}")
    expect(LOC.search(str(e)) is not None, f"bad --set: file:line:col in {str(e)!r}")
    expect(isinstance(e, ValueError), "InputError is a ValueError")

# compare's sets apply to every machine: a key one of them lacks is refused, naming it
try:
    gtsim.compare("docs/figures/mlp_small.yaml", [A100, "hw_configs/tpu-v5e.yaml"], sets={"l2.size_bytes": 1048576})
    expect(False, "compare with a key the TPU lacks raises")
except gtsim.InputError as e:
    expect("tpu-v5e.yaml" in str(e), f"compare --set: the machine is named in {str(e)!r}")

# a bad kernel path
try:
    gtsim.run(A100, "kernels_ir/lib/no_such_kernel.kir")
    expect(False, "bad kernel path raises")
except gtsim.InputError as e:
    expect("no_such_kernel.kir" in str(e), f"bad kernel path named: {str(e)!r}")

# a kernel with a syntax error: file:line:col of the bad token
with tempfile.TemporaryDirectory() as d:
    bad = os.path.join(d, "bad.kir")
    with open(bad, "w") as f:
        f.write("kernel k(n = 4) {\n  grid 1\n  block 32\n  x = = 3\n}\n")
    for call in (lambda: gtsim.run(A100, bad), lambda: gtsim.load_kernel(bad)):
        try:
            call()
            expect(False, "bad kernel raises")
        except gtsim.InputError as e:
            m = re.search(re.escape(bad) + r":(\d+):(\d+)", str(e))
            expect(m is not None and m.group(1) == "4", f"bad kernel: {bad}:4:col in {str(e)!r}")

# a bad config path for load_config
try:
    gtsim.load_config("hw_configs/no_such.yaml")
    expect(False, "bad config raises")
except gtsim.InputError as e:
    expect("no_such.yaml" in str(e), f"bad config named: {str(e)!r}")

# an option the subcommand does not take
try:
    gtsim.run(A100, GEMM, no_such_option=3)
    expect(False, "unknown option raises")
except gtsim.UsageError as e:
    expect("no-such-option" in str(e), f"unknown option named: {str(e)!r}")
done()
