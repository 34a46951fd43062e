"""xwires.significance and xwires.benjamini_hochberg against scipy/statsmodels.

The same statistics as the C++ stats_tests, reached through the Python
package, compared with Debian's scipy and statsmodels on fixed vectors.
"""
import numpy as np
import pytest
from scipy import special, stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

import xwires
from conftest import cli_json

PAIRS = [
    ([0.456, 0.471, 0.430, 0.490, 0.462], [0.219, 0.255, 0.180, 0.240, 0.201]),
    ([0.50, 0.52, 0.49, 0.51], [0.50, 0.48, 0.53, 0.47, 0.515, 0.49]),
    ([0.41, 0.43, 0.40, 0.45, 0.42], [0.38, 0.36, 0.42, 0.37, 0.35, 0.39, 0.41]),
]


@pytest.mark.parametrize("a,b", PAIRS)
def test_two_sample_statistics_match_scipy(a, b):
    r = xwires.significance(a, b, num_classes=10, num_examples=10000)
    a, b = np.array(a), np.array(b)
    perm = stats.permutation_test(
        (a, b), lambda x, y, axis: x.mean(axis=axis) - y.mean(axis=axis),
        permutation_type="independent", vectorized=True, n_resamples=np.inf)
    assert r["permutation_exact"]
    assert r["permutation_p"] == pytest.approx(perm.pvalue, abs=1e-12)
    welch = stats.ttest_ind(a, b, equal_var=False)
    assert r["welch_t"] == pytest.approx(welch.statistic, rel=1e-10)
    assert r["welch_p"] == pytest.approx(welch.pvalue, rel=1e-8)
    cm = CompareMeans(DescrStatsW(a), DescrStatsW(b))
    assert r["welch_df"] == pytest.approx(cm.ttest_ind(usevar="unequal")[2], rel=1e-10)
    lo, hi = cm.tconfint_diff(alpha=0.05, usevar="unequal")
    assert (r["ci_low"], r["ci_high"]) == pytest.approx((lo, hi), abs=1e-9)
    m = len(a) + len(b) - 2
    sp = np.sqrt(((len(a) - 1) * a.var(ddof=1) + (len(b) - 1) * b.var(ddof=1)) / m)
    j = special.gamma(m / 2) / (np.sqrt(m / 2) * special.gamma((m - 1) / 2))
    assert r["hedges_g"] == pytest.approx(j * (a.mean() - b.mean()) / sp, rel=1e-10)
    u = stats.mannwhitneyu(a, b).statistic
    assert r["prob_a_greater"] == pytest.approx(u / (len(a) * len(b)), abs=1e-15)
    assert r["mean_diff"] == pytest.approx(a.mean() - b.mean(), abs=1e-15)


def test_collapses_and_fisher_match_scipy():
    a = [0.45, 0.47, 0.44, 0.46, 0.48]
    b = [0.10, 0.11, 0.50, 0.10, 0.52]  # three at chance, two above A
    r = xwires.significance(a, b, num_classes=10, num_examples=1000,
                            loss_finite_a=[True, True, True, True, False])
    assert (r["a"]["collapses"], r["b"]["collapses"]) == (1, 3)
    assert r["fisher_p"] == pytest.approx(stats.fisher_exact([[1, 4], [3, 2]])[1], abs=1e-12)
    assert not r["survivors_tested"]  # B has 2 survivors
    assert r["verdict"] == "insufficient"


def test_ulp_replicas_without_spread_are_insufficient():
    # Each side's replicas repeat one another (as one-ulp replicas of a short
    # run do) while the sides differ: significant when the replicas redraw
    # the trial's choices (seed, the default), insufficient under ulp/order.
    labels = np.tile([0, 1, 2, 3], 20)
    pa = np.tile(np.where(np.arange(80) % 8 == 7, (labels + 1) % 4, labels), (4, 1))
    pb = np.tile(np.where(np.arange(80) % 8 >= 4, (labels + 1) % 4, labels), (4, 1))
    acc_a, acc_b = (pa == labels).mean(axis=1), (pb == labels).mean(axis=1)
    kw = dict(num_classes=4, num_examples=80, predictions_a=pa, predictions_b=pb,
              labels=labels)
    seed = xwires.significance(acc_a, acc_b, **kw)
    assert seed["verdict"] == "significant" and seed["verdict_reason"] == ""
    ulp = xwires.significance(acc_a, acc_b, replicas_redraw=False, **kw)
    assert ulp["verdict"] == "insufficient"
    assert "did not spread" in ulp["verdict_reason"]
    assert ulp["permutation_p"] == seed["permutation_p"]


