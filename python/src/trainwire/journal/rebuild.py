"""`trainwire journal rebuild`: every run's summary and series snapshot from the stream and
the run's step file, by the fold the writer runs live (`journal.fold`), so the files
come out byte for byte as the writer wrote them. The reader's rules pick the stream's
lines; each kept step goes back after the line its `after` names (`journal.kept_steps`, as
every reader of steps puts them back). What only the writer knew (the summary's
`completeness`) is kept from the summary it replaces."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from trainwire.contract.layout import NOTES_FILE, STEPS_FILE, STREAM_FILE, SUMMARY_FILE, run_journal_dir
from trainwire.journal.completeness import journal_completeness
from trainwire.journal.files import read_summary
from trainwire.journal.fold import RunJournalFold, write_snapshot
from trainwire.journal.kept_steps import LineReader, every_line
from trainwire.journal.migration import migrate_journal
from trainwire.journal.notes import count_notes
from trainwire.journal.step_records import complete_size
from trainwire.lines.summary import write_summary

__all__ = ["RebuiltRun", "rebuild_journals"]

RebuiltRun = tuple[str, dict[str, Any]]


class _Run:
    """One run's fold."""

    def __init__(self, run_id: str, earlier: list[str], journal: Path) -> None:
        self.fold = RunJournalFold(run_id, earlier)
        self.journal = journal
        self.steps_offset = complete_size(journal / STEPS_FILE)

    def add(self, line: dict[str, Any]) -> None:
        self.fold.add_lines([line])
        if "seq" in line:  # a stream line, not a kept step put back
            self.fold.add_stream_lines([line])


def rebuild_journals(output_dir: str | os.PathLike[str], reader: LineReader) -> list[RebuiltRun]:
    """Rewrites the summary and the series snapshot of every run of `output_dir`'s stream (a
    0.1 journal is migrated first, a torn last line of a step file cut off): `(run_id,
    summary)` of each run, in stream order. `reader` (fresh: `reader.state.StreamReader()`)
    picks the stream's lines by the readers' rules."""
    directory = Path(output_dir)
    migrate_journal(directory)
    stream = directory / STREAM_FILE
    runs: dict[str, _Run] = {}
    for line in every_line(stream, reader):
        run_id = line["run_id"]
        run = runs.get(run_id)
        if run is None:
            run = runs[run_id] = _Run(run_id, list(runs), run_journal_dir(directory, run_id))
        run.add(line)
    stream_offset = os.stat(stream).st_size
    rebuilt: list[RebuiltRun] = []
    for run_id, run in runs.items():
        run.fold.summary.notes = count_notes(run.journal / NOTES_FILE)
        # what the writer knew was lost: the stream cannot say it, so the summary's stays
        run.fold.summary.completeness = journal_completeness(directory, run_id)
        summary = run.fold.summary.summary()
        if summary is None:
            continue
        summary.update(_writers_own(run.journal))
        run.journal.mkdir(parents=True, exist_ok=True)
        _cut_torn_tail(run.journal / STEPS_FILE, run.steps_offset)
        write_summary(run.journal, summary)
        write_snapshot(run.journal, run.fold.snapshot(stream_offset, run.steps_offset))
        rebuilt.append((run_id, summary))
    return rebuilt


def _writers_own(journal: Path) -> dict[str, Any]:
    """What only the run's writer knew, from the summary being replaced: its `completeness`
    (what never reached the files cannot be folded from them)."""
    earlier = read_summary(journal / SUMMARY_FILE)
    completeness = earlier.get("completeness") if earlier is not None else None
    return {"completeness": completeness} if completeness else {}


def _cut_torn_tail(path: Path, whole: int) -> None:
    """Cuts a step file back to its whole lines, so the next append starts a line of its own."""
    try:
        if path.stat().st_size > whole:
            os.truncate(path, whole)
    except FileNotFoundError:
        pass
