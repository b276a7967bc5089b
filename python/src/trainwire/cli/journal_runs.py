"""A run as the journal's commands take it: a run id (found under directories), a run's
journal directory, an output directory (its latest run) or a stream file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trainwire.contract.layout import STREAM_FILE, SUMMARY_FILE, stream_path
from trainwire.journal.files import MAX_CONFIG_BYTES, read_journal_json
from trainwire.journal.lookup import find_journal
from trainwire.reader.catalog import live_summary, load_summary

__all__ = ["JournalError", "add_roots_argument", "find_run", "load_json", "run_summary"]


class JournalError(Exception):
    """A failure of a journal command, reported as one line."""


def add_roots_argument(parser: Any) -> None:
    """`--in DIR`: where a command looks for run ids."""
    parser.add_argument(
        "--in",
        dest="roots",
        action="append",
        type=Path,
        metavar="DIR",
        help="where run ids are looked for (repeatable; default .)",
    )


def find_run(reference: str, roots: list[Path]) -> tuple[Path, Path | None]:
    """`(stream, journal directory or None)` of the run `reference` names; a directory or
    stream without a journal (another writer, or a 0.1 journal not migrated) gives None."""
    journal = find_journal(reference, roots)
    if journal is not None:
        return journal.parent.parent / STREAM_FILE, journal
    stream = stream_path(reference)
    if stream.is_file():
        return stream, None
    where = ", ".join(str(root) for root in roots)
    raise JournalError(f"{reference}: no run with this id under {where}, and no {STREAM_FILE} here")


def load_json(path: Path) -> Any:
    """The JSON of a journal file (config, config diff, environment) under `MAX_CONFIG_BYTES`, or None."""
    try:
        return read_journal_json(path, MAX_CONFIG_BYTES)
    except (OSError, ValueError):
        return None


def run_summary(stream: Path, journal: Path | None) -> dict[str, Any]:
    """The run's summary: its journal's, a 0.1 journal's beside the stream, else the stream's
    fold; a running run's brought to where its stream and kept steps are (`live_summary`)."""
    summary = (
        load_summary(journal / SUMMARY_FILE) if journal is not None else load_summary(stream.parent / SUMMARY_FILE)
    )
    if summary is None:
        from trainwire.reader.stream_summary import summarise_stream  # the reader's models: only without a summary

        summary = summarise_stream(stream)
    if summary is None:
        raise JournalError(f"{stream}: no valid line")
    return live_summary(stream, summary)
