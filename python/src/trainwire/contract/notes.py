"""A run's `notes.md`: free text for people, and dated entries appended by `trainwire note`
(`## <timestamp>` then the text), which the summary counts."""

from __future__ import annotations

import re
from pathlib import Path

from trainwire.contract.files import read_regular_text

__all__ = ["NOTES_TEMPLATE", "count_notes", "note_entries", "note_entry"]

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
    """How many dated entries the notes file at `path` holds (0 when it is missing)."""
    try:
        return len(_ENTRY.findall(read_regular_text(path)))
    except (OSError, UnicodeDecodeError):
        return 0
