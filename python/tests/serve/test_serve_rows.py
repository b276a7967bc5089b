"""The runs list rows of `trainwire serve`: the single-run directory's key, config and notes."""

from __future__ import annotations

import time
from pathlib import Path

from support.serve_process import make_run, serve

from trainwire import Run


def test_a_single_run_directory_is_keyed_by_its_name(tmp_path: Path) -> None:
    run_id = make_run(tmp_path / "out")
    with serve(str(tmp_path / "out")) as server:
        rows = server.rows()
        assert [(row["key"], row["run_id"]) for row in rows] == [("out", run_id)]
        status, _, body = server.request("/runs/out/progress.jsonl")
        assert status == 200 and body == (tmp_path / "out" / "progress.jsonl").read_bytes()


def test_rows_carry_the_flat_config_and_the_notes(tmp_path: Path) -> None:
    make_run(tmp_path / "journal")  # config.json from the journal
    make_run(tmp_path / "untouched")  # the journal's notes template only
    (tmp_path / "journal" / "notes.md").write_text("  lower lr, same seed \n")  # a 0.1 journal's place
    plain = Run(tmp_path / "plain", step_interval_s=0, heartbeat_interval_s=None, journal=False)
    plain.start(total_steps=2, config={"optimizer": {"name": "adamw", "betas": [0.9, 0.99]}}, provenance=False)
    plain.step(1, loss=0.5)
    plain.close()
    moved = Run(tmp_path / "moved", step_interval_s=0, heartbeat_interval_s=None)
    moved.start(total_steps=1, config={"lr": 0.2}, provenance=False)
    (tmp_path / "moved" / "runs" / moved.run_id).mkdir(parents=True, exist_ok=True)
    (tmp_path / "moved" / "runs" / moved.run_id / "notes.md").write_text("in the run's own folder")
    moved.finish()
    with serve(str(tmp_path)) as server:
        deadline = time.monotonic() + 30
        rows: dict[str, dict[str, object]] = {}
        while len(rows) < 4 and time.monotonic() < deadline:
            rows = {row["key"]: row for row in server.rows()}
    assert rows["journal"]["config"] == {"lr": 0.1} and rows["journal"]["notes"] == "lower lr, same seed"
    assert rows["plain"]["config"] == {"optimizer.name": "adamw", "optimizer.betas": "[0.9, 0.99]"}
    assert rows["plain"]["notes"] is None and rows["untouched"]["notes"] is None
    assert rows["moved"]["config"] == {"lr": 0.2} and rows["moved"]["notes"] == "in the run's own folder"
