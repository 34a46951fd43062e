"""Bad input raises xwires.Error subclasses with the CLI's message and leaves
every file byte-identical."""
import os
import shutil

import pytest

import xwires
from conftest import FIXTURES, TINY, TINY_CLI, cli_error, run_cli, tree_digest


@pytest.fixture(scope="module")
def ds_path(cw_dataset, tmp_path_factory):
    """A private copy of the CrossedWires dataset (some tests open it "w")."""
    path = str(tmp_path_factory.mktemp("errors") / "ds")
    shutil.copytree(cw_dataset, path)
    return path


@pytest.fixture
def unchanged(ds_path):
    """Asserts that the test leaves the dataset's files byte-identical."""
    before = tree_digest(ds_path)
    yield ds_path
    assert tree_digest(ds_path) == before


BAD_FILTERS = ["lrr > 1", "lr >", "(lr > 0.1", "lr > 0.1 and", "arch > 3", "acc_ > 0.5",
               "lr = 'x'", "diff >= 0.3 or"]


@pytest.mark.parametrize("where", BAD_FILTERS)
def test_bad_filter_raises_the_cli_message(unchanged, where):
    want = cli_error("query", unchanged, "--where", where)
    with xwires.open(unchanged) as ds:
        for call in (lambda: ds.query(where), lambda: ds.count(where),
                     lambda: ds.stats(where=where), lambda: ds.top(where=where),
                     lambda: ds.near(lr=0.01, where=where)):
            with pytest.raises(xwires.InvalidArgumentError) as e:
                call()
            assert str(e.value) == want
            assert isinstance(e.value, (xwires.Error, ValueError))


@pytest.mark.parametrize("where", [
    "(" * 8000 + "lr > 0" + ")" * 8000,       # crashed the interpreter (stack)
    "!" * 20000 + "lr > 0",
    " or ".join(["lr > 0"] * 1200),           # was InputOutputError from SQLite
    "lr > 0 and" + " " * 20000 + " diff > 0",
])
def test_oversized_filters_raise_invalid_argument_with_the_cli_message(unchanged, where):
    want = cli_error("query", unchanged, "--where", where)
    assert want.startswith("filter ")
    with xwires.open(unchanged) as ds:
        for call in (lambda: ds.query(where), lambda: ds.count(where),
                     lambda: ds.stats(where=where)):
            with pytest.raises(xwires.InvalidArgumentError) as e:
                call()
            assert str(e.value) == want


def test_unknown_columns_and_near_fields_raise_the_cli_message(unchanged):
    with xwires.open(unchanged) as ds:
        cases = [
            (lambda: ds.query(sort="-lrr"), ("query", unchanged, "--sort", "-lrr")),
            (lambda: ds.near(diff=0.3), ("query", unchanged, "--near", "diff=0.3")),
            (lambda: ds.near(lrr=0.3), ("query", unchanged, "--near", "lrr=0.3")),
            (lambda: ds.near(lr="abc"), ("query", unchanged, "--near", "lr=abc")),
            (lambda: ds.stats(by="color"), ("stats", unchanged, "--by", "color")),
            (lambda: ds.mi(repeats=0), ("mi", unchanged, "--repeats", "0")),
        ]
        for call, cli in cases:
            want = cli_error(*cli)
            with pytest.raises(xwires.Error) as e:
                call()
            assert str(e.value) == want, cli


@pytest.mark.parametrize("call,message", [
    (lambda ds: ds.query(limit="ten"), "limit: expected an integer or None, got str 'ten'"),
    (lambda ds: ds.query(5), "where: expected a string or None, got int 5"),
    (lambda ds: ds.query(arch=["vgg16", 3]), "arch item: expected a string, got int 3"),
    (lambda ds: ds.query(limit=-1), "limit must be >= 0, got -1"),
    (lambda ds: ds.trial("9"), "trial_id: expected an integer, got str '9'"),
    (lambda ds: ds.stats(threshold="x"), "threshold: expected a number, got str 'x'"),
    (lambda ds: ds.top(k=True), "k: expected an integer, got bool True"),
    (lambda ds: ds.near(lr=[1]), "lr: expected a number, got list [1]"),
    # Beyond the binding's int64_t / int: refused, not a pybind11 TypeError.
    (lambda ds: ds.query(limit=2**70), f"limit must be <= {2**63 - 1}, got {2**70}"),
    (lambda ds: ds.query(offset=2**63), f"offset must be <= {2**63 - 1}, got {2**63}"),
    (lambda ds: ds.top(k=2**31), f"k must be <= {2**31 - 1}, got {2**31}"),
    (lambda ds: ds.trial(-2**63 - 1), f"trial_id must be >= {-2**63}, got {-2**63 - 1}"),
])
def test_wrong_types_raise_invalid_argument(unchanged, call, message):
    with xwires.open(unchanged) as ds:
        with pytest.raises(xwires.InvalidArgumentError) as e:
            call(ds)
    assert str(e.value) == message


def test_missing_dataset_is_not_found_and_not_created(tmp_path):
    missing = str(tmp_path / "nope")
    want = cli_error("query", missing)
    with pytest.raises(xwires.NotFoundError) as e:
        xwires.open(missing)
    assert str(e.value) == want
    assert not os.path.exists(missing)
    with pytest.raises(xwires.InvalidArgumentError, match="mode must be 'r'"):
        xwires.open(str(tmp_path), mode="a")
    assert os.listdir(tmp_path) == []


