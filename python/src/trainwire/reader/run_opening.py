"""Opening a stream's runs at once: each run's series from its journal's snapshot
(`series.json`), and only the stream's bytes past the snapshot read and folded.

A snapshot is gone on from only when it can be trusted: its version is known, it is the
run's own (its `run_id` is its journal's name), its `stream_offset` is within the stream, at
the start of a line, and the line there (if any) is one of that run or a later run's
`run.started`. Anything else (a missing, stale, torn or foreign snapshot, a run of the stream
without a journal) and the whole stream is folded instead, as before journals existed.

The tail past a snapshot is folded line by line (`RunSeries.add_line`, the journal's fold);
steps the throttle kept in the step file since the snapshot come with the next one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainwire.contract.files import open_regular
from trainwire.contract.journal_lookup import latest_journal
from trainwire.contract.layout import SERIES_FILE, SUMMARY_FILE, run_journal_dir
from trainwire.lines.decoder import Decoder
from trainwire.lines.run_journal import SNAPSHOT_VERSION
from trainwire.lines.series import RunSeries, SeriesStore
from trainwire.reader.catalog import load_summary

__all__ = ["OpenedRun", "open_from_snapshots", "read_snapshot"]

#: how much of the line at a snapshot's offset is read to check whose it is
_PROBE_BYTES = 1 << 16
_CHUNK_BYTES = 1 << 20


@dataclass(frozen=True)
class OpenedRun:
    """One run of a stream: its id, status (its summary's, or its `run.finished`'s) and series."""

    run_id: str
    status: str
    series: RunSeries


def read_snapshot(stream: Path, journal: Path, *, within: Path | None = None) -> dict[str, Any] | None:
    """The journal's series snapshot when the stream can be read on from its offset, else None
    (with `within`: only a regular file inside that directory is read, as `open_regular`)."""
    try:
        with open_regular(journal / SERIES_FILE, within=within) as file:
            snapshot = json.loads(file.read())
        size = os.stat(stream).st_size
    except (OSError, ValueError):
        return None
    if not isinstance(snapshot, dict) or snapshot.get("snapshot_version") != SNAPSHOT_VERSION:
        return None
    run_id, offset = snapshot.get("run_id"), snapshot.get("stream_offset")
    if run_id != journal.name or not isinstance(offset, int) or isinstance(offset, bool) or not 0 <= offset <= size:
        return None
    store = snapshot.get("store")
    if not isinstance(store, dict) or not any(run.get("run_id") == run_id for run in store.get("runs", [])):
        return None
    return snapshot if _line_boundary_of(stream, offset, run_id) else None


def open_from_snapshots(stream: Path) -> list[OpenedRun] | None:
    """Every run of `stream`, in stream order, from its journal's snapshot and the stream past
    it; None when one of them cannot be (the caller folds the whole stream)."""
    latest = latest_journal(stream.parent)
    summary = load_summary(latest / SUMMARY_FILE) if latest is not None else None
    if summary is None:
        return None
    runs: dict[str, _OpenRun] = {}
    for run_id in [*summary.get("earlier_runs", []), summary["run_id"]]:
        journal = run_journal_dir(stream.parent, run_id)
        snapshot = read_snapshot(stream, journal)
        run_summary = load_summary(journal / SUMMARY_FILE)
        if snapshot is None or run_summary is None:
            return None
        runs[run_id] = _OpenRun(snapshot, run_summary["status"])
    try:
        _fold_tails(stream, runs)
    except _Unknown:
        return None
    return [OpenedRun(run_id, run.status, run.series) for run_id, run in runs.items()]


class _Unknown(Exception):
    """A line of a run neither a snapshot nor the tail starts: the whole stream is needed."""


class _OpenRun:
    def __init__(self, snapshot: Mapping[str, Any] | None, status: str, run_id: str | None = None) -> None:
        if snapshot is not None:
            store = SeriesStore.from_dict(snapshot["store"])
            self.series = store.runs[snapshot["run_id"]]
            self.offset: int = snapshot["stream_offset"]
        else:
            assert run_id is not None
            self.series = RunSeries(run_id, SeriesStore().max_points, SeriesStore().max_markers)
            self.offset = 0
        self.status = status

    def add(self, line: Mapping[str, Any]) -> None:
        self.series.add_line(line)
        if line.get("event") == "run.finished" and isinstance(line.get("status"), str):
            self.status = line["status"]


def _fold_tails(stream: Path, runs: dict[str, _OpenRun]) -> None:
    """Folds the stream from the earliest snapshot on, each line into its run when it lies
    past that run's snapshot: the segments between offsets are decoded one by one."""
    size = os.stat(stream).st_size
    bounds = sorted({run.offset for run in runs.values()} | {size})
    for start, end in zip(bounds, bounds[1:], strict=False):
        decoder = Decoder(offset=start)
        for chunk in _read_range(stream, start, end):
            for line in decoder.feed(chunk).dicts:
                _take(line, runs, start)


def _take(line: dict[str, Any], runs: dict[str, _OpenRun], segment_start: int) -> None:
    run_id = line.get("run_id")
    if not isinstance(run_id, str):
        return
    run = runs.get(run_id)
    if run is None:
        if line.get("event") != "run.started":
            raise _Unknown(run_id)
        run = runs[run_id] = _OpenRun(None, "running", run_id)  # a run that began in the tail
    if run.offset <= segment_start:
        run.add(line)


def _read_range(path: Path, start: int, end: int) -> Iterator[bytes]:
    with open(path, "rb") as handle:
        handle.seek(start)
        left = end - start
        while left > 0 and (chunk := handle.read(min(_CHUNK_BYTES, left))):
            left -= len(chunk)
            yield chunk


def _line_boundary_of(stream: Path, offset: int, run_id: str) -> bool:
    """Whether `offset` starts a line (or is the end) and that line is `run_id`'s, or a later
    run's start: a stream rewritten or cut since the snapshot fails this."""
    with open(stream, "rb") as handle:
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
