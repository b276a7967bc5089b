"""Opening a stream's runs at once: each run's series, state and view events from its
journal's snapshot (`series.json`, version 2), and only each run's tail of the stream (the
lines past its snapshot) read and folded.

A snapshot is gone on from only when it can be trusted: its version is known, it is the
run's own (its `run_id` is its journal's), its `stream_offset` is within the stream, at the
start of a line, and the line there (if any) is one of that run or a later run's
`run.started`. Anything else (a missing, version 1, stale, torn or foreign snapshot, a run of
the stream without a journal) and the whole stream is folded instead.

The runs of a stream follow one another (a resume appends after the run it resumes), so a
run's tail is the bytes from its snapshot's offset up to the first line of a later run, and
the last run's goes on to the end of the stream; the bytes of a run before its snapshot's
offset are never read, whatever run's tail comes before them. The tails are folded in stream
order by one `RunStateFold` resumed from the snapshots' states; the lines it applies go on
into their run's series and view events. Offsets out of their runs' order, an earlier run's
line after a later run's, or a run begun without a journal before the last journaled run, and
the whole stream is folded instead. The steps the throttle kept in each run's step file past
its snapshot's `steps_offset` are put back in place (`trainwire.journal.kept_steps`): into the
series, and into the state when they come after the run's last stream step (a run killed
mid-way shows the last step it logged). Line numbers (the state's `lines`, its diagnostics) count the
lines of the tails read, tail after tail.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from trainwire.contract.files import open_regular
from trainwire.contract.layout import SERIES_FILE, SUMMARY_FILE, run_journal_dir
from trainwire.journal.files import read_summary
from trainwire.journal.kept_steps import KeptStepsMerge, fold_latest_kept_steps
from trainwire.journal.lookup import latest_journal
from trainwire.journal.snapshot_check import read_trusted_snapshot
from trainwire.journal.step_file import ReadCancelled
from trainwire.lines.decoder import Decoder, DiagnosticLog, ValidatedRecord
from trainwire.lines.reader_state import reader_state
from trainwire.lines.series import RunSeries, SeriesStore
from trainwire.lines.state_fold import RunState, RunStateFold
from trainwire.lines.view_events import ViewEvents

__all__ = ["OpenedRun", "OpenedStream", "OpeningCancelled", "open_from_snapshots", "read_snapshot"]

#: how much of the line at a snapshot's offset is read to check whose it is
_PROBE_BYTES = 1 << 16
_CHUNK_BYTES = 1 << 20


@dataclass(frozen=True)
class OpenedRun:
    """One run of a stream: its id, status (its summary's, or its `run.finished`'s), series,
    state and view events (validated line dicts, `lines.view_events`)."""

    run_id: str
    status: str
    series: RunSeries
    state: RunState
    events: list[dict[str, Any]]


@dataclass(frozen=True)
class OpenedStream:
    """Every run of a stream opened from the snapshots, and how far the stream was read."""

    runs: list[OpenedRun]
    #: the runs' states after `offset`, as a reader state (`StreamReader.to_dict`'s form)
    state: dict[str, Any]
    #: the bytes of the stream covered (a line being written past it is not)
    offset: int

    def series(self) -> SeriesStore:
        """A series store holding every run's series."""
        store = SeriesStore()
        store.runs.update((run.run_id, run.series) for run in self.runs)
        return store


def read_snapshot(stream: Path, journal: Path, *, within: Path | None = None) -> dict[str, Any] | None:
    """The journal's snapshot when the stream can be read on from its offset, else None
    (with `within`: only a regular file inside that directory is read, as `open_regular`).
    A snapshot over its cap, or any part of it not of the shape its readers take, is None
    (`journal.snapshot_check`)."""
    snapshot = read_trusted_snapshot(journal / SERIES_FILE, journal.name, within=within)
    try:
        if snapshot is None or snapshot["stream_offset"] > os.stat(stream).st_size:
            return None
        return snapshot if _line_boundary_of(stream, snapshot["stream_offset"], journal.name, within) else None
    except OSError:
        return None


