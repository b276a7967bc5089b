"""One run's journal documents from its lines: the summary (`lines.summary`) and the
snapshot of its series (`lines.series`). The writer's journal feeds it the lines it writes
and the steps its throttle left out, in the order they came; `trainwire journal rebuild`
feeds it the stream's lines with the step file's records put back after the line each
names. Same lines in the same order: the same documents, byte for byte."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from trainwire.contract.canonical import dumps
from trainwire.contract.files import write_text_atomically
from trainwire.contract.layout import SERIES_FILE
from trainwire.lines.series import RunSeries, SeriesStore
from trainwire.lines.summary import SummaryBuilder

__all__ = ["SNAPSHOT_VERSION", "RunJournalFold", "write_snapshot"]

SNAPSHOT_VERSION = 1


class RunJournalFold:
    """The summary and the series of the run `run_id`, fed that run's lines in order."""

    def __init__(self, run_id: str, earlier_runs: Iterable[str] = ()) -> None:
        self.run_id = run_id
        self.summary = SummaryBuilder(earlier_runs)
        self._store = SeriesStore()
        self._series = self._store.runs[run_id] = RunSeries(run_id, self._store.max_points, self._store.max_markers)

    def add_lines(self, lines: Sequence[Mapping[str, Any]]) -> None:
        """Folds consecutive lines of the run (kept steps as `kept_step_line` makes them)."""
        self.summary.add_lines(lines)
        add = self._series.add_line
        for line in lines:
            add(line)

    def snapshot(self, stream_offset: int, steps_offset: int) -> dict[str, Any]:
        """The series snapshot, saying how many bytes of the stream and of the step file it covers."""
        return {
            "snapshot_version": SNAPSHOT_VERSION,
            "run_id": self.run_id,
            "stream_offset": stream_offset,
            "steps_offset": steps_offset,
            "store": self._store.to_dict(),
        }


def write_snapshot(directory: str | os.PathLike[str], snapshot: Mapping[str, Any]) -> Path:
    """Writes the snapshot to the journal directory's `series.json` atomically (canonical JSON)."""
    target = Path(directory) / SERIES_FILE
    write_text_atomically(target, dumps(snapshot) + "\n")
    return target
