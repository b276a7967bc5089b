"""One reader of a run's notes for the runs list and the exports: the run's own file first,
the template counting as none (and left out of the notes added under it), a FIFO or a link out never followed."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from trainwire.contract.layout import NOTES_FILE, run_journal_dir
from trainwire.journal.files import MAX_NOTES_BYTES
from trainwire.journal.notes import NOTES_TEMPLATE, count_notes, read_notes


def test_the_untouched_template_is_no_note_and_the_directorys_notes_come_next(tmp_path: Path) -> None:
    own = run_journal_dir(tmp_path, "r1")
    own.mkdir(parents=True)
    (own / NOTES_FILE).write_text(NOTES_TEMPLATE)
    assert read_notes(tmp_path, "r1") is None
    (tmp_path / NOTES_FILE).write_text("\n  about the directory \n")
    assert read_notes(tmp_path, "r1") == "about the directory"
    (own / NOTES_FILE).write_text(NOTES_TEMPLATE + "\n## 2026-12-01T10:00:00Z\n\nlr too high\n")
    assert read_notes(tmp_path, "r1") == "## 2026-12-01T10:00:00Z\n\nlr too high"  # the template left out


def test_notes_over_their_cap_count_as_absent_with_one_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    own = run_journal_dir(tmp_path, "r1")
    own.mkdir(parents=True)
    (own / NOTES_FILE).write_text("## 2026-12-01T10:00:00Z\n\nkept\n")
    os.truncate(own / NOTES_FILE, MAX_NOTES_BYTES)  # at the cap: read
    assert read_notes(tmp_path, "r1", within=tmp_path) is not None and count_notes(own / NOTES_FILE) == 1
    os.truncate(own / NOTES_FILE, 1 << 32)  # sparse: 4 GiB that take no disk
    with caplog.at_level(logging.WARNING, logger="trainwire.files"):
        for _poll in range(3):
            assert read_notes(tmp_path, "r1", within=tmp_path) is None
            assert count_notes(own / NOTES_FILE) == 0
    assert [record.getMessage() for record in caplog.records] == [
        f"trainwire: {own / NOTES_FILE} holds {1 << 32} bytes, over the {MAX_NOTES_BYTES} bytes it may hold: read as absent"
    ]


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