def open_from_snapshots(
    stream: Path, *, within: Path | None = None, cancelled: Callable[[], bool] | None = None
) -> OpenedStream | None:
    """Every run of `stream`, in stream order, from its journal's snapshot and the stream past
    it; None when one of them cannot be (the caller folds the whole stream). With `within`,
    every file read is a regular file inside that directory. `cancelled` is asked in every
    read loop, between chunks of the stream and of each step file: once it is true the fold
    stops with `OpeningCancelled` (a server's deadline stops the work, not only the wait)."""
    latest = latest_journal(stream.parent, within=within)
    summary = read_summary(latest / SUMMARY_FILE, within=within) if latest is not None else None
    if summary is None:
        return None
    runs: dict[str, _OpenRun] = {}
    for run_id in [*summary.get("earlier_runs", []), summary["run_id"]]:
        journal = run_journal_dir(stream.parent, run_id)
        snapshot = read_snapshot(stream, journal, within=within)
        run_summary = read_summary(journal / SUMMARY_FILE, within=within)
        if snapshot is None or run_summary is None:
            return None
        runs[run_id] = _OpenRun(snapshot, run_summary["status"])
    diagnostics = DiagnosticLog()
    resume = {"runs": [run.saved_state for run in runs.values()], "unknown_events": 0, "diagnostics": []}
    fold = RunStateFold(diagnostics=diagnostics, resume=resume)
    try:
        offset, lines = _fold_tails(stream, runs, fold, diagnostics, within, cancelled)
    except (_Unknown, OSError):
        return None
    except ReadCancelled:  # in a step file
        raise OpeningCancelled(str(stream)) from None
    state = reader_state(fold, lines=lines, consumed_bytes=offset, partial_tail_bytes=0)
    opened = [
        OpenedRun(run_id, run.status, run.series, fold.runs[run_id], run.events.to_list())
        for run_id, run in runs.items()
    ]
    return OpenedStream(opened, state, offset)


class OpeningCancelled(Exception):
    """`open_from_snapshots` was cancelled before it was done."""


class _Unknown(Exception):
    """A line of a run neither a snapshot nor the tail starts: the whole stream is needed."""


class _OpenRun:
    def __init__(self, snapshot: Mapping[str, Any] | None, status: str, run_id: str | None = None) -> None:
        if snapshot is not None:
            store = SeriesStore.from_dict(snapshot["store"])
            self.series = store.runs[snapshot["run_id"]]
            self.offset: int = snapshot["stream_offset"]
            self.steps_offset: int = snapshot.get("steps_offset", 0)  # a count, by the snapshot's schema
            self.saved_state: dict[str, Any] = snapshot["state"]
            self.events = ViewEvents(snapshot["events"])
        else:
            assert run_id is not None
            self.series = RunSeries(run_id, SeriesStore().max_points, SeriesStore().max_markers)
            self.offset = 0
            self.steps_offset = 0
            self.events = ViewEvents()
        self.status = status

    def add(self, line: Mapping[str, Any]) -> None:
        self.series.add_line(line)
        self.events.add([line])
        if line.get("event") == "run.finished" and isinstance(line.get("status"), str):
            self.status = line["status"]


def _fold_tails(
    stream: Path,
    runs: dict[str, _OpenRun],
    fold: RunStateFold,
    diagnostics: DiagnosticLog,
    within: Path | None,
    cancelled: Callable[[], bool] | None = None,
) -> tuple[int, int]:
    """Folds each run's tail: the runs of a stream follow one another, so a run's tail is the
    bytes from its snapshot's offset to the first line of a later run, and the last run's goes
    on to the end of the stream. The bytes in between are covered by the later run's snapshot
    and never read. Returns the bytes covered and the lines read."""
    offsets = [run.offset for run in runs.values()]
    if offsets != sorted(offsets):
        raise _Unknown("the snapshots' offsets are not in the order of their runs")
    kept = KeptStepsMerge(
        stream.parent,
        offsets={run_id: run.steps_offset for run_id, run in runs.items()},
        last_seqs={run_id: seq for run_id, run in runs.items() if type(seq := run.saved_state.get("last_seq")) is int},
        within=within,
        cancelled=cancelled,
    )
    tails = _Tails(runs)
    start, lines = offsets[0], 0
    with open_regular(stream, within=within) as handle:
        size = os.fstat(handle.fileno()).st_size
        while True:
            decoder = Decoder(offset=start, line_number=lines, diagnostics=diagnostics)
            for chunk in _read_range(handle, start, size):
                if cancelled is not None and cancelled():
                    raise OpeningCancelled(str(stream))
                _add_merged(runs, fold, kept.merge(fold.extend(tails.lines(decoder.validated(chunk)))))
                if tails.ended_at is not None:
                    break
            if tails.ended_at is None:
                _add_merged(runs, fold, kept.flush())
                return decoder.consumed_bytes, decoder.lines
            # the line numbered `ended_at` is a later run's: the tail ends where it starts
            boundary = _after_lines(handle, start, tails.ended_at - 1 - lines, cancelled)
            lines = tails.ended_at - 1
            start = tails.go_on_at(boundary)


