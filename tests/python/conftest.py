"""Shared fixtures of the Python package tests.

The tests compare the package with the built CLI on real data: the
CrossedWires fixture CSVs (tests/fixtures/crossedwires, the published
results) imported by `xwires import-crossedwires`, and tiny trainings on the
built-in synthetic data. ctest sets PYTHONPATH to the build's package and
XWIRES_BINARY_DIR / XWIRES_SOURCE_DIR.
"""
import hashlib
import json
import math
import os
import signal
import subprocess
import sys

import pandas as pd
import pytest

SOURCE_DIR = os.environ.get(
    "XWIRES_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BINARY_DIR = os.environ.get("XWIRES_BINARY_DIR", os.path.join(SOURCE_DIR, "build"))
XWIRES = os.path.join(BINARY_DIR, "xwires")
FIXTURES = os.path.join(SOURCE_DIR, "tests", "fixtures", "crossedwires")
CW_FILES = {"vgg16": "vgg16_cifar10_results.csv",
            "resnet50": "resnet50_cifar10_results.csv",
            "densenet121": "densenet121_cifar10_results.csv"}

# A tiny run of `xwires train` (as tests/trainers/train_cli_test.cc's kTiny):
# CLI flags and the matching xwires.train() keyword arguments.
TINY_CLI = ["--arch", "simple_cnn", "--width", "0.125", "--epochs", "2", "--batch-size", "16",
            "--train-limit", "48", "--test-limit", "20", "--lr", "0.05", "--adam-eps", "0.5",
            "--threads", "2", "--seed", "4"]
TINY = dict(arch="simple_cnn", width=0.125, epochs=2, batch_size=16, train_limit=48,
            test_limit=20, lr=0.05, adam_eps=0.5, threads=2, seed=4)


def run_cli(*args, check=True):
    """Runs the built `xwires` with `args`; returns the CompletedProcess."""
    r = subprocess.run([XWIRES, *map(str, args)], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"xwires {' '.join(map(str, args))} failed ({r.returncode}):\n"
                             f"{r.stdout}\n{r.stderr}")
    return r


def cli_json(*args):
    """The parsed stdout of `xwires ... --format json`."""
    return json.loads(run_cli(*args, "--format", "json").stdout)


def cli_error(*args):
    """The message the CLI prints after 'xwires: error: ' (exit code 2)."""
    r = run_cli(*args, check=False)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    prefix = "xwires: error: "
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith(prefix), r.stderr
    return line[len(prefix):]


def _same(a, b):
    """A DataFrame cell equals a JSON value (null = NaN/None/NA), exactly."""
    a_null = a is None or a is pd.NA or (isinstance(a, float) and math.isnan(a))
    if a_null or b is None:
        return a_null and b is None
    if isinstance(b, bool) or isinstance(a, str) or isinstance(b, str):
        return a == b
    return float(a) == float(b) and (not isinstance(b, int) or int(a) == b)


def assert_frame_matches_json(df, rows):
    """`df` has exactly the rows, columns (in order) and values of `rows`."""
    assert len(df) == len(rows), (len(df), len(rows))
    if rows:
        assert list(df.columns) == list(rows[0].keys())
    for i, row in enumerate(rows):
        got = df.iloc[i].to_dict()
        for key, want in row.items():
            assert _same(got[key], want), (i, key, got[key], want)


def tree_digest(path):
    """{relative path: sha256} of every file under `path` (byte-identity checks)."""
    out = {}
    for root, _, files in os.walk(path):
        for name in files:
            full = os.path.join(root, name)
            with open(full, "rb") as f:
                out[os.path.relpath(full, path)] = hashlib.sha256(f.read()).hexdigest()
    return out


def interrupt_python(script, args, marker):
    """Runs `script` with Debian's python3, sends SIGINT once a stderr line
    starts with `marker`, and checks that it ended by KeyboardInterrupt.
    Returns its whole stderr."""
    proc = subprocess.Popen([sys.executable, "-c", script, *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if line.startswith(marker):
            break
    proc.send_signal(signal.SIGINT)
    _, rest = proc.communicate(timeout=120)
    err = "".join(lines) + rest
    assert proc.returncode in (-signal.SIGINT, 1, 130), (proc.returncode, err)
    assert "KeyboardInterrupt" in err, err
    return err


@pytest.fixture(scope="session")
def cw_dataset(tmp_path_factory):
    """The three published CrossedWires files, imported by the CLI."""
    path = str(tmp_path_factory.mktemp("cw") / "ds")
    for arch, name in CW_FILES.items():
        run_cli("import-crossedwires", path, os.path.join(FIXTURES, name), "--arch", arch)
    return path


@pytest.fixture(scope="session")
def trained_dataset(tmp_path_factory):
    """A dataset with one tiny torch/tf pair trained by `xwires train`, plus
    its weights files (<profile>.h5) in `out`."""
    base = tmp_path_factory.mktemp("trained")
    path, out = str(base / "ds"), str(base / "out")
    run_cli("train", *TINY_CLI, "--profiles", "torch,tf", "--out", out, "--dataset", path,
            "--quiet")
    return {"path": path, "out": out, "trial": 1}
