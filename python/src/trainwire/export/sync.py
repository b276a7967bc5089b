"""Keep a tracker in step with a stream: once, or live, and never twice for the same line.

Every step the trainer logged goes: the stream's lines with each run's kept steps (its
journal's `steps.jsonl`) put back in place (`trainwire.reader.kept_steps`).

The cursor file holds the reader state (reader rules: a reader restarts at
`consumed_bytes` with the state it had), how far each run's step file was read
(`kept_steps`) and the exporter's own state (which tracker run holds which trainwire run). It is saved atomically after every batch the exporter accepted, so an
export run again, or after a crash, starts where the last one ended.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from trainwire.contract.clock import now_us
from trainwire.contract.files import write_json_atomically
from trainwire.lines.diagnostics import Diagnostic
from trainwire.lines.verdict import is_over
from trainwire.reader.catalog import run_rows
from trainwire.reader.kept_steps import KeptStepsMerge
from trainwire.reader.sources import FileFollower
from trainwire.reader.state import StreamReader

__all__ = ["CURSOR_VERSION", "ExportError", "Exporter", "Synced", "load_cursor", "sync"]

#: the cursor file's format; another version is refused rather than guessed at
CURSOR_VERSION = 1


class ExportError(Exception):
    """An export that cannot go on (a replaced stream, a foreign cursor)."""


class Exporter(Protocol):
    """A tracker the events go to (MLflow, TensorBoard): not a writer `Sink`, which takes lines.

    `write` gets the events applied to runs, as dicts, in order."""

    def write(self, events: list[dict[str, Any]]) -> None: ...

    def state(self) -> dict[str, Any]:
        """What the exporter needs to go on next time (saved in the cursor as `sink`)."""
        ...

    def end_unfinished(self, run_id: str, verdict: dict[str, Any]) -> None:
        """The run `run_id` died without `run.finished` (its `verdict` says `stale`): end its
        tracker run as one that did not finish, never leaving it running for ever."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Synced:
    """What one export did: the events it handed on, and the lines of the stream it skipped
    (reader rules: a line that fails a check changes no run), with the first one's diagnostic."""

    events: int
    skipped_lines: int = 0
    first_skipped: Diagnostic | None = None
    #: the runs that died without `run.finished` (their verdict `stale`), ended as such in the tracker
    unfinished: tuple[str, ...] = ()


def load_cursor(cursor_path: Path, stream_path: Path) -> dict[str, Any] | None:
    """The saved cursor for `stream_path`, or None for a first export."""
    try:
        saved = json.loads(cursor_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        raise ExportError(f"{cursor_path}: unreadable export cursor ({error}); remove it to export again") from None
    if not isinstance(saved, dict) or saved.get("version") != CURSOR_VERSION:
        raise ExportError(f"{cursor_path}: not a version {CURSOR_VERSION} export cursor; remove it to export again")
    if saved.get("stream") != str(stream_path.absolute()):
        raise ExportError(f"{cursor_path}: the cursor of another stream ({saved.get('stream')})")
    return saved


def sync(
    stream_path: Path,
    exporter: Exporter,
    cursor_path: Path,
    *,
    saved: Mapping[str, Any] | None = None,
    follow: bool = False,
    poll_interval_s: float = 0.5,
    stop: threading.Event | None = None,
) -> Synced:
    """Hand the stream's new events to `exporter`; returns how many, and the lines skipped.

    Without `follow`, reads to the current end of the file. With it, goes on while runs are
    live and returns once every run in the stream has finished (or `stop` is set).
    `saved` is `load_cursor`'s result, already handed to the exporter.
    """
    if not follow and not stream_path.is_file():
        raise ExportError(f"{stream_path}: no such stream file")
    reader = StreamReader(resume=saved["reader"]) if saved else StreamReader()
    kept = KeptStepsMerge(
        stream_path.parent,
        offsets=_saved_offsets(saved),
        last_seqs={run.run_id: run.last_seq for run in reader.runs},
        report=lambda message: sys.stderr.write(f"trainwire export: {message}\n"),
    )
    follower = FileFollower(
        stream_path,
        offset=reader.consumed_bytes,
        poll_interval_s=poll_interval_s,
        stop=stop,
        on_reset=lambda reason: _refuse(stream_path, reason),
        yield_when_idle=True,
    )
    written = 0
    dead: dict[str, dict[str, Any]] = {}
    for chunk in follower:
        over = False
        if chunk:
            events = [dict(line) for line in kept.merge(reader.feed(chunk).dicts)]
        else:  # at the end of what there is: the steps kept after each run's last line
            # a run is over when finished, or dead by its verdict: the rule that ends `tail --follow`
            dead = _dead_runs(stream_path, [run.run_id for run in reader.runs if run.finished is None])
            over = bool(reader.runs) and all(run.finished is not None or run.run_id in dead for run in reader.runs)
            events = kept.finish() if over else kept.flush()
        if events:
            exporter.write(events)
            written += len(events)
            _save_cursor(cursor_path, stream_path, reader, kept, exporter)
        if not chunk and (not follow or over):
            break
    for run_id, verdict in dead.items():
        exporter.end_unfinished(run_id, verdict)
    # `seq_gap` is the one diagnostic whose line is applied (reader rules, section 2)
    skipped = [diagnostic for diagnostic in reader.diagnostics if diagnostic.code != "seq_gap"]
    first = skipped[0] if skipped else None
    return Synced(written, len(skipped) + reader.diagnostics.dropped, first, tuple(dead))


def _dead_runs(stream_path: Path, unfinished: list[str]) -> dict[str, dict[str, Any]]:
    """The verdict of each of the `unfinished` runs that is over without `run.finished`
    (`stale`: silent past its limit, or its process proven gone), as `trainwire runs` judges it."""
    if not unfinished:
        return {}
    try:
        rows = run_rows(stream_path, now_us())
    except OSError:
        return {}
    verdicts = {row["run_id"]: row["verdict"] for row in rows}
    return {run_id: verdicts[run_id] for run_id in unfinished if run_id in verdicts and is_over(verdicts[run_id])}


def _saved_offsets(saved: Mapping[str, Any] | None) -> dict[str, int]:
    """How far each run's step file was exported (none in a cursor from before kept steps:
    they are all sent, as they never were)."""
    offsets = saved.get("kept_steps") if saved else None
    if not isinstance(offsets, dict):
        return {}
    return {run_id: offset for run_id, offset in offsets.items() if type(offset) is int and offset >= 0}


def _refuse(stream_path: Path, reason: str) -> None:
    raise ExportError(f"{stream_path} was {reason} since the last export; remove the export cursor to start over")


def _save_cursor(
    cursor_path: Path, stream_path: Path, reader: StreamReader, kept: KeptStepsMerge, exporter: Exporter
) -> None:
    state = reader.to_dict()
    state["diagnostics"] = []  # past problems are not state: the next reader starts clean
    body = {
        "version": CURSOR_VERSION,
        "stream": str(stream_path.absolute()),
        "reader": state,
        "kept_steps": kept.offsets(),
        "sink": exporter.state(),
    }
    cursor_path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomically(cursor_path, body)
