"""Training, searches and profiles from Python.

Both calls run the C++ library with the GIL released, print progress to
sys.stderr like the CLI (a live bar on a terminal, one line per epoch or
trial otherwise) and stop cleanly on Ctrl-C: KeyboardInterrupt is raised
between two training steps, nothing half-written is left behind, and an
interrupted search resumes like one that was killed.
"""
import json

from . import _checks, _xwires
from ._frames import frame
from .dataset import Dataset
from .trial import Trial, weights_dict


def _profile_specs(profiles):
    if isinstance(profiles, str):
        profiles = [p.strip() for p in profiles.split(",") if p.strip()]
    if isinstance(profiles, dict):
        profiles = [profiles]
    specs = []
    for p in _checks.as_list("profiles", profiles):
        if isinstance(p, dict):
            specs.append(json.dumps(p))
        else:
            specs.append(_checks.as_str("profiles item", p))
    return specs


def train(arch="simple_cnn", profiles=("torch", "tf"), *, data="synthetic", epochs=1,
          batch_size=32, lr=1e-3, adam_eps=1e-8, beta1=0.9, beta2=0.999, weight_decay=0.0,
          width=1.0, depth=0, dropout=0.5, seed=0, data_seed=None, threads=0,
          eval_batch_size=256, train_limit=None, test_limit=None, init_weights=None, out=None, dataset=None,
          quiet=False):
    """Trains one architecture under several numerics profiles (``xwires train``).

    Same data, seed and hyperparameters for every profile; the defaults are
    the CLI's, and the same arguments give the same weights (and
    weights_sha256) as ``xwires train``.

    Args:
        arch: mlp, simple_cnn, vgg11, vgg16, resnet20, resnet18, resnet50,
            densenet121.
        profiles: shipped names ("torch", "tf", "reference"), .json files,
            or profile dicts (see :func:`profile`); a list, or "torch,tf".
        data: "synthetic", "cifar10:DIR", "cifar100:DIR", "mnist:DIR",
            "fashion-mnist:DIR".
        epochs, batch_size, lr, adam_eps, beta1, beta2, weight_decay: training.
        width, depth, dropout: architecture options (depth 0: the default).
        seed: init, dropout and shuffling seed, and the synthetic data's
            unless `data_seed` is given.
        data_seed: seed of the synthetic data (None: `seed`); recorded.
        threads: threads per training (0: all cores).
        eval_batch_size: batch size of the test passes.
        train_limit, test_limit: use the first N images (None: all).
        init_weights: HDF5 weights file every profile starts from.
        out: also write <profile>.h5 and metrics.json to this directory.
        dataset: also store the trial in this dataset (created if missing).
        quiet: no progress output.

    Returns:
        :class:`xwires.Trial`: the stored trial when `dataset` is given
        (``id`` is its id), else the trained one (``id`` 0). Its weights are
        the ones just trained, held in memory.
    """
    args = dict(
        arch=_checks.as_str("arch", arch),
        profiles=_profile_specs(profiles),
        data=_checks.as_str("data", data),
        init_weights=_checks.as_str("init_weights", init_weights, allow_none=True),
        out=_checks.as_str("out", out, allow_none=True),
        dataset=_checks.as_str("dataset", dataset, allow_none=True),
        epochs=_checks.as_int("epochs", epochs),
        batch_size=_checks.as_int("batch_size", batch_size),
        eval_batch_size=_checks.as_int("eval_batch_size", eval_batch_size),
        train_limit=_checks.as_int("train_limit", train_limit, allow_none=True, none_as=-1),
        test_limit=_checks.as_int("test_limit", test_limit, allow_none=True, none_as=-1),
        lr=_checks.as_float("lr", lr),
        adam_eps=_checks.as_float("adam_eps", adam_eps),
        beta1=_checks.as_float("beta1", beta1),
        beta2=_checks.as_float("beta2", beta2),
        weight_decay=_checks.as_float("weight_decay", weight_decay),
        width=_checks.as_float("width", width),
        depth=_checks.as_int("depth", depth, maximum=_checks.INT32_MAX),
        dropout=_checks.as_float("dropout", dropout),
        seed=_checks.as_int("seed", seed, minimum=0),
        data_seed=_checks.as_int("data_seed", data_seed, minimum=0, allow_none=True),
        threads=_checks.as_int("threads", threads, maximum=_checks.INT32_MAX),
        quiet=_checks.as_bool("quiet", quiet))
    trial_id, record, curves, weights, spec = _xwires.train(**args)
    trained = {profile: arrays for profile, _, arrays in weights}

    def weights_of(profile):
        return weights_dict(trained[profile])

    if trial_id >= 0:
        with Dataset(args["dataset"]) as ds:
            record, curves = ds._h().trial(trial_id, True)
    return Trial(record, curves, weights_of, lambda: dict(spec))


