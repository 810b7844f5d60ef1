"""The module returns the CLI's numbers: run, waves and sweep against the gtsim executable."""
from common import A100, GEMM, cli, cli_json, done, expect, gtsim

# run: the whole JSON document, so every number (cycles, time_us, DRAM bytes, waves, ...) agrees
args = ["run", "--hw", A100, "--kernel", GEMM, "--param", "M=512", "--param", "N=512", "--param", "K=512"]
want = cli_json(*args, "--json", "-")
got = gtsim.run(hw=A100, kernel=GEMM, params={"M": 512, "N": 512, "K": 512})
for key in ("cycles", "time_us"):
    expect(got.get(key) == want.get(key), f"run {key}: module {got.get(key)} == CLI {want.get(key)}")
dram = [k for k in want if "dram" in k.lower()]
expect(bool(dram), f"run JSON has DRAM fields {dram}")
for k in dram:
    expect(got.get(k) == want.get(k), f"run {k} equal")
# everything but the host's wall-clock time of the simulation
WALL = ("sim_wall_seconds",)


def same(a, b):
    return {k: v for k, v in a.items() if k not in WALL} == {k: v for k, v in b.items() if k not in WALL}


expect(same(got, want), "run: the whole JSON document equal (but sim_wall_seconds)")

# the same through the generic entry point and a --set given as a list
got2 = gtsim.run(A100, GEMM, params=["M=512", "N=512", "K=512"], sets=["sm.count=8"])
want2 = cli_json(*args, "--set", "sm.count=8", "--json", "-")
expect(same(got2, want2), "run with --set sm.count=8 equal")
expect(got2["cycles"] != got["cycles"], "the --set changed the result")

# waves
want = cli_json("waves", "--hw", A100, "--gemm", "1024x1024x1024", "--no-suggestions", "--json", "-")
got = gtsim.waves(A100, (1024, 1024, 1024), suggestions=False)
expect(same(got, want), "waves 1024^3 equal")

# gemm: the pick, its time and the ranked candidates
want = cli_json("gemm", "--hw", A100, "512", "512", "512", "--json", "-")
got = gtsim.gemm(A100, (512, 512, 512))
expect(same(got, want), "gemm 512^3 equal")
expect(got.get("kernel", "").endswith(".kir") and got.get("time_us", 0) > 0, "gemm names its kernel and time")

# sweep: the CSV rows
_, csv_text, _ = cli("sweep", "--hw", A100, "--kernel", GEMM, "--param", "M,N,K=256:512:256", "--no-progress")
rows = gtsim.sweep(A100, kernel=GEMM, params={"M,N,K": range(256, 513, 256)}, as_frame=False)
want_rows = gtsim._csv_rows(csv_text)
expect(len(rows) == 2, f"sweep: 2 rows ({len(rows)})")
expect(rows == want_rows, "sweep rows equal to the CLI's CSV")

# load_config / load_kernel
cfg = gtsim.load_config(A100, sets={"sm.count": 54})
expect(isinstance(cfg, dict) and cfg["sm"]["count"] == 54, "load_config applies sets")
k = gtsim.load_kernel(GEMM, params={"M": 512, "N": 512, "K": 512}, hw=A100)
expect(k["name"] == "gemm_tiled" and k["launch"]["params"]["M"] == 512, "load_kernel name and params")
expect(k["launch"]["ctas"] == want_rows[0].get("ctas", k["launch"]["ctas"]), "load_kernel launch shape")
done()
