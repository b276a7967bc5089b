"""A run's name and tags as the exports give them to a tracker: from its `run.started`, or,
in an export that resumes past it, from the run's journal summary.

Either way they pass `run.started`'s own rules (the schema's length and printable pattern,
at most 32 tags) before a tracker sees them: the summary is a file anyone may have written,
read capped and checked against its schema (`journal.files.read_summary`), and a name
or tag the contract would refuse is left out (a tag alone, not the others). Each tracker then
maps what is left into its own rules (`mlflow.mlflow_key`, `wandb.wandb_tags`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from pydantic_core import SchemaValidator, ValidationError

from trainwire.contract.known_event_dicts import event_field_schema
from trainwire.contract.layout import SUMMARY_FILE
from trainwire.export.journal import journal_file
from trainwire.journal.files import read_summary

__all__ = ["RunNaming", "journal_naming", "started_naming"]


class RunNaming(NamedTuple):
    """`run.started.name` (None when the run has none) and `run.started.tags`."""

    name: str | None
    tags: tuple[str, ...]

    def label(self, run_id: str) -> str:
        """What a tracker shows for the run: its name, else its id."""
        return self.name or run_id


def started_naming(fields: Mapping[str, Any]) -> RunNaming:
    """The name and tags of a `run.started` line (or of a summary, which holds the same), each
    kept only when `run.started`'s schema accepts it."""
    name, tags = fields.get("name"), fields.get("tags")
    listed = tuple(tag for tag in tags if _valid("tag", tag)) if isinstance(tags, list) else ()
    return RunNaming(name if _valid("name", name) else None, listed[: _most_tags()])


def journal_naming(run_dir: Path, run_id: str) -> RunNaming:
    """The name and tags the run's journal summary holds; none when it cannot be read, is
    over its cap, is not a summary the schema accepts, or is another run's."""
    path = journal_file(run_dir, run_id, SUMMARY_FILE)
    summary = read_summary(path) if path is not None else None
    if summary is None or summary.get("run_id") != run_id:
        return RunNaming(None, ())
    return started_naming(summary)


def _valid(field: str, value: Any) -> bool:
    try:
        _validators()[field].validate_python(value, strict=True)
    except ValidationError:
        return False
    return True


def _most_tags() -> int:
    most: int = event_field_schema("run.started", "tags")["max_length"]
    return most


@functools.cache
def _validators() -> dict[str, SchemaValidator]:
    """`run.started`'s checks of a name and of one tag, from its schema."""
    tags = event_field_schema("run.started", "tags")
    return {
        "name": SchemaValidator(event_field_schema("run.started", "name")),
        "tag": SchemaValidator(tags["items_schema"]),
    }
