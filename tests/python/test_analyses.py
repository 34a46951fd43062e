"""ds.compare, ds.attribute, ds.analyses and xwires.report give the CLI's
answers: the same JSON documents, tables and stored rows, and the same report
charts, on a tiny trained pair (and refuse imported pairs as the CLI does).
"""
import json
import os
import re

import pytest

import xwires
from conftest import TINY_CLI, cli_error, cli_json, run_cli


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A dataset holding one tiny torch-vs-tf trial (id 1)."""
    path = str(tmp_path_factory.mktemp("an") / "ds")
    run_cli("train", *TINY_CLI, "--profiles", "torch,tf", "--dataset", path, "--quiet")
    return path


def without_times(doc):
    """An attribute JSON document without the runs' wall times."""
    for run in doc["runs"]:
        run.pop("wall_time_s")
    return doc


def test_compare_matches_the_cli(trained):
    with xwires.open(trained) as ds:
        c = ds.compare(1, probe=8)
    want = cli_json("compare", trained, 1, "--probe", 8)
    assert c.json == want
    assert c.analysis_id is None
    assert list(c.tensors.columns) == ["tensor", "shape", "max_abs", "max_rel", "rel_l2",
                                       "cosine", "close"]
    assert len(c.tensors) == len(want["tier1"]["tensors"])
    assert list(c.layers["module"]) == [layer["path"] for layer in want["tier2"]["layers"]]
    assert list(c.classes.columns) == ["class", "acc_torch", "acc_tf"]
    assert list(c.classes["acc_torch"]) == pytest.approx(want["tier3"]["class_acc_a"])
    assert c.verdicts == {"tensors": want["tier1"]["verdict"],
                          "activations": want["tier2"]["verdict"],
                          "task": want["tier3"]["verdict"]}


def test_attribute_and_stored_analyses_match_the_cli(trained, tmp_path):
    mine = str(tmp_path / "mine")
    run_cli("train", *TINY_CLI, "--profiles", "torch,tf", "--dataset", mine, "--quiet")
    with xwires.open(mine, "w") as ds:
        a = ds.attribute(1, knobs=["adam.variant"], jobs=1, threads=2)
        c = ds.compare(1, probe=8, store=True)
        stored = ds.analyses()
        only = ds.analyses(1, kind="attribute")
    cli = without_times(cli_json("attribute", trained, 1, "--knob", "adam.variant", "--jobs",
                                 1, "--threads", 2, "--no-store", "--quiet"))
    assert without_times(a.json) == cli
    assert list(a.knobs["knob"]) == ["adam.variant"]
    assert a.knobs.columns[-1] == "beyond noise"
    assert list(a.knobs["beyond noise"]) == ["-"]  # no replicas
    assert a.summary == cli["summary"] and a.main_knobs == cli["main_knobs"]
    assert list(a.runs["direction"]) == ["baseline", "baseline", "a_to_b", "b_to_a"]
    # Stored as the CLI stores them: attribute (by default on a writable
    # dataset), then compare (store=True).
    assert list(stored["kind"]) == ["attribute", "compare"]
    assert list(stored["id"]) == [a.analysis_id, c.analysis_id]
    assert list(stored["trials"]) == ["1", "1"]
    assert list(only["id"]) == [a.analysis_id]
    assert without_times(json.loads(stored["result_json"][0])) == cli
    assert json.loads(stored["result_json"][1]) == c.json
    # A read-only dataset stores nothing by default, and refuses store=True.
    with xwires.open(trained) as ds:
        assert ds.attribute(1, knobs="adam.variant", jobs=1, threads=2).analysis_id is None
        assert len(ds.analyses()) == 0
        with pytest.raises(xwires.FailedPreconditionError):
            ds.compare(1, probe=8, store=True)


def test_report_matches_the_cli(trained, tmp_path):
    out, cli_out = str(tmp_path / "py.html"), str(tmp_path / "cli.html")
    ids = xwires.report(trained, out, mi_repeats=2, mi_shuffles=10)
    run_cli("report", trained, "-o", cli_out, "--mi-repeats", 2, "--mi-shuffles", 10)
    with open(cli_out) as f:
        cli_ids = re.findall(r'data-plot="([^"]+)"', f.read())
    with open(out) as f:
        html = f.read()
    assert ids == cli_ids == re.findall(r'data-plot="([^"]+)"', html)
    assert "data-table=\"degenerate\"" in html


def test_refusals_name_the_problem(trained, tmp_path, cw_dataset):
    with xwires.open(cw_dataset) as ds:
        with pytest.raises(xwires.FailedPreconditionError) as e:
            ds.compare(1)
    assert str(e.value) == cli_error("compare", cw_dataset, 1)
    with xwires.open(trained) as ds:
        with pytest.raises(xwires.InvalidArgumentError) as e:
            ds.attribute(1, knobs="no.such.knob", store=False)
        assert "'no.such.knob' is not a knob" in str(e.value)
        with pytest.raises(xwires.InvalidArgumentError):
            ds.compare("1")
    with pytest.raises(xwires.Error):
        xwires.report(trained, str(tmp_path / "missing" / "dir" / "r.html"))
    assert not os.path.exists(tmp_path / "missing")
