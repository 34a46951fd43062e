"""Exceptions of the xwires package.

Every failure the C++ library reports as a ``Status`` reaches Python as an
:class:`Error` subclass chosen by the status code, with the library's message
unchanged (the text ``xwires`` prints after ``xwires: error:``). Subclasses
also derive from the matching built-in exception where one fits, so
``except ValueError`` catches a bad argument too.
"""


class Error(Exception):
    """Base class of every xwires error; ``code`` names the status code."""

    code = "unknown"


class InvalidArgumentError(Error, ValueError):
    """Malformed or out-of-range input: a bad filter, option, type or value."""

    code = "invalid_argument"


class NotFoundError(Error, LookupError):
    """A dataset, file, trial, model or field that does not exist."""

    code = "not_found"


class InputOutputError(Error, OSError):
    """The operating system or a storage library failed."""

    code = "io_error"


class CorruptionError(Error):
    """Stored data is truncated, inconsistent or unreadable."""

    code = "corruption"


class NotSupportedError(Error):
    """A valid request xwires does not handle (e.g. a newer dataset format)."""

    code = "not_supported"


class AlreadyExistsError(Error):
    """Something to be created exists already."""

    code = "already_exists"


class FailedPreconditionError(Error):
    """The request does not fit the state (e.g. writing a read-only dataset)."""

    code = "failed_precondition"


class ClosedError(FailedPreconditionError):
    """A dataset was used after ``close()`` or its ``with`` block."""

    code = "closed"


class InternalError(Error, RuntimeError):
    """A bug in xwires; please report it with the message."""

    code = "internal"


_BY_CODE = {cls.code: cls for cls in (
    InvalidArgumentError, NotFoundError, InputOutputError, CorruptionError,
    NotSupportedError, AlreadyExistsError, FailedPreconditionError, InternalError)}


def error_class(code):
    """The exception class for a C++ status code name (used by the binding).

    ``"cancelled"`` (a run stopped by Ctrl-C) maps to KeyboardInterrupt.
    """
    if code == "cancelled":
        return KeyboardInterrupt
    return _BY_CODE.get(code, InternalError)
