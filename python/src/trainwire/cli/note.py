"""`trainwire note RUN "text"`: a dated entry appended to the run's `notes.md`, and the
count in its summary brought up to date."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from trainwire.cli.journal_runs import JournalError, add_roots_argument, find_run
from trainwire.contract.clock import format_ts
from trainwire.contract.files import write_json_atomically
from trainwire.contract.layout import NOTES_FILE, SUMMARY_FILE
from trainwire.journal.notes import NOTES_TEMPLATE, count_notes, note_entry
from trainwire.reader.catalog import load_summary

__all__ = ["add_note", "register_note"]


def register_note(commands: Any) -> None:
    note = commands.add_parser(
        "note",
        help="add a dated note to a run",
        description="Append a dated entry to the run's notes.md (runs and diff show them). RUN is a run id (looked for under --in DIR, default .), a run's journal directory or an output directory (its latest run).",
    )
    note.add_argument("run", metavar="RUN")
    note.add_argument("text", metavar="TEXT")
    add_roots_argument(note)
    note.set_defaults(command=_note)


def add_note(journal: Path, text: str, ts: str) -> int:
    """Appends the entry (one write, so a reader sees it whole or not at all) and rewrites the
    summary's `notes` count; the count of entries."""
    notes = journal / NOTES_FILE
    if not notes.exists():
        notes.write_text(NOTES_TEMPLATE, encoding="utf-8")
    with notes.open("a", encoding="utf-8") as file:
        file.write(note_entry(text, ts))
    count = count_notes(notes)
    summary = load_summary(journal / SUMMARY_FILE)
    if summary is not None and "notes" in summary:
        write_json_atomically(journal / SUMMARY_FILE, {**summary, "notes": count}, indent=2)
    return count


def _note(options: argparse.Namespace) -> int:
    if not options.text.strip():
        sys.stderr.write("trainwire note: the note is empty\n")
        return 1
    try:
        _stream, journal = find_run(options.run, options.roots or [Path(".")])
    except JournalError as error:
        sys.stderr.write(f"trainwire note: {error}\n")
        return 1
    if journal is None:
        sys.stderr.write(
            f"trainwire note: {options.run}: the run has no journal (trainwire journal rebuild makes one)\n"
        )
        return 1
    count = add_note(journal, options.text, format_ts(time.time()))
    sys.stdout.write(f"{journal / NOTES_FILE}: {count} note(s)\n")
    return 0
