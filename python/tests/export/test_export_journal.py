"""Where the exports find a run's journal files: its own journal first, else the top-level
files that can be about it."""

from __future__ import annotations

from pathlib import Path

from trainwire import Run
from trainwire.export.journal import journal_file, journal_files, read_notes


def finished_run(output_dir: Path) -> str:
    run = Run(output_dir, heartbeat_interval_s=None)
    run.start(config={"lr": 0.1})
    run.finish("succeeded")
    return run.run_id


def test_the_top_level_files_are_the_latest_runs_and_the_notes_everyones(tmp_path: Path) -> None:
    first = finished_run(tmp_path)
    second = finished_run(tmp_path)  # the top-level config and summary are now the second run's
    (tmp_path / "notes.md").write_text("# Notes\n\nshared\n")
    assert [path.name for path in journal_files(tmp_path, second)] == ["config.json", "notes.md", "summary.json"]
    assert [path.name for path in journal_files(tmp_path, first)] == ["notes.md"]
    assert journal_file(tmp_path, first, "config.json") is None
    assert read_notes(tmp_path, first) == "# Notes\n\nshared"


def test_a_runs_own_journal_comes_first(tmp_path: Path) -> None:
    run_id = finished_run(tmp_path)
    own = tmp_path / "runs" / run_id
    own.mkdir(parents=True)
    (own / "notes.md").write_text("mine\n")
    (own / "environment.json").write_text("{}\n")
    assert journal_file(tmp_path, run_id, "notes.md") == own / "notes.md"
    assert journal_files(tmp_path, run_id) == [own / "environment.json", own / "notes.md"]
    assert read_notes(tmp_path, run_id) == "mine"
