"""Argument checks: wrong types become InvalidArgumentError naming the argument.

The C++ layer checks values (ranges, known fields, filter syntax); these
helpers only make sure each argument has a type the binding can take, so a
mistake gets an xwires error rather than a pybind11 TypeError.
"""
import numbers
import os

from .errors import InvalidArgumentError


def _fail(name, expected, value):
    raise InvalidArgumentError(
        f"{name}: expected {expected}, got {type(value).__name__} {value!r}")


def as_str(name, value, allow_none=False):
    """A str (or os.PathLike for paths); None becomes "" when allowed."""
    if value is None and allow_none:
        return ""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        _fail(name, "a string" + (" or None" if allow_none else ""), value)
    return value


# The largest values the binding's C++ integers hold (int64_t, int): a larger
# Python int would reach pybind11 as a TypeError, or wrap.
INT64_MAX = 2**63 - 1
INT32_MAX = 2**31 - 1


def as_int(name, value, minimum=None, allow_none=False, none_as=None, maximum=INT64_MAX):
    """An integer (bools refused) in [minimum, maximum]; None becomes `none_as`
    when allowed."""
    if value is None and allow_none:
        return none_as
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        _fail(name, "an integer" + (" or None" if allow_none else ""), value)
    value = int(value)
    if minimum is not None and value < minimum:
        raise InvalidArgumentError(f"{name} must be >= {minimum}, got {value}")
    if minimum is None and value < -maximum - 1:
        raise InvalidArgumentError(f"{name} must be >= {-maximum - 1}, got {value}")
    if value > maximum:
        raise InvalidArgumentError(f"{name} must be <= {maximum}, got {value}")
    return value


def as_float(name, value):
    """A real number (ints accepted, bools refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        _fail(name, "a number", value)
    return float(value)


def as_bool(name, value):
    """True or False (numpy bools accepted)."""
    if not isinstance(value, bool) and type(value).__name__ != "bool_":
        _fail(name, "True or False", value)
    return bool(value)


def as_str_list(name, value):
    """None -> [], "a" -> ["a"], an iterable of str -> list."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    try:
        items = list(value)
    except TypeError:
        _fail(name, "a string or a list of strings", value)
    for item in items:
        if not isinstance(item, str):
            _fail(name + " item", "a string", item)
    return items


def as_list(name, value):
    """A list or tuple (or other non-string iterable) as a list."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        _fail(name, "a list", value)
    return list(value)
