"""A run's journal files as the exports find them, wherever the writer put them.

A run's own journal lives in `<dir>/runs/<run_id>/`; journals written before that keep
their files at the top of the output directory, where `config.json`, `git_dirty.diff`
and `summary.json` describe the directory's latest run only and `notes.md` the directory.
"""

from __future__ import annotations

from pathlib import Path

from trainwire.contract.journal_reads import MAX_SUMMARY_BYTES, read_journal_json
from trainwire.contract.layout import CONFIG_FILE, DIFF_FILE, NOTES_FILE, SUMMARY_FILE, run_journal_dir

__all__ = ["journal_file", "journal_files"]

# the top-level files, in the order they are sent
_TOP_LEVEL = (CONFIG_FILE, DIFF_FILE, NOTES_FILE, SUMMARY_FILE)


def journal_file(run_dir: Path, run_id: str, name: str) -> Path | None:
    """The journal file `name` of run `run_id`: its own first, else the top-level one
    when that one can be about this run; None when there is none."""
    own = run_journal_dir(run_dir, run_id) / name
    if own.is_file():
        return own
    top = run_dir / name
    if top.is_file() and (name == NOTES_FILE or _latest_run(run_dir) in (run_id, None)):
        return top
    return None


def journal_files(run_dir: Path, run_id: str) -> list[Path]:
    """Every journal file of run `run_id` (all files of its own journal, or the top-level
    ones that are about it), in a stable order."""
    own = run_journal_dir(run_dir, run_id)
    if own.is_dir():
        return sorted(path for path in own.iterdir() if path.is_file())
    return [path for name in _TOP_LEVEL if (path := journal_file(run_dir, run_id, name)) is not None]


def _latest_run(run_dir: Path) -> str | None:
    """The run the top-level summary describes; None when it cannot tell."""
    try:
        summary = read_journal_json(run_dir / SUMMARY_FILE, MAX_SUMMARY_BYTES)
    except (OSError, ValueError):
        return None
    run_id = summary.get("run_id") if isinstance(summary, dict) else None
    return run_id if isinstance(run_id, str) else None
