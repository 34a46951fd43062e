"""xwires.train() is `xwires train`: same weights, files and stored trial."""
import json
import os

import h5py
import numpy as np
import pytest

import xwires
from conftest import TINY, TINY_CLI, interrupt_python, run_cli


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("cli") / "out")
    run_cli("train", *TINY_CLI, "--profiles", "torch,tf", "--out", out, "--quiet")
    with open(os.path.join(out, "metrics.json")) as f:
        return {"out": out, "metrics": json.load(f)}


def _h5_content(path):
    """Root attributes and (name, dtype, shape, bytes) of every dataset."""
    with h5py.File(path, "r") as f:
        attrs = {k: str(v) for k, v in f.attrs.items()}
        data = [(name, str(f[name].dtype), f[name].shape, f[name][()].tobytes())
                for name in sorted(f.keys())]
    return attrs, data


def _shas(metrics):
    return {m["profile"]: m["weights_sha256"] for m in metrics["models"]}


def test_same_weights_sha256_as_the_cli(cli_run, tmp_path, capsys):
    out, store = str(tmp_path / "out"), str(tmp_path / "store")
    t = xwires.train(profiles=["torch", "tf"], out=out, dataset=store, **TINY)
    want = _shas(cli_run["metrics"])
    assert dict(zip(t.models["profile"], t.models["weights_sha256"])) == want
    with open(os.path.join(out, "metrics.json")) as f:
        assert _shas(json.load(f)) == want
    # The weights files hold the CLI's tensors and attributes (HDF5 object
    # headers carry times, so the files are compared by content).
    for profile in ("torch", "tf"):
        assert _h5_content(os.path.join(out, profile + ".h5")) == \
            _h5_content(os.path.join(cli_run["out"], profile + ".h5")), profile
    # Stored: the returned trial is the stored one.
    assert t.id == 1
    with xwires.open(store) as ds:
        assert ds.trial(1).to_dict() == t.to_dict()
        sd = ds.weights(1, "tf")
    mine = t.weights("tf")
    assert list(mine) == list(sd)
    assert all(mine[n].tobytes() == sd[n].tobytes() for n in sd)
    # Progress like the CLI's (not a terminal: one line per epoch).
    err = capsys.readouterr().err
    assert "torch epoch 1/2: train loss" in err and "tf epoch 2/2: train loss" in err


def test_unstored_trial_and_user_profile(capsys):
    tf = xwires.profile("tf")
    assert tf["name"] == "tf" and tf["adam"]["variant"] == "keras"
    mine = dict(tf, name="tf_torch_adam")
    mine["adam"] = dict(tf["adam"], variant="torch")
    t = xwires.train(profiles=["tf", mine], quiet=True, **TINY)
    assert t.id == 0 and t.profiles == ["tf", "tf_torch_adam"]
    assert capsys.readouterr().err == ""
    assert t.to_dict()["models"][1]["status"] in ("ok", "diverged")
    # The run is deterministic: the same arguments give the same bits.
    again = xwires.train(profiles=["tf"], quiet=True, **TINY)
    assert again.models["weights_sha256"][0] == t.models["weights_sha256"][0]
    w = t.weights("tf_torch_adam")
    assert w["fc2.weight"].dtype == np.float32
    spec = t._spec_of()
    assert spec["input_shape"] == (3, 32, 32) and spec["num_classes"] == 10


def test_profiles_as_cli_text_and_files(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(dict(xwires.profile("reference"), name="ref2")))
    t = xwires.train(profiles=f"torch, {path}", quiet=True, **dict(TINY, epochs=1))
    assert t.profiles == ["torch", "ref2"]
    assert xwires.shipped_profiles(accelerator=False) == ["torch", "tf", "reference"]
    assert xwires.shipped_profiles() == [
        "torch", "tf", "reference", "torch-a100", "tf-a100", "torch-h100", "torch-amp-fp16",
        "torch-bf16", "tf-mixed-fp16", "tpu-bf16"]
    # Each loads by name; the accelerator ones carry the "accelerator" object.
    assert xwires.profile("tf-a100")["accelerator"]["matmul_operands"] == "tf32_rna"
    assert "accelerator" not in xwires.profile("tf")


# Epochs of 250 steps (~0.4 s): the SIGINT, sent once the parent reads the
# first epoch's line, lands well inside the second epoch even when the
# parent waits for a core on a loaded machine.
INTERRUPTED_TRAINING = """
import sys
import xwires
xwires.train(arch="simple_cnn", width=0.25, epochs=50, batch_size=8, train_limit=2000,
             test_limit=50, threads=1, out=sys.argv[1], dataset=sys.argv[2])
"""


def test_ctrl_c_stops_training_and_writes_nothing(tmp_path):
    out, store = str(tmp_path / "out"), str(tmp_path / "ds")
    err = interrupt_python(INTERRUPTED_TRAINING, [out, store], "torch epoch 1/50:")
    assert "torch epoch 2/50" not in err, err
    # Checked inputs create the directories; no file is written to either.
    assert os.listdir(out) == []
    with xwires.open(store) as ds:
        assert ds.count() == 0


def test_training_releases_the_gil():
    import threading
    import time
    done = threading.Event()

    def run():
        xwires.train(arch="simple_cnn", width=0.25, epochs=2, batch_size=8, train_limit=400,
                     test_limit=50, threads=1, quiet=True)
        done.set()

    thread = threading.Thread(target=run)
    thread.start()
    ticks = 0
    while not done.is_set():  # runs only while the training thread has no GIL
        time.sleep(0.005)
        ticks += 1
    thread.join()
    # Holding the GIL would leave the loop at its first tick or two until the
    # training returned; 5 leaves room for a loaded machine (the training
    # takes ~0.3 s, ~50 ticks when idle; a parallel ctest run once gave < 20).
    assert ticks >= 5, ticks