class SearchResult:
    """The outcome of :func:`search`.

    Attributes:
        search_id: the search's id in the dataset (resume it with ``resume=``).
        status: "done", or "stopped" when the time budget cut it short.
        finished, failed: trial counts (including earlier runs of the search).
        best, best_trial: the best objective and its trial (None if none).
        top: DataFrame of the most divergent finished pairs (trial, the
            searched dimensions, acc_<profile>, the objective).
        dataset: the dataset directory.
    """

    def __init__(self, summary, dataset):
        self.search_id = summary["search_id"]
        self.status = summary["status"]
        self.finished = summary["finished"]
        self.failed = summary["failed"]
        self.best = summary["best"]
        self.best_trial = summary["best_trial"]
        self.top = frame(summary["top"])
        self.dataset = dataset

    def __repr__(self):
        best = "" if self.best is None else f", best {self.best:.4f} (trial {self.best_trial})"
        return (f"<xwires.SearchResult search {self.search_id} {self.status}: "
                f"{self.finished} finished, {self.failed} failed{best}>")


def search(dataset="xwires-data", config=None, *, resume=None, max_trials=0,
           trials_per_subspace=0, max_seconds=0.0, jobs=0, threads=0, seed=None,
           no_subspaces=False, objective=None, top=10, quiet=False):
    """Runs (or resumes) a divergence search (``xwires search``).

    A Gaussian-process search over HyperSpace subspaces for hyperparameters
    that make two profiles' accuracies differ most; every trial is recorded
    in `dataset` as it happens (docs/search.md). Runs in this process (MPI
    runs are the CLI's).

    Args:
        dataset: the dataset directory (created if missing).
        config: a search config as a dict or a JSON file path (docs/search.md;
            missing keys take the default search's); None: the default search.
        resume: continue this search id (its stored config is used).
        max_trials, trials_per_subspace, max_seconds: budget overrides
            (0: the config's).
        jobs: concurrent trials (0: min(4, threads)); threads: in all (0: cores).
        seed, no_subspaces, objective: config overrides
            (objective: significant_diff, the default, with the two-stage
            schedule of the config's "schedule" object; abs_acc_diff,
            disagreement or max_class_gap: every pair trained once).
        top: rows of the result's table of most divergent pairs.
        quiet: no progress output.

    Returns:
        :class:`SearchResult`.

    Ctrl-C raises KeyboardInterrupt after the running trials stop; they stay
    pending, and ``search(dataset, resume=search_id)`` re-trains them.
    """
    config_file, config_json = "", ""
    if isinstance(config, dict):
        config_json = json.dumps(config)
    elif config is not None:
        config_file = _checks.as_str("config", config)
    dataset = _checks.as_str("dataset", dataset)
    summary = _xwires.search(
        config_file=config_file, config_json=config_json, dataset=dataset,
        objective=_checks.as_str("objective", objective, allow_none=True),
        resume=_checks.as_int("resume", resume, minimum=1, allow_none=True, none_as=0),
        max_trials=_checks.as_int("max_trials", max_trials, minimum=0),
        trials_per_subspace=_checks.as_int("trials_per_subspace", trials_per_subspace,
                                            maximum=_checks.INT32_MAX),
        jobs=_checks.as_int("jobs", jobs, maximum=_checks.INT32_MAX),
        threads=_checks.as_int("threads", threads, maximum=_checks.INT32_MAX),
        max_seconds=_checks.as_float("max_seconds", max_seconds),
        seed=_checks.as_int("seed", seed, minimum=0, allow_none=True),
        no_subspaces=_checks.as_bool("no_subspaces", no_subspaces),
        top=_checks.as_int("top", top, minimum=0, maximum=_checks.INT32_MAX),
        quiet=_checks.as_bool("quiet", quiet))
    return SearchResult(summary, dataset)


