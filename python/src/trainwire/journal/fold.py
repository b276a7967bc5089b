"""One run's journal documents from its lines: the summary (`lines.summary`) and the
snapshot of its series (`lines.series`), its run state (`lines.state_fold`) and its view
events (`lines.view_events`). The writer's journal feeds it the lines it writes and the
steps its throttle left out, in the order they came; `trainwire journal rebuild` feeds it
the stream's lines with the step file's records put back after the line each names. The
state and the view events are the stream's alone (`add_stream_lines`): a kept step is in no
stream a reader folds. Same lines in the same order: the same documents, byte for byte."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from trainwire.contract.canonical import dumps
from trainwire.contract.files import write_text_atomically
from trainwire.contract.layout import SERIES_FILE
from trainwire.lines.series import RunSeries, SeriesStore
from trainwire.lines.state_fold import RunState, RunStateFold
from trainwire.lines.summary import SummaryBuilder
from trainwire.lines.view_events import ViewEvents

__all__ = ["SNAPSHOT_VERSION", "RunJournalFold", "write_snapshot"]

#: 2 adds the run's `state` and its view `events` (a version 1 snapshot is not opened from)
SNAPSHOT_VERSION = 2


class RunJournalFold:
    """The summary, the series, the state and the view events of the run `run_id`, fed that
    run's lines in order."""

    def __init__(self, run_id: str, earlier_runs: Iterable[str] = ()) -> None:
        self.run_id = run_id
        self.summary = SummaryBuilder(earlier_runs)
        self._store = SeriesStore()
        self._series = self._store.runs[run_id] = RunSeries(run_id, self._store.max_points, self._store.max_markers)
        self._state = RunStateFold()
        self._events = ViewEvents()

    def add_lines(self, lines: Sequence[Mapping[str, Any]]) -> None:
        """Folds consecutive lines of the run (kept steps as `kept_step_line` makes them)."""
        self.summary.add_lines(lines)
        self._series.add_lines(lines)

    def add_stream_lines(self, lines: Sequence[dict[str, Any]]) -> None:
        """Folds consecutive lines of the run as the stream holds them (a reader's validated
        dicts) into its state and view events; line numbers do not matter: one run's own
        lines raise no diagnostic a snapshot keeps."""
        self._events.add(self._state.extend_batches([(0, list(lines))]))

    def snapshot(self, stream_offset: int, steps_offset: int) -> dict[str, Any]:
        """The snapshot, saying how many bytes of the stream and of the step file it covers;
        `state` is the run's as the stream's lines left it (`RunState.to_dict()`)."""
        run = self._state.runs.get(self.run_id)
        return {
            "snapshot_version": SNAPSHOT_VERSION,
            "run_id": self.run_id,
            "stream_offset": stream_offset,
            "steps_offset": steps_offset,
            "store": self._store.to_dict(),
            "state": (run if run is not None else RunState(self.run_id)).to_dict(),
            "events": self._events.to_list(),
        }


def write_snapshot(directory: str | os.PathLike[str], snapshot: Mapping[str, Any]) -> Path:
    """Writes the snapshot to the journal directory's `series.json` atomically (canonical JSON)."""
    target = Path(directory) / SERIES_FILE
    write_text_atomically(target, dumps(snapshot) + "\n")
    return target
