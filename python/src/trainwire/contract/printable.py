"""Text from a stream made safe to show: the characters that drive a terminal or reorder a
page written as escapes (`\\x1b`, `\\u202e`), everything else as it is.

The TypeScript package's `printable` holds the same table and gives the same
string for every code point (a cross-language test runs both over all of them): the
terminal (`tail`, the status line) and the dashboard escape alike.
"""

from __future__ import annotations

import re

__all__ = ["ESCAPED_RANGES", "printable"]

#: the escaped code points, as inclusive ranges: C0 controls, DEL and C1 controls, the
#: Arabic letter mark, zero-width characters and the directional marks, the line and
#: paragraph separators, the bidi embeddings and overrides, word joiner, invisible operators
#: and the bidi isolates, the byte order mark, the interlinear annotation controls
ESCAPED_RANGES: tuple[tuple[int, int], ...] = (
    (0x00, 0x1F),
    (0x7F, 0x9F),
    (0x061C, 0x061C),
    (0x200B, 0x200F),
    (0x2028, 0x202E),
    (0x2060, 0x2069),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
)

_ESCAPED = re.compile("[" + "".join(f"\\U{low:08x}-\\U{high:08x}" for low, high in ESCAPED_RANGES) + "]")


def printable(text: str) -> str:
    """`text` with the characters of `ESCAPED_RANGES` written as `\\xNN` (below 0x100) or `\\uNNNN`."""
    return _ESCAPED.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