def replicate(dataset, trials=None, *, top=None, where=None, replicas=5, perturb="seed", jobs=1,
              threads=0, store_weights=False, quiet=False):
    """Replicas of stored trials and each profile pair's verdict (``xwires replicate``).

    Name the trials one way: `trials` (an id or a list of ids), `top` (the
    N most divergent) or `where` (a filter, as in :meth:`Dataset.query`).
    Replicas already stored are skipped, so an interrupted call resumes.

    Args:
        dataset: the dataset directory (must exist).
        replicas: K per profile, replica 0 (the trial as trained) included;
            at least 4 (below, an exact test cannot reach p < 0.05).
        perturb: "seed" (default: a fresh training seed, same data), "ulp"
            or "order" (these two keep the trial's initial draw; a pair whose
            replicas did not spread gets "insufficient";
            docs/significance.md).
        jobs: replicas trained at once. threads: threads in all (0: all).
        store_weights: keep every replica's weights.
        quiet: no progress output.

    Returns:
        DataFrame, one row per trial and profile pair: trial_id, profile_a,
        profile_b, family, k, mean_a, mean_b, mean_diff, p_value, diff_lcb,
        noise_sd, verdict.
    """
    if isinstance(trials, int) and not isinstance(trials, bool):
        trials = [trials]
    ids = [] if trials is None else [_checks.as_int("trials item", t, minimum=1) for t in trials]
    out = _xwires.replicate(
        dataset=_checks.as_str("dataset", dataset), trials=ids,
        top=_checks.as_int("top", top, minimum=1, allow_none=True, none_as=0),
        where=_checks.as_str("where", where, allow_none=True) or "",
        replicas=_checks.as_int("replicas", replicas),
        perturb=_checks.as_str("perturb", perturb), jobs=_checks.as_int("jobs", jobs),
        threads=_checks.as_int("threads", threads, minimum=0),
        store_weights=_checks.as_bool("store_weights", store_weights),
        quiet=_checks.as_bool("quiet", quiet))
    return frame(out["stats"])


def profile(spec):
    """A numerics profile as a dict (docs/profiles.md).

    Args:
        spec: a shipped name ("torch", "tf", "reference"), a .json file, or a
            dict / JSON text of a complete profile (checked: unknown, missing
            or mistyped keys raise InvalidArgumentError naming the key).

    Returns:
        The canonical profile (every knob), e.g. ``profile("tf")["adam"]``.
        Pass a modified dict to :func:`train` as a user profile.
    """
    if isinstance(spec, dict):
        spec = json.dumps(spec)
    return json.loads(_xwires.profile_json(_checks.as_str("spec", spec)))


def shipped_profiles(accelerator=True):
    """The names of the shipped profiles.

    The fp32 profiles ["torch", "tf", "reference"] and, unless
    ``accelerator=False``, the accelerator profiles that emulate GPU and TPU
    numerics on the CPU ("torch-a100", "tf-a100", "torch-h100",
    "torch-amp-fp16", "torch-bf16", "tf-mixed-fp16", "tpu-bf16"; see
    docs/profiles.md). Each name works wherever a profile name does.
    """
    names = list(_xwires.shipped_profiles())
    if _checks.as_bool("accelerator", accelerator):
        names += list(_xwires.accelerator_profiles())
    return names
