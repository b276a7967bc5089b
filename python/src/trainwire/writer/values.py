"""Scalars as the contract accepts them: a JSON number, an integer in range, or `BAD`.

Training code hands over numpy and torch scalars, 0-d tensors, `Decimal`s: each has one
obvious number (`.item()`, `float()`), which is what is written. Booleans and strings are
not numbers. Non-finite floats are kept: the encoder writes them as null (writer rule 7).
"""

from __future__ import annotations

import enum
from decimal import Decimal
from typing import Any

__all__ = ["BAD", "Bad", "MAX_SAFE_INTEGER", "integer", "number"]

#: the largest integer the schema allows (2^53 - 1: exact in every JSON reader)
MAX_SAFE_INTEGER = 9007199254740991


class Bad(enum.Enum):
    """The type of `BAD`: a value the contract cannot take."""

    BAD = "BAD"


BAD = Bad.BAD
Number = int | float


def number(value: Any, minimum: float | None = None) -> Number | None | Bad:
    """`value` as a JSON number (None stays None), or `BAD`; below `minimum` is `BAD`."""
    if type(value) is not float:
        if value is None:
            return None
        if type(value) is not int:
            value = _plain_number(value)
            if value is BAD:
                return BAD  # type: ignore[no-any-return]
        if type(value) is int and not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            try:  # as a JavaScript reader reads it: the double it rounds to
                value = float(value)
            except OverflowError:
                return BAD
    if minimum is not None and value < minimum:  # NaN compares False: kept, written null
        return BAD
    return value  # type: ignore[no-any-return]


def integer(value: Any, minimum: int = 0) -> int | None | Bad:
    """`value` as an integer in `[minimum, 2^53 - 1]` (`5.0` is 5; None stays None), or `BAD`."""
    if type(value) is not int:
        if value is None:
            return None
        value = _plain_number(value)
        if value is BAD:
            return BAD  # type: ignore[no-any-return]
        if isinstance(value, float):
            if not value.is_integer():
                return BAD
            value = int(value)
    if not minimum <= value <= MAX_SAFE_INTEGER:
        return BAD
    return value  # type: ignore[no-any-return]


def _plain_number(value: Any) -> Number | Bad:
    if isinstance(value, bool):
        return BAD
    if isinstance(value, int):  # subclasses (numpy.int64 is not one, IntEnum is)
        return int(value)
    if isinstance(value, float):  # numpy.float64 is one
        return float(value)
    if isinstance(value, Decimal):
        try:
            return float(value) if not value.is_nan() else float("nan")
        except (ValueError, OverflowError):
            return BAD
    item = getattr(value, "item", None)  # numpy scalars, 0-d and one-element tensors
    if callable(item):
        try:
            result = item()
        except Exception:
            return BAD
        if result is not value and not isinstance(result, bool) and isinstance(result, (int, float)):
            return _plain_number(result)
    return BAD
