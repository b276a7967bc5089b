"""Byte tests of one line (or a body of lines) that say whether the known-event dict
validator's acceptance stands as the JSON Schema's: what that validator cannot see."""

from __future__ import annotations

__all__ = ["DEFAULT_MAX_LINE_BYTES", "MAX_NESTING", "finite_tokens", "shallow"]

#: the readers' default line limit, the `\n` excluded (reader rule 1)
DEFAULT_MAX_LINE_BYTES = 1 << 20
#: the deepest a line may nest (its object is level 1): deeper is `invalid_json` (reader rule 2.3)
MAX_NESTING = 128


def shallow(content: bytes) -> bool:
    """Too few brackets to nest past the limit: the cheap test that spares most lines a walk."""
    return content.count(b"{") + content.count(b"[") <= MAX_NESTING


def finite_tokens(content: bytes) -> bool:
    """No bare `NaN` or `Infinity` token, which the dict validator takes in a free-form value
    (`config`, an extra field): the one byte test its acceptance needs, for a line or a body."""
    # one byte is found far faster than three; most streams have no capital N or I at all
    return (b"N" not in content or b"NaN" not in content) and (b"I" not in content or b"Infinity" not in content)
