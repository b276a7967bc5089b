"""Opening a stream's runs at once: each run's series, state and view events from its
journal's snapshot (`series.json`, version 2), and only the stream's bytes past the
snapshots read and folded.

A snapshot is gone on from only when it can be trusted: its version is known, it is the
run's own (its `run_id` is its journal's), its `stream_offset` is within the stream, at the
start of a line, and the line there (if any) is one of that run or a later run's
`run.started`. Anything else (a missing, version 1, stale, torn or foreign snapshot, a run of
the stream without a journal) and the whole stream is folded instead.

The tails are folded by one `RunStateFold` resumed from the snapshots' states, each line
into its run when it lies past that run's snapshot; the lines it applies go on into the
run's series and view events, with the steps the throttle kept in each run's step file past
its snapshot's `steps_offset` put back in place (`trainwire.reader.kept_steps`): into the
series, and into the state when they come after the run's last stream step (a run killed
mid-way shows the last step it logged). Line numbers (the state's `lines`, its diagnostics) count from the
earliest snapshot: the bytes before it are not read.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from trainwire.contract.files import open_regular
from trainwire.contract.journal_lookup import latest_journal
from trainwire.contract.layout import SERIES_FILE, SUMMARY_FILE, run_journal_dir
from trainwire.lines.decoder import Decoder, DiagnosticLog, ValidatedRecord
from trainwire.lines.series import RunSeries, SeriesStore
from trainwire.lines.state_fold import RunState, RunStateFold
from trainwire.lines.view_events import ViewEvents
from trainwire.reader.catalog import load_summary
from trainwire.reader.kept_steps import KeptStepsMerge, fold_latest_kept_steps
from trainwire.reader.snapshot_check import read_trusted_snapshot
from trainwire.reader.state import reader_state

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
    (`reader.snapshot_check`)."""
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
    every file read is a regular file inside that directory. `cancelled` is asked between
    chunks of the stream: once it is true the fold stops with `OpeningCancelled` (a server's
    deadline stops the work, not only the wait for it)."""
    latest = latest_journal(stream.parent, within=within)
    summary = load_summary(latest / SUMMARY_FILE, within=within) if latest is not None else None
    if summary is None:
        return None
    runs: dict[str, _OpenRun] = {}
    for run_id in [*summary.get("earlier_runs", []), summary["run_id"]]:
        journal = run_journal_dir(stream.parent, run_id)
        snapshot = read_snapshot(stream, journal, within=within)
        run_summary = load_summary(journal / SUMMARY_FILE, within=within)
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
            steps_offset = snapshot.get("steps_offset")
            self.steps_offset = steps_offset if type(steps_offset) is int and steps_offset >= 0 else 0
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
    """Folds the stream from the earliest snapshot on, each line into its run when it lies
    past that run's snapshot: the segments between offsets are decoded one by one. Returns
    the bytes covered and the lines read."""
    kept = KeptStepsMerge(
        stream.parent,
        offsets={run_id: run.steps_offset for run_id, run in runs.items()},
        last_seqs={run_id: seq for run_id, run in runs.items() if type(seq := run.saved_state.get("last_seq")) is int},
        within=within,
    )
    with open_regular(stream, within=within) as handle:
        size = os.fstat(handle.fileno()).st_size
        bounds = sorted({run.offset for run in runs.values()} | {size})
        offset, lines = bounds[0], 0
        for start, end in zip(bounds, bounds[1:], strict=False):
            decoder = Decoder(offset=start, line_number=lines, diagnostics=diagnostics)
            for chunk in _read_range(handle, start, end):
                if cancelled is not None and cancelled():
                    raise OpeningCancelled(str(stream))
                _add_merged(runs, fold, kept.merge(fold.extend(_past_snapshots(decoder.validated(chunk), runs, start))))
            offset, lines = decoder.consumed_bytes, decoder.lines
    _add_merged(runs, fold, kept.flush())
    return offset, lines


def _add_merged(runs: dict[str, _OpenRun], fold: RunStateFold, merged: Iterable[dict[str, Any]]) -> None:
    """Lines of the tail with the kept steps among them into their runs' series and view
    events; the kept steps past a run's last stream step into its state too."""
    merged = list(merged)
    for line in merged:
        runs[line["run_id"]].add(line)
    fold_latest_kept_steps(fold.runs, merged)


def _past_snapshots(
    records: Iterator[ValidatedRecord], runs: dict[str, _OpenRun], start: int
) -> Iterator[ValidatedRecord]:
    """The records of the segment at `start` that lie past their run's snapshot."""
    for record in records:
        line = record[1]
        run_id = line["run_id"]
        run = runs.get(run_id)
        if run is None:
            if line["event"] != "run.started":
                raise _Unknown(run_id)
            run = runs[run_id] = _OpenRun(None, "running", run_id)  # a run that began in the tail
        if run.offset <= start:
            yield record


def _read_range(handle: IO[bytes], start: int, end: int) -> Iterator[bytes]:
    handle.seek(start)
    left = end - start
    while left > 0 and (chunk := handle.read(min(_CHUNK_BYTES, left))):
        left -= len(chunk)
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
