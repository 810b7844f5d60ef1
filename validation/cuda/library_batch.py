#!/usr/bin/env python3
"""What the libraries run (issue 34): cuBLAS's bf16 GEMM through torch.matmul and PyTorch's attention.

Run on the device machine by validation/cuda/run_library.sh; writes into DIR (argv[1]):
  device.json          the GPU's properties, driver, runtime, torch/cuBLAS versions, date
  cublas_square.csv    every n from N0 to N1 (argv[2:4], default 64..4096): C = A @ B, all n x n bf16
                       row-major (cuBLAS sees the transposed product, "NN"), random normal operands.
                       time_us: GPU time per GEMM, from a CUDA graph of R launches replayed (no host
                       launch cost) and timed by CUDA events, R chosen so a replay lasts >= 2 ms;
                       the graph rotates through enough operand copies to span twice the L2 (each
                       launch finds the L2 the launches before it left on other buffers: cold
                       operands); time_us_hot: the same graph on one set of operands (the L2 hot).
                       (b45 timed a loop of eager calls instead: host-bound below n ~ 1700.)
  cublas_shapes.csv    LLM, non-square and skinny shapes, as y = x @ W^T (torch.nn.functional.linear,
                       x M x K, W N x K): the form of a transformer's projections and lm_head
  attention.csv        scaled_dot_product_attention per backend (flash, efficient, cudnn; bf16,
                       non-causal) and eager PyTorch's naive attention (QK^T, scale, cast to f32,
                       softmax, cast back, PV: six kernels), B = 2, H = 16, T = 512..8192, d = 64, 128
  cold_sample.csv      a sample of square n timed eagerly with the L2 flushed before each launch
Each CSV row carries the time in microseconds and the throughput in TFLOP/s (2*M*N*K per GEMM;
4*B*H*T*T*d per attention forward).
"""
import csv, json, math, os, subprocess, sys, time, datetime
import torch
import torch.nn.functional as F

out = sys.argv[1]
n0 = int(sys.argv[2]) if len(sys.argv) > 2 else 64
n1 = int(sys.argv[3]) if len(sys.argv) > 3 else 4096
os.makedirs(out, exist_ok=True)
dev = torch.device("cuda")
torch.manual_seed(0)


def timed(fn, min_ms=2.0, warm=3, max_reps=2000):
    """Eager launches in a loop (host launch cost included)."""
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); fn(); e.record(); torch.cuda.synchronize()
    one = max(s.elapsed_time(e), 1e-3)
    reps = int(min(max_reps, max(5, math.ceil(min_ms / one))))
    s.record()
    for _ in range(reps):
        fn()
    e.record(); torch.cuda.synchronize()
    return s.elapsed_time(e) * 1000.0 / reps, reps


