#!/usr/bin/python3
"""PyTorch training throughput on the xwires architectures, side by side with
bench/train_throughput (same model, batch, threads; Adam + cross-entropy,
random images, timing after warm-up steps).

    /usr/bin/python3 bench/peer_torch_throughput.py --arch resnet20 --threads 2 --batch 128

prints "arch=... profile=pytorch-<version>[+openblas] threads=... batch=... images_per_s=...".
Needs Debian's python3-torch and python3-torchvision (not part of the CI set).

Debian's torch takes its GEMM from the system libblas.so.3, which is the
reference (netlib) BLAS unless an optimised one is selected; convolutions go
through oneDNN either way. `--blas openblas` re-runs the script with
libopenblas0-pthread's libblas.so.3 first on the library path (and
OPENBLAS_NUM_THREADS = --threads), which is how a tuned install of PyTorch
does its linear layers. Quote both when comparing.
"""
import argparse
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "fixtures", "torch_models"))
import xw_models  # noqa: E402

OPENBLAS_DIR = "/usr/lib/x86_64-linux-gnu/openblas-pthread"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="resnet20")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--width", type=float, default=1.0)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--side", type=int, default=32)
    ap.add_argument("--blas", choices=["system", "openblas"], default="system")
    a = ap.parse_args()
    if a.blas == "openblas" and os.environ.get("XW_PEER_BLAS") != "openblas":
        env = dict(os.environ, XW_PEER_BLAS="openblas", OPENBLAS_NUM_THREADS=str(a.threads),
                   LD_LIBRARY_PATH=OPENBLAS_DIR + ":" + os.environ.get("LD_LIBRARY_PATH", ""))
        if not os.path.exists(os.path.join(OPENBLAS_DIR, "libblas.so.3")):
            sys.exit("--blas openblas needs Debian's libopenblas0-pthread (%s)" % OPENBLAS_DIR)
        os.execve(sys.executable, [sys.executable] + sys.argv, env)
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = xw_models.build(a.arch, (3, a.side, a.side), 10, a.width)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    n = a.batch * (a.steps + a.warmup)
    x = torch.rand(n, 3, a.side, a.side)
    y = torch.arange(n) % 10
    start = time.perf_counter()
    for s in range(a.steps + a.warmup):
        if s == a.warmup:
            start = time.perf_counter()
        b = slice(s * a.batch, (s + 1) * a.batch)
        opt.zero_grad()
        loss = F.cross_entropy(model(x[b]), y[b])
        loss.backward()
        opt.step()
    seconds = time.perf_counter() - start
    blas = "+openblas" if a.blas == "openblas" else ""
    print("arch=%s profile=pytorch-%s%s threads=%d batch=%d width=%g images_per_s=%.1f" %
          (a.arch, torch.__version__, blas, a.threads, a.batch, a.width,
           a.batch * a.steps / seconds))


if __name__ == "__main__":
    main()
