"""README's tour ("What you can do with it": its shell block, then its
Python) runs as written, in order, in a scratch directory standing for the
repository root; and the checks of docs_blocks.py can fail. The blocks are
taken from README itself, so a command added to the tour is run by the next
build. (docs/*.md: test_docs_pages.py.)
"""
import json
import os
import subprocess

import pytest

from docs_blocks import SOURCE_DIR, XWIRES, blocks, run_page, scratch_root, section


def read(relative):
    with open(os.path.join(SOURCE_DIR, relative)) as f:
        return f.read()


def cli_json(cwd, *args):
    r = subprocess.run([XWIRES, *args, "--format", "json"], cwd=cwd, capture_output=True,
                       text=True, check=True)
    return json.loads(r.stdout)


def test_readme_tour(tmp_path):
    tour = section(read("README.md"), "What you can do with it")
    assert [b.info for b in tour if b.runnable()] == [["sh"], ["python"]]
    root = scratch_root(str(tmp_path))
    outputs = run_page(tour, root)
    shell = outputs[0]
    # The ids the tour names are the dataset's, from 1: trial 1 is the first
    # search's first trial, and the bundle replays name the trials it holds.
    ids = [row["id"] for row in cli_json(root, "query", "xwires-data")]
    assert ids == list(range(1, len(ids) + 1)), ids
    first = cli_json(root, "query", "xwires-data", "--where", "search_id == 1")
    assert [row["id"] for row in first] == list(range(1, 17))
    assert "replay: trial 1 profile" in shell or "replay: trial 2 profile" in shell, shell
    assert "bundle OK" in shell
    searches = cli_json(root, "searches", "xwires-data")
    assert [(s["id"], s["done"], s["planned"]) for s in searches[:3]] == \
        [(1, 16, 16), (2, 8, 8), (3, 4, 4)], searches
    assert searches[3]["profiles"] == "torch,tf" and searches[3]["done"] == 4  # from Python


def test_the_checks_can_fail(tmp_path):
    cwd = str(tmp_path)
    printed = "```sh\necho 'torch  test accuracy 0.5350  (ok, 3.1 s)'\n```\n\n"
    run_page(blocks(printed + "```output\ntorch test accuracy 0.5350 (ok, 96.0 s)\n```\n"), cwd)
    with pytest.raises(AssertionError, match="line not printed"):
        run_page(blocks(printed + "```output\ntorch test accuracy 0.5351 (ok, 3.1 s)\n```\n"), cwd)
    with pytest.raises(AssertionError, match="failed"):
        run_page(blocks("```sh\nxwires compare nowhere 1\n```\n"), cwd)
    with pytest.raises(AssertionError, match="has no option --colour"):
        run_page(blocks("```sh synopsis\nxwires stats DATASET [--colour C]\n```\n"), cwd)
    with pytest.raises(AssertionError, match="is not a command"):
        run_page(blocks("```sh manual\nxwires fly --high\n```\n"), cwd)
    with pytest.raises(AssertionError, match="needs an info string"):
        run_page(blocks("```\nxwires query DATASET\n```\n"), cwd)
