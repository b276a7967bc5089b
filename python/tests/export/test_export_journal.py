"""Where the exports find a run's journal files: its own journal first, else the top-level
files that can be about it."""

from __future__ import annotations

import json
from pathlib import Path

from trainwire import Run
from trainwire.contract.layout import run_journal_dir
from trainwire.export.journal import journal_file, journal_files
from trainwire.journal.notes import read_notes


def finished_run(output_dir: Path) -> str:
    run = Run(output_dir, heartbeat_interval_s=None)
    run.start(config={"lr": 0.1})
    run.finish("succeeded")
    return run.run_id


def test_a_0_1_journals_top_level_files_are_the_latest_runs_and_the_notes_everyones(tmp_path: Path) -> None:
    # journals written before the per-run layout: files at the top, about the latest run
    (tmp_path / "config.json").write_text('{"lr": 0.1}')
    (tmp_path / "summary.json").write_text(json.dumps({"run_id": "second"}))
    (tmp_path / "notes.md").write_text("# Notes\n\nshared\n")
    assert [path.name for path in journal_files(tmp_path, "second")] == ["config.json", "notes.md", "summary.json"]
    assert [path.name for path in journal_files(tmp_path, "first")] == ["notes.md"]
    assert journal_file(tmp_path, "first", "config.json") is None
    assert read_notes(tmp_path, "first") == "# Notes\n\nshared"


def test_a_runs_own_journal_comes_first(tmp_path: Path) -> None:
    first = finished_run(tmp_path)
    second = finished_run(tmp_path)
    (tmp_path / "notes.md").write_text("the directory's\n")  # not about either run now
    own = run_journal_dir(tmp_path, second)
    (own / "notes.md").write_text("mine\n")
    assert journal_file(tmp_path, second, "notes.md") == own / "notes.md"
    assert journal_files(tmp_path, second) == sorted(path for path in own.iterdir() if path.is_file())
    assert {"config.json", "notes.md", "summary.json"} <= {path.name for path in journal_files(tmp_path, second)}
    assert read_notes(tmp_path, second) == "mine"
    assert journal_files(tmp_path, first) != journal_files(tmp_path, second)  # each run its own
