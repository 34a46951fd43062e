"""The package tutorial in docs/python.md runs as written.

Its ```python xwires``` blocks are executed in order by Debian's python3
against a fresh dataset holding the three published CrossedWires files
(XWIRES_DATASET), and what they print is checked: the study's Table 2 and
Figure 4 numbers among it; the ```python xwires-torch``` block runs too where
python3-torch is installed. The ```python``` blocks (sqlite3/h5py) are run by
tests/dataset/python_test.cc.
"""
import importlib.util
import os
import subprocess
import sys

from conftest import CW_FILES, FIXTURES, SOURCE_DIR, run_cli


def code_blocks(markdown, info):
    out, inside, wanted = [], False, False
    for line in markdown.splitlines():
        if line.startswith("```"):
            if not inside:
                inside, wanted = True, line[3:].strip() == info
            else:
                inside = False
            continue
        if inside and wanted:
            out.append(line)
    return "\n".join(out) + "\n"


def test_tutorial_runs(tmp_path):
    ds = str(tmp_path / "cw")
    for arch, name in CW_FILES.items():
        run_cli("import-crossedwires", ds, os.path.join(FIXTURES, name), "--arch", arch)
    with open(os.path.join(SOURCE_DIR, "docs", "python.md")) as f:
        markdown = f.read()
    code = code_blocks(markdown, "python xwires")
    assert "import xwires" in code
    torch_code = code_blocks(markdown, "python xwires-torch")
    assert "torch_model" in torch_code
    if importlib.util.find_spec("torch") is not None:
        code += torch_code
    script = tmp_path / "tutorial.py"
    script.write_text(code)
    env = dict(os.environ, XWIRES_DATASET=ds)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                       cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    # Table 2 (median, mean, share >= 0.05 of VGG16) and the 52.3%.
    assert "0.084339" in out and "0.122801" in out and "0.5925" in out, out
    assert "52.3% of 1200 trials diverge by at least 0.05" in out, out
    # Figure 4: MI of epochs with the divergence, DenseNet121 and overall.
    assert "0.496" in out and "0.157" in out, out
    assert "error: unknown field 'lrr' at position 1" in out, out
    assert f"error: dataset {ds} is closed" in out, out


def test_every_public_name_has_a_docstring():
    import inspect

    import xwires
    missing = []
    for name in xwires.__all__:
        obj = getattr(xwires, name)
        if not inspect.getdoc(obj):
            missing.append(name)
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            for member, value in vars(obj).items():
                if member.startswith("_"):
                    continue
                target = value.fget if isinstance(value, property) else value
                if callable(target) and not inspect.getdoc(target):
                    missing.append(f"{name}.{member}")
    assert missing == []
    assert "read-only" in xwires.open.__doc__ and "mode" in xwires.open.__doc__
