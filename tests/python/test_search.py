"""xwires.search(): the CLI's search from Python, readable while it writes,
and interruptible with Ctrl-C (SIGINT) like a killed search: a resume
finishes it with nothing lost or repeated."""
import json
import os
import subprocess
import time

import pytest

import xwires
from conftest import XWIRES, assert_frame_matches_json, cli_json, interrupt_python, run_cli


def tiny_config(trials_per_subspace, train_limit=200):
    """2 dimensions -> 4 subspaces; an mlp on a few hundred images (as
    tests/hpo/search_cli_test.cc)."""
    return {"arch": "mlp",
            "data": {"train_limit": train_limit, "test_limit": 100},
            "dimensions": [{"name": "lr", "type": "real", "low": 1e-4, "high": 0.1, "log": True},
                           {"name": "epochs", "type": "integer", "low": 1, "high": 2}],
            "train": {"width": 0.125, "batch_size": 50},
            "trials_per_subspace": trials_per_subspace,
            "objective": "abs_acc_diff",  # screened only (no replicas)
            "budget": {"max_seconds": 0}}


def search_rows(path, search_id=1):
    with xwires.open(path) as ds:
        return ds.query(f"search_id = {search_id}", sort="id")


def points(rows):
    with_points = rows[rows["status"] != "pending"]
    return sorted(zip(with_points["lr"], with_points["epochs"]))


def test_search_matches_the_cli(tmp_path, capsys):
    config = tiny_config(2)
    mine = str(tmp_path / "py")
    r = xwires.search(dataset=mine, config=config, jobs=1, threads=2, top=3)
    assert (r.search_id, r.status, r.finished, r.failed) == (1, "done", 8, 0)
    assert r.best == pytest.approx(search_rows(mine)["diff"].max())
    assert list(r.top.columns) == ["trial", "lr", "epochs", "acc_torch", "acc_tf",
                                   "abs_acc_diff", "collapsed", "at_chance"]
    best = search_rows(mine).sort_values(["diff", "id"], ascending=[False, True]).head(3)
    assert list(r.top["trial"]) == list(best["id"])
    err = capsys.readouterr().err
    assert "search 1 in " + mine in err and "[8/8] trial" in err
    # The CLI, given the same config, searches the same points to the same results.
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(config))
    theirs = str(tmp_path / "cli")
    out = run_cli("search", "--config", cfg, "--dataset", theirs, "--jobs", "1", "--threads",
                  "2", "--quiet").stdout
    assert "search 1 done: 8 trials finished, 0 failed" in out
    a, b = search_rows(mine), search_rows(theirs)
    assert points(a) == points(b)
    assert sorted(a["diff"]) == sorted(b["diff"])
    with xwires.open(mine) as ds:
        s = ds.searches()
        assert list(s["status"]) == ["done"] and s["objective"][0] == "abs_acc_diff(torch,tf)"
        # The CLI's columns and values: `searches`, and stats grouped by a setting.
        assert_frame_matches_json(s, cli_json("searches", mine))
        assert (s["done"][0], s["planned"][0], s["width"][0], s["train_limit"][0]) == (8, 8, 0.125, 200)
        assert_frame_matches_json(ds.stats(by="train_limit"),
                                  cli_json("stats", mine, "--by", "train_limit"))
        assert "config_json" in ds.searches(with_config=True).columns


def test_reading_while_a_cli_search_writes(tmp_path):
    path = str(tmp_path / "ds")
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(tiny_config(4, train_limit=400)))
    proc = subprocess.Popen([XWIRES, "search", "--config", str(cfg), "--dataset", path,
                             "--jobs", "2", "--threads", "2", "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seen, reads = [], 0
    try:
        while proc.poll() is None:
            if not os.path.exists(os.path.join(path, "xwires.db")):
                time.sleep(0.02)
                continue
            try:
                ds = xwires.open(path)
            except (xwires.NotFoundError, xwires.CorruptionError):
                time.sleep(0.02)  # the CLI is still creating the schema
                continue
            with ds:
                for _ in range(5):
                    n = ds.count("search_id = 1 and diff >= 0")
                    seen.append(n)
                    ds.stats()
                    ds.query("search_id = 1", sort="-diff", limit=3)
                    reads += 1
            time.sleep(0.01)
    finally:
        proc.wait()
    assert proc.returncode == 0, proc.stderr.read()
    assert reads > 0
    assert seen == sorted(seen)  # never a half-written state
    with xwires.open(path) as ds:
        assert ds.count("search_id = 1 and diff >= 0") == 16


INTERRUPTED_RUN = """
import json, sys
import xwires
xwires.search(dataset=sys.argv[1], config=json.loads(sys.argv[2]), jobs=1, threads=1)
"""


def test_ctrl_c_stops_and_a_resume_finishes(tmp_path):
    path = str(tmp_path / "ds")
    config = tiny_config(4, train_limit=1500)
    err = interrupt_python(INTERRUPTED_RUN, [path, json.dumps(config)], "[1/16] trial")
    rows = search_rows(path)
    done_before = list(rows[rows["diff"] >= 0]["id"])
    assert 1 <= len(done_before) < 16, err
    with xwires.open(path) as ds:
        assert list(ds.searches()["status"]) == ["interrupted"]
    # Resume: the pending points are re-trained, the budget completed.
    r = xwires.search(dataset=path, resume=1, jobs=1, threads=2, quiet=True)
    assert (r.status, r.finished, r.failed) == ("done", 16, 0)
    rows = search_rows(path)
    assert set(rows["status"]) <= {"ok", "diverged"} and len(rows) == 16
    assert set(done_before) <= set(rows["id"])  # nothing lost
    assert len(set(points(rows))) == 16  # nothing repeated
    with xwires.open(path) as ds:
        assert list(ds.searches()["status"]) == ["done"]
