"""One trial with its models, metrics, curves and weights."""
import collections
import json

import numpy as np
import pandas as pd

from . import _checks
from .errors import FailedPreconditionError, NotFoundError

_HYPERPARAMETERS = ("lr", "adam_eps", "beta1", "beta2", "weight_decay",
                    "batch_size", "epochs", "seed")
_MODEL_COLUMNS = ("id", "profile", "external", "status", "train_acc", "test_acc",
                  "train_loss", "test_loss", "epochs_recorded", "has_weights",
                  "weights_sha256", "param_count", "wall_time_s", "threads")
_METRICS = ("train_acc", "test_acc", "train_loss", "test_loss")


class Trial:
    """A trial: hyperparameters, one model per profile, curves and weights.

    Returned by :meth:`xwires.Dataset.trial` and :func:`xwires.train`. The
    fields are those of ``xwires show TRIAL --format json --curves``
    (:meth:`to_dict` returns exactly that object).

    Attributes:
        id: trial id in its dataset (0 for a trial trained but not stored).
        arch, data, status, name, provenance, created_at: as stored.
        search_id: the search that produced it, or None.
        divergence: |accuracy difference| or the search objective (NaN if unknown).
        hyperparameters: dict of lr, adam_eps, beta1, beta2, weight_decay,
            batch_size, epochs, seed (None when unknown).
        hparams: every training option as recorded (dict).
        extra: other recorded facts (dict).
        profiles: the models' profiles, in training order.
        models: DataFrame, one row per model (status, metrics, sha256, ...).
        metrics: DataFrame indexed by profile: final train/test accuracy and loss.
        curves: DataFrame of every model's per-epoch metrics (column ``profile``).
        fingerprint: dict profile -> machine fingerprint of its training run.
    """

    def __init__(self, record_json, curve_arrays, weights_of, spec_of):
        record = json.loads(record_json)
        self._record = record
        self._curve_arrays = list(curve_arrays)
        self._weights_of = weights_of
        self._spec_of = spec_of
        self.id = record["id"]
        self.arch = record["arch"]
        self.data = record["data"]
        self.status = record["status"]
        self.name = record["name"]
        self.provenance = record["provenance"]
        self.created_at = record["created_at"]
        self.search_id = record["search_id"]
        diff = record["diff"]
        self.divergence = float("nan") if diff is None else diff
        self.hyperparameters = {k: record[k] for k in _HYPERPARAMETERS}
        self.hparams = record["hparams"]
        self.extra = record["extra"]
        models = record["models"]
        self.profiles = [m["profile"] for m in models]
        self.models = pd.DataFrame([{k: m[k] for k in _MODEL_COLUMNS} for m in models],
                                   columns=list(_MODEL_COLUMNS))
        self.models["param_count"] = self.models["param_count"].astype("Int64")
        self.metrics = pd.DataFrame(
            {k: [np.nan if m[k] is None else m[k] for m in models] for k in _METRICS},
            index=pd.Index(self.profiles, name="profile"))
        self.fingerprint = {m["profile"]: m["fingerprint"] for m in models}
        parts = [self.curve(p) for p in self.profiles] if self._curve_arrays else []
        if parts:
            self.curves = pd.concat(
                [c.assign(profile=p) for p, c in zip(self.profiles, parts)], ignore_index=True)
        else:
            self.curves = pd.DataFrame(columns=["epoch", "profile"])
        self.curves = self.curves[["profile"] + [c for c in self.curves.columns
                                                 if c != "profile"]]

    def _index(self, profile):
        if profile is None:
            if not self.profiles:
                raise NotFoundError(f"trial {self.id} has no models")
            return 0
        profile = _checks.as_str("profile", profile)
        if profile not in self.profiles:
            raise NotFoundError(
                f"trial {self.id} has no model under profile '{profile}' "
                f"(it has: {', '.join(self.profiles)})")
        return self.profiles.index(profile)

    def curve(self, profile=None):
        """Per-epoch metrics of one model (default: the first) as a DataFrame.

        Columns epoch, train_loss_mean, train_loss_last, train_acc,
        test_loss, test_acc; NaN where unknown. The columns share the arrays
        the C++ layer filled (no per-value Python objects).
        """
        index = self._index(profile)
        if not self._curve_arrays:
            raise FailedPreconditionError(
                f"trial {self.id} was read without curves (Dataset.trial(..., curves=True))")
        return pd.DataFrame(self._curve_arrays[index])

    def weights(self, profile=None):
        """The model's weights as an OrderedDict of numpy arrays.

        Names and order are the PyTorch ``state_dict``'s; float tensors are
        float32, counters such as ``num_batches_tracked`` int64. Default: the
        first model. Raises FailedPreconditionError when it has no weights.
        """
        name = self.profiles[self._index(profile)]
        return self._weights_of(name)

    def torch_model(self, profile=None):
        """The model as a torchvision-style ``torch.nn.Module`` in eval mode.

        Built by :mod:`xwires.torch_models` and loaded with
        ``load_state_dict(strict=True)``. Needs python3-torch and
        python3-torchvision.
        """
        from . import torch_models
        return torch_models.load(self._spec_of(), self.weights(profile))

    def to_dict(self):
        """The trial as ``xwires show TRIAL --format json --curves`` prints it
        (without ``--curves`` when read with ``curves=False``)."""
        return json.loads(json.dumps(self._record))

    def __repr__(self):
        acc = ", ".join(f"{p} {a:.4f}" for p, a in
                        zip(self.profiles, self.metrics["test_acc"]))
        return (f"<xwires.Trial {self.id}: {self.arch} on {self.data}, {self.status}, "
                f"divergence {self.divergence:.4f} ({acc})>")


def weights_dict(named_arrays):
    """OrderedDict of (name, array) pairs from the binding."""
    return collections.OrderedDict(named_arrays)
