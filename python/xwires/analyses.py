"""Analyses of divergent pairs from Python: compare, attribute, stored results
and the HTML report, with the semantics of ``xwires compare``,
``xwires attribute`` and ``xwires report`` (docs/analysis.md).

The C++ library does the work (the GIL is released meanwhile); the tables
are the CLI's, as pandas DataFrames.
"""
import json

from . import _checks, _xwires
from ._frames import frame


class Comparison:
    """The result of :meth:`xwires.Dataset.compare` (``xwires compare``).

    Attributes:
        json: the CLI's ``--format json`` document, parsed (dict).
        tensors: tier 1, one row per state_dict entry (the text output's
            columns: tensor, shape, max_abs, max_rel, rel_l2, cosine, close).
        layers: tier 2, one row per module on the probe batch (module, type,
            shape, max_abs, rel_l2, cosine, close).
        classes: tier 3, per-class test accuracy of both models.
        verdicts: {"tensors", "activations", "task"} -> identical | close |
            differ.
        parted_at: first module beyond tolerance ("" if none).
        analysis_id: the stored result's id (store=True), else None.
    """

    def __init__(self, result):
        self.json = json.loads(result["json"])
        self.tensors = frame(result["tensors"])
        self.layers = frame(result["layers"])
        self.classes = frame(result["classes"])
        self.verdicts = {"tensors": self.json["tier1"]["verdict"],
                         "activations": self.json["tier2"]["verdict"],
                         "task": self.json["tier3"]["verdict"]}
        self.parted_at = self.json["tier2"]["parted_at"] or ""
        self.analysis_id = result["analysis_id"]

    def __repr__(self):
        v = self.verdicts
        return (f"<xwires.Comparison trial {self.json['trial']}: tensors {v['tensors']}, "
                f"activations {v['activations']}, task {v['task']}>")


class Attribution:
    """The result of :meth:`xwires.Dataset.attribute` (``xwires attribute``).

    Attributes:
        knobs: the CLI's knob table (knob, A value, B value, acc A_k, acc B_k,
            alone from A, remains (only k differs), share, disagree A_k/A,
            disagree B_k/B, beyond noise), largest share first.
        runs: every retraining (knob, direction, profile, value, status,
            test_acc, test_loss, disagree_a, disagree_b, weights_sha256).
        summary: the CLI's summary line (main knobs, noise floor).
        main_knobs: list of knob paths.
        noise: {"sd", "threshold", "df", "family"} of the replicas the knob
            effects were tested against (sd None without replicas).
        json: the CLI's ``--format json`` document, parsed (dict).
        analysis_id: the stored result's id, or None when not stored.
    """

    def __init__(self, result):
        self.json = json.loads(result["json"])
        self.knobs = frame(result["knobs"])
        self.runs = frame(result["runs"])
        self.summary = self.json["summary"]
        self.main_knobs = list(self.json["main_knobs"])
        self.noise = dict(self.json.get("noise", {}))
        self.analysis_id = result["analysis_id"]

    def __repr__(self):
        return f"<xwires.Attribution trial {self.json['trial']}: {self.summary}>"


def compare(handle, trial_id, profile_a, profile_b, probe, rtol, atol, acc_tol, store):
    """Dataset.compare's body (argument checks, then the library)."""
    return Comparison(handle.compare(
        _checks.as_int("trial_id", trial_id),
        _checks.as_str("profile_a", profile_a, allow_none=True) or "",
        _checks.as_str("profile_b", profile_b, allow_none=True) or "",
        _checks.as_int("probe", probe, minimum=1),
        _checks.as_float("rtol", rtol), _checks.as_float("atol", atol),
        _checks.as_float("acc_tol", acc_tol), _checks.as_bool("store", store)))


def attribute(handle, trial_id, profile_a, profile_b, knobs, jobs, threads, store):
    """Dataset.attribute's body (argument checks, then the library)."""
    if store is None:
        store = not handle.read_only
    return Attribution(handle.attribute(
        _checks.as_int("trial_id", trial_id),
        _checks.as_str("profile_a", profile_a, allow_none=True) or "",
        _checks.as_str("profile_b", profile_b, allow_none=True) or "",
        _checks.as_str_list("knobs", knobs),
        _checks.as_int("jobs", jobs, minimum=0), _checks.as_int("threads", threads, minimum=0),
        _checks.as_bool("store", store)))


def report(dataset, out, *, title="xwires divergence report", arch=None, where="", top=3,
           threshold=0.05, mi_repeats=20, mi_jitter=0.01, mi_shuffles=200, ksg=False,
           exclude_degenerate=False):
    """Writes the HTML report of a dataset (``xwires report DATASET -o OUT``).

    One self-contained file (inline CSS and SVG); written through a temporary
    file and a rename, so a failure leaves an earlier report intact. The
    options are the CLI's (docs/analysis.md).

    Args:
        dataset: the dataset directory (opened read-only).
        out: the HTML file to write.
        title: page title.
        arch: only these architectures (str or list).
        where: filter of ``xwires query``.
        top: training curves of the k most divergent pairs per architecture.
        threshold: divergence threshold of the statistics' share column.
        mi_repeats, mi_jitter, mi_shuffles, ksg: the mutual-information bars.
        exclude_degenerate: leave trials with a collapsed or at-chance model
            out of the statistics and top tables.

    Returns:
        The ``data-plot`` ids of the report's charts, in page order.
    """
    return list(_xwires.report(
        _checks.as_str("dataset", dataset), _checks.as_str("out", out),
        _checks.as_str("title", title), _checks.as_str_list("arch", arch),
        _checks.as_str("where", where, allow_none=True) or "",
        _checks.as_int("top", top, minimum=0), _checks.as_float("threshold", threshold),
        _checks.as_int("mi_repeats", mi_repeats, minimum=1),
        _checks.as_float("mi_jitter", mi_jitter),
        _checks.as_int("mi_shuffles", mi_shuffles, minimum=0), _checks.as_bool("ksg", ksg),
        _checks.as_bool("exclude_degenerate", exclude_degenerate)))
