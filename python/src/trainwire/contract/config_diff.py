"""What differs between two configs (or provenances): keys flattened to dotted paths, each
changed key with its two values (None where one side lacks it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["differences", "flatten"]


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """A nested mapping as `{"a.b.c": leaf}`; an empty mapping is a leaf of its own."""
    if isinstance(value, Mapping) and value:
        flat: dict[str, Any] = {}
        for key, item in value.items():
            flat.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return flat
    return {prefix: value} if prefix else {}


def differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, list[Any]]:
    """The keys whose values differ between two flat mappings, sorted: `{key: [a's, b's]}`."""
    missing = object()
    return {
        key: [None if a.get(key, missing) is missing else a[key], None if b.get(key, missing) is missing else b[key]]
        for key in sorted(set(a) | set(b))
        if a.get(key, missing) != b.get(key, missing)
    }
