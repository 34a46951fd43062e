"""trial() is `xwires show`, weights() is the HDF5 contents bit for bit."""
import collections
import hashlib
import os

import h5py
import numpy as np
import pandas as pd
import pytest

import xwires
from conftest import run_cli


@pytest.fixture(scope="module")
def ds(trained_dataset):
    with xwires.open(trained_dataset["path"]) as d:
        yield d


def test_trial_is_show_json(ds, trained_dataset):
    import json
    want = json.loads(run_cli("show", trained_dataset["path"], "1", "--curves", "--format",
                              "json").stdout)
    t = ds.trial(1)
    assert t.to_dict() == want
    assert t.id == 1 and t.arch == "simple_cnn" and t.profiles == ["torch", "tf"]
    assert t.hyperparameters["lr"] == 0.05 and t.hyperparameters["batch_size"] == 16
    assert t.hparams["width"] == 0.125
    assert t.divergence == pytest.approx(abs(t.metrics.loc["torch", "test_acc"] -
                                             t.metrics.loc["tf", "test_acc"]))
    assert list(t.models["profile"]) == ["torch", "tf"]
    assert t.fingerprint["torch"]["toolkit"] == xwires.__version__


def test_curves_are_numpy_columns(ds, trained_dataset):
    t = ds.trial(1)
    torch_curve = t.curve("torch")
    assert isinstance(torch_curve, pd.DataFrame)
    assert list(torch_curve["epoch"]) == [1, 2]
    want = t.to_dict()["models"][0]["curves"]
    assert list(torch_curve["test_acc"]) == [e["test_acc"] for e in want]
    assert list(torch_curve["train_loss_mean"]) == [e["train_loss_mean"] for e in want]
    assert set(t.curves["profile"]) == {"torch", "tf"} and len(t.curves) == 4
    assert torch_curve["test_acc"].dtype == np.float64


def _h5_state(path, group):
    with h5py.File(path, "r") as f:
        g = f[group] if group else f
        names = [n.decode() if isinstance(n, bytes) else str(n) for n in g.attrs["tensor_order"]]
        return collections.OrderedDict((n, np.array(g[n][()])) for n in names)


@pytest.mark.parametrize("profile", ["torch", "tf"])
def test_weights_equal_the_hdf5_bits_and_sha256(ds, trained_dataset, profile):
    t = ds.trial(1)
    model = next(m for m in t.to_dict()["models"] if m["profile"] == profile)
    stored = _h5_state(os.path.join(trained_dataset["path"], model["h5_file"]), model["h5_group"])
    written = _h5_state(os.path.join(trained_dataset["out"], profile + ".h5"), None)
    sd = ds.weights(1, profile)
    assert isinstance(sd, collections.OrderedDict)
    assert list(sd) == list(stored) == list(written)
    for name, array in sd.items():
        for other in (stored[name], written[name]):
            assert array.dtype == other.dtype and array.shape == other.shape, name
            assert array.tobytes() == other.tobytes(), name
    assert sd["bn1.num_batches_tracked"].dtype == np.int64
    assert sd["bn1.num_batches_tracked"].shape == ()
    assert sd["conv1.weight"].dtype == np.float32
    digest = hashlib.sha256()
    for array in sd.values():
        digest.update(np.ascontiguousarray(array).tobytes())
    assert digest.hexdigest() == model["weights_sha256"]
    # Trial.weights is the same data.
    again = t.weights(profile)
    assert all(np.array_equal(again[n], sd[n]) for n in sd)


def test_weights_are_views_of_the_loaded_tensors(ds):
    sd = ds.weights(1)  # default: the first model (torch)
    w = sd["conv1.weight"]
    assert not w.flags.owndata and w.base is not None  # no copy into numpy
    assert w.flags.c_contiguous
    assert list(sd) == list(ds.weights(1, "torch"))


def test_model_spec(ds):
    spec = ds.model_spec(1)
    assert spec == {"arch": "simple_cnn", "width": 0.125, "depth": 0, "dropout": 0.5,
                    "input_shape": (3, 32, 32), "num_classes": 10}


def test_cw_trial_has_curves_but_no_weights(cw_dataset):
    with xwires.open(cw_dataset) as ds:
        row = ds.query("name = dual_train_5e67eae2")
        t = ds.trial(int(row["id"].iloc[0]))
        assert t.profiles == ["pytorch", "tensorflow"]
        assert t.hyperparameters["seed"] is None
        assert pd.isna(t.models["param_count"].iloc[0])
        assert len(t.curve("pytorch")) == 50
        assert t.curve("pytorch")["train_loss_mean"].iloc[46] == 58540646686793925000.0
        with pytest.raises(xwires.FailedPreconditionError, match="has no stored weights"):
            ds.weights(t.id, "pytorch")


def test_trial_without_curves_reads_no_bundle(trained_dataset, tmp_path):
    import json
    import shutil
    copy = str(tmp_path / "db-only")
    shutil.copytree(trained_dataset["path"], copy)
    shutil.rmtree(os.path.join(copy, "h5"))  # the database alone answers queries
    want = json.loads(run_cli("show", copy, "1", "--format", "json").stdout)
    with xwires.open(copy) as ds:
        t = ds.trial(1, curves=False)
        assert t.to_dict() == want
        assert t.curves.empty
        with pytest.raises(xwires.FailedPreconditionError, match="without curves"):
            t.curve("torch")
        with pytest.raises(xwires.Error):
            ds.trial(1)  # the curves' bundle is gone
        assert len(ds.query()) == 1
