"""Reading (and importing into) an xwires dataset from Python."""
from . import _checks, _xwires, analyses
from ._frames import frame
from .errors import ClosedError, NotSupportedError
from .trial import Trial, weights_dict


def open(path, mode="r"):  # noqa: A001 - xwires.open, like io.open
    """Opens the dataset in directory `path`; use it as a context manager.

    Args:
        path: the dataset directory (str or os.PathLike).
        mode: "r" (default) is read-only: nothing on disk is created or
            changed, and a missing dataset raises NotFoundError. "w" opens
            read-write and creates the dataset if missing.

    Reading works while another process (e.g. ``xwires search``) writes to
    the same dataset: SQLite's WAL mode gives each query a consistent view.

    Example::

        with xwires.open("xwires-data") as ds:
            ds.query("diff > 0.3", sort="-diff", limit=10)
    """
    return Dataset(path, mode)


def _filter(where, arch=None, profile=None, status=None):
    f = _xwires.Filter()
    f.where = _checks.as_str("where", where, allow_none=True)
    f.archs = _checks.as_str_list("arch", arch)
    f.profiles = _checks.as_str_list("profile", profile)
    f.statuses = _checks.as_str_list("status", status)
    return f


def _near_text(target, values):
    """The `xwires query --near` text of a target given as str and/or kwargs."""
    items = [] if target is None else [_checks.as_str("target", target)]
    for name, value in values.items():
        # Text goes through as written, so the library's message names it.
        text = value if isinstance(value, str) else repr(_checks.as_float(name, value))
        items.append(f"{name}={text}")
    return ",".join(items)


