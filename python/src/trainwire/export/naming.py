"""A run's name and tags as the exports give them to a tracker: from its `run.started`, or,
in an export that resumes past it, from the run's journal summary."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from trainwire.contract.files import read_regular_text
from trainwire.contract.layout import SUMMARY_FILE
from trainwire.export.journal import journal_file

__all__ = ["RunNaming", "journal_naming", "started_naming"]


class RunNaming(NamedTuple):
    """`run.started.name` (None when the run has none) and `run.started.tags`."""

    name: str | None
    tags: tuple[str, ...]

    def label(self, run_id: str) -> str:
        """What a tracker shows for the run: its name, else its id."""
        return self.name or run_id


def started_naming(fields: Mapping[str, Any]) -> RunNaming:
    """The name and tags of a `run.started` line (or of a summary, which holds the same)."""
    name, tags = fields.get("name"), fields.get("tags")
    listed = tuple(tag for tag in tags if isinstance(tag, str)) if isinstance(tags, list) else ()
    return RunNaming(name if isinstance(name, str) else None, listed)


def journal_naming(run_dir: Path, run_id: str) -> RunNaming:
    """The name and tags the run's journal summary holds; none when it cannot be read."""
    path = journal_file(run_dir, run_id, SUMMARY_FILE)
    try:
        summary = json.loads(read_regular_text(path)) if path is not None else None
    except (OSError, ValueError):
        summary = None
    if not isinstance(summary, dict) or summary.get("run_id") != run_id:
        return RunNaming(None, ())
    return started_naming(summary)
