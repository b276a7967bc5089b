"""Byte-level transformations that derive reader-only streams from writer streams.

A derived case says in its `case.json`:

    "derive": {"base": "<case id whose scenario is played>",
               "transforms": [{"op": "...", ...}, ...]}

Transformations work on the lines of the stream (bytes without their `\\n`) and the
partial tail; line numbers are 1-based and refer to the stream as it is when the
transformation runs. A line to insert is given as text (a string), as
`{"json": value}` (written compactly, UTF-8 as is), as `{"hex": "..."}` (raw bytes,
for invalid UTF-8) or as `{"repeat": text, "times": n}` (a huge line, short to describe).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

BOM = b"\xef\xbb\xbf"


@dataclass
class Lines:
    """A stream split into complete lines and a partial tail."""

    lines: list[bytes]
    tail: bytes = b""
    bom: bool = False
    crlf: bool = False

    @classmethod
    def parse(cls, data: bytes) -> Lines:
        *lines, tail = data.split(b"\n")
        return cls(lines=lines, tail=tail)

    def to_bytes(self) -> bytes:
        ending = b"\r\n" if self.crlf else b"\n"
        body = b"".join(line + ending for line in self.lines) + self.tail
        return (BOM if self.bom else b"") + body


def encode_item(item: Any) -> bytes:
    """One line to insert: text, `{"json": value}`, `{"hex": "..."}` or `{"repeat": text, "times": n}`."""
    if isinstance(item, str):
        return item.encode("utf-8")
    if isinstance(item, dict) and "json" in item:
        return compact_json(item["json"])
    if isinstance(item, dict) and "hex" in item:
        return bytes.fromhex(item["hex"])
    if isinstance(item, dict) and "repeat" in item:
        return item["repeat"].encode("utf-8") * item["times"]
    raise ValueError(
        f"a line to insert is a string, {{'json': ...}}, {{'hex': ...}} or {{'repeat': ..., 'times': n}}, not {item!r}"
    )


def compact_json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _event_of(line: bytes) -> str | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value.get("event") if isinstance(value, dict) else None


def _insert(stream: Lines, op: dict[str, Any], _: StreamSource) -> None:
    at = op.get("after_line", len(stream.lines))
    stream.lines[at:at] = [encode_item(item) for item in op["lines"]]


def _drop(stream: Lines, op: dict[str, Any], _: StreamSource) -> None:
    numbers = set(op.get("lines", ()))
    events = set(op.get("events", ()))
    stream.lines = [
        line for number, line in enumerate(stream.lines, 1) if number not in numbers and _event_of(line) not in events
    ]


def _duplicate(stream: Lines, op: dict[str, Any], _: StreamSource) -> None:
    # Right after the original, or a copy written again later (`after_line`).
    line = stream.lines[op["line"] - 1]
    stream.lines.insert(op.get("after_line", op["line"]), line)


def _edit(stream: Lines, op: dict[str, Any], _: StreamSource) -> None:
    # Re-serialised in its key order, so the edit is the only difference.
    index = op["line"] - 1
    value = json.loads(stream.lines[index])
    for key in op.get("delete", ()):
        value.pop(key, None)
    value.update(op.get("set", {}))
    stream.lines[index] = compact_json(value)


def _tear(stream: Lines, op: dict[str, Any], _: StreamSource) -> None:
    # The last line loses its `\n` and everything after its first `keep_bytes` bytes.
    stream.tail = stream.lines.pop()[: op["keep_bytes"]]


def _long_line(stream: Lines, op: dict[str, Any], _: StreamSource) -> None:
    # A line that would be valid but for its length: `x_pad` fills it to exactly `bytes`.
    value = dict(op["json"])
    value["x_pad"] = ""
    padding = op["bytes"] - len(compact_json(value))
    if padding < 0:
        raise ValueError(f"long_line: {op['bytes']} bytes is shorter than the line itself")
    value["x_pad"] = "x" * padding
    at = op.get("after_line", len(stream.lines))
    stream.lines.insert(at, compact_json(value))


def _interleave(stream: Lines, op: dict[str, Any], source: StreamSource) -> None:
    # Round robin, one line of each, starting with this stream; the longer one's rest follows.
    other = Lines.parse(source(op["with"])).lines
    merged: list[bytes] = []
    for index in range(max(len(stream.lines), len(other))):
        merged.extend(stream.lines[index : index + 1] + other[index : index + 1])
    stream.lines = merged


def _append_stream(stream: Lines, op: dict[str, Any], source: StreamSource) -> None:
    stream.lines.extend(Lines.parse(source(op["with"])).lines)


def _crlf(stream: Lines, op: dict[str, Any], _: StreamSource) -> None:
    stream.crlf = True


def _bom(stream: Lines, op: dict[str, Any], _: StreamSource) -> None:
    stream.bom = True


StreamSource = Callable[[str], bytes]
"""Plays the scenario of the case with the given id."""

TRANSFORMS: dict[str, Callable[[Lines, dict[str, Any], StreamSource], None]] = {
    "insert": _insert,
    "drop": _drop,
    "duplicate": _duplicate,
    "edit": _edit,
    "tear": _tear,
    "long_line": _long_line,
    "interleave": _interleave,
    "append_stream": _append_stream,
    "crlf": _crlf,
    "bom": _bom,
}


def derive(base: bytes, transforms: list[dict[str, Any]], source: StreamSource) -> bytes:
    """Apply `transforms` in order to the stream `base`."""
    stream = Lines.parse(base)
    for op in transforms:
        try:
            apply = TRANSFORMS[op["op"]]
        except KeyError:
            raise ValueError(f"unknown transformation {op.get('op')!r}; known: {', '.join(TRANSFORMS)}") from None
        apply(stream, op, source)
    return stream.to_bytes()
