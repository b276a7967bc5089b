"""The verdict of each run of a stream as a reader judges it: the run's summary (one
`SummaryBuilder` per run, fed the lines it reads with the steps its journal kept), the clock,
and the proof this host can give of the run's process (`contract.process_proof`).

`tail`, the exports and `state` judge with this; `runs`, `diff` and `plot` judge the
summaries they read with `judge` alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from trainwire.contract.layout import SUMMARY_FILE, run_journal_dir
from trainwire.contract.process_proof import GONE, UNKNOWN, liveness_of
from trainwire.journal.files import read_summary
from trainwire.lines.summary import SummaryBuilder
from trainwire.lines.verdict import verdict_of
from trainwire.reader.run_end import RunEnd, run_end

__all__ = ["RunSummaries", "judge"]


def judge(summary: Mapping[str, Any], now_us: int | None, stale_after_s: float | None = None) -> dict[str, Any]:
    """The verdict of `summary`'s run at `now_us` (None: no clock), its process's liveness
    proven here when this host can (a finished run's needs no proof)."""
    proven = liveness_of(summary.get("process")) if summary["status"] == "running" else UNKNOWN
    return verdict_of(summary, now_us=now_us, stale_after_s=stale_after_s, liveness=proven)


class RunSummaries:
    """A summary of every run of a stream, by run id, from its lines in order. Given the
    stream's `directory`, a run's journal adds what only its writer knew: what the stream
    lost (`completeness`), and the ending of a run whose stream lost its `run.finished`."""

    def __init__(self, directory: Path | None = None, *, stream: Path | None = None) -> None:
        """`stream`: the stream of `directory` the lines come from, when they hold only the ends
        of its step files (`tail`): a run that writes no more is then told to its last line from
        its journal (`reader.run_end`), as its row tells it."""
        self._builders: dict[str, SummaryBuilder] = {}
        self._directory = directory
        self._stream = stream
        self._ended: dict[str, RunEnd | None] = {}  # a run whose process is gone writes no more

    def add(self, lines: Iterable[Mapping[str, Any]]) -> None:
        for line in lines:
            run_id = line.get("run_id")
            if isinstance(run_id, str):
                builder = self._builders.get(run_id)
                if builder is None:
                    builder = self._builders[run_id] = SummaryBuilder(any_line_switches=True)
                builder.add(line)

    def summary(self, run_id: str) -> dict[str, Any] | None:
        builder = self._builders.get(run_id)
        summary = builder.summary() if builder is not None else None
        if summary is None or self._directory is None:
            return summary
        journal = read_summary(run_journal_dir(self._directory, run_id) / SUMMARY_FILE)
        if journal is None:
            return summary
        if self._stream is not None and summary["status"] == journal["status"] == "running":
            if run_id not in self._ended and liveness_of(journal.get("process")) == GONE:
                self._ended[run_id] = run_end(self._stream, journal)
            ended = self._ended.get(run_id)
            summary = ended.summary if ended is not None else summary
        lost = journal.get("completeness")
        if not lost:
            return summary
        if summary["status"] == "running" and journal["status"] != "running" and lost.get("stream_lines_lost"):
            return journal  # the stream lost the run's end: its writer's own record says it
        return {**summary, "completeness": lost}

    def verdict(self, run_id: str, now_us: int | None, stale_after_s: float | None = None) -> dict[str, Any] | None:
        summary = self.summary(run_id)
        return None if summary is None else judge(summary, now_us, stale_after_s)