class Dataset:
    """An open xwires dataset: trials, models, curves and weights.

    Create it with :func:`xwires.open`. Tables come back as pandas
    DataFrames with the columns and values of the matching CLI command's
    ``--format json`` output (``query``, ``query --near``, ``stats``,
    ``top``, ``mi``). A Dataset may be shared between threads (calls are
    serialised); the GIL is released while the C++ library works.
    """

    def __init__(self, path, mode="r"):
        self._path = _checks.as_str("path", path)
        mode = _checks.as_str("mode", mode)
        self._handle = _xwires.Dataset(self._path, mode)

    @property
    def path(self):
        """The dataset directory."""
        return self._path

    @property
    def read_only(self):
        """True when opened with mode "r"."""
        return self._h().read_only

    @property
    def closed(self):
        """True after close()."""
        return self._handle is None or self._handle.closed

    def close(self):
        """Closes the dataset (its SQLite connection); later calls raise ClosedError."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def __enter__(self):
        self._h()
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        state = "closed" if self.closed else ("read-only" if self._handle.read_only
                                              else "read-write")
        return f"<xwires.Dataset {self._path!r} ({state})>"

    def _h(self):
        if self._handle is None:
            raise ClosedError(f"dataset {self._path} is closed")
        return self._handle

    def query(self, where="", *, arch=None, profile=None, status=None, sort=None,
              limit=None, offset=0):
        """Trials matching a filter, one row each (``xwires query``).

        Args:
            where: the CLI's filter language, e.g.
                ``"lr >= 1e-3 and batch_size < 500 and diff > 0.3"`` (fields
                lr, adam_eps, beta1, beta2, weight_decay, batch_size, epochs,
                seed, diff, id, search_id, arch, data, status, name,
                provenance, acc_<profile>, train_acc_<profile>,
                loss_<profile>, train_loss_<profile>, and the stored settings
                width, depth, dropout, train_limit, test_limit, data_seed,
                init_weights, profiles, isa_<profile>, simd_<profile>,
                cpu_<profile>, threads_<profile>; and/or/not, parentheses).
            arch, profile, status: only these architectures / trials with a
                model of every given profile / these statuses (str or list).
            sort: field or list of fields, "-" prefix for descending ("-diff").
            limit: at most this many rows (None: all). offset: rows to skip.

        Returns:
            DataFrame with columns id, arch, name, status, the hyperparameters,
            acc_<profile> per profile, diff, and the significance columns
            verdict, p_value, diff_lcb and noise_sd of the trial's latest
            replica statistics once the dataset holds any (None / NaN for
            trials without replicas; docs/significance.md), as ``xwires
            query`` prints them.
        """
        sort = _checks.as_str_list("sort", sort)
        limit = _checks.as_int("limit", limit, minimum=0, allow_none=True, none_as=-1)
        offset = _checks.as_int("offset", offset, minimum=0)
        f = _filter(where, arch, profile, status)
        return frame(self._h().query(f, sort, limit, offset))

    def count(self, where="", *, arch=None, profile=None, status=None):
        """The number of trials matching the filter (``xwires query --count``)."""
        return self._h().count(_filter(where, arch, profile, status))

    def near(self, target=None, *, k=10, where="", arch=None, profile=None, status=None,
             **values):
        """The `k` trials nearest to a hyperparameter point (``query --near``).

        Give the point as keyword arguments (``near(lr=0.05, adam_eps=0.2,
        batch_size=200, epochs=20)``) or as the CLI's text
        (``near("lr=0.05,adam_eps=0.2")``). Distance: Euclidean over the given
        hyperparameters, each normalised to [0, 1] by the stored range (log10
        for lr, adam_eps and weight_decay); trials missing one are skipped.
        The filter arguments are those of :meth:`query`.

        Returns:
            DataFrame: a distance column, then :meth:`query`'s columns
            (significance columns included), nearest first.
        """
        k = _checks.as_int("k", k, minimum=0, maximum=_checks.INT32_MAX)
        text = _near_text(target, values)
        return frame(self._h().near(text, _filter(where, arch, profile, status), k))

    def stats(self, by="arch", *, threshold=0.05, where="", arch=None):
        """Divergence statistics per group (``xwires stats``; the study's Tables 2-3).

        Args:
            by: "none" or any field of :meth:`query`'s filter language
                ("arch", "data", "width", "train_limit", "search_id",
                "profiles", "simd_torch", ...); trials without the value
                form the group "(none)".
            threshold: divergence threshold of the share column.
            where, arch: which trials (as in :meth:`query`).

        Returns:
            DataFrame with columns `by` (the field; "group" for "none")
            holding the group or "all", trials,
            div_min, div_max, div_median, div_mean, share_ge_<threshold>,
            then acc_min_<p>, acc_max_<p> per profile.
        """
        by = _checks.as_str("by", by)
        threshold = _checks.as_float("threshold", threshold)
        return frame(self._h().stats(by, threshold, _filter(where, arch)))

    def top(self, k=3, *, bottom=False, where="", arch=None):
        """The k most (or least) divergent trials per architecture (``xwires top``).

        Returns:
            DataFrame with columns arch, rank, id, name, lr, adam_eps,
            batch_size, epochs, acc_<p> per profile, diff, and once the
            dataset holds replica statistics verdict, p_value, diff_lcb and
            noise_sd (as in :meth:`query`).
        """
        k = _checks.as_int("k", k, minimum=0, maximum=_checks.INT32_MAX)
        bottom = _checks.as_bool("bottom", bottom)
        return frame(self._h().top(k, bottom, _filter(where, arch)))

    def mi(self, *, arch=None, where="", ksg=False, k=3, repeats=20, jitter=0.01, seed=0,
           pairs=True, log_scale=False):
        """Mutual information of each hyperparameter (and pair) with the divergence.

        ``xwires mi``: the study's binned estimate (0.1 bins, as
        sklearn.metrics.mutual_info_score) or, with ``ksg=True``, the KSG
        estimator with `k` neighbours; `repeats` runs with uniform `jitter`
        on the normalised values give mean and std, beside a permutation
        null of 200 shuffled divergences (docs/analysis.md). `log_scale`
        takes log10 of lr, adam_eps and weight_decay first; without it the
        dimensions the trials' searches sample log-uniformly are taken on a
        log scale (the CLI's ``--scale auto``).

        Returns:
            DataFrame with columns group, variable, scale, mi_mean, mi_std,
            mi_null, mi_corrected, p, n (MI in nats).
        """
        f = _filter(where, arch)
        return frame(self._h().mi(
            f, _checks.as_bool("pairs", pairs), _checks.as_bool("log_scale", log_scale),
            _checks.as_bool("ksg", ksg), _checks.as_int("repeats", repeats, maximum=_checks.INT32_MAX),
            _checks.as_float("jitter", jitter), _checks.as_int("k", k, maximum=_checks.INT32_MAX),
            _checks.as_int("seed", seed, minimum=0)))

    def searches(self, *, with_config=False):
        """The dataset's searches, one row each (``xwires searches``).

        Columns: id, created_at, status, what the search trains (arch,
        profiles "a,b", data, train_limit and test_limit: NaN for the whole
        split, width), objective, its trials by state (done, failed,
        pending), planned (the budget it was started with), and its best
        finished pair (best_trial, best_diff). `with_config` adds the stored
        config_json and space_json.
        """
        return frame(self._h().searches(_checks.as_bool("with_config", with_config)))

    def replicas(self, trial_id):
        """The stored replicas of a trial, one row each (``xwires show``).

        Columns: profile, family (ulp, seed, order), replica (0 is the trial
        as trained), status, test_acc, test_loss, first_nonfinite_step,
        collapsed, params_json (what the perturbation changed),
        weights_sha256, wall_s. Empty when the trial has no replicas.
        """
        return frame(self._h().replicas(_checks.as_int("trial_id", trial_id)))

    def replica_stats(self, trial_id):
        """Each profile pair's statistics and verdict over the trial's replicas.

        Columns: profile_a, profile_b, family, k_a, k_b, mean_a, sd_a, mean_b,
        sd_b, collapses_a, collapses_b, mean_diff, p_value, welch_p, ci_low,
        ci_high, hedges_g, prob_a_greater, fisher_p, excess_churn,
        excess_churn_p, noise_sd, noise_floor, diff_lcb, verdict
        (docs/significance.md).
        """
        return frame(self._h().replica_stats(_checks.as_int("trial_id", trial_id)))

    def compare(self, trial_id, *, profile_a=None, profile_b=None, probe=64, rtol=1e-5,
                atol=1e-8, acc_tol=0.01, store=False):
        """Where the two models of a trial differ (``xwires compare``).

        Re-runs the stored models (trials trained by xwires, with weights):
        tier 1 tensors, tier 2 activations on the first `probe` test images,
        tier 3 the task, each with the CLI's verdict (identical, close,
        differ) under numpy.isclose(rtol, atol) and `acc_tol`.

        Args:
            trial_id: the trial.
            profile_a, profile_b: the models compared (None: the first two).
            probe, rtol, atol, acc_tol: as the CLI's options.
            store: keep the result in the dataset, as ``--store`` (needs a
                dataset opened with mode "w").

        Returns:
            A :class:`xwires.analyses.Comparison` (DataFrames ``tensors``,
            ``layers``, ``classes``; ``verdicts``; the CLI's JSON).
        """
        return analyses.compare(self._h(), trial_id, profile_a, profile_b, probe, rtol, atol,
                                acc_tol, store)

    def attribute(self, trial_id, *, profile_a=None, profile_b=None, knobs=None, jobs=0,
                  threads=0, store=None):
        """Which numerics knobs make a pair diverge (``xwires attribute``).

        Trains the two baselines and, per knob on which the profiles differ,
        A with that knob switched to B's value and B with it switched to
        A's. Each knob's effects are tested against the noise floor of the
        trial's replicas when it has any (column ``beyond noise``;
        docs/analysis.md).

        Args:
            trial_id: the trial.
            profile_a, profile_b: the models (None: the first two).
            knobs: only these knob paths, e.g. "adam.variant" (None: all).
            jobs, threads: parallel trainings and threads per training
                (0: automatic), as the CLI's.
            store: keep the result in the dataset as the CLI does (None:
                when the dataset was opened with mode "w"; the CLI stores
                unless --no-store).

        Returns:
            An :class:`xwires.analyses.Attribution` (``knobs`` and ``runs``
            DataFrames, ``summary``, ``main_knobs``, ``noise``, the JSON).
        """
        return analyses.attribute(self._h(), trial_id, profile_a, profile_b, knobs, jobs,
                                  threads, store)

    def analyses(self, trial_id=None, kind=None):
        """Stored compare, attribute and mi results, oldest first.

        Args:
            trial_id: only results describing this trial (None: all).
            kind: only "compare", "attribute" or "mi" (None: all).

        Returns:
            A DataFrame with columns id, kind, created_at, toolkit, trials
            (the ids it describes, comma-separated), summary, result_json
            (the CLI's JSON output of that analysis).
        """
        trial = -1 if trial_id is None else _checks.as_int("trial_id", trial_id)
        return frame(self._h().analyses(
            trial, _checks.as_str("kind", kind, allow_none=True) or ""))

    def trial(self, trial_id, curves=True):
        """One trial with its models, metrics and curves (``xwires show --curves``).

        Args:
            trial_id: the trial.
            curves: read the per-epoch curves from the HDF5 bundles; False
                reads the database only (``xwires show`` without
                ``--curves``), e.g. for a dataset copied without ``h5/``.

        Returns:
            :class:`xwires.Trial`; its weights and torch model load on demand.
        """
        trial_id = _checks.as_int("trial_id", trial_id)
        record, curves = self._h().trial(trial_id, _checks.as_bool("curves", curves))
        return Trial(record, curves, lambda profile: self.weights(trial_id, profile),
                     lambda: self.model_spec(trial_id))

    def weights(self, trial_id, profile=None):
        """A stored model's weights as an OrderedDict of numpy arrays.

        Names and order are PyTorch's ``state_dict``; float32 arrays share the
        memory the C++ reader filled (no copy), ``num_batches_tracked``
        counters are int64. The recorded sha256 is verified while reading
        (CorruptionError on a mismatch).

        Args:
            trial_id: the trial.
            profile: the model's profile (default: the trial's first model).
        """
        trial_id = _checks.as_int("trial_id", trial_id)
        profile = _checks.as_str("profile", profile, allow_none=True)
        _, _, arrays = self._h().weights(trial_id, profile)
        return weights_dict(arrays)

    def model_spec(self, trial_id):
        """What building a stored trial's network needs.

        Returns:
            dict with arch, width, depth, dropout, input_shape (C, H, W) and
            num_classes (the latter two from the trial's data spec).
        """
        return self._h().model_spec(_checks.as_int("trial_id", trial_id))

    def torch_model(self, trial_id, profile=None):
        """A stored model as a torchvision-style ``torch.nn.Module``, in eval mode.

        The network is built by :mod:`xwires.torch_models` (the PyTorch twins
        of xwires' architectures) and loaded with ``strict=True``; its logits
        match ``xwires predict`` under the torch profile. Needs
        python3-torch and python3-torchvision.
        """
        try:
            from . import torch_models
        except ImportError as e:
            raise NotSupportedError(
                "torch_model needs PyTorch and torchvision (Debian: apt-get install "
                f"python3-torch python3-torchvision): {e}") from e
        spec = self.model_spec(trial_id)
        return torch_models.load(spec, self.weights(trial_id, profile))

    def import_crossedwires(self, csv, arch):
        """Imports a CrossedWires results CSV (``xwires import-crossedwires``).

        The whole file is validated first; rows already stored for `arch` are
        skipped. Needs mode "w".

        Returns:
            dict with rows, imported, skipped_existing, rows_without_curves
            and by_state.
        """
        return self._h().import_crossedwires(_checks.as_str("csv", csv),
                                             _checks.as_str("arch", arch))
