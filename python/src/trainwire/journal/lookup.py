"""Finding a run's journal directory from what a person types: a run id (looked for under
directories), a run's journal directory, or an output directory (its latest run)."""

from __future__ import annotations

import os
from pathlib import Path

from trainwire.contract.layout import CONFIG_FILE, JOURNALS_DIR, STREAM_FILE, SUMMARY_FILE, journal_dirs
from trainwire.journal.files import read_summary

__all__ = ["find_journal", "journal_chain_length", "latest_journal"]


def journal_chain_length(journal: Path, *, within: Path | None = None) -> int:
    """How many runs the stream held before this one (its summary's `earlier_runs`); -1
    without a valid summary (`read_summary`: capped, checked, and with `within` only inside it)."""
    summary = read_summary(journal / SUMMARY_FILE, within=within)
    return len(summary["earlier_runs"]) if summary is not None else -1


def latest_journal(output_dir: str | os.PathLike[str], *, within: Path | None = None) -> Path | None:
    """The journal of the run whose `run.started` came last in `output_dir`'s stream (the one
    listing the most earlier runs; on a tie the greatest run id), or None. With `within`, a
    summary leading outside that directory is not read (as a journal without one)."""
    journals = journal_dirs(output_dir)
    if not journals:
        return None
    return max(journals, key=lambda journal: (journal_chain_length(journal, within=within), journal.name))


def find_journal(reference: str | os.PathLike[str], roots: list[Path]) -> Path | None:
    """The journal directory `reference` names: itself when it is one, its latest run's when it
    is an output directory, else the run of that id found under `roots` (recursively)."""
    path = Path(reference)
    if path.is_dir():
        if path.parent.name == JOURNALS_DIR and ((path / SUMMARY_FILE).is_file() or (path / CONFIG_FILE).is_file()):
            return path
        return latest_journal(path)
    if path.name == STREAM_FILE and path.is_file():
        return latest_journal(path.parent)
    run_id = str(reference)
    if "/" in run_id or os.sep in run_id or run_id in ("", ".", ".."):
        return None
    for root in roots:
        for directory, subdirectories, _files in os.walk(root):
            subdirectories.sort()
            if Path(directory).name == JOURNALS_DIR and run_id in subdirectories:
                return Path(directory) / run_id
            if Path(directory).name == JOURNALS_DIR:
                subdirectories.clear()  # journal directories hold no further runs
    return None
