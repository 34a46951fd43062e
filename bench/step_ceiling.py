#!/usr/bin/env python3
"""The speed a training step could reach if it did nothing but its kernels.

Sums the wall time bench_kernels measures for every convolution and Linear
pass of one VGG-11 training step at batch 128 (forward, data gradient except
the first layer's, filter / weight gradient), per profile: tf = im2col
convolutions and Eigen GEMMs, torch = direct lanes8 FMA and the owned lanes8
GEMM, reference = direct sequential and the owned sequential GEMM. The
result, 128 images over that sum, is an upper bound for
compare_train_throughput.sh's images/s (no ReLU, pooling, loss, Adam or
copies), so a goal above it cannot be met by anything but faster kernels.

  bench/step_ceiling.py --bench build/bench/bench_kernels [--pytorch 154.6]
  bench/step_ceiling.py --json out.json     # bench_kernels --benchmark_format=json output

Each layer counts with its best (lowest) wall time over the runs in the
input, so repetitions (--repetitions, default 2) damp a noisy machine.
"""
import argparse
import json
import subprocess
import sys

BATCH = 128
# VGG-11 on CIFAR (torchvision cfg "A"): bench_kernels layer name, how many
# times the step runs it, and whether its data gradient is computed (the
# first layer's input needs none).
VGG11_CONVS = [
    ("vgg11_b128_3to64", 1, False),
    ("vgg11_b128_64to128", 1, True),
    ("vgg11_b128_128to256", 1, True),
    ("vgg11_b128_256c_8px", 1, True),
    ("vgg11_b128_256to512", 1, True),
    ("vgg11_b128_512c_4px", 1, True),
    ("vgg11_b128_512c_2px", 2, True),
]
# The classifier's 512 -> 4096 and 4096 -> 4096 Linears (rows, in, out); the
# 4096 -> 10 one is under 0.3% of the step and has no benchmark.
VGG11_DENSE = ["128/512/4096", "128/4096/4096"]
PROFILES = {
    "tf": ("im2col", "eigen"),
    "torch": ("direct_lanes8_fma", "owned_lanes8_fma"),
    "reference": ("direct_sequential", "owned_sequential"),
}


def run_bench(path, repetitions, min_time):
    shapes = "|".join(VGG11_DENSE)
    cmd = [path, f"--benchmark_filter=conv/vgg11_b128|dense/.*/({shapes})",
           f"--benchmark_repetitions={repetitions}", f"--benchmark_min_time={min_time}s",
           "--benchmark_format=json"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        sys.exit(f"step_ceiling: cannot run {path}: {e.strerror}")
    if done.returncode != 0:
        sys.exit(f"step_ceiling: {path} exited with {done.returncode}: {done.stderr.strip()}")
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError as e:
        sys.exit(f"step_ceiling: {path} printed no JSON report ({e})")


def read_report(path):
    try:
        with open(path) as f:
            report = json.load(f)
    except OSError as e:
        sys.exit(f"step_ceiling: cannot read {path}: {e.strerror}")
    except json.JSONDecodeError as e:
        sys.exit(f"step_ceiling: {path} is not a bench_kernels JSON report ({e})")
    if not isinstance(report, dict) or not isinstance(report.get("benchmarks"), list):
        sys.exit(f"step_ceiling: {path} has no 'benchmarks' list (not a bench_kernels JSON report)")
    return report


def best_times(report):
    """Lowest wall time in ms per benchmark key (name without its options)."""
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
    best = {}
    for b in report["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration":
            continue
        parts = [p for p in b["run_name"].split("/") if ":" not in p and p != "process_time"]
        key = "/".join(parts)
        ms = b["real_time"] * scale[b.get("time_unit", "ms")]
        best[key] = min(best.get(key, float("inf")), ms)
    return best


def step_ms(best, conv_algo, gemm):
    missing = []

    def get(key):
        if key not in best:
            missing.append(key)
            return 0.0
        return best[key]

    conv = 0.0
    for name, count, data_grad in VGG11_CONVS:
        passes = ["forward", "filter_grad"] + (["data_grad"] if data_grad else [])
        conv += count * sum(get(f"conv/{name}/{conv_algo}/{p}") for p in passes)
    dense = sum(get(f"dense/{gemm}/{p}/{shape}") for shape in VGG11_DENSE
                for p in ("forward", "data_grad", "weight_grad"))
    if missing:
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        sys.exit("step_ceiling: no measurement for " + ", ".join(missing[:3]) + more +
                 " (run bench_kernels with the filter in run_bench, or pass --bench)")
    return conv, dense


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--bench", help="bench_kernels binary to run")
    src.add_argument("--json", help="bench_kernels --benchmark_format=json output")
    ap.add_argument("--repetitions", type=int, default=2)
    ap.add_argument("--min-time", type=float, default=1.0, help="seconds per benchmark")
    ap.add_argument("--pytorch", type=float, help="PyTorch's VGG-11 images/s, for ratios")
    a = ap.parse_args()
    if a.bench:
        report = run_bench(a.bench, a.repetitions, a.min_time)
    else:
        report = read_report(a.json)
    best = best_times(report)
    rows = [(prof, *step_ms(best, algo, gemm)) for prof, (algo, gemm) in PROFILES.items()]
    ctx = report.get("context", {})
    print(f"VGG-11, batch {BATCH}, kernels only; kernel_target: {ctx.get('kernel_target', '?')}")
    head = f"{'profile':10s} {'conv ms':>8s} {'dense ms':>9s} {'step ms':>8s} {'images/s':>9s}"
    print(head + ("  x PyTorch" if a.pytorch else ""))
    for prof, conv, dense in rows:
        ips = BATCH * 1000.0 / (conv + dense)
        line = f"{prof:10s} {conv:8.1f} {dense:9.1f} {conv + dense:8.1f} {ips:9.1f}"
        print(line + (f"  {ips / a.pytorch:9.2f}" if a.pytorch else ""))

if __name__ == "__main__":
    main()
