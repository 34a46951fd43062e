#!/usr/bin/python3
"""Suggest time of xwires' GP optimizer next to scikit-learn's GP.

Runs build/bench/bench_hpo (Google Benchmark, JSON output) and times
scikit-learn's GaussianProcessRegressor fit + predict on the same data, then
prints one table with the ratios.

Data, identical on both sides: x_i = unscrambled Sobol point i + 1 in [0,1]^d
(scipy's qmc.Sobol equals xw::hpo::Sobol), y_i = Hartmann6(x_i) for d = 6 and
Hartmann6(x_i, 0.5, 0.5) for d = 4.

The scikit-learn side is what scikit-optimize does per suggestion (minus its
acquisition optimisation, so it is a lower bound of skopt's cost): a fresh
GaussianProcessRegressor(ConstantKernel(1, (0.01, 1000)) * Matern(ones(d),
(0.01, 100), nu=2.5) + WhiteKernel(1, (1e-5, 1e5)), normalize_y=True,
n_restarts_optimizer=2) fitted to n points, then predict(10,000 candidates,
return_std=True).

Two measures (--measure):
  cpu  (default) single thread on both sides (xwires --threads=1, BLAS and
       OpenMP pinned to 1 thread), process CPU milliseconds. Stable on a
       shared machine; the fair per-core comparison.
  wall both libraries with all cores, wall-clock milliseconds. Only
       meaningful on an otherwise idle machine.
Each figure is the fastest of --repeats repetitions.

xwires columns:
  cold   a fresh optimizer's first suggestion: hyperparameter fit from the
         default start + 2 random restarts, factorisation, 10,000 candidates,
         L-BFGS polishing of all three gp_hedge arms (the like-for-like
         comparison with scikit-learn).
  incr   a suggestion after one more observation without refit.
  warm   a hyperparameter refit warm-started from the fit at n - 4.
  amort  the default schedule's average: incr + (9 warm + (cold - incr)) / 40
         (refit every 4 tells, random restarts every 40).

Usage: /usr/bin/python3 bench/gp_sklearn_peer.py [--bench PATH] [--repeats N]
                                                 [--measure cpu|wall]
Needs Debian's python3-sklearn (use /usr/bin/python3, not a pyenv python).
"""
import argparse
import json
import os
import subprocess
import sys
import time

import warnings

import numpy as np

try:
    from scipy.stats import qmc
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel
except ImportError as e:  # pragma: no cover
    sys.exit(f"gp_sklearn_peer: {e}; install python3-sklearn and run with /usr/bin/python3")

SIZES = [(n, d) for d in (4, 6) for n in (50, 200, 400)]

ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
A = np.array([[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14],
              [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]])
P = 1e-4 * np.array([[1312, 1696, 5569, 124, 8283, 5886],
                     [2329, 4135, 8307, 3736, 1004, 9991],
                     [2348, 1451, 3522, 2883, 3047, 6650],
                     [4047, 8828, 8732, 5743, 1091, 381]])


def hartmann6(x):
    return -np.sum(ALPHA * np.exp(-np.sum(A * (x[:, None, :] - P) ** 2, axis=2)), axis=1)


def make_data(n, d):
    x = qmc.Sobol(d, scramble=False).random(n + 1)[1:]
    padded = np.full((n, 6), 0.5)
    padded[:, :d] = x
    return x, hartmann6(padded)


def sklearn_ms(n, d, repeats, clock):
    x, y = make_data(n, d)
    cand = qmc.Sobol(d, scramble=True, seed=0).random(10000)
    best = float("inf")
    for r in range(repeats):
        kernel = (ConstantKernel(1.0, (0.01, 1000.0)) *
                  Matern(np.ones(d), [(0.01, 100.0)] * d, nu=2.5) +
                  WhiteKernel(1.0, (1e-5, 1e5)))
        t = clock()
        gp = GaussianProcessRegressor(kernel, normalize_y=True, n_restarts_optimizer=2,
                                      random_state=r).fit(x, y)
        gp.predict(cand, return_std=True)
        best = min(best, (clock() - t) * 1e3)
    return best


def xwires_ms(bench, repeats, cpu):
    out = subprocess.run(
        [bench] + (["--threads=1"] if cpu else []) +
        ["--benchmark_format=json", f"--benchmark_repetitions={repeats}",
         "--benchmark_filter=BM_(SuggestCold|SuggestIncremental|RefitWarm)"],
        check=True, capture_output=True, text=True).stdout
    res = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        name, n, d = b["run_name"].split("/")[:3]
        key = (name, int(n.split(":")[1]), int(d.split(":")[1]))
        value = b["cpu_ms"] if cpu else b["real_time"]
        res[key] = min(res.get(key, float("inf")), value)
    return res


def main():
    warnings.filterwarnings("ignore")  # sklearn convergence notes, scipy Sobol sizes
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", default=os.path.join(here, "..", "build", "bench", "bench_hpo"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--measure", choices=["cpu", "wall"], default="cpu")
    args = ap.parse_args()
    cpu = args.measure == "cpu"
    clock = time.process_time if cpu else time.perf_counter
    xw = xwires_ms(args.bench, args.repeats, cpu)
    print(f"{'n':>4} {'d':>2} | {'cold':>8} {'incr':>7} {'warm':>7} {'amort':>7} | "
          f"{'sklearn':>9} | {'skl/cold':>8} {'skl/amort':>9}")
    for n, d in SIZES:
        cold = xw[("BM_SuggestCold", n, d)]
        incr = xw[("BM_SuggestIncremental", n, d)]
        warm = xw[("BM_RefitWarm", n, d)]
        amort = incr + (9 * warm + (cold - incr)) / 40
        skl = sklearn_ms(n, d, args.repeats, clock)
        print(f"{n:>4} {d:>2} | {cold:8.1f} {incr:7.1f} {warm:7.1f} {amort:7.1f} | "
              f"{skl:9.1f} | {skl / cold:8.1f} {skl / amort:9.1f}")
    print(("process CPU ms, one thread" if cpu else "wall-clock ms, all cores") +
          f"; fastest of {args.repeats} repetitions")


if __name__ == "__main__":
    main()
