"""Reference values of the significance statistics from scipy and statsmodels.

Reads a JSON case file written by significance_scipy_test.cc and writes the
expected values as JSON:

    /usr/bin/python3 significance_reference.py CASES.json OUT.json

Each statistic comes from the library that defines it where one exists
(scipy.stats.permutation_test, scipy.stats.ttest_ind, statsmodels'
CompareMeans, scipy.stats.fisher_exact, scipy.stats.mannwhitneyu,
statsmodels' multipletests, scipy.stats.t); Hedges' g, the excess churn and
Jordan's floor, which neither library has, are computed here from their
textbook definitions with scipy.special.gamma and itertools.
"""
import itertools
import json
import sys

import numpy as np
from scipy import special, stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import CompareMeans, DescrStatsW


def mean_diff(x, y, axis):
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def two_sample(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    perm = stats.permutation_test((a, b), mean_diff, vectorized=True,
                                  permutation_type="independent",
                                  n_resamples=np.inf, alternative="two-sided")
    welch = stats.ttest_ind(a, b, equal_var=False)
    cm = CompareMeans(DescrStatsW(a), DescrStatsW(b))
    t_sm, p_sm, df = cm.ttest_ind(usevar="unequal")
    lo, hi = cm.tconfint_diff(alpha=0.05, usevar="unequal")
    m = len(a) + len(b) - 2
    sp = np.sqrt(((len(a) - 1) * a.var(ddof=1) + (len(b) - 1) * b.var(ddof=1)) / m)
    j = special.gamma(m / 2) / (np.sqrt(m / 2) * special.gamma((m - 1) / 2))
    u = stats.mannwhitneyu(a, b, alternative="two-sided").statistic
    return {
        "perm_p": float(perm.pvalue),
        "perm_splits": int(len(perm.null_distribution)),
        "welch_t": float(welch.statistic),
        "welch_p": float(welch.pvalue),
        "welch_t_sm": float(t_sm),
        "welch_p_sm": float(p_sm),
        "welch_df": float(df),
        "ci_low": float(lo),
        "ci_high": float(hi),
        "hedges_g": float(j * (a.mean() - b.mean()) / sp),
        "prob_a_greater": float(u / (len(a) * len(b))),
    }


def excess_churn(pa, pb):
    pool = [np.asarray(r) for r in pa + pb]
    ka, n = len(pa), len(pa[0])

    def churn(group_a):
        ga = [pool[i] for i in group_a]
        gb = [pool[i] for i in range(len(pool)) if i not in group_a]
        d = lambda x, y: np.mean(x != y)
        aa = np.mean([d(x, y) for x, y in itertools.combinations(ga, 2)])
        bb = np.mean([d(x, y) for x, y in itertools.combinations(gb, 2)])
        ab = np.mean([d(x, y) for x in ga for y in gb])
        return aa, bb, ab, ab - (aa + bb) / 2

    aa, bb, ab, e = churn(tuple(range(ka)))
    null = [churn(s)[3] for s in itertools.combinations(range(len(pool)), ka)]
    p = np.mean([x >= e - 1e-12 for x in null])
    return {"d_aa": aa, "d_bb": bb, "d_ab": ab, "excess": e, "p": float(p),
            "splits": len(null)}


def jordan_floor(pred, labels):
    err = np.asarray(pred) != np.asarray(labels)[None, :]
    e = err.mean(axis=0)
    n = err.shape[1]
    floor = np.sqrt(np.sum(e * (1 - e))) / n
    acc = 1 - err.mean(axis=1)
    v = err.var(axis=0, ddof=1)
    sigma2 = n / (n - 1) * (acc.var(ddof=1) - v.sum() / n**2)
    return {"floor": float(floor), "sigma2_s": float(sigma2)}


def main():
    cases = json.load(open(sys.argv[1]))
    out = {
        "two_sample": [two_sample(c["a"], c["b"]) for c in cases["two_sample"]],
        "fisher": [float(stats.fisher_exact([[t[0], t[1]], [t[2], t[3]]])[1])
                   for t in cases["fisher"]],
        "t_quantile": [float(stats.t.ppf(q, df)) for df, q in cases["t_quantile"]],
        "churn": [excess_churn(c["a"], c["b"]) for c in cases["churn"]],
        "floor": [jordan_floor(c["pred"], c["labels"]) for c in cases["floor"]],
    }
    bh = []
    for c in cases["bh"]:
        reject, adj, _, _ = multipletests(c, alpha=0.10, method="fdr_bh")
        bh.append({"adjusted": [float(x) for x in adj],
                   "reject": [int(x) for x in reject]})
    out["bh"] = bh
    json.dump(out, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
