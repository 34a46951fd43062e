"""Significance of a divergence between two profiles' replicas (docs/significance.md).

Thin wrappers of the C++ library's statistics (include/xwires/core/significance.h),
the same code the dataset, the search and the CLI use::

    import xwires
    r = xwires.significance([0.456, 0.471, 0.430, 0.490, 0.462],
                            [0.219, 0.255, 0.180, 0.240, 0.201],
                            num_classes=10, num_examples=10000)
    r["verdict"], r["permutation_p"], r["lcb"]
    adjusted, reject = xwires.benjamini_hochberg([0.01, 0.2, 0.03])
"""
import numpy as np

from . import _checks, _xwires
from .errors import InvalidArgumentError

_OPTIONS = ("alpha", "superiority_low", "superiority_high", "floor_multiple",
            "collapse_se_multiple", "min_survivors", "confidence", "max_exact_splits",
            "monte_carlo_resamples", "seed", "replicas_redraw", "min_spread_ratio")


def _array(name, value, dtype, ndim):
    if value is None:
        return np.zeros(0, dtype=dtype)
    try:
        arr = np.asarray(value)
    except Exception as e:  # noqa: BLE001 - any conversion failure is bad input
        raise InvalidArgumentError(f"{name}: not array-like ({e})") from None
    if arr.size and not np.issubdtype(arr.dtype, np.number) and arr.dtype != bool:
        raise InvalidArgumentError(f"{name}: expected numbers, got {arr.dtype}")
    if arr.size and arr.ndim != ndim:
        raise InvalidArgumentError(f"{name}: expected {ndim} dimension(s), got {arr.ndim}")
    if dtype == np.uint8 and arr.size:
        if np.any(arr < 0) or np.any(arr > 255) or np.any(arr != np.floor(arr)):
            raise InvalidArgumentError(f"{name}: expected integers in [0, 255]")
    return np.ascontiguousarray(arr, dtype=dtype).reshape(-1)


def significance(acc_a, acc_b, *, num_classes, num_examples, loss_finite_a=None,
                 loss_finite_b=None, predictions_a=None, predictions_b=None, labels=None,
                 **options):
    """Every statistic and the verdict of profile A against profile B.

    Args:
        acc_a, acc_b: the K test accuracies of each profile's replicas
            (K >= 4 a side: below that an exact test cannot reach p < 0.05).
        num_classes, num_examples: the test set's class count and size.
        loss_finite_a, loss_finite_b: per replica, False where its loss became
            non-finite (counted as a collapse); None: all finite.
        predictions_a, predictions_b: per-example argmax predictions, shape
            (K, num_examples), or None (then the floor is Jordan's k-class
            approximation and the churn fields are NaN). Give both or neither.
        labels: the test labels (num_examples), needed with predictions.
        **options: alpha (0.05), superiority_low (0.25), superiority_high
            (0.75), floor_multiple (2), collapse_se_multiple (3),
            min_survivors (3), confidence (0.95), max_exact_splits (10**6),
            monte_carlo_resamples (10**5), seed (0), replicas_redraw (True:
            the replicas redraw the trial's arbitrary choices, family "seed";
            False for "ulp" and "order", whose pairs get "insufficient" when
            their replicas did not spread), min_spread_ratio (0.5).

    Returns:
        dict: "a" and "b" (k, mean, sd, collapses, floor, sigma2_s),
        mean_diff, permutation_p (permutation_exact, permutation_splits),
        welch_t, welch_df, welch_p, ci_low, ci_high, hedges_g,
        prob_a_greater, fisher_p, survivors_tested, survivors_diff,
        survivors_p, survivors_prob_a_greater, has_predictions, churn_aa,
        churn_bb, churn_ab, excess_churn, excess_churn_p, floor,
        floor_from_predictions, se2, lcb, verdict ("significant",
        "collapse_driven", "within_noise" or "insufficient") and
        verdict_reason (why the spread guard made it "insufficient"; "").
    """
    for key in options:
        if key not in _OPTIONS:
            raise InvalidArgumentError(
                f"unknown significance option '{key}' (expected one of {', '.join(_OPTIONS)})")
    opts = {}
    for key, value in options.items():
        if key in ("min_survivors", "max_exact_splits", "monte_carlo_resamples", "seed"):
            opts[key] = _checks.as_int(key, value, minimum=0)
        elif key == "replicas_redraw":
            opts[key] = _checks.as_bool(key, value)
        else:
            opts[key] = _checks.as_float(key, value)
    num_classes = _checks.as_int("num_classes", num_classes, minimum=2)
    num_examples = _checks.as_int("num_examples", num_examples, minimum=1)
    return _xwires.compare_pair(
        _array("acc_a", acc_a, np.float64, 1), _array("acc_b", acc_b, np.float64, 1),
        _array("loss_finite_a", loss_finite_a, np.uint8, 1),
        _array("loss_finite_b", loss_finite_b, np.uint8, 1),
        _array("predictions_a", predictions_a, np.uint8, 2),
        _array("predictions_b", predictions_b, np.uint8, 2),
        _array("labels", labels, np.uint8, 1), num_classes, num_examples, opts)


def benjamini_hochberg(p_values, q=0.10):
    """Benjamini-Hochberg over a search's p-values at FDR level q.

    Returns:
        (adjusted, reject): numpy arrays in the input's order; reject is True
        where the adjusted p is <= q (statsmodels' fdr_bh).
    """
    return _xwires.benjamini_hochberg(_array("p_values", p_values, np.float64, 1),
                                      _checks.as_float("q", q))
