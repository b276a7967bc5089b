"""What of a run never reached its files (summary.json's `completeness`, written by the
writer's journal: a stream cannot say what it lacks), as one short text the command line
shows beside the run's status."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trainwire.contract.journal_reads import read_summary
from trainwire.contract.layout import SUMMARY_FILE, run_journal_dir

__all__ = ["completeness_text", "journal_completeness"]


def completeness_text(completeness: Mapping[str, Any] | None) -> str | None:
    """`stream incomplete: 6 of 6 lines lost` (and the kept steps lost), None when complete."""
    if not completeness:
        return None
    parts = []
    lost, lines = completeness.get("stream_lines_lost") or 0, completeness.get("stream_lines") or 0
    if lost:
        parts.append(f"stream incomplete: {lost:,} of {lines:,} lines lost")
    kept_lost = completeness.get("kept_steps_lost") or 0
    if kept_lost:
        parts.append(f"{kept_lost:,} kept steps lost")
    return ", ".join(parts) or None


def journal_completeness(output_dir: Path, run_id: str, *, within: Path | None = None) -> Mapping[str, Any] | None:
    """The `completeness` of run `run_id`'s journal summary in `output_dir`, None without one."""
    summary = read_summary(run_journal_dir(output_dir, run_id) / SUMMARY_FILE, within=within)
    completeness = summary.get("completeness") if summary is not None else None
    return completeness if isinstance(completeness, Mapping) else None
