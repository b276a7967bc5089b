"""One reader of a run's notes for the runs list and the exports: the run's own file first,
the untouched template counting as none, a FIFO or a link out never followed."""

from __future__ import annotations

import os
from pathlib import Path

from trainwire.contract.layout import NOTES_FILE, run_journal_dir
from trainwire.contract.notes import NOTES_TEMPLATE, read_notes


def test_the_untouched_template_is_no_note_and_the_directorys_notes_come_next(tmp_path: Path) -> None:
    own = run_journal_dir(tmp_path, "r1")
    own.mkdir(parents=True)
    (own / NOTES_FILE).write_text(NOTES_TEMPLATE)
    assert read_notes(tmp_path, "r1") is None
    (tmp_path / NOTES_FILE).write_text("\n  about the directory \n")
    assert read_notes(tmp_path, "r1") == "about the directory"
    (own / NOTES_FILE).write_text(NOTES_TEMPLATE + "\n## 2026-12-01T10:00:00Z\n\nlr too high\n")
    assert read_notes(tmp_path, "r1", limit_bytes=len(NOTES_TEMPLATE) + 10) == NOTES_TEMPLATE + "\n## 2026-1"


def test_a_fifo_or_a_link_out_of_the_served_directory_is_not_read(tmp_path: Path) -> None:
    served = tmp_path / "served"
    own = run_journal_dir(served, "r1")
    own.mkdir(parents=True)
    os.mkfifo(own / NOTES_FILE)  # opening it for reading would block a plain open()
    assert read_notes(served, "r1") is None
    secret = tmp_path / "secret.md"
    secret.write_text("not yours")
    (served / NOTES_FILE).symlink_to(secret)
    assert read_notes(served, "r1", within=served) is None
    assert read_notes(served, "r1") == "not yours"  # without `within` a link is followed
