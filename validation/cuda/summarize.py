#!/usr/bin/env python3
"""Prints the headline table of a batch folder (CSV files written by gtsim_twins)."""
import csv, os, sys


def rows(d, name):
    p = os.path.join(d, name + ".csv")
    return list(csv.DictReader(open(p))) if os.path.exists(p) else []


def f(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return float("nan")


def main(d):
    out = []
    sc = [r for r in rows(d, "stream_copy") if r["variant"] == "cold"]
    if sc:
        best = max(sc, key=lambda r: f(r["tbps"]))
        out.append(("stream_copy plateau (cold)", f"{f(best['tbps']):.3f} TB/s at n={best['n']}"))
        for r in sc:
            if r["n"] in ("1048576", "268435456"):
                out.append((f"stream_copy n={r['n']}", f"{f(r['median_us']):.2f} us {f(r['tbps']):.3f} TB/s"))
    for r in rows(d, "empty"):
        out.append((f"empty {r['variant']}", f"{f(r['median_us']):.2f} us (graph {f(r.get('graph_median_us')):.2f})"))
    pc = rows(d, "pointer_chase_clock64")
    for r in pc:
        if int(r["footprint_bytes"]) in (16384, 131072, 1 << 20, 4 << 20, 32 << 20, 128 << 20, 512 << 20):
            out.append((f"chase {int(r['footprint_bytes']) >> 10} KiB",
                        f"{f(r['cycles_per_hop']):.0f} cyc {f(r['ns_per_hop']):.1f} ns/hop"))
    fw = {int(r["ctas"]): f(r["median_us"]) for r in rows(d, "fixed_work")}
    for a, b in ((132, 133), (264, 265), (396, 397)):
        if a in fw and b in fw:
            out.append((f"fixed_work {a}->{b}", f"{fw[a]:.1f} -> {fw[b]:.1f} us (x{fw[b] / fw[a]:.3f})"))
    if 1 in fw and 132 in fw:
        out.append(("fixed_work 132/1", f"x{fw[132] / fw[1]:.3f}"))
    st = rows(d, "strided_copy")
    if st:
        out.append(("strided useful TB/s", " ".join(f"s{r['stride']}:{f(r['useful_tbps']):.2f}" for r in st)))
    bc = rows(d, "bank_conflicts")
    if bc:
        out.append(("bank_conflicts us", " ".join(f"s{r['stride']}:{f(r['median_us']):.1f}" for r in bc)))
    dv = rows(d, "divergence")
    if dv:
        out.append(("divergence us", " ".join(f"w{r['ways']}:{f(r['median_us']):.1f}" for r in dv)))
    for r in rows(d, "mma_throughput"):
        out.append((f"mma {r['variant']}", f"{f(r['tflops']):.1f} TFLOP/s, {f(r['flops_per_sm_per_cycle_nvml']):.0f} flop/SM/cyc"))
    for r in rows(d, "canary"):
        p = r["params"].split(";")[0]
        out.append((f"canary {r['pass']} {r['kernel']} {p}", f"{f(r['median_us']):.1f} us sm {r['sm_mhz_after']} MHz {r['check']}"))
    gm = rows(d, "gemm_tiled")
    for r in gm:
        if r["variant"] == "square" or (r["variant"] == "n_sweep" and r["N"] in ("128", "1024", "4096", "8192")):
            out.append((f"gemm {r['M']}x{r['N']}x{r['K']} vec{r['vec']}",
                        f"{f(r['median_us']):.1f} us {f(r['tflops']):.1f} TFLOP/s err {f(r['rel_err']):.1e} {r['check']}"))
    al = [r for r in gm if r["variant"] == "square_align"]
    if al:
        out.append(("gemm 1024..1100 TFLOP/s", f"min {min(f(r['tflops']) for r in al):.0f} max {max(f(r['tflops']) for r in al):.0f}"))
    for name, key in (("elementwise", "tbps"), ("softmax", "tbps"), ("attention", "tflops")):
        for r in rows(d, name):
            shape = r.get("T", r.get("n", ""))
            out.append((f"{name} {r['variant']} {shape}", f"{f(r['median_us']):.1f} us {f(r[key]):.2f} {key} {r['check']}"))
    fails = 0
    for name in os.listdir(d):
        if name.endswith(".csv") and name not in ("manifest.csv", "clocks.csv", "ncu.csv", "nvidia_smi.csv"):
            fails += sum(1 for r in rows(d, name[:-4]) if r.get("check") == "FAIL")
    out.append(("rows with check=FAIL", str(fails)))
    w = max(len(k) for k, _ in out)
    print("=" * 30, "summary", os.path.basename(d.rstrip("/")))
    for k, v in out:
        print(f"{k:<{w}}  {v}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
