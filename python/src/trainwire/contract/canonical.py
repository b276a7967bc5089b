"""RFC 8785 canonical JSON: the byte-exact form of the reader state.

Two readers in two languages must serialise the same state to the same bytes, so
numbers follow ECMAScript's `Number.prototype.toString`, strings follow
`JSON.stringify`, and object keys are sorted by UTF-16 code units.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["dumps", "format_number"]

_MAX_SAFE_INTEGER = 2**53
_NUMBERS = frozenset((int, float))
# Python's own escaping with ensure_ascii=False is JSON.stringify's, except for lone
# surrogates, which JSON.stringify writes as lower-case `\udxxx` escapes.
_encode_string = json.encoder.encode_basestring
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def dumps(obj: Any) -> str:
    """Serialise `obj` (JSON values: dict, list, tuple, str, int, float, bool, None) canonically."""
    parts: list[str] = []
    _write(obj, parts)
    return "".join(parts)


def _write(obj: Any, out: list[str]) -> None:
    kind = type(obj)
    if kind is float or kind is int:  # most of a series store: its points
        out.append(format_number(obj))
    elif kind is list and set(map(type, obj)) <= _NUMBERS:  # a series point
        out.append(f"[{','.join(map(format_number, obj))}]")
    elif kind is list:
        _write_array(obj, out)
    elif obj is None:
        out.append("null")
    elif obj is True:
        out.append("true")
    elif obj is False:
        out.append("false")
    elif isinstance(obj, str):
        out.append(_string(obj))
    elif isinstance(obj, (int, float)):
        out.append(format_number(obj))
    elif isinstance(obj, Mapping):
        out.append("{")
        for index, key in enumerate(sorted(obj, key=_utf16_key)):
            if index:
                out.append(",")
            out.append(_string(key))
            out.append(":")
            _write(obj[key], out)
        out.append("}")
    elif isinstance(obj, (list, tuple)):
        _write_array(obj, out)
    else:
        raise TypeError(f"{type(obj).__name__} is not a JSON value")


def _write_array(items: Any, out: list[str]) -> None:
    out.append("[")
    for index, item in enumerate(items):
        if index:
            out.append(",")
        _write(item, out)
    out.append("]")


def _utf16_key(key: Any) -> bytes:
    if not isinstance(key, str):
        raise TypeError(f"object keys must be strings, not {type(key).__name__}")
    # Big-endian UTF-16 bytes compare like the code units they encode.
    return key.encode("utf-16-be", "surrogatepass")


def _string(text: str) -> str:
    encoded = _encode_string(text)
    if _SURROGATE.search(encoded) is None:
        return encoded
    # A high + low pair is one character to JavaScript; anything left is escaped.
    joined = _SURROGATE_PAIR.sub(lambda m: m.group().encode("utf-16-be", "surrogatepass").decode("utf-16-be"), encoded)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", joined)


def format_number(value: int | float) -> str:
    """Write a number as ECMAScript's `Number.prototype.toString` does (non-finite: `null`, as JSON.stringify)."""
    if type(value) is float and value - value == 0.0 and value:
        text = repr(value)  # the shortest round-trip digits, as ECMAScript's
        if "e" not in text:  # 1e-4 <= |value| < 1e16: written without an exponent in both languages
            return text[:-2] if text.endswith(".0") else text
    if isinstance(value, int):
        if -_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER:
            return str(value)
        try:
            value = float(value)  # JavaScript holds it as the nearest double
        except OverflowError:
            return "null"
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"  # -0 too
    digits, point = _shortest_digits(abs(value))
    sign = "-" if value < 0 else ""
    return sign + _ecmascript_layout(digits, point)


def _shortest_digits(value: float) -> tuple[str, int]:
    """The shortest round-trip digits `d1d2...dk` and `n` with value = 0.d1d2...dk * 10**n."""
    mantissa, _, exponent = repr(value).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    point = len(whole) + int(exponent or 0) - (len(whole + fraction) - len((whole + fraction).lstrip("0")))
    return digits.rstrip("0"), point


def _ecmascript_layout(digits: str, n: int) -> str:
    # Number::toString, ECMA-262 section 6.1.6.1.20, with k = len(digits).
    k = len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return f"{digits[:n]}.{digits[n:]}"
    if -6 < n <= 0:
        return f"0.{'0' * -n}{digits}"
    exponent = n - 1
    sign = "+" if exponent >= 0 else "-"
    head = digits if k == 1 else f"{digits[0]}.{digits[1:]}"
    return f"{head}e{sign}{abs(exponent)}"
