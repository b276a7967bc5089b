"""The journal's step file (`steps.jsonl`): the `train.step` lines the stream's throttle left
out, one compact JSON object a line, each saying after which line of the run's stream it
came (`after`: that line's `seq`), so a fold can put it back in its place; the first line
names the run (`{"run_id": ...}`; a file written before it has none). It is read back
through `journal.step_file`."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from trainwire._generated.contract import ENVELOPE_FIELDS
from trainwire.contract.finite_json import finite

__all__ = ["complete_size", "encode_kept_steps", "header_run", "kept_step", "kept_step_line", "step_file_header"]

_ENVELOPE = frozenset(ENVELOPE_FIELDS)


def step_file_header(run_id: str) -> bytes:
    """The step file's first line: the run whose steps it keeps (a record has an `after`)."""
    return _ENCODE({"run_id": run_id}).encode("utf-8") + b"\n"


def header_run(record: Any) -> str | None:
    """The run a step file's first line names, when it is the header (else None)."""
    named = record.get("run_id") if isinstance(record, dict) and "after" not in record else None
    return named if isinstance(named, str) else None


def kept_step(line: Mapping[str, Any], after: int, ts: str) -> dict[str, Any]:
    """The step file's record of the `train.step` line `line`, left out after line `after`,
    reported at `ts` (the time its points are drawn at)."""
    record: dict[str, Any] = {"after": after, "ts": ts}
    record.update((key, value) for key, value in line.items() if key not in _ENVELOPE)
    return record


def kept_step_line(record: Mapping[str, Any], run_id: str) -> dict[str, Any]:
    """The record as the `train.step` line a fold takes (no `seq`: it was never written)."""
    line = {"run_id": run_id, "event": "train.step"}
    line.update((key, value) for key, value in record.items() if key != "after")
    return line


def encode_kept_steps(records: list[dict[str, Any]]) -> bytes:
    """Whole lines of records: compact JSON, each ending in a newline; NaN and infinities
    become null, as in the stream (writer rule 7)."""
    try:
        text = "".join([_ENCODE(record) + "\n" for record in records])
    except ValueError:  # a non-finite value somewhere: the rare way
        text = "".join([_ENCODE(finite(record)) + "\n" for record in records])
    return text.encode("utf-8", "replace")


_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def complete_size(path: str | os.PathLike[str]) -> int:
    """The size of the step file's whole lines: where a torn last line begins (0 when missing).
    Read backwards from the end, a piece at a time: the file may be large."""
    try:
        with open(path, "rb") as file:
            end = file.seek(0, os.SEEK_END)
            while end > 0:
                start = max(0, end - _TAIL_PIECE)
                file.seek(start)
                newline = file.read(end - start).rfind(b"\n")
                if newline >= 0:
                    return start + newline + 1
                end = start
    except OSError:
        pass
    return 0


#: how much of a step file's end `complete_size` reads at a time
_TAIL_PIECE = 64 * 1024
