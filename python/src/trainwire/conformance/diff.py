"""Structural comparison of JSON values that names the first difference."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

#: a surrogate left alone in a string (a pair was joined into one character when parsed)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def json_text(value: Any, **options: Any) -> str:
    """`json.dumps` with UTF-8 as is, but lone surrogates escaped, so the text can be written out."""
    text = json.dumps(value, ensure_ascii=False, **options)
    return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<missing>"})()


@dataclass(frozen=True)
class Difference:
    """Where two values first differ: a JSON path (and a line number for streams)."""

    path: str
    expected: Any
    got: Any
    line: int | None = None
    note: str = ""

    def describe(self) -> str:
        where = f"line {self.line}, " if self.line is not None else ""
        text = f"{where}{self.path}: expected {_show(self.expected)}, got {_show(self.got)}"
        return f"{text} ({self.note})" if self.note else text

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"path": self.path, "expected": _plain(self.expected), "got": _plain(self.got)}
        if self.line is not None:
            data["line"] = self.line
        if self.note:
            data["note"] = self.note
        return data


def _plain(value: Any) -> Any:
    return None if value is MISSING else value


def _show(value: Any, limit: int = 120) -> str:
    if value is MISSING:
        return "<missing>"
    text = json_text(value, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _numbers_equal(expected: Any, got: Any, tolerance: float) -> bool:
    if isinstance(expected, int) and isinstance(got, int):
        return expected == got
    if expected == got:
        return True
    return tolerance > 0 and math.isclose(expected, got, rel_tol=tolerance)


def _is_number(value: Any) -> bool:
    # JSON has no booleans-as-numbers: True must not compare equal to 1.
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def first_difference(expected: Any, got: Any, path: str = "$", *, tolerance: float = 0.0) -> Difference | None:
    """The first place (depth first, in `expected`'s key order) where `got` differs."""
    return next(differences(expected, got, path, tolerance=tolerance), None)


def differences(expected: Any, got: Any, path: str = "$", *, tolerance: float = 0.0) -> Iterator[Difference]:
    """Every differing JSON path (depth first, in `expected`'s key order), leaves only."""
    if _is_number(expected) and _is_number(got):
        if not _numbers_equal(expected, got, tolerance):
            yield Difference(path, expected, got)
        return
    if isinstance(expected, dict) and isinstance(got, dict):
        for key in [*expected, *(key for key in got if key not in expected)]:
            yield from differences(
                expected.get(key, MISSING), got.get(key, MISSING), f"{path}.{key}", tolerance=tolerance
            )
        return
    if isinstance(expected, list) and isinstance(got, list):
        for index in range(max(len(expected), len(got))):
            left = expected[index] if index < len(expected) else MISSING
            right = got[index] if index < len(got) else MISSING
            yield from differences(left, right, f"{path}[{index}]", tolerance=tolerance)
        return
    if not (type(expected) is type(got) and expected == got):
        yield Difference(path, expected, got)
