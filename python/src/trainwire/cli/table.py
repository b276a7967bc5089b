"""Plain-text tables for the journal's commands: columns padded, control characters escaped."""

from __future__ import annotations

import sys

__all__ = ["print_table", "safe"]


def print_table(rows: list[list[str]], header: tuple[str, ...]) -> None:
    table = [list(header), *rows]
    widths = [max(len(safe(row[column])) for row in table) for column in range(len(header))]
    for row in table:
        sys.stdout.write(
            "  ".join(safe(cell).ljust(width) for cell, width in zip(row, widths, strict=False)).rstrip() + "\n"
        )


def safe(text: str) -> str:
    """A stream's text as it may reach a terminal: control characters escaped."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in str(text))
