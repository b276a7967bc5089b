"""The line encoder: one event dict to one NDJSON line."""

from __future__ import annotations

from typing import Any

from pydantic_core import PydanticSerializationError, to_json

__all__ = ["encode_line", "safe_str", "to_scalar"]


def to_scalar(value: Any) -> Any:
    """A JSON-able stand-in for a value the encoder does not know.

    numpy scalars and one-element tensors give their Python number (`.item()`);
    anything else gives its `str()`.
    """
    item = getattr(value, "item", None)
    if callable(item):
        try:
            result = item()
        except Exception:  # a tensor with many elements, a broken item(): fall through
            pass
        else:
            if result is None or isinstance(result, (bool, int, float, str)):
                return result
    return safe_str(value)


def safe_str(value: Any) -> str:
    """`str(value)`, or a placeholder when its `__str__` raises."""
    if isinstance(value, str):
        return value
    try:
        return str(value)
    except Exception:
        return f"<unprintable {type(value).__name__}>"


def encode_line(obj: dict[str, Any]) -> bytes:
    """`obj` as one UTF-8 JSON line ending in `\\n`; NaN and infinities become `null`."""
    try:
        return to_json(obj, inf_nan_mode="null", fallback=to_scalar) + b"\n"
    except PydanticSerializationError:
        # Rare: a string holding a lone surrogate cannot be UTF-8. Replace it and retry.
        return to_json(_without_surrogates(obj), inf_nan_mode="null", fallback=to_scalar) + b"\n"


def _without_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {_without_surrogates(key): _without_surrogates(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_without_surrogates(item) for item in value]
    return value
