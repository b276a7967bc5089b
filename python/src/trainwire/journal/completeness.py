"""What of a run never reached its files (summary.json's `completeness`, written by the
writer's journal: a stream cannot say what it lacks), read from a run's journal for the views
that fold the stream alone (`state`, `tail`); `lines.verdict.completeness_text` says it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trainwire.contract.layout import SUMMARY_FILE, run_journal_dir
from trainwire.journal.files import read_summary

__all__ = ["journal_completeness"]


def journal_completeness(output_dir: Path, run_id: str, *, within: Path | None = None) -> Mapping[str, Any] | None:
    """The `completeness` of run `run_id`'s journal summary in `output_dir`, None without one."""
    summary = read_summary(run_journal_dir(output_dir, run_id) / SUMMARY_FILE, within=within)
    completeness = summary.get("completeness") if summary is not None else None
    return completeness if isinstance(completeness, Mapping) else None
