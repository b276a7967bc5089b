"""The last gate before a line is written: it must be a line every conforming reader
accepts. Checked with the reader's own per-line checks (reader rules 1-2), so the writer
and the readers cannot disagree; a line over the limit is first cut to fit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_core import to_json

from trainwire._generated.contract import ENVELOPE_FIELDS
from trainwire.reader.decoder import DEFAULT_MAX_LINE_BYTES, Decoder

__all__ = ["CUT_KEY", "LINE_LIMIT", "cut_to_fit", "line_problem"]

#: the readers' default line limit (reader rule 1), without the `\n`
LINE_LIMIT = DEFAULT_MAX_LINE_BYTES
#: the key a cut object is left with (a required object cannot become a string)
CUT_KEY = "trainwire_cut"
_ENVELOPE = frozenset(ENVELOPE_FIELDS)


def line_problem(encoded: bytes) -> str | None:
    """Why a reader would skip this encoded line (`code: message`), or None when it is valid."""
    decoder = Decoder()
    if decoder.feed(encoded):
        return None
    if decoder.diagnostics:
        diagnostic = decoder.diagnostics[0]
        return f"{diagnostic.code}: {diagnostic.message}"
    return "blank line"


def cut_to_fit(
    line: dict[str, Any], encode: Callable[[dict[str, Any]], bytes], limit: int = LINE_LIMIT
) -> tuple[dict[str, Any], bytes, list[str]] | None:
    """`line` with its largest open-ended values replaced by a marker until it fits `limit`
    bytes: `(line, encoded, what was cut)`; None when cutting cannot make it fit.

    The line is copied along each cut path: objects the caller still holds are not changed.
    """
    cuts: list[str] = []
    encoded = encode(line)
    for _ in range(8):
        excess = len(encoded) - 1 - limit
        if excess <= 0:
            return line, encoded, cuts
        path = _largest_path(line, excess)
        if path is None:
            return None
        line, description = _cut(line, path)
        cuts.append(description)
        encoded = encode(line)
    return None


def _size(value: Any) -> int:
    return len(to_json(value, inf_nan_mode="null", fallback=str))


def _children(node: Any) -> list[tuple[Any, Any]]:
    if isinstance(node, dict):
        return list(node.items())
    if isinstance(node, list):
        return list(enumerate(node))
    return []


def _largest_path(line: dict[str, Any], excess: int) -> list[Any] | None:
    """The path to the value to cut: down from the largest payload field, as deep as one
    child alone still covers the excess (so as little as possible is cut)."""
    fields = [(key, _size(value)) for key, value in line.items() if key not in _ENVELOPE]
    if not fields:
        return None
    key, size = max(fields, key=lambda pair: pair[1])
    path, node = [key], line[key]
    while True:
        sizes = [(child_key, _size(child)) for child_key, child in _children(node)]
        if not sizes:
            break
        child_key, child_size = max(sizes, key=lambda pair: pair[1])
        if child_size <= excess + 64:  # a marker's worth of slack
            break
        path.append(child_key)
        node = node[child_key]
    return path


def _cut(line: dict[str, Any], path: list[Any]) -> tuple[dict[str, Any], str]:
    root: dict[str, Any] = dict(line)
    parent: Any = root
    for key in path[:-1]:
        child = parent[key]
        child = dict(child) if isinstance(child, dict) else list(child)
        parent[key] = child
        parent = child
    last = path[-1]
    cut = parent[last]
    where = ".".join(str(part) for part in path)
    marker = f"<cut by the writer: {_size(cut)} bytes over the line limit>"
    # a top-level object keeps its type (a schema may require an object there)
    parent[last] = {CUT_KEY: marker} if len(path) == 1 and isinstance(cut, dict) else marker
    return root, where
