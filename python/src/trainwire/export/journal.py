"""A run's journal files as the exports find them, wherever the writer put them.

A run's own journal lives in `<dir>/runs/<run_id>/`; journals written before that keep
their files at the top of the output directory, where `config.json`, `git_dirty.diff`
and `summary.json` describe the directory's latest run only and `notes.md` the directory.
Only the journal's own named files count (`journal_copies.file_cap`): anything else someone
put in a journal directory is never sent.
"""

from __future__ import annotations

from pathlib import Path

from trainwire.contract.layout import CONFIG_FILE, DIFF_FILE, NOTES_FILE, SUMMARY_FILE, run_journal_dir
from trainwire.export.journal_copies import DEFAULT_COPY_CAP, CopyRefused, copy_checked, file_cap, report
from trainwire.journal.files import MAX_SUMMARY_BYTES, read_journal_json

__all__ = ["copy_journal", "copy_or_report", "journal_file", "journal_files"]

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
    """Every journal file of run `run_id` (the journal's named files in its own journal, or
    the top-level ones that are about it), in a stable order; links and the like are found
    here and refused when copied (`journal_copies.copy_checked`)."""
    own = run_journal_dir(run_dir, run_id)
    if own.is_dir():
        return sorted(
            path
            for path in own.iterdir()
            if file_cap(path.name, DEFAULT_COPY_CAP) is not None and (path.is_file() or path.is_symlink())
        )
    return [path for name in _TOP_LEVEL if (path := journal_file(run_dir, run_id, name)) is not None]


def _latest_run(run_dir: Path) -> str | None:
    """The run the top-level summary describes; None when it cannot tell."""
    try:  # capped; a summary of an older layout need not pass today's schema to name its run
        summary = read_journal_json(run_dir / SUMMARY_FILE, MAX_SUMMARY_BYTES)
    except (OSError, ValueError):
        return None
    run_id = summary.get("run_id") if isinstance(summary, dict) else None
    return run_id if isinstance(run_id, str) else None


def copy_journal(run_dir: Path, run_id: str, into: Path, copy_cap: int = DEFAULT_COPY_CAP) -> list[Path]:
    """Checked copies (`copy_checked`) of the journal files of run `run_id` in `into`, in
    `journal_files`' order; each file refused is one line on stderr and left out."""
    copies: list[Path] = []
    for path in journal_files(run_dir, run_id):
        cap = file_cap(path.name, copy_cap)
        if cap is None:
            continue
        into.mkdir(parents=True, exist_ok=True)
        if copied := copy_or_report(path, into / path.name, cap):
            copies.append(copied)
    return copies


def copy_or_report(source: Path, target: Path, cap: int) -> Path | None:
    """`target`, a checked copy of `source`; None, with one line on stderr, when refused."""
    try:
        copy_checked(source, target, cap)
    except CopyRefused as error:
        report(str(error))
        return None
    return target
