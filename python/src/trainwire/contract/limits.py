"""Length limits of the contract's free texts, and the one place that applies them."""

from __future__ import annotations

from typing import Any

from trainwire._generated.contract import MESSAGE_LIMIT

__all__ = ["MESSAGE_LIMIT", "clip"]


def clip(value: Any) -> str | None:
    """`value` cut to `MESSAGE_LIMIT` characters when it is a string; anything else is None."""
    return value[:MESSAGE_LIMIT] if isinstance(value, str) else None
