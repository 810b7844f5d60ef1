#!/usr/bin/env python3
"""The kernels the libraries pick (issue 34), one launch per problem, for Nsight Compute to name.

Run under ncu by validation/cuda/run_library.sh. Each problem launches two fills (torch.ones, the
operands) and then the library call, so in ncu's CSV the kernels after each pair of fill kernels are
that problem's; the problems, in order, are printed to stdout (problems.csv)."""
import math, sys
import torch
import torch.nn.functional as F

dev = torch.device("cuda")
SQUARE = sorted(set([64, 128, 192, 256, 384, 512, 640, 768, 896, 1000, 1024, 1025, 1026, 1028, 1280, 1536, 1792,
                     1793, 1794, 1796, 1800, 1808, 2048, 2049, 2050, 2052, 2056, 2304, 2560, 3072, 3073, 3584, 4095,
                     4096, 1026, 1030, 2050, 2054, 3074, 3076, 3078, 4092, 4094, 1537, 2561, 3585, 513, 769]
                    + list(range(256, 4097, 256))))
LINEAR = [(8192, 8192, 8192), (8192, 50304, 768), (8192, 50257, 768), (8192, 2304, 768), (8192, 768, 3072),
          (16, 8192, 8192), (128, 14336, 4096), (65536, 128, 4096), (8192, 8192, 128), (1024, 1024, 65536),
          (8192, 8192, 4095), (4096, 32001, 4096), (32, 4097, 4096), (4096, 4098, 4096), (4096, 4096, 4100),
          (2048, 2054, 2048), (4096, 50257, 768)]
print("index,kind,m,n,k")
i = 0
for n in SQUARE:
    a = torch.ones(n, n, device=dev, dtype=torch.bfloat16)
    b = torch.ones(n, n, device=dev, dtype=torch.bfloat16)
    torch.matmul(a, b)
    torch.cuda.synchronize()
    print(f"{i},matmul,{n},{n},{n}"); i += 1
for m, n, k in LINEAR:
    x = torch.ones(m, k, device=dev, dtype=torch.bfloat16)
    w = torch.ones(n, k, device=dev, dtype=torch.bfloat16)
    F.linear(x, w)
    torch.cuda.synchronize()
    print(f"{i},linear,{m},{n},{k}"); i += 1
from torch.nn.attention import sdpa_kernel, SDPBackend
for t, d in ((1024, 128), (4096, 64), (4096, 128)):
    q = torch.ones(2, 16, t, d, device=dev, dtype=torch.bfloat16)
    kv = torch.ones(2, 16, t, d, device=dev, dtype=torch.bfloat16)
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        F.scaled_dot_product_attention(q, kv, kv)
    torch.cuda.synchronize()
    print(f"{i},sdpa_flash_t{t}_d{d},{t},{t},{d}"); i += 1