def graphed(fns, min_ms=2.0, max_reps=4000, min_reps=8):
    """GPU time per call of a CUDA graph that calls fns[0], fns[1], ... in turn R times in all."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for f in fns:
            f()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); fns[0](); e.record(); torch.cuda.synchronize()
    one = max(s.elapsed_time(e), 1e-3)
    reps = int(min(max_reps, max(len(fns), min_reps, math.ceil(min_ms / one))))
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(reps):
            fns[i % len(fns)]()
    g.replay(); torch.cuda.synchronize()
    best = None
    for _ in range(2):
        s.record(); g.replay(); e.record(); torch.cuda.synchronize()
        t = s.elapsed_time(e) * 1000.0 / reps
        best = t if best is None else min(best, t)
    del g
    return best, reps


def device_json():
    p = torch.cuda.get_device_properties(0)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=uuid,name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,"
                          "clocks.max.mem,temperature.gpu,power.draw,power.limit", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    return {
        "date_utc": datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"),
        "name": p.name, "sm_count": p.multi_processor_count, "l2_bytes": getattr(p, "L2_cache_size", None),
        "global_mem_bytes": p.total_memory, "cc": f"{p.major}.{p.minor}",
        "torch": torch.__version__, "cuda_runtime": torch.version.cuda,
        "cublas": torch._C._cuda_getCompiledVersion() if hasattr(torch._C, "_cuda_getCompiledVersion") else None,
        "cudnn": torch.backends.cudnn.version(), "nvidia_smi": smi,
        "matmul_allow_bf16_reduced_precision_reduction":
            torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
    }


def write(name, header, rows):
    with open(os.path.join(out, name), "w", newline="") as f:
        w = csv.writer(f); w.writerow(header); w.writerows(rows)


def square_curve():
    # rows are written as they come (a call cut short keeps what it measured); SQ_DEADLINE (seconds)
    # stops the curve early so the rest of the batch runs
    t0 = time.time()
    deadline = float(os.environ.get("SQ_DEADLINE", "1e9"))
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    with open(os.path.join(out, "cublas_square.csv"), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["m", "n", "k", "time_us", "tflops", "time_us_hot", "operand_copies", "repeats"])
        for n in range(n0, n1 + 1, int(os.environ.get("STEP", "1"))):  # STEP: every n by default
            if time.time() - t0 > deadline:
                print(f"square curve stopped at n={n} (SQ_DEADLINE {deadline:.0f} s)", flush=True)
                break
            copies = int(min(64, max(1, math.ceil(2 * l2 / (3 * n * n * 2)))))
            sets = [tuple(torch.randn(n, n, device=dev, dtype=torch.bfloat16) for _ in range(2)) +
                    (torch.empty(n, n, device=dev, dtype=torch.bfloat16),) for _ in range(copies)]
            fns = [(lambda a=a, b=b, c=c: torch.matmul(a, b, out=c)) for a, b, c in sets]
            us, reps = graphed(fns, min_ms=1.0)
            hot = graphed(fns[:1], min_ms=1.0)[0] if n % 8 == 0 or copies == 1 else None  # every 8th n (time)
            w.writerow([n, n, n, f"{us:.3f}", f"{2.0 * n ** 3 / us / 1e6:.2f}", "" if hot is None else f"{hot:.3f}",
                        copies, reps])
            fh.flush()
            if n % 512 == 0:
                print(f"square n={n} ({time.time() - t0:.0f} s)", flush=True)
            del sets, fns


SHAPES = [  # (label, M, N, K)
    ("square", 8192, 8192, 8192), ("square", 6144, 6144, 6144),
    ("lm_head_gpt2_padded", 8192, 50304, 768), ("lm_head_gpt2", 8192, 50257, 768),
    ("qkv_gpt2", 8192, 2304, 768), ("mlp_up_gpt2", 8192, 3072, 768), ("mlp_down_gpt2", 8192, 768, 3072),
    ("llama8b_qkv", 8192, 6144, 4096), ("llama8b_up", 8192, 28672, 4096), ("llama8b_down", 8192, 4096, 14336),
    ("decode_skinny", 16, 8192, 8192), ("decode_skinny", 64, 8192, 8192), ("decode_skinny", 128, 14336, 4096),
    ("tall_skinny", 65536, 128, 4096), ("small_k", 8192, 8192, 128), ("large_k", 1024, 1024, 65536),
    ("odd_k", 8192, 8192, 4095), ("odd_n", 8192, 8191, 8192), ("odd_m", 8191, 8192, 8192),
    # new in b46 (never measured before): vocabularies padded and not, Llama-3 8B at M = 4096, decode,
    # rows that break 16-byte alignment by 2, 4 and 6 bytes, wide N and K
    ("lm_head_gpt2_m4096", 4096, 50257, 768), ("lm_head_gpt2_padded_m4096", 4096, 50304, 768),
    ("llama2_lm_head", 8192, 32000, 4096), ("llama2_lm_head_odd", 4096, 32001, 4096),
    ("llama3_up_m4096", 4096, 14336, 4096), ("llama3_down_m4096", 4096, 4096, 14336),
    ("bert_qkv", 4096, 2304, 768), ("decode_m32", 32, 4096, 4096), ("decode_m32_odd", 32, 4097, 4096),
    ("n_mod8_2", 4096, 4098, 4096), ("k_mod8_4", 4096, 4096, 4100), ("n_mod8_6", 2048, 2054, 2048),
    ("square", 5120, 5120, 5120), ("wide_n", 2048, 16384, 2048), ("wide_k", 2048, 2048, 16384),
]


def shapes():
    rows = []
    for label, m, n, k in SHAPES:
        x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        w = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
        y = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
        us, reps = graphed([lambda: torch.matmul(x, w.t(), out=y)])
        rows.append([label, m, n, k, f"{us:.3f}", f"{2.0 * m * n * k / us / 1e6:.2f}", reps])
        del x, w, y
        print(f"{label} {m}x{n}x{k} done", flush=True)
    write("cublas_shapes.csv", ["label", "m", "n", "k", "time_us", "tflops", "repeats"], rows)


def naive_attention(q, k, v, scale):
    s = torch.matmul(q, k.transpose(-2, -1))
    s = s * scale
    s = s.float()
    p = torch.softmax(s, dim=-1)
    p = p.to(q.dtype)
    return torch.matmul(p, v)


def attention():
    from torch.nn.attention import sdpa_kernel, SDPBackend
    backends = [("flash", SDPBackend.FLASH_ATTENTION), ("efficient", SDPBackend.EFFICIENT_ATTENTION),
                ("cudnn", SDPBackend.CUDNN_ATTENTION)]
    rows = []
    B, H = 2, 16
    for d in (64, 128):
        for T in (512, 1024, 2048, 4096, 8192):
            q, k, v = (torch.randn(B, H, T, d, device=dev, dtype=torch.bfloat16) for _ in range(3))
            flops = 4.0 * B * H * T * T * d
            for name, be in backends:
                try:
                    with sdpa_kernel([be]):
                        us, reps = graphed([lambda: F.scaled_dot_product_attention(q, k, v)])
                    rows.append([f"sdpa_{name}", B, H, T, d, f"{us:.3f}", f"{flops / us / 1e6:.2f}", reps])
                except Exception as ex:  # a backend this build or shape does not have
                    rows.append([f"sdpa_{name}", B, H, T, d, "", "", f"unavailable: {type(ex).__name__}"])
            scale = 1.0 / math.sqrt(d)
            us, reps = graphed([lambda: naive_attention(q, k, v, scale)], min_ms=1.0, max_reps=50, min_reps=2)
            rows.append(["naive_pytorch", B, H, T, d, f"{us:.3f}", f"{flops / us / 1e6:.2f}", reps])
            print(f"attention T={T} d={d} done", flush=True)
            del q, k, v
            torch.cuda.empty_cache()
    write("attention.csv", ["kernel", "b", "h", "t", "d", "time_us", "tflops", "repeats"], rows)


def cold_sample():
    flush = torch.empty(256 * 2 ** 20, device=dev, dtype=torch.uint8)
    rows = []
    for n in (256, 512, 1024, 1536, 1792, 1793, 2048, 2049, 3072, 4096):
        a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
        b = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
        c = torch.empty(n, n, device=dev, dtype=torch.bfloat16)
        for _ in range(3):
            torch.matmul(a, b, out=c)
        ts = []
        for _ in range(10):
            flush.fill_(1)
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record(); torch.matmul(a, b, out=c); e.record(); torch.cuda.synchronize()
            ts.append(s.elapsed_time(e) * 1000.0)
        ts.sort()
        us = ts[len(ts) // 2]
        rows.append([n, n, n, f"{us:.3f}", f"{2.0 * n ** 3 / us / 1e6:.2f}", 10])
    write("cold_sample.csv", ["m", "n", "k", "time_us_median", "tflops", "repeats"], rows)


if __name__ == "__main__":
    what = os.environ.get("WHAT", "all").split(",")
    with open(os.path.join(out, "device.json"), "w") as f:
        json.dump(device_json(), f, indent=2)
    if "all" in what or "square" in what:
        square_curve()
    if "all" in what or "shapes" in what:
        shapes()
    if "all" in what or "attention" in what:
        attention()
    if "all" in what or "cold" in what:
        cold_sample()