def test_unknown_trial_and_profile(unchanged):
    with xwires.open(unchanged) as ds:
        with pytest.raises(xwires.NotFoundError) as e:
            ds.trial(99999)
        assert str(e.value) == cli_error("show", unchanged, "99999")
        with pytest.raises(xwires.NotFoundError, match="has no model under profile 'torch'"):
            ds.weights(1, "torch")
        with pytest.raises(xwires.NotFoundError, match="no model under profile 'torch'"):
            ds.trial(1).curve("torch")


def test_closed_dataset_raises_closed_error(unchanged):
    with xwires.open(unchanged) as ds:
        t = ds.trial(1)
    assert ds.closed
    for call in (ds.query, ds.stats, ds.top, ds.mi, lambda: ds.trial(1),
                 lambda: ds.weights(1), lambda: ds.count(), lambda: t.weights()):
        with pytest.raises(xwires.ClosedError) as e:
            call()
        assert str(e.value) == f"dataset {unchanged} is closed"
        assert isinstance(e.value, xwires.FailedPreconditionError)
    ds.close()  # closing twice is fine
    assert "closed" in repr(ds)


def test_writes_to_a_read_only_dataset_are_refused(unchanged):
    csv = os.path.join(FIXTURES, "vgg16_cifar10_results.csv")
    with xwires.open(unchanged) as ds:
        assert ds.read_only
        with pytest.raises(xwires.FailedPreconditionError, match="read-only"):
            ds.import_crossedwires(csv, "vgg11")  # new rows: a write is needed


def test_bad_csv_import_leaves_the_dataset_intact(unchanged, tmp_path):
    bad = tmp_path / "bad.csv"
    with open(os.path.join(FIXTURES, "vgg16_cifar10_results.csv")) as f:
        lines = f.read().splitlines()
    bad.write_text("\n".join(lines[:5]) + "\n" + lines[5].replace(",", ",x", 3) + "\n")
    want = cli_error("import-crossedwires", unchanged, str(bad), "--arch", "vgg16")
    with xwires.open(unchanged, mode="w") as ds:
        with pytest.raises(xwires.InvalidArgumentError) as e:
            ds.import_crossedwires(str(bad), "vgg16")
        assert str(e.value) == want
        # Re-importing a stored file changes nothing either.
        report = ds.import_crossedwires(os.path.join(FIXTURES, "vgg16_cifar10_results.csv"),
                                        "vgg16")
        assert report["imported"] == 0 and report["skipped_existing"] == 400


@pytest.mark.parametrize("kwargs,flags", [
    (dict(epochs=0), ["--epochs", "0"]),
    (dict(arch="resnet21"), ["--arch", "resnet21"]),
    (dict(profiles=["torch", "torchh"]), ["--profiles", "torch,torchh"]),
    (dict(profiles=["torch", "torch"]), ["--profiles", "torch,torch"]),
    (dict(lr=-1.0), ["--lr", "-1"]),
    (dict(lr=0.0), ["--lr", "0"]),  # the store's rule, checked before training
    (dict(data="cifar10:/nonexistent"), ["--data", "cifar10:/nonexistent"]),
])
def test_bad_training_input_raises_and_writes_nothing(tmp_path, unchanged, kwargs, flags):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    before = tree_digest(str(tmp_path))
    args = dict(TINY, profiles=["torch", "tf"], out=str(out), dataset=unchanged, quiet=True)
    args.update(kwargs)
    cli = TINY_CLI + ["--profiles", "torch,tf", "--out", str(out), "--dataset", unchanged]
    want = cli_error("train", *cli, *flags)
    with pytest.raises(xwires.Error) as e:
        xwires.train(**args)
    assert str(e.value) == want
    assert tree_digest(str(tmp_path)) == before


def test_bad_search_input_leaves_the_dataset_intact(unchanged, tmp_path):
    with pytest.raises(xwires.InvalidArgumentError, match="archh"):
        xwires.search(dataset=unchanged, config={"archh": "mlp"}, quiet=True)
    with pytest.raises(xwires.InvalidArgumentError) as e:
        xwires.search(dataset=unchanged, resume=1, seed=3, quiet=True)
    assert str(e.value) == cli_error("search", "--dataset", unchanged, "--resume", "1",
                                     "--seed", "3")
    with pytest.raises(xwires.NotFoundError):
        xwires.search(dataset=unchanged, resume=7, quiet=True)
    with pytest.raises(xwires.InvalidArgumentError, match="config: expected a string"):
        xwires.search(dataset=unchanged, config=5)
    with pytest.raises(xwires.NotFoundError):
        xwires.profile("torchh")
    with pytest.raises(xwires.InvalidArgumentError, match="adam"):
        xwires.profile(dict(xwires.profile("torch"), adam={"variant": "tf"}))
    missing = str(tmp_path / "none")
    with pytest.raises(xwires.NotFoundError):
        xwires.search(dataset=missing, resume=1, quiet=True)
    assert not os.path.exists(missing)


def test_error_classes():
    assert issubclass(xwires.InvalidArgumentError, ValueError)
    assert issubclass(xwires.NotFoundError, LookupError)
    assert xwires.errors.error_class("cancelled") is KeyboardInterrupt
    assert xwires.errors.error_class("corruption") is xwires.CorruptionError
    run_cli("version")
