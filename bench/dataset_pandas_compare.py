#!/usr/bin/python3
"""Side by side: the same filter done the way the original CrossedWires API did
(pandas reading the CSV, then a boolean mask) and with xwires.

Uses the 1,000,000-trial dataset that build/bench/bench_dataset leaves in
/tmp/xwires-bench-dataset (run that first), exports it once to CSV with
`xwires export`, then times random queries of the benchmark's shape: one decade
of lr, a batch_size window of 200, diff > 0.3.

  /usr/bin/python3 bench/dataset_pandas_compare.py [--dataset DIR] [--xwires BIN]

Reports medians and ratios for:
  pandas read_csv + filter   (the original API: every new process loads the CSV)
  pandas filter only         (DataFrame already in memory)
  xwires query --count       (a whole CLI process: open, query, print)
  xw::Dataset::Count         (C++ API, from bench_dataset's BM_QueryCount, if given)
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

import pandas as pd


def random_query(rng):
    lr_lo = 10 ** (-5 + 3 * rng.random())
    bs_lo = 10 + 790 * rng.random()
    return lr_lo, 10 * lr_lo, bs_lo, bs_lo + 200, 0.3


def mask(df, q):
    lr_lo, lr_hi, bs_lo, bs_hi, div = q
    return df[(df.lr >= lr_lo) & (df.lr <= lr_hi) & (df.batch_size >= bs_lo) &
              (df.batch_size <= bs_hi) & (df["diff"] > div)]


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--dataset", default=os.environ.get("XWIRES_BENCH_DATASET", "/tmp/xwires-bench-dataset"))
    ap.add_argument("--xwires", default=os.path.join(root, "build", "xwires"))
    ap.add_argument("--bench", default=os.path.join(root, "build", "bench", "bench_dataset"),
                    help="bench_dataset binary for the C++ API figure ('' to skip)")
    ap.add_argument("--queries", type=int, default=20)
    args = ap.parse_args()

    csv = args.dataset.rstrip("/") + ".csv"
    if not os.path.exists(csv):
        t, _ = timed(lambda: subprocess.run([args.xwires, "export", args.dataset, "--format", "csv",
                                             "-o", csv], check=True))
        print(f"exported {csv} in {t:.1f} s")
    print(f"CSV: {os.path.getsize(csv) / 1e6:.0f} MB")

    rng = random.Random(7)
    queries = [random_query(rng) for _ in range(args.queries)]

    # The original API: load the CSV, then filter (3 times, as 3 new processes would).
    loads = []
    for q in queries[:3]:
        t, n = timed(lambda: len(mask(pd.read_csv(csv), q)))
        loads.append(t)
    df = pd.read_csv(csv)
    in_memory, counts = [], []
    for q in queries:
        t, n = timed(lambda: len(mask(df, q)))
        in_memory.append(t)
        counts.append(n)

    cli = []
    for q, n in zip(queries, counts):
        lr_lo, lr_hi, bs_lo, bs_hi, div = q
        where = (f"lr >= {lr_lo!r} and lr <= {lr_hi!r} and batch_size >= {bs_lo!r} and "
                 f"batch_size <= {bs_hi!r} and diff > {div!r}")
        t, out = timed(lambda: subprocess.run([args.xwires, "query", args.dataset, "--where", where,
                                               "--count"], check=True, capture_output=True, text=True))
        if int(out.stdout) != n:
            sys.exit(f"mismatch: pandas {n} rows, xwires {out.stdout.strip()} for {where}")
        cli.append(t)

    api_ms = None
    if args.bench and os.path.exists(args.bench):
        out = subprocess.run([args.bench, "--benchmark_filter=BM_QueryCount", "--benchmark_format=json"],
                             check=True, capture_output=True, text=True).stdout
        api_ms = json.loads(out)["benchmarks"][0]["p50_ms"]

    med = lambda v: 1e3 * statistics.median(v)
    rows = [("pandas read_csv + filter (original API)", med(loads)),
            ("pandas filter, DataFrame in memory", med(in_memory)),
            ("xwires query --count (whole CLI process)", med(cli))]
    if api_ms is not None:
        rows.append(("xw::Dataset::Count (C++ API, p50)", api_ms))
    print(f"{args.queries} queries, median {statistics.median(counts):.0f} matching trials; "
          "all counts agree between pandas and xwires")
    best = rows[-1][1]
    for name, ms in rows:
        print(f"  {name:45s} {ms:10.2f} ms   x{ms / best:9.1f}")


if __name__ == "__main__":
    main()
