"""query, near, stats, top and mi give exactly the CLI's rows and values.

On the three published CrossedWires files (1200 trials), each DataFrame is
compared cell by cell with `xwires <command> --format json`, and the study's
Table 2 and Figure 4 numbers are checked against values computed
independently (tests/dataset/crossedwires_test.cc, docs/analysis.md).
"""
import pandas as pd
import pytest

import xwires
from conftest import assert_frame_matches_json, cli_json

QUERIES = [
    ("lr >= 1e-3 and batch_size < 500 and diff > 0.3", ["--sort", "-diff", "--limit", "10"],
     dict(sort="-diff", limit=10)),
    ("", ["--arch", "resnet50", "--sort", "-epochs", "--sort", "id", "--limit", "7",
          "--offset", "3"],
     dict(arch="resnet50", sort=["-epochs", "id"], limit=7, offset=3)),
    ("acc_pytorch > 0.7 or (eps < 1e-6 and not arch = vgg16)", ["--sort", "diff"],
     dict(sort="diff")),
    ("seed is null and status != ok", [], {}),
    ("diff >= 0.05", ["--profile", "tensorflow", "--status", "ok", "--sort", "-lr",
                      "--limit", "25"],
     dict(profile="tensorflow", status="ok", sort="-lr", limit=25)),
]


@pytest.fixture(scope="module")
def ds(cw_dataset):
    with xwires.open(cw_dataset) as d:
        yield d


@pytest.mark.parametrize("where,flags,kwargs", QUERIES)
def test_query_matches_cli(ds, cw_dataset, where, flags, kwargs):
    args = ["query", cw_dataset] + (["--where", where] if where else []) + flags
    want = cli_json(*args)
    got = ds.query(where, **kwargs)
    assert isinstance(got, pd.DataFrame)
    assert_frame_matches_json(got, want)
    count = ds.count(where, **{k: v for k, v in kwargs.items()
                               if k in ("arch", "profile", "status")})
    assert count >= len(got)


def test_query_columns_have_useful_dtypes(ds):
    df = ds.query("arch = vgg16", sort="id", limit=5)
    assert list(df.columns[:4]) == ["id", "arch", "name", "status"]
    assert str(df["id"].dtype) == "int64"
    assert str(df["diff"].dtype) == "float64"
    assert df["lr"].iloc[0] > 0
    assert len(ds.query()) == 1200 == ds.count()


def test_near_matches_cli(ds, cw_dataset):
    want = cli_json("query", cw_dataset, "--near", "lr=0.05,adam_eps=0.2,batch_size=200,epochs=20",
                    "--limit", "5")
    got = ds.near(lr=0.05, adam_eps=0.2, batch_size=200, epochs=20, k=5)
    assert list(got.columns[:2]) == ["distance", "id"]
    assert_frame_matches_json(got, want)
    # The CLI's text form and a filter give the CLI's answer too.
    want = cli_json("query", cw_dataset, "--near", "learning_rate=1e-3,bs=64", "--arch",
                    "densenet121", "--where", "diff > 0.1")
    assert_frame_matches_json(
        ds.near("learning_rate=1e-3,bs=64", arch="densenet121", where="diff > 0.1"), want)


@pytest.mark.parametrize("by,threshold", [("arch", 0.05), ("none", 0.1), ("data", 0.05)])
def test_stats_matches_cli(ds, cw_dataset, by, threshold):
    want = cli_json("stats", cw_dataset, "--by", by, "--threshold", threshold)
    assert_frame_matches_json(ds.stats(by=by, threshold=threshold), want)


def test_stats_filtered_matches_cli(ds, cw_dataset):
    want = cli_json("stats", cw_dataset, "--where", "epochs > 10", "--arch", "vgg16",
                    "--arch", "resnet50")
    got = ds.stats(where="epochs > 10", arch=["vgg16", "resnet50"])
    assert_frame_matches_json(got, want)


def test_stats_reproduce_table_2(ds):
    # The study's Table 2, computed independently with pandas from the CSVs
    # (tests/dataset/crossedwires_test.cc): min, max, median, mean, share >= 0.05.
    known = {
        "vgg16": (4.17e-10, 0.681519394, 0.0843387575, 0.12280131364205502, 0.5925),
        "resnet50": (0.0001369467595728, 0.4520065635442734, 0.041836800103519,
                     0.07793020935341255, 0.4525),
        "densenet121": (9.98986328577e-05, 0.4389605228515232, 0.0544690569241841,
                        0.10978129264343824, 0.525),
    }
    table2 = ds.stats().set_index("arch")
    for arch, values in known.items():
        row = table2.loc[arch]
        assert row["trials"] == 400
        got = row[["div_min", "div_max", "div_median", "div_mean", "share_ge_0.05"]]
        assert list(got) == pytest.approx(values, rel=1e-6), arch
    assert table2.loc["all", "trials"] == 1200
    assert f"{100 * table2.loc['all', 'share_ge_0.05']:.1f}" == "52.3"  # the study's 52.3%


@pytest.mark.parametrize("k,bottom", [(3, False), (2, True)])
def test_top_matches_cli(ds, cw_dataset, k, bottom):
    want = cli_json("top", cw_dataset, "--k", k, *(["--bottom"] if bottom else []))
    got = ds.top(k=k, bottom=bottom)
    assert_frame_matches_json(got, want)
    assert len(got) == 3 * k


def test_top_names_the_most_divergent_trial(ds):
    top = ds.top(k=1)
    vgg = top[top["arch"] == "vgg16"].iloc[0]
    assert vgg["name"] == "dual_train_5e67eae2"
    assert vgg["diff"] == pytest.approx(0.681519394)


def test_mi_matches_cli(ds, cw_dataset):
    assert_frame_matches_json(ds.mi(), cli_json("mi", cw_dataset))
    want = cli_json("mi", cw_dataset, "--ksg", "--k", "4", "--repeats", "3", "--seed", "7",
                    "--no-pairs", "--log-scale", "--arch", "vgg16", "--where", "epochs > 5")
    got = ds.mi(ksg=True, k=4, repeats=3, seed=7, pairs=False, log_scale=True, arch="vgg16",
                where="epochs > 5")
    assert_frame_matches_json(got, want)


def test_mi_reproduces_figure_4(ds):
    # docs/analysis.md: CrossedWires, binned, 20 repeats, single variables.
    known = {"vgg16": (0.135, 0.159, 0.129, 0.146),
             "resnet50": (0.136, 0.112, 0.155, 0.201),
             "densenet121": (0.173, 0.119, 0.152, 0.496),
             "all": (0.059, 0.051, 0.053, 0.157)}
    fig4 = ds.mi(pairs=False).pivot(index="group", columns="variable", values="mi_mean")
    for group, values in known.items():
        got = fig4.loc[group, ["lr", "adam_eps", "batch_size", "epochs"]].round(3)
        assert list(got) == pytest.approx(values, abs=1e-9), group
