"""Keep a tracker in step with a stream: once, or live, and never twice for the same line.

Every step the trainer logged goes: the stream's lines with each run's kept steps (its
journal's `steps.jsonl`) put back in place (`trainwire.journal.kept_steps`).

Exactly once across interruption (Ctrl-C, `kill -9`, at any moment): the events go to the
exporter in batches of at most its `batch_events`, and the cursor file is saved atomically
after each batch the tracker accepted (what "accepted" means is each exporter's: MLflow's
`log_batch` returned, TensorBoard's files flushed, W&B's offline part finished). The cursor
holds a position, where a chunk of the stream began (the reader state: reader rules, a reader
restarts at `consumed_bytes` with the state it had; and how far each run's step file was
read, `kept_steps`), and what of that chunk was accepted past it (`accepted`: each run's last
stream line, and how many of its kept steps, which come in the step file's order). An export
run again reads that chunk again and hands on only what was not accepted. The exporter's own
state (which tracker run holds which trainwire run) is saved too, and also at once when the
exporter asks (`remember`: a tracker run made, before anything is written into it).
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from trainwire.contract.clock import now_us
from trainwire.contract.files import read_capped, write_json_atomically
from trainwire.journal.kept_steps import KeptStepsMerge
from trainwire.lines.diagnostics import Diagnostic
from trainwire.lines.verdict import is_over
from trainwire.reader.catalog import run_rows
from trainwire.reader.sources import FileFollower
from trainwire.reader.state import StreamReader

__all__ = ["CURSOR_VERSION", "ExportError", "Exporter", "Synced", "load_cursor", "sync"]

#: the cursor file's format; another version is refused rather than guessed at
CURSOR_VERSION = 1
#: a cursor holds a reader state (a few KiB a run) and the exporter's: far under this
MAX_CURSOR_BYTES = 64 << 20


class ExportError(Exception):
    """An export that cannot go on (a replaced stream, a foreign cursor)."""


#: saves the cursor at the last accepted batch with the exporter's state as it is now
Remember = Callable[[], None]


class Exporter(Protocol):
    """A tracker the events go to (MLflow, TensorBoard, W&B): not a writer `Sink`, which takes lines.

    `write` gets the events applied to runs, as dicts, in order, at most `batch_events` at
    once; it returns once the tracker holds them durably, and calls `remember()` after making
    a tracker-side run and before writing into it."""

    #: the most events handed to one `write`: what the tracker takes and keeps at once
    batch_events: int

    def write(self, events: list[dict[str, Any]], remember: Remember) -> None: ...

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
    try:  # a regular file under its cap: a cursor may sit in a folder others write to
        saved = json.loads(read_capped(cursor_path, MAX_CURSOR_BYTES))
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
    cursor = _Cursor(cursor_path, stream_path, exporter, _reader_state(reader), kept.offsets(), _Accepted.of(saved))
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
        events: Iterable[dict[str, Any]]
        if chunk:
            events = (dict(line) for line in kept.merge(reader.feed(chunk).dicts))
        else:  # at the end of what there is: the steps kept after each run's last line
            # a run is over when finished, or dead by its verdict: the rule that ends `tail --follow`
            dead = _dead_runs(stream_path, [run.run_id for run in reader.runs if run.finished is None])
            over = bool(reader.runs) and all(run.finished is not None or run.run_id in dead for run in reader.runs)
            events = kept.finish() if over else kept.flush()
        handed = False
        for batch in _batches(cursor.accepted.not_yet(events), exporter.batch_events):
            exporter.write(batch, cursor.remember)
            cursor.accepted.add(batch)
            cursor.save()
            written += len(batch)
            handed = True
        if chunk or handed:  # the chunk is whole in the tracker: the position moves past it
            cursor.move(_reader_state(reader), kept.offsets())
        if not chunk and (not follow or over):
            break
    for run_id, verdict in dead.items():
        exporter.end_unfinished(run_id, verdict)
    # `seq_gap` is the one diagnostic whose line is applied (reader rules, section 2)
    skipped = [diagnostic for diagnostic in reader.diagnostics if diagnostic.code != "seq_gap"]
    first = skipped[0] if skipped else None
    # a run whose verdict has an exit code finished, though its stream lost the line that says so
    unfinished = tuple(run_id for run_id, verdict in dead.items() if verdict.get("exit_code") is None)
    return Synced(written, len(skipped) + reader.diagnostics.dropped, first, unfinished)


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


@dataclass
class _Accepted:
    """What the tracker accepted past the cursor's position: each run's last stream line
    (`seq`) and how many of its kept steps (in the step file's order, from its offset)."""

    lines: dict[str, int] = field(default_factory=dict)
    kept: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, saved: Mapping[str, Any] | None) -> _Accepted:
        found = saved.get("accepted") if saved else None
        if not isinstance(found, dict):
            return cls()
        return cls(_counts(found.get("lines")), _counts(found.get("kept")))

    def not_yet(self, events: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """`events` (read again from the position) without the ones accepted before."""
        kept_left = dict(self.kept)
        for event in events:
            run_id, seq = event["run_id"], event.get("seq")
            if seq is not None:
                if seq <= self.lines.get(run_id, -1):
                    continue
            elif kept_left.get(run_id, 0) > 0:
                kept_left[run_id] -= 1
                continue
            yield event

    def add(self, events: list[dict[str, Any]]) -> None:
        for event in events:
            run_id, seq = event["run_id"], event.get("seq")
            if seq is not None:
                self.lines[run_id] = seq
            else:
                self.kept[run_id] = self.kept.get(run_id, 0) + 1

    def to_dict(self) -> dict[str, Any]:
        return {"lines": dict(self.lines), "kept": dict(self.kept)}


class _Cursor:
    """The cursor file: a position (where a chunk began), what past it was accepted, and the
    exporter's state."""

    def __init__(
        self,
        path: Path,
        stream_path: Path,
        exporter: Exporter,
        reader: dict[str, Any],
        kept_offsets: dict[str, int],
        accepted: _Accepted,
    ) -> None:
        self.path, self.stream_path, self.exporter = path, stream_path, exporter
        self.reader, self.kept_offsets, self.accepted = reader, kept_offsets, accepted

    def move(self, reader: dict[str, Any], kept_offsets: dict[str, int]) -> None:
        """The next chunk begins here; nothing past it is accepted yet."""
        self.reader, self.kept_offsets, self.accepted = reader, kept_offsets, _Accepted()
        self.save()

    def remember(self) -> None:
        self.save()

    def save(self) -> None:
        body = {
            "version": CURSOR_VERSION,
            "stream": str(self.stream_path.absolute()),
            "reader": self.reader,
            "kept_steps": self.kept_offsets,
            "accepted": self.accepted.to_dict(),
            "sink": self.exporter.state(),
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomically(self.path, body)


def _batches(events: Iterable[dict[str, Any]], most: int) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for event in events:
        batch.append(event)
        if len(batch) >= most:
            yield batch
            batch = []
    if batch:
        yield batch


def _reader_state(reader: StreamReader) -> dict[str, Any]:
    state = reader.to_dict()
    state["diagnostics"] = []  # past problems are not state: the next reader starts clean
    return state


def _counts(value: Any) -> dict[str, int]:
    if not isinstance(value, dict):
        return {}
    return {run_id: count for run_id, count in value.items() if type(count) is int and count >= 0}


def _saved_offsets(saved: Mapping[str, Any] | None) -> dict[str, int]:
    """How far each run's step file was exported (none in a cursor from before kept steps:
    they are all sent, as they never were)."""
    offsets = saved.get("kept_steps") if saved else None
    if not isinstance(offsets, dict):
        return {}
    return {run_id: offset for run_id, offset in offsets.items() if type(offset) is int and offset >= 0}


def _refuse(stream_path: Path, reason: str) -> None:
    raise ExportError(f"{stream_path} was {reason} since the last export; remove the export cursor to start over")
