"""xwires: divergent model pairs from Python.

A thin binding of the xwires C++ library (the code behind the ``xwires``
command) plus pandas and PyTorch conversions::

    import xwires
    with xwires.open("xwires-data") as ds:               # read-only
        ds.query("lr >= 1e-3 and diff > 0.3", sort="-diff", limit=10)
        ds.stats()                                       # the study's Table 2
        ds.mi()                                          # its Figure 4
        t = ds.trial(9)                                  # models, curves, ...
        sd = ds.weights(9, "torch")                      # OrderedDict of arrays
        net = ds.torch_model(9, "torch")                 # torch.nn.Module
        ds.compare(9).layers                             # where the pair parts
        ds.analyses()                                    # stored results
    xwires.report("xwires-data", "report.html")
    rec = xwires.train(arch="simple_cnn", epochs=3, lr=0.05, adam_eps=0.5)
    xwires.search(dataset="xwires-data", config={"arch": "mlp"}, max_trials=20)

Failures raise :class:`xwires.Error` subclasses carrying the library's
message (docs/python.md).
"""
import os as _os

# An installed package carries the shipped profiles; the library finds them
# through XWIRES_PROFILES_DIR (a user's setting wins).
_profiles = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "profiles")
if _os.path.isdir(_profiles):
    _os.environ.setdefault("XWIRES_PROFILES_DIR", _profiles)

from .errors import (AlreadyExistsError, ClosedError, CorruptionError,  # noqa: E402
                     Error, FailedPreconditionError, InputOutputError, InternalError,
                     InvalidArgumentError, NotFoundError, NotSupportedError)
from . import _xwires  # noqa: E402
from .analyses import Attribution, Comparison, report  # noqa: E402
from .dataset import Dataset, open  # noqa: E402,A004
from .runs import (SearchResult, profile, replicate, search, shipped_profiles,  # noqa: E402
                   train)
from .stats import benjamini_hochberg, significance  # noqa: E402
from .trial import Trial  # noqa: E402

__version__ = _xwires.__version__

__all__ = [
    "open", "Dataset", "Trial", "train", "replicate", "search", "SearchResult", "profile",
    "report", "Comparison", "Attribution",
    "shipped_profiles", "significance", "benjamini_hochberg",
    "Error", "InvalidArgumentError", "NotFoundError",
    "InputOutputError", "CorruptionError", "NotSupportedError", "AlreadyExistsError",
    "FailedPreconditionError", "ClosedError", "InternalError",
]
