"""JSON any parser reads: a non-finite number (`NaN`, `Infinity`, which Python's `json` writes
and JSON has not) as null, as writer rule 7 writes one in the stream. One `NaN` in a row makes
a whole `/api/runs` answer something a browser's `JSON.parse` refuses."""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["finite", "finite_json"]


def finite(value: Any) -> Any:
    """`value` with every non-finite number in it as None (a tuple becomes a list, as in JSON)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    return value


def finite_json(value: Any, *, compact: bool = True) -> str:
    """`value` as JSON, a non-finite number as null; the common case (none) encoded once."""
    separators = (",", ":") if compact else None
    try:
        return json.dumps(value, ensure_ascii=False, separators=separators, allow_nan=False)
    except ValueError:
        return json.dumps(finite(value), ensure_ascii=False, separators=separators)
