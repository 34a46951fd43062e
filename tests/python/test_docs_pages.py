"""Every example of docs/*.md runs as written, one case per page.

The blocks are read from the markdown (docs_blocks.py says how a block's info
string marks it as run, checked output, or a synopsis checked against the
CLI's --help), so a page whose commands, figures or ids drift from what the
build does fails here. docs/python.md's tutorial blocks are run by
test_docs.py and its sqlite/h5py/torch snippets by
tests/dataset/python_test.cc; its other blocks are checked here.
"""
import glob
import os

import pytest

from docs_blocks import SOURCE_DIR, blocks, run_page, scratch_root

PAGES = sorted(os.path.basename(p) for p in glob.glob(os.path.join(SOURCE_DIR, "docs", "*.md")))


def test_every_page_is_checked():
    assert "training.md" in PAGES and "python.md" in PAGES and len(PAGES) >= 13


@pytest.mark.parametrize("page", PAGES)
def test_doc_examples(page, tmp_path):
    with open(os.path.join(SOURCE_DIR, "docs", page)) as f:
        page_blocks = blocks(f.read())
    run_page(page_blocks, scratch_root(str(tmp_path)))


