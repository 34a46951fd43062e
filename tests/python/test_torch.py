"""torch_model() loads strict and gives `xwires predict`'s logits (1e-5).

Skipped, with the reason, where Debian's python3-torch / python3-torchvision
are not installed.
"""
import os

import h5py
import numpy as np
import pytest

import xwires
from conftest import run_cli

torch = pytest.importorskip("torch", reason="python3-torch is not installed")
pytest.importorskip("torchvision", reason="python3-torchvision is not installed")


def predict_logits(tmp_path, arch, weights, x):
    inp, out = str(tmp_path / "x.h5"), str(tmp_path / "y.h5")
    with h5py.File(inp, "w") as f:
        f["x"] = x
    run_cli("predict", "--arch", arch, "--weights", weights, "--profile", "torch", "--input",
            inp, "--output", out)
    with h5py.File(out, "r") as f:
        return np.array(f["logits"])


def images(n, seed=0):
    return np.random.default_rng(seed).random((n, 3, 32, 32), dtype=np.float32)


@pytest.mark.parametrize("profile", ["torch", "tf"])
def test_simple_cnn_matches_predict(trained_dataset, tmp_path, profile):
    x = images(12)
    want = predict_logits(tmp_path, "simple_cnn",
                          os.path.join(trained_dataset["out"], profile + ".h5"), x)
    with xwires.open(trained_dataset["path"]) as ds:
        net = ds.torch_model(1, profile)
    assert isinstance(net, torch.nn.Module) and not net.training
    with torch.no_grad():
        got = net(torch.from_numpy(x)).numpy()
    assert got.shape == want.shape == (12, 10)
    assert np.max(np.abs(got - want)) <= 1e-5


@pytest.mark.parametrize("arch,options", [
    ("resnet20", dict(width=0.25)),
    ("mlp", dict(width=0.125, depth=3)),
])
def test_other_architectures_match_predict(tmp_path, arch, options):
    out, store = str(tmp_path / "out"), str(tmp_path / "ds")
    t = xwires.train(arch=arch, profiles=["torch"], epochs=1, batch_size=16, train_limit=32,
                     test_limit=16, lr=0.01, seed=2, out=out, dataset=store, quiet=True,
                     **options)
    x = images(6, seed=1)
    want = predict_logits(tmp_path, arch, os.path.join(out, "torch.h5"), x)
    for net in (xwires.open(store).torch_model(t.id), t.torch_model()):
        with torch.no_grad():
            got = net(torch.from_numpy(x)).numpy()
        assert np.max(np.abs(got - want)) <= 1e-5


def test_strict_load_rejects_foreign_weights(trained_dataset):
    from xwires import torch_models
    with xwires.open(trained_dataset["path"]) as ds:
        spec = ds.model_spec(1)
        sd = ds.weights(1)
    del sd["fc2.bias"]
    with pytest.raises(RuntimeError, match="fc2.bias"):
        torch_models.load(spec, sd)