def _add_merged(runs: dict[str, _OpenRun], fold: RunStateFold, merged: Iterable[dict[str, Any]]) -> None:
    """Lines of the tail with the kept steps among them into their runs' series and view
    events; the kept steps past a run's last stream step into its state too."""
    merged = list(merged)
    for line in merged:
        runs[line["run_id"]].add(line)
    fold_latest_kept_steps(fold.runs, merged)


class _Tails:
    """Which lines are folded: the lines of the run whose tail is read, until a line of a later
    run ends that tail. An earlier run's line after a later one's means the runs did not follow
    one another: its lines may lie in bytes no tail reads, so the whole stream is needed."""

    def __init__(self, runs: dict[str, _OpenRun]) -> None:
        self._runs = runs
        self._listed = list(runs.values())  # in stream order
        self._order = {run_id: index for index, run_id in enumerate(runs)}
        self._last = len(runs) - 1
        self._current = 0
        #: the number of the line of a later run that ended the current tail, and that run's index
        self.ended_at: int | None = None
        self._next = 0

    def lines(self, records: Iterator[ValidatedRecord]) -> Iterator[ValidatedRecord]:
        """The current run's records, up to the first line of a later run (then `ended_at`)."""
        for record in records:
            line = record[1]
            run_id = line["run_id"]
            index = self._order.get(run_id)
            if index is None:
                if line["event"] != "run.started" or self._current != self._last:
                    raise _Unknown(run_id)
                index = self._order[run_id] = self._last  # a run begun after the last one's snapshot
                self._runs[run_id] = _OpenRun(None, "running", run_id)
            if index < self._current:
                raise _Unknown(run_id)
            if index > self._current:
                self.ended_at, self._next = record[0], index
                return
            yield record

    def go_on_at(self, boundary: int) -> int:
        """Where the next tail starts, the ended one having stopped at `boundary` (where the
        later run's line starts): that run's offset, or the boundary when its snapshot lies
        before it. Runs passed over have all their lines before the boundary, so their
        snapshots must cover it."""
        if any(run.offset < boundary for run in self._listed[self._current + 1 : self._next]):
            raise _Unknown("a run's lines are neither in its snapshot nor in a tail")
        self._current, self.ended_at = self._next, None
        return max(self._listed[self._current].offset, boundary)


def _after_lines(handle: IO[bytes], start: int, count: int, cancelled: Callable[[], bool] | None) -> int:
    """The offset just after the `count`th newline from `start`."""
    handle.seek(start)
    position = start
    while count > 0:
        if cancelled is not None and cancelled():
            raise OpeningCancelled("the stream's lines")
        chunk = handle.read(_CHUNK_BYTES)
        if not chunk:
            raise _Unknown("the stream is shorter than the lines read from it")
        cut = -1
        while count > 0 and (cut := chunk.find(b"\n", cut + 1)) >= 0:
            count -= 1
        position += cut + 1 if count == 0 else len(chunk)
    return position


def _read_range(handle: IO[bytes], start: int, end: int) -> Iterator[bytes]:
    """The bytes from `start` to `end`, a small chunk first: a tail a later run ends is often a
    few lines, and the rest of its chunk (the later run's, which its snapshot covers) is
    decoded for nothing."""
    handle.seek(start)
    left, size = end - start, _PROBE_BYTES
    while left > 0 and (chunk := handle.read(min(size, left))):
        left, size = left - len(chunk), _CHUNK_BYTES
        yield chunk


def _line_boundary_of(stream: Path, offset: int, run_id: str, within: Path | None) -> bool:
    """Whether `offset` starts a line (or is the end) and that line is `run_id`'s, or a later
    run's start: a stream rewritten or cut since the snapshot fails this."""
    with open_regular(stream, within=within) as handle:
        if offset > 0:
            handle.seek(offset - 1)
            if handle.read(1) != b"\n":
                return False
        probe = handle.read(_PROBE_BYTES)
    if not probe:
        return True
    line, newline, _rest = probe.partition(b"\n")
    if not newline:
        return len(probe) < _PROBE_BYTES and probe.startswith(b"{")  # a line still being written
    try:
        value = json.loads(line)
    except ValueError:
        return False
    return isinstance(value, dict) and (value.get("run_id") == run_id or value.get("event") == "run.started")