def test_benjamini_hochberg_matches_statsmodels():
    p = [0.01, 0.04, 0.03, 0.20, 0.50, 0.008, 0.07, 0.90]
    adjusted, reject = xwires.benjamini_hochberg(p)
    want_reject, want_adj, _, _ = multipletests(p, alpha=0.10, method="fdr_bh")
    np.testing.assert_allclose(adjusted, want_adj, atol=1e-12)
    assert list(reject) == list(want_reject)


def test_predictions_give_churn_and_floor():
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 3, 200)
    pa = np.where(rng.random((5, 200)) < 0.8, labels, (labels + 1) % 3)
    pb = np.where(rng.random((5, 200)) < 0.8, labels, (labels + 2) % 3)
    acc = lambda p: (p == labels).mean(axis=1)  # noqa: E731
    r = xwires.significance(acc(pa), acc(pb), num_classes=3, num_examples=200,
                            predictions_a=pa, predictions_b=pb, labels=labels)
    assert r["has_predictions"] and r["floor_from_predictions"]
    d = lambda x, y: np.mean(x != y)  # noqa: E731
    aa = np.mean([d(pa[i], pa[j]) for i in range(5) for j in range(i + 1, 5)])
    bb = np.mean([d(pb[i], pb[j]) for i in range(5) for j in range(i + 1, 5)])
    ab = np.mean([d(x, y) for x in pa for y in pb])
    assert r["excess_churn"] == pytest.approx(ab - (aa + bb) / 2, abs=1e-12)
    e = (pa != labels).mean(axis=0)
    assert r["a"]["floor"] == pytest.approx(np.sqrt(np.sum(e * (1 - e))) / 200, abs=1e-12)
    # Errors on different wrong classes: more cross-profile churn than within.
    assert r["excess_churn"] > 0 and r["excess_churn_p"] < 0.05


def test_bad_input_raises_with_the_reason():
    with pytest.raises(xwires.InvalidArgumentError, match="cannot reach p < 0.05"):
        xwires.significance([0.4, 0.5, 0.45], [0.4, 0.5, 0.45, 0.5],
                            num_classes=10, num_examples=100)
    with pytest.raises(xwires.InvalidArgumentError, match="unknown significance option"):
        xwires.significance([0.4] * 4, [0.5] * 4, num_classes=10, num_examples=100,
                            aplha=0.1)
    with pytest.raises(xwires.InvalidArgumentError, match="predictions"):
        xwires.significance([0.4] * 4, [0.5] * 4, num_classes=3, num_examples=2,
                            predictions_a=[[0, 1]] * 4, labels=[0, 1])


def test_trial_frames_carry_the_significance_columns(tmp_path):
    """query, near and top list each trial's latest verdict, p_value,
    diff_lcb and noise_sd, equal to replica_stats(); None/NaN without
    replicas; the same columns as the CLI's tables, which have none of them
    before any trial is replicated."""
    ds_dir = str(tmp_path / "ds")
    tiny = dict(arch="mlp", width=0.125, epochs=1, batch_size=32, train_limit=128,
                test_limit=100, threads=1)
    first = xwires.train(profiles=["torch", "tf"], lr=0.01, dataset=ds_dir, **tiny)
    xwires.train(profiles=["torch", "tf"], lr=0.02, seed=3, dataset=ds_dir, **tiny)
    trial = int(first.id)
    with xwires.open(ds_dir) as ds:
        assert "verdict" not in ds.query().columns
    xwires.replicate(ds_dir, trials=[trial], replicas=4, threads=1, quiet=True)
    for args in (("query", ds_dir), ("top", ds_dir, "--k", "5")):
        want = cli_json(*args)
        assert list(want[0].keys())[-4:] == ["verdict", "p_value", "diff_lcb", "noise_sd"]
    with xwires.open(ds_dir) as ds:
        want = ds.replica_stats(trial).iloc[-1]
        for df in (ds.query(sort="id"), ds.near(lr=0.01, k=5).sort_values("id"),
                   ds.top(k=5).sort_values("id")):
            for col in ("verdict", "p_value", "diff_lcb", "noise_sd"):
                assert col in df.columns
            replicated = df[df["id"] == trial].iloc[0]
            assert replicated["verdict"] == want["verdict"]
            assert replicated["p_value"] == pytest.approx(want["p_value"])
            assert replicated["diff_lcb"] == pytest.approx(want["diff_lcb"])
            assert replicated["noise_sd"] == pytest.approx(want["noise_sd"])
            other = df[df["id"] != trial].iloc[0]
            assert other["verdict"] is None
            assert np.isnan(other["p_value"])
