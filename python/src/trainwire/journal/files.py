"""Reading a run's journal files as files anyone may have written: each under a size cap,
checked on the opened file before it is read (over it, the file counts as absent, with one
line on the `trainwire.files` logger), parsed with a nesting limit, and the summary checked
against its schema, so a reader never hands out a value of the wrong type.

The caps are what the writer can produce, with room to spare; a snapshot's is set by
`journal.snapshot_check`, beside what it checks.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from pydantic_core import from_json

from trainwire.contract.files import read_capped

__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_DIFF_BYTES",
    "MAX_NOTES_BYTES",
    "MAX_SUMMARY_BYTES",
    "checked_summary",
    "read_journal_json",
    "read_journal_text",
    "read_summary",
]

#: a summary holds a few numbers per series and a run id per earlier run: a run's is a few
#: KiB, and 1 MiB holds thousands of series with long names
MAX_SUMMARY_BYTES = 1 << 20
#: `config.json`, `config_diff.json`, `environment.json`: a resolved config, its diff and the
#: run's provenance, all written from what a person configured; kilobytes in practice
MAX_CONFIG_BYTES = 1 << 20
#: `git_dirty.diff`: the writer cuts a diff past 1 MiB at a line, with a note
MAX_DIFF_BYTES = 2 << 20
#: `notes.md`: text people type, a dated entry at a time (`trainwire note`)
MAX_NOTES_BYTES = 1 << 20


def read_journal_json(path: Path, cap: int, *, within: Path | None = None) -> Any:
    """The JSON value of the journal file `path` (`read_capped` under `cap`, `within`).

    `OSError` when it is absent, not a regular file, outside `within` or over `cap`;
    `ValueError` when it is not JSON or nests deeper than the parser's limit (200 levels, far
    past any journal file's), never a `RecursionError`."""
    return from_json(read_capped(path, cap, within=within))


def read_journal_text(path: Path, cap: int, *, within: Path | None = None) -> str:
    """The text of the journal file `path` (`read_capped`), undecodable bytes replaced."""
    return read_capped(path, cap, within=within).decode("utf-8", errors="replace")


def read_summary(path: Path, *, within: Path | None = None) -> dict[str, Any] | None:
    """The journal summary at `path` when it is one the schema (`schemas/summary`) accepts,
    strictly (a number where a string goes, or a string where a number goes, fails); None
    when it is absent, over `MAX_SUMMARY_BYTES`, not JSON, or not a valid summary."""
    try:
        data = read_capped(path, MAX_SUMMARY_BYTES, within=within)
    except OSError:
        return None
    return checked_summary(data)


def checked_summary(data: bytes | str) -> dict[str, Any] | None:
    """The summary `data` holds when the schema accepts it, strictly, as `read_summary` checks
    a file's; None otherwise (a runs cache's copy is held to the same check)."""
    if len(data) > MAX_SUMMARY_BYTES:
        return None
    try:
        _summary_model().model_validate_json(data, strict=True)
    except ValueError:  # pydantic's ValidationError is a ValueError
        return None
    summary: dict[str, Any] = json.loads(data)  # valid: an object nested a few levels, parsed as before
    return summary


@functools.cache
def _summary_model() -> Any:
    # pydantic's models are imported when a summary is first read: the writer starts without them
    from trainwire._generated.summary import RunSummary

    return RunSummary
