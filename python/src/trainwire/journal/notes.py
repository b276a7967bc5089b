"""A run's `notes.md`: free text for people, and dated entries appended by `trainwire note`
(`## <timestamp>` then the text), which the summary counts."""

from __future__ import annotations

import re
from pathlib import Path

from trainwire.contract.layout import NOTES_FILE, run_journal_dir
from trainwire.journal.files import MAX_NOTES_BYTES, read_journal_text

__all__ = ["NOTES_TEMPLATE", "count_notes", "note_entries", "note_entry", "read_notes"]

NOTES_TEMPLATE = "# Notes\n\nWhat this run tries, what you saw, what to do next.\n"
_ENTRY = re.compile(r"^## (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)$", re.MULTILINE)


def note_entry(text: str, ts: str) -> str:
    """The block appended for a note written at `ts`."""
    return f"\n## {ts}\n\n{text.strip()}\n"


def note_entries(notes: str) -> list[tuple[str, str]]:
    """The dated entries of a notes text: `(timestamp, text)` in order."""
    marks = list(_ENTRY.finditer(notes))
    return [
        (mark.group(1), notes[mark.end() : marks[i + 1].start() if i + 1 < len(marks) else len(notes)].strip())
        for i, mark in enumerate(marks)
    ]


def count_notes(path: Path) -> int:
    """How many dated entries the notes file at `path` holds (0 when it is missing or over
    `MAX_NOTES_BYTES`)."""
    try:
        return len(_ENTRY.findall(read_journal_text(path, MAX_NOTES_BYTES)))
    except OSError:
        return 0


def read_notes(directory: Path, run_id: str, *, within: Path | None = None) -> str | None:
    """The notes of run `run_id` of the output directory `directory`, stripped and without
    the journal's template at their head (what a person or `trainwire note` added); None
    when there are none, only the template, or they cannot be read (notes are for people:
    an unreadable file fails nothing).

    Tried in the run's own journal (`runs/<run_id>/notes.md`) first, then beside the stream
    (a 0.1 journal's notes, about the directory). Each is read through `read_capped` (with
    `within`: only inside that directory); one over `MAX_NOTES_BYTES` counts as absent."""
    for path in (run_journal_dir(directory, run_id) / NOTES_FILE, directory / NOTES_FILE):
        try:
            text = read_journal_text(path, MAX_NOTES_BYTES, within=within)
        except OSError:
            continue
        if text != NOTES_TEMPLATE:
            added = text[len(NOTES_TEMPLATE) :] if text.startswith(NOTES_TEMPLATE) else text
            return added.strip() or None
    return None
