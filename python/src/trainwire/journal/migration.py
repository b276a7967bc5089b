"""Journals written by trainwire 0.1 moved to the per-run layout (`contract.layout`).

0.1 kept one journal per directory, about its latest run: `config.json`, `git_dirty.diff`,
`notes.md` and `summary.json` beside the stream. They belong to the run `summary.json`
names, so they move to `runs/<that run_id>/`; `summary.json` moves last, so a migration
cut short is finished by the next one."""

from __future__ import annotations

import os
from pathlib import Path

from trainwire.contract.layout import CONFIG_FILE, DIFF_FILE, NOTES_FILE, SUMMARY_FILE, run_journal_dir
from trainwire.journal.files import MAX_SUMMARY_BYTES, read_journal_json

__all__ = ["migrate_journal"]


def migrate_journal(output_dir: str | os.PathLike[str]) -> str | None:
    """Moves a 0.1 journal in `output_dir` to its run's journal directory: the run id, or
    None when there was nothing to move. A file already in the run's directory is kept."""
    legacy_summary = Path(output_dir) / SUMMARY_FILE
    try:
        run_id = read_journal_json(legacy_summary, MAX_SUMMARY_BYTES).get("run_id")
    except (OSError, ValueError, AttributeError):  # absent, over its cap, not JSON, nested too deep
        return None
    if not isinstance(run_id, str) or "/" in run_id or run_id in ("", ".", ".."):
        return None
    target = run_journal_dir(output_dir, run_id)
    target.mkdir(parents=True, exist_ok=True)
    for name in (CONFIG_FILE, DIFF_FILE, NOTES_FILE, SUMMARY_FILE):
        source = Path(output_dir) / name
        if source.is_file() and not (target / name).exists():
            os.replace(source, target / name)
        elif source.is_file() and name == SUMMARY_FILE:
            source.unlink()  # the run's own summary is already there: the legacy copy is done
    return run_id
