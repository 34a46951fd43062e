#!/usr/bin/python3
"""PyTorch training throughput on the xwires architectures, side by side with
bench/train_throughput (same model, batch, threads; Adam + cross-entropy,
random images, timing after warm-up steps).

    /usr/bin/python3 bench/peer_torch_throughput.py --arch resnet20 --threads 2 --batch 128

prints "arch=... profile=pytorch-<version> threads=... batch=... images_per_s=...".
Needs Debian's python3-torch and python3-torchvision.
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="resnet20")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--width", type=float, default=1.0)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--side", type=int, default=32)
    a = ap.parse_args()
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
    print("arch=%s profile=pytorch-%s threads=%d batch=%d width=%g images_per_s=%.1f" %
          (a.arch, torch.__version__, a.threads, a.batch, a.width, a.batch * a.steps / seconds))


if __name__ == "__main__":
    main()
